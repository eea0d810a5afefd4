package api

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/models"
)

// FuzzNegotiateVersion: the API-Version header never makes
// NegotiateVersion panic; it answers a supported version (1.0.0 to 1.2.3,
// the one asked for or its newest patch) that negotiates to itself, or
// UNSUPPORTED_API_VERSION with the supported versions in its details.
func FuzzNegotiateVersion(f *testing.F) {
	for _, s := range []string{"", "1", "v1.2", "1.2.3", "1.2.4", "1.1", "1.0.0", " v1.2 ", "2", "1.3", "1..2", "1.2.3.4", "-1", "1.+2", "01.02.0003",
		"1.2.99999", "1.9223372036854775807", "１.２", "v", "vv1"} {
		f.Add(s)
	}
	supported := func(v string) bool {
		var minor, patch int
		if n, err := fmt.Sscanf(v, "1.%d.%d", &minor, &patch); err != nil || n != 2 || fmt.Sprintf("1.%d.%d", minor, patch) != v {
			return false
		}
		return minor >= 0 && patch >= 0 && (minor < 2 || minor == 2 && patch <= 3)
	}
	f.Fuzz(func(t *testing.T, header string) {
		v, err := NegotiateVersion(header)
		if err != nil {
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeUnsupportedAPIVersion || e.Details["supported"] == nil || e.Details["latest"] != LatestVersion {
				t.Fatalf("%q: error %v is not UNSUPPORTED_API_VERSION with details", header, err)
			}
			return
		}
		if !supported(v) {
			t.Fatalf("%q negotiated to %q", header, v)
		}
		if again, err := NegotiateVersion(v); err != nil || again != v {
			t.Fatalf("%q: %q negotiates to %q (%v)", header, v, again, err)
		}
	})
}

// TestNegotiateVersion: every 1.x.y up to 1.2.3 is served as itself
// (DECISIONS 4), whatever patch an earlier minor reached; a minor alone is
// its first release (the latest minor: 1.2.3), "1" the latest; anything
// above 1.2.3 or outside 1.x is refused.
func TestNegotiateVersion(t *testing.T) {
	for header, want := range map[string]string{"": "1.2.3", "1": "1.2.3", "v1": "1.2.3", "1.0": "1.0.0", "1.1": "1.1.0", "1.2": "1.2.3",
		"1.0.1": "1.0.1", "1.0.9": "1.0.9", "1.1.1": "1.1.1", "1.1.5": "1.1.5", "1.2.0": "1.2.0", "1.2.3": "1.2.3", "v1.1.5": "1.1.5",
		"1.2.4": "", "1.3": "", "1.3.0": "", "2": "", "2.0.0-beta": "", "0.9": "", "abc": ""} {
		got, err := NegotiateVersion(header)
		if want == "" {
			if models.ErrorCode(err) != models.CodeUnsupportedAPIVersion {
				t.Errorf("%q: %q %v, want UNSUPPORTED_API_VERSION", header, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", header, got, err, want)
		}
	}
}

// FuzzSAMLResponse: the SAMLResponse parameter of the ACS never makes its
// reader panic; it answers the XML it carried, which is read the same once
// encoded again, or a VALIDATION_ERROR on SAMLResponse.
func FuzzSAMLResponse(f *testing.F) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	f.Add(enc(`<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="r1" InResponseTo="id-abc"><x/></samlp:Response>`))
	f.Add(enc(`<Response/>`))
	f.Add(enc(`<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><r InResponseTo="&a;"/>`))
	f.Add(enc(`<a><b></a>`))
	f.Add(enc(strings.Repeat("<a>", 1000)))
	f.Add("not base64!")
	f.Add("")
	f.Fuzz(func(t *testing.T, param string) {
		raw, _, err := samlResponse(param)
		if err != nil {
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeValidation {
				t.Fatalf("%q: error %v is not a VALIDATION_ERROR", param, err)
			}
			issues, _ := e.Details["fields"].([]models.FieldIssue)
			if len(issues) != 1 || issues[0].Field != "SAMLResponse" {
				t.Fatalf("%q: issues %v", param, issues)
			}
			return
		}
		if len(raw) == 0 {
			t.Fatalf("%q: accepted with no XML", param)
		}
		again, _, err := samlResponse(base64.StdEncoding.EncodeToString(raw))
		if err != nil || string(again) != string(raw) {
			t.Fatalf("%q: its XML, re-encoded, is refused: %v", param, err)
		}
	})
}

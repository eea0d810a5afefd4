package api

import (
	"encoding/base64"
	"errors"
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
	supported := map[string]bool{"1.0.0": true, "1.1.0": true, "1.2.0": true, "1.2.1": true, "1.2.2": true, "1.2.3": true}
	f.Fuzz(func(t *testing.T, header string) {
		v, err := NegotiateVersion(header)
		if err != nil {
			var e *models.Error
			if !errors.As(err, &e) || e.Code != models.CodeUnsupportedAPIVersion || e.Details["supported"] == nil || e.Details["latest"] != LatestVersion {
				t.Fatalf("%q: error %v is not UNSUPPORTED_API_VERSION with details", header, err)
			}
			return
		}
		if !supported[v] {
			t.Fatalf("%q negotiated to %q", header, v)
		}
		if again, err := NegotiateVersion(v); err != nil || again != v {
			t.Fatalf("%q: %q negotiates to %q (%v)", header, v, again, err)
		}
	})
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

package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/crewjam/saml"
	"github.com/crewjam/saml/samlsp"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// SAML is the platform's SAML 2.0 service provider (crewjam/saml): its key
// and certificate are generated once and stored sealed; the identity
// provider's metadata is fetched from SAML_IDP_METADATA_URL on first use.
// IdP-initiated login is off.
type SAML struct {
	store       *models.Store
	identity    *identity.Store
	base        string
	metadataURL string
	client      *http.Client

	mu sync.Mutex
	sp *saml.ServiceProvider
}

// NewSAML returns the service provider of the server at base; metadataURL
// "" turns SAML off.
func NewSAML(store *models.Store, base, metadataURL string) *SAML {
	return &SAML{store: store, identity: identity.NewStore(store), base: strings.TrimRight(base, "/"), metadataURL: metadataURL, client: &http.Client{Timeout: 10 * time.Second}}
}

// Enabled reports whether an identity provider is configured.
func (s *SAML) Enabled() bool { return s.metadataURL != "" }

// ServiceProvider returns the configured service provider.
// Errors: DEPENDENCY_UNAVAILABLE (SAML off, or the IdP metadata cannot be
// fetched: a generic message, the reason only in the error's cause for the
// log), INTERNAL_ERROR.
func (s *SAML) ServiceProvider(ctx context.Context) (*saml.ServiceProvider, error) {
	if !s.Enabled() {
		return nil, models.Errorf(models.CodeDependencyUnavailable, "SAML single sign-on is not configured (SAML_IDP_METADATA_URL)")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sp != nil {
		return s.sp, nil
	}
	material, err := s.identity.EnsureServerSecretWith(ctx, "saml_sp", newSPKeyPair)
	if err != nil {
		return nil, err
	}
	key, cert, err := parseSPKeyPair(material)
	if err != nil {
		return nil, models.Internal(err)
	}
	mdURL, err := url.Parse(s.metadataURL)
	if err != nil {
		return nil, models.Internal(err)
	}
	md, err := samlsp.FetchMetadata(ctx, s.client, *mdURL)
	if err != nil {
		// The reason (addresses, network errors) is logged with the cause, never answered.
		e := models.Errorf(models.CodeDependencyUnavailable, "single sign-on is unavailable right now: try again later")
		e.Cause = err
		return nil, e
	}
	base, _ := url.Parse(s.base)
	metadata, acs := *base, *base
	metadata.Path, acs.Path = base.Path+"/saml/metadata", base.Path+"/saml/acs"
	s.sp = &saml.ServiceProvider{
		EntityID: metadata.String(), Key: key, Certificate: cert, MetadataURL: metadata, AcsURL: acs,
		IDPMetadata: md, AllowIDPInitiated: false, SignatureMethod: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
	}
	return s.sp, nil
}

// Metadata returns the SP metadata, requesting `email` (required) and
// `groups` (optional) in the basic name format.
func Metadata(sp *saml.ServiceProvider) *saml.EntityDescriptor {
	md := sp.Metadata()
	yes, no := true, false
	basic := "urn:oasis:names:tc:SAML:2.0:attrname-format:basic"
	for i := range md.SPSSODescriptors {
		d := &md.SPSSODescriptors[i]
		// Only what the server serves: the ACS reads a posted SAMLResponse
		// (HTTP-POST; no artifact resolution), and no empty NameIDFormat.
		d.AssertionConsumerServices = slices.DeleteFunc(d.AssertionConsumerServices, func(a saml.IndexedEndpoint) bool { return a.Binding != saml.HTTPPostBinding })
		d.NameIDFormats = slices.DeleteFunc(d.NameIDFormats, func(f saml.NameIDFormat) bool { return strings.TrimSpace(string(f)) == "" })
		md.SPSSODescriptors[i].AttributeConsumingServices = []saml.AttributeConsumingService{{
			Index: 1, IsDefault: &yes,
			ServiceNames: []saml.LocalizedName{{Lang: "en", Value: "Telco Platform"}},
			RequestedAttributes: []saml.RequestedAttribute{
				{Attribute: saml.Attribute{Name: "email", NameFormat: basic}, IsRequired: &yes},
				{Attribute: saml.Attribute{Name: "groups", NameFormat: basic}, IsRequired: &no},
			},
		}}
	}
	return md
}

// AssertionIdentity returns the e-mail, display name and groups of an
// assertion: `email` (or the `mail` attribute, or an e-mail NameID) and `groups`.
func AssertionIdentity(a *saml.Assertion) (email, name string, groups []string) {
	for _, st := range a.AttributeStatements {
		for _, attr := range st.Attributes {
			key := strings.ToLower(attr.FriendlyName)
			if key == "" {
				key = strings.ToLower(attr.Name)
			}
			switch {
			case key == "email" || key == "mail" || attr.Name == "urn:oid:0.9.2342.19200300.100.1.3":
				if len(attr.Values) > 0 && email == "" {
					email = attr.Values[0].Value
				}
			case key == "cn" || key == "displayname":
				if len(attr.Values) > 0 {
					name = attr.Values[0].Value
				}
			case key == "groups" || key == "edupersonaffiliation":
				for _, v := range attr.Values {
					groups = append(groups, v.Value)
				}
			}
		}
	}
	if email == "" && a.Subject != nil && a.Subject.NameID != nil && strings.Contains(a.Subject.NameID.Value, "@") {
		email = a.Subject.NameID.Value
	}
	return email, name, groups
}

func newSPKeyPair() (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "telco-platform-saml-sp"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0), KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})) + string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}

func parseSPKeyPair(material string) (*rsa.PrivateKey, *x509.Certificate, error) {
	var key *rsa.PrivateKey
	var cert *x509.Certificate
	rest := []byte(material)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		switch block.Type {
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, nil, err
			}
			key, _ = k.(*rsa.PrivateKey)
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, nil, err
			}
			cert = c
		}
	}
	if key == nil || cert == nil {
		return nil, nil, errors.New("SAML key pair is incomplete")
	}
	return key, cert, nil
}

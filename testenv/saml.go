package testenv

import (
	"context"
	"testing"

	"github.com/telcoplatform/platform/devidp"
)

// IdP is a real SAML identity provider (crewjam/saml's samlidp, through
// package devidp) serving on loopback for one test.
type IdP struct {
	URL string // base address; metadata at URL + "/metadata"
	idp *devidp.IdP
}

// IdPUser is a person the identity provider signs in.
type IdPUser = devidp.User

// SAMLIdP starts an identity provider for the test.
func SAMLIdP(t testing.TB) *IdP {
	t.Helper()
	idp, err := devidp.Start("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Close() })
	return &IdP{URL: idp.URL, idp: idp}
}

// AddServiceProvider registers a service provider by its metadata.
func (i *IdP) AddServiceProvider(t testing.TB, name string, metadata []byte) {
	t.Helper()
	if err := i.idp.AddServiceProvider(context.Background(), name, metadata); err != nil {
		t.Fatal(err)
	}
}

// AddUser registers a user at the identity provider.
func (i *IdP) AddUser(t testing.TB, u IdPUser) {
	t.Helper()
	if err := i.idp.AddUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

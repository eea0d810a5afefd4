package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// TestCatalogServedFromMemory: the catalog's answer is the same, ETag
// included, whether built or kept; a change of the catalog tables shows
// within a second.
func TestCatalogServedFromMemory(t *testing.T) {
	h := newHarness(t)
	key := h.tenants[0].liveKey
	metadata := regexp.MustCompile(`"metadata":\{[^}]*\}`)
	get := func() ([]byte, string) {
		t.Helper()
		r := h.do("GET", "/v1/services/catalog", key, nil)
		r.decode(http.StatusOK, nil)
		return metadata.ReplaceAll(r.body, nil), r.header.Get("ETag")
	}
	fresh, etag := get()
	for i := 0; i < 3; i++ {
		body, tag := get()
		if !bytes.Equal(body, fresh) || tag != etag {
			t.Fatalf("a kept answer differs from the built one:\n%s %s\n%s %s", body, tag, fresh, etag)
		}
	}
	// The ETag is that of the body without its metadata, as encoded for
	// every other answer (SHA-256 of the JSON without HTML escaping).
	r := h.do("GET", "/v1/services/catalog", key, nil)
	raw := regexp.MustCompile(`"metadata":\{[^}]*\},?`).ReplaceAll(bytes.TrimRight(r.body, "\n"), nil)
	raw = []byte(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(raw)))
	sum := sha256.Sum256(raw)
	if want := `"` + hex.EncodeToString(sum[:16]) + `"`; etag != want {
		t.Fatalf("ETag %s, want %s", etag, want)
	}
	// A new server (nothing kept) answers the same bytes.
	on(h, secondInstance(t, h), func() {
		if body, tag := get(); !bytes.Equal(body, fresh) || tag != etag {
			t.Fatalf("another instance answers differently:\n%s\n%s", body, fresh)
		}
	})

	err := h.store.In(context.Background(), models.SystemScope()).Model(&catalog.CatalogService{}).
		Where("id = ?", "internet-fiber-dedicated").Update("name", "Renamed fiber").Error
	if err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	for {
		sent := time.Now()
		body, tag := get()
		if bytes.Contains(body, []byte(`"Renamed fiber"`)) {
			if tag == etag {
				t.Fatal("the ETag did not change with the catalog")
			}
			break
		}
		if sent.Sub(changed) >= time.Second {
			t.Fatalf("the catalog change is not visible %v after it", sent.Sub(changed))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

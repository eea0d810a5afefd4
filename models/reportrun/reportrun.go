// Package reportrun is what every report run of the platform shares, the
// support area's (POST /v1/support/reports/generate) and the analytics
// report builder's (POST /v1/analytics/reports): the signed, expiring
// download links of their files, the byte count of a file being written
// to the blob store, and the one way a blob store failure is reported.
package reportrun

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// DefaultLinkTTL is how long a report's download link works when the
// platform sets no other (REPORT_LINK_TTL).
const DefaultLinkTTL = 24 * time.Hour

// secretName names the server secret download links are signed with.
const secretName = "report_links"

// Signer signs and checks download links with the platform's server secret
// (generated on first use and sealed at rest). A report id is unique across
// every kind of report, so one secret serves them all.
type Signer struct {
	secret string
}

// LoadSigner reads (or makes) the signing secret. Errors: INTERNAL_ERROR
// (no SECRETS_KEY to keep it).
func LoadSigner(ctx context.Context, ids *identity.Store) (*Signer, error) {
	secret, err := ids.EnsureServerSecret(ctx, secretName)
	if err != nil {
		return nil, err
	}
	return &Signer{secret: secret}, nil
}

// Link returns the download link of report id, valid until expires:
// {baseURL}{prefix}/{id}/download?expires=<unix seconds>&signature=<hex
// HMAC-SHA256 of id and expires>. prefix is the report's collection, such
// as /v1/support/reports.
func (s *Signer) Link(baseURL, prefix, id string, expires time.Time) string {
	q := url.Values{"expires": {strconv.FormatInt(expires.Unix(), 10)}, "signature": {s.sign(id, expires.Unix())}}
	return baseURL + prefix + "/" + url.PathEscape(id) + "/download?" + q.Encode()
}

// sign signs (id, expires).
func (s *Signer) sign(id string, expires int64) string {
	mac := hmac.New(sha256.New, []byte(s.secret))
	fmt.Fprintf(mac, "report-download\x00%s\x00%d", id, expires)
	return hex.EncodeToString(mac.Sum(nil))
}

// Check checks a link's expires and signature for report id at now; fresh
// says where a new link is had (GET /v1/...), for the error messages.
// Errors: INVALID_SIGNATURE (not a link the platform signed), TOKEN_EXPIRED.
func (s *Signer) Check(id, expires, signature, fresh string, now time.Time) error {
	exp, err := strconv.ParseInt(expires, 10, 64)
	bad := models.Errorf(models.CodeInvalidSignature, "this download link is not valid: GET %s for a fresh one", fresh)
	if err != nil || len(signature) != sha256.Size*2 {
		return bad
	}
	if !hmac.Equal([]byte(s.sign(id, exp)), []byte(signature)) {
		return bad
	}
	if now.Unix() > exp {
		at := models.Timestamp(time.Unix(exp, 0))
		return models.Errorf(models.CodeTokenExpired, "this download link expired at %s: GET %s for a fresh one", at, fresh).WithDetail("expired_at", at)
	}
	return nil
}

// Open opens report id's file at key in blobs; the caller closes it.
// Errors: NOT_FOUND (the file is no longer kept), DEPENDENCY_UNAVAILABLE
// (no blob store, or it failed).
func Open(ctx context.Context, blobs *blob.Bucket, key, id string) (io.ReadCloser, error) {
	if blobs == nil {
		return nil, models.Errorf(models.CodeDependencyUnavailable, "reports need a blob store (BLOB_URL)")
	}
	r, err := blobs.NewReader(ctx, key, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, models.Errorf(models.CodeNotFound, "report %s's file is no longer kept", id)
	}
	if err != nil {
		return nil, BlobError(err)
	}
	return r, nil
}

// CountingWriter counts the bytes written through it to W.
type CountingWriter struct {
	W io.Writer
	N int64
}

// Write writes p to W and counts what was written.
func (c *CountingWriter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}

// BlobError is a blob store failure: DEPENDENCY_UNAVAILABLE (retried), or
// the platform error it already is.
func BlobError(err error) error {
	if me := models.AsError(err); me.Code != models.CodeInternal {
		return me
	}
	e := models.Errorf(models.CodeDependencyUnavailable, "the blob store failed; retry later")
	e.Cause = err
	return e
}

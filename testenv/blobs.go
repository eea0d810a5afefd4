package testenv

import (
	"context"
	"testing"

	"gocloud.dev/blob"

	"github.com/telcoplatform/platform/blobstore"
)

// Blobs returns a blob store in a folder private to t (a file:// bucket
// opened through blobstore.Open, as BLOB_URL is), closed when t finishes.
func Blobs(t testing.TB) *blob.Bucket {
	t.Helper()
	b, err := blobstore.Open(context.Background(), "file://"+t.TempDir())
	if err != nil {
		t.Fatalf("testenv: blob store: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

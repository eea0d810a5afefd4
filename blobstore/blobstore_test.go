package blobstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/telcoplatform/platform/blobstore"
)

func TestResolve(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.ToSlash(filepath.Join(wd, ".data", "blobs"))
	for in, want := range map[string]string{
		"file:.data/blobs":                   "file://" + abs + "?create_dir=true&no_tmp_dir=true",
		"file://./.data/blobs":               "file://" + abs + "?create_dir=true&no_tmp_dir=true",
		"file:///srv/blobs?metadata=skip":    "file:///srv/blobs?create_dir=true&metadata=skip&no_tmp_dir=true",
		"file:///srv/blobs?create_dir=false": "file:///srv/blobs?create_dir=false&no_tmp_dir=true",
		"s3://attachments?region=eu-west-1":  "s3://attachments?region=eu-west-1",
		"file:/var/lib/platform/blobs":       "file:///var/lib/platform/blobs?create_dir=true&no_tmp_dir=true",
	} {
		got, err := blobstore.Resolve(in)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "blobs", "file://example.com/blobs", "file://"} {
		if _, err := blobstore.Resolve(bad); err == nil || !strings.Contains(err.Error(), "BLOB_URL") {
			t.Errorf("Resolve(%q) = %v, want a BLOB_URL error", bad, err)
		}
	}
}

// TestOpenCreatesTheFolder: a file bucket's folder is created and the
// files land in it.
func TestOpenCreatesTheFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "blobs")
	b, err := blobstore.Open(context.Background(), "file://"+filepath.ToSlash(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.WriteAll(context.Background(), "attachments/att_1", []byte("hello"), nil); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "attachments", "att_1"))
	if err != nil || string(raw) != "hello" {
		t.Fatalf("file %q, %v", raw, err)
	}
	if _, err := blobstore.Open(context.Background(), "gs://not-registered"); err == nil {
		t.Fatal("an unregistered scheme opened")
	}
}

// Package blobstore opens the platform's blob store (BLOB_URL): where the
// support area keeps attachments. It is the Go CDK's portable bucket
// (gocloud.dev/blob) with two drivers: fileblob for file URLs (the embedded
// default, a folder under the data folder) and s3blob for s3:// URLs
// (production: Amazon S3 or an S3-compatible store).
package blobstore

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:///path and file:relative/path
	_ "gocloud.dev/blob/s3blob"   // s3://bucket?region=...
)

// Open opens the bucket at rawURL. A file URL may be relative
// (file:.data/blobs, file://./.data/blobs): it is resolved against the
// working directory, like DATABASE_URL's sqlite:.data/platform.db, into an
// absolute file:/// URL; its folder is created when missing and files are
// written through a temporary file beside them, then renamed. Every other
// scheme goes to its registered driver (s3://bucket?region=eu-west-1, with
// the AWS SDK's usual credentials).
func Open(ctx context.Context, rawURL string) (*blob.Bucket, error) {
	u, err := Resolve(rawURL)
	if err != nil {
		return nil, err
	}
	b, err := blob.OpenBucket(ctx, u)
	if err != nil {
		return nil, fmt.Errorf("BLOB_URL: %w", err)
	}
	return b, nil
}

// Resolve returns the URL Open opens for rawURL: file URLs made absolute,
// with create_dir and no_tmp_dir set unless given; other URLs unchanged.
func Resolve(rawURL string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("BLOB_URL: %q is not a URL (file:///path/to/folder, file:relative/folder or s3://bucket?region=...)", rawURL)
	}
	if u.Scheme != "file" {
		return u.String(), nil
	}
	path := u.Opaque // file:.data/blobs
	switch {
	case path != "":
	case u.Host == ".": // file://./.data/blobs
		path = strings.TrimPrefix(u.Path, "/")
	case u.Host == "" || u.Host == "localhost":
		path = u.Path
	default:
		return "", fmt.Errorf("BLOB_URL: a file URL names no host (file:///path/to/folder)")
	}
	if path == "" {
		return "", fmt.Errorf("BLOB_URL: a file URL needs a folder")
	}
	abs, err := filepath.Abs(filepath.FromSlash(path))
	if err != nil {
		return "", fmt.Errorf("BLOB_URL: %w", err)
	}
	q := u.Query()
	for _, k := range []string{"create_dir", "no_tmp_dir"} {
		if q.Get(k) == "" {
			q.Set(k, "true")
		}
	}
	out := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	return out.String(), nil
}

package api_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
)

// attachmentItem is an attachment as answered.
type attachmentItem struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	DownloadURL string `json:"download_url"`
}

// commentWithAttachments is a comment answer's attachments.
type commentWithAttachments struct {
	Comment struct {
		ID          string           `json:"id"`
		Attachments []attachmentItem `json:"attachments"`
	} `json:"comment"`
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// attach posts a comment with one attachment and returns the attachment.
func attach(t *testing.T, h *harness, key, ticketID string, comment map[string]any) attachmentItem {
	t.Helper()
	var c commentWithAttachments
	h.do("POST", "/v1/support/tickets/"+ticketID+"/comments", key, comment).decode(201, &c)
	if len(c.Comment.Attachments) != 1 {
		t.Fatalf("attachments %+v", c.Comment.Attachments)
	}
	return c.Comment.Attachments[0]
}

// downloadPath is the path of an attachment's download_url.
func downloadPath(t *testing.T, a attachmentItem) string {
	t.Helper()
	i := strings.Index(a.DownloadURL, "/v1/attachments/")
	if i < 0 || !strings.HasSuffix(a.DownloadURL, "/v1/attachments/"+a.ID) {
		t.Fatalf("download_url %q", a.DownloadURL)
	}
	return a.DownloadURL[i:]
}

func TestSupportAttachmentRoundTrip(t *testing.T) {
	h := newHarness(t)
	a, b := h.tenants[0], h.tenants[1]
	staff, _ := staffKey(t, h)
	content := "traceroute to 192.0.2.1\n 1  10.0.0.1  0.4 ms\n"
	// With the ticket.
	tk := newTicket(t, h, a.liveKey, map[string]any{"attachments": []map[string]any{
		{"filename": "C:\\logs\\router.log", "content_type": "text/plain", "size": 5, "data": b64("hello")}}})
	var got struct {
		Ticket struct {
			Attachments []attachmentItem `json:"attachments"`
		} `json:"ticket"`
	}
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID, a.liveKey, nil).decode(200, &got)
	if len(got.Ticket.Attachments) != 1 || got.Ticket.Attachments[0].Filename != "router.log" || got.Ticket.Attachments[0].Size != 5 {
		t.Fatalf("ticket attachments %+v", got.Ticket.Attachments)
	}
	res := h.do("GET", downloadPath(t, got.Ticket.Attachments[0]), a.liveKey, nil).decode(200, nil)
	if string(res.body) != "hello" {
		t.Fatalf("ticket attachment content %q", res.body)
	}

	// With a comment; the filename is sanitised, the content type normalised.
	att := attach(t, h, a.liveKey, tk.Ticket.ID, map[string]any{"content": "trace attached", "attachments": []map[string]any{
		{"filename": "../../etc/\"trace\";\r\nX.txt", "content_type": "Text/Plain; charset=utf-8", "data": b64(content)}}})
	if !strings.HasPrefix(att.ID, "att_") || att.Filename != "_trace____X.txt" || att.ContentType != "text/plain" || att.Size != int64(len(content)) {
		t.Fatalf("attachment %+v", att)
	}
	path := downloadPath(t, att)
	for _, key := range []string{a.liveKey, staff} {
		res := h.do("GET", path, key, nil).decode(200, nil)
		if string(res.body) != content {
			t.Fatalf("content %q, want %q", res.body, content)
		}
		if ct := res.header.Get("Content-Type"); ct != "text/plain" {
			t.Fatalf("Content-Type %q", ct)
		}
		if cd := res.header.Get("Content-Disposition"); cd != `attachment; filename=_trace____X.txt` {
			t.Fatalf("Content-Disposition %q", cd)
		}
		if res.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("no nosniff: %v", res.header)
		}
	}
	// Listing the comments shows the attachment.
	var list struct {
		Comments []struct {
			ID          string           `json:"id"`
			Attachments []attachmentItem `json:"attachments"`
		} `json:"comments"`
	}
	h.do("GET", "/v1/support/tickets/"+tk.Ticket.ID+"/comments", a.liveKey, nil).decode(200, &list)
	if len(list.Comments) != 1 || len(list.Comments[0].Attachments) != 1 || list.Comments[0].Attachments[0].ID != att.ID {
		t.Fatalf("comments %+v", list.Comments)
	}
	// Another tenant and the other environment get 404.
	h.do("GET", path, b.liveKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", path, a.testKey, nil).wantError(404, "NOT_FOUND")
	h.do("GET", "/v1/attachments/att_nothing", a.liveKey, nil).wantError(404, "NOT_FOUND")

	// An internal comment's attachment: staff only, 404 for the customer.
	internal := attach(t, h, staff, tk.Ticket.ID, map[string]any{"content": "vendor notes", "visibility": "internal", "attachments": []map[string]any{
		{"filename": "vendor.csv", "content_type": "text/csv", "data": b64("a,b\n1,2\n")}}})
	h.do("GET", downloadPath(t, internal), staff, nil).decode(200, nil)
	h.do("GET", downloadPath(t, internal), a.liveKey, nil).wantError(404, "NOT_FOUND")

	// A tampered file fails its checksum: an error, never the bytes.
	if err := h.blobs.WriteAll(context.Background(), "attachments/"+att.ID, []byte(strings.ToUpper(content)), nil); err != nil {
		t.Fatal(err)
	}
	res = h.do("GET", path, a.liveKey, nil)
	if res.status < 500 || strings.Contains(string(res.body), "TRACEROUTE") {
		t.Fatalf("tampered attachment served: %d %s", res.status, res.body)
	}
}

func TestSupportAttachmentLimits(t *testing.T) {
	h := newHarness(t)
	a := h.tenants[0]
	tk := newTicket(t, h, a.liveKey, nil)
	path := "/v1/support/tickets/" + tk.Ticket.ID + "/comments"
	one := func(att map[string]any) map[string]any {
		return map[string]any{"content": "see attached", "attachments": []map[string]any{att}}
	}
	// Above 10 MiB decoded: 413 (the body, 13.3 MiB of base64, is within the route's 15 MiB).
	big := base64.StdEncoding.EncodeToString(make([]byte, 10<<20+1))
	h.do("POST", path, a.liveKey, one(map[string]any{"filename": "big.txt", "content_type": "text/plain", "data": big})).wantError(413, "PAYLOAD_TOO_LARGE")
	// Exactly 10 MiB is accepted.
	exact := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 10<<20)))
	h.do("POST", path, a.liveKey, one(map[string]any{"filename": "max.txt", "content_type": "text/plain", "data": exact})).decode(201, nil)
	// A body above 15 MiB is refused before it is read.
	huge := strings.Repeat("A", 15<<20) // with the rest of the body, above 15 MiB
	h.do("POST", path, a.liveKey, one(map[string]any{"filename": "huge.txt", "content_type": "text/plain", "data": huge})).wantError(413, "PAYLOAD_TOO_LARGE")
	// Bad input: 400 naming the attachment's field.
	wantFields(t, h.do("POST", path, a.liveKey, one(map[string]any{"filename": "x.txt", "content_type": "text/plain", "data": "%%% not base64"})), "attachments[0].data")
	wantFields(t, h.do("POST", path, a.liveKey, one(map[string]any{"filename": "x.html", "content_type": "text/html", "data": b64("<script>")})), "attachments[0].content_type")
	wantFields(t, h.do("POST", path, a.liveKey, one(map[string]any{"filename": "x.bin", "content_type": "application/octet-stream", "data": b64("x")})), "attachments[0].content_type")
	wantFields(t, h.do("POST", path, a.liveKey, one(map[string]any{"filename": "fake.png", "content_type": "image/png", "data": b64("<html>not a png</html>")})), "attachments[0].content_type")
	wantFields(t, h.do("POST", path, a.liveKey, one(map[string]any{"filename": "x.txt", "content_type": "text/plain", "size": 99, "data": b64("abc")})), "attachments[0].size")
	wantFields(t, h.do("POST", path, a.liveKey, one(map[string]any{"content_type": "text/plain", "data": b64("abc")})), "attachments[0].filename")
	wantFields(t, h.do("POST", path, a.liveKey, one(map[string]any{"filename": "x.txt", "content_type": "text/plain"})), "attachments[0].data")
	// content is an alias of data.
	var c commentWithAttachments
	h.do("POST", path, a.liveKey, one(map[string]any{"filename": "x.json", "content_type": "application/json", "content": b64(`{"a":1}`)})).decode(201, &c)
	if len(c.Comment.Attachments) != 1 || c.Comment.Attachments[0].Size != 7 {
		t.Fatalf("attachments %+v", c.Comment.Attachments)
	}
	// Nothing was stored for the refused comments.
	var list struct {
		Comments []any `json:"comments"`
	}
	h.do("GET", path, a.liveKey, nil).decode(200, &list)
	if len(list.Comments) != 2 {
		t.Fatalf("%d comments, want 2 (the 10 MiB one and the alias one)", len(list.Comments))
	}
}

package support

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// Bounds of attachments (DECISIONS 2: each attachment at most 10 MiB
// decoded; the request that carries them at most 15 MiB).
const (
	MaxAttachmentBytes = 10 << 20
	MaxAttachments     = 10 // per ticket creation or comment
	MaxFilename        = 255
)

// AllowedContentTypes lists the media types an attachment may have:
// documents, images, logs, captures and archives a support conversation
// needs. Types a browser would render as active content (HTML, SVG,
// JavaScript) and the catch-all application/octet-stream are refused.
func AllowedContentTypes() []string {
	return []string{
		"application/pdf", "text/plain", "text/csv", "application/json", "application/xml", "text/xml",
		"image/png", "image/jpeg", "image/gif", "image/webp",
		"application/zip", "application/gzip", "application/x-gzip",
		"application/vnd.tcpdump.pcap",
		"application/msword", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"application/vnd.ms-excel", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	}
}

// sniffedTypes are the allowed types whose content is checked against
// their declared type (the first bytes must be a file of that type).
var sniffedTypes = map[string]string{
	"application/pdf": "application/pdf", "image/png": "image/png", "image/jpeg": "image/jpeg",
	"image/gif": "image/gif", "image/webp": "image/webp",
}

// Attachment is a file attached to a ticket (CommentID empty: sent with
// the ticket) or to one of its comments. The content lives in the blob
// store under StorageKey; SHA256 is the hex SHA-256 of the content, checked
// on every download.
type Attachment struct {
	ID string `gorm:"primaryKey;size:40"`
	models.Tenant
	TicketID    string    `gorm:"size:40;not null;index"`
	CommentID   string    `gorm:"size:40;index"`
	Filename    string    `gorm:"size:255;not null"`
	ContentType string    `gorm:"size:100;not null"`
	Size        int64     `gorm:"not null"`
	SHA256      string    `gorm:"column:sha256;size:64;not null"`
	StorageKey  string    `gorm:"size:200;not null"`
	CreatedBy   string    `gorm:"size:40;not null"`
	CreatedAt   time.Time `gorm:"not null;index"`
}

// TableName is the attachments table.
func (Attachment) TableName() string { return "support_attachments" }

// AttachmentInput is an attachment as sent: a file name, a media type and
// the content in base64 (RFC 4648, standard alphabet; padding and line
// breaks optional). Size, when given, must be the decoded size.
type AttachmentInput struct {
	Filename    string
	ContentType string
	Size        *int64
	Data        string
}

// Option configures a Store.
type Option func(*Store)

// WithBlobs gives the store the blob store attachments are kept in
// (without one, attachments are refused with DEPENDENCY_UNAVAILABLE).
func WithBlobs(b *blob.Bucket) Option { return func(s *Store) { s.blobs = b } }

// upload is a validated attachment with its decoded content.
type upload struct {
	att  *Attachment
	data []byte
}

// SanitizeFilename returns the name a file is stored and served under:
// the last element of the path sent (either separator), with every
// character other than letters, digits, dot, dash, underscore, space,
// parentheses and plus replaced by "_", no leading dots or spaces, at most
// 255 bytes (the extension kept), and "attachment" when nothing is left.
func SanitizeFilename(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._- ()+", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.TrimLeft(strings.TrimSpace(b.String()), ". ")
	if len(out) > MaxFilename {
		ext := ""
		if i := strings.LastIndex(out, "."); i > 0 && len(out)-i <= 16 {
			ext = out[i:]
		}
		out = out[:MaxFilename-len(ext)] + ext
	}
	if strings.Trim(out, "._- ()+") == "" {
		return "attachment"
	}
	return out
}

// decodeBase64 reads standard base64 with or without padding, ignoring
// line breaks and spaces.
func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	if data, err := base64.StdEncoding.DecodeString(s); err == nil {
		return data, nil
	}
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

// prepareAttachments validates ins (issues in v, named attachments[i].field)
// and decodes them. An attachment above MaxAttachmentBytes is
// PAYLOAD_TOO_LARGE (after the other issues, which are reported first).
func prepareAttachments(v *models.Validator, ins []AttachmentInput, by string, now time.Time) ([]upload, error) {
	v.Check(len(ins) <= MaxAttachments, "attachments", "must have at most "+itoa(MaxAttachments)+" files")
	var out []upload
	var tooLarge []string
	for i, in := range ins {
		field := fmt.Sprintf("attachments[%d]", i)
		name := strings.TrimSpace(in.Filename)
		v.Check(name != "", field+".filename", "is required")
		v.Check(utf8.RuneCountInString(name) <= MaxFilename, field+".filename", "must be at most "+itoa(MaxFilename)+" characters")
		ct := ""
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(in.ContentType)); err == nil {
			ct = strings.ToLower(mt)
		}
		switch {
		case strings.TrimSpace(in.ContentType) == "":
			v.Add(field+".content_type", "is required")
		case !slices.Contains(AllowedContentTypes(), ct):
			v.Add(field+".content_type", "must be one of "+joinList(AllowedContentTypes()))
		}
		if in.Data == "" {
			v.Add(field+".data", "is required: the file's content in base64")
			continue
		}
		if int64(base64.StdEncoding.DecodedLen(len(in.Data))) > MaxAttachmentBytes+3 {
			tooLarge = append(tooLarge, field)
			continue
		}
		data, err := decodeBase64(in.Data)
		if err != nil {
			v.Add(field+".data", "must be base64 (RFC 4648, standard alphabet)")
			continue
		}
		switch {
		case len(data) == 0:
			v.Add(field+".data", "must not be empty")
			continue
		case len(data) > MaxAttachmentBytes:
			tooLarge = append(tooLarge, field)
			continue
		}
		if in.Size != nil {
			v.Check(*in.Size == int64(len(data)), field+".size", "must be the decoded size of data ("+itoa(len(data))+" bytes)")
		}
		if want, ok := sniffedTypes[ct]; ok {
			got, _, _ := mime.ParseMediaType(http.DetectContentType(data))
			v.Check(got == want, field+".content_type", "does not match the content (it looks like "+got+")")
		}
		sum := sha256.Sum256(data)
		id := models.NewID(models.PrefixAttachment)
		out = append(out, upload{data: data, att: &Attachment{ID: id, Filename: SanitizeFilename(name), ContentType: ct,
			Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]), StorageKey: "attachments/" + id, CreatedBy: by, CreatedAt: now}})
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if len(tooLarge) > 0 {
		return nil, models.Errorf(models.CodePayloadTooLarge, "an attachment may have at most %d MiB (%d bytes) once decoded", MaxAttachmentBytes>>20, MaxAttachmentBytes).
			WithDetail("fields", tooLarge).WithDetail("limit_bytes", MaxAttachmentBytes)
	}
	return out, nil
}

// storeBlobs writes the content of ups to the blob store, before the
// transaction that records them. The returned function removes them again
// (when the transaction fails).
func (s *Store) storeBlobs(ctx context.Context, ups []upload) (func(), error) {
	undo := func() {
		for _, u := range ups {
			_ = s.blobs.Delete(context.WithoutCancel(ctx), u.att.StorageKey)
		}
	}
	if len(ups) == 0 {
		return func() {}, nil
	}
	if s.blobs == nil {
		return nil, models.Errorf(models.CodeDependencyUnavailable, "attachments are not available: the blob store (BLOB_URL) is not configured")
	}
	for _, u := range ups {
		err := s.blobs.WriteAll(ctx, u.att.StorageKey, u.data, &blob.WriterOptions{ContentType: u.att.ContentType})
		if err != nil {
			undo()
			return nil, models.Errorf(models.CodeDependencyUnavailable, "the blob store did not take the attachment").WithDetail("reason", err.Error())
		}
	}
	return undo, nil
}

// recordAttachments stores the metadata of ups inside tx, for ticket t and
// comment commentID ("" for the ticket's own).
func recordAttachments(tx *gorm.DB, ups []upload, ticketID, commentID string) ([]Attachment, error) {
	out := make([]Attachment, 0, len(ups))
	for _, u := range ups {
		u.att.TicketID, u.att.CommentID = ticketID, commentID
		if err := tx.Create(u.att).Error; err != nil {
			return nil, dbErr(err)
		}
		out = append(out, *u.att)
	}
	return out, nil
}

// attachmentsOf returns the attachments of a ticket's comments (key: the
// comment id) in scope, oldest first.
func (s *Store) attachmentsOf(ctx context.Context, scope models.Scope, commentIDs []string) map[string][]Attachment {
	out := map[string][]Attachment{}
	if len(commentIDs) == 0 {
		return out
	}
	var rows []Attachment
	if err := s.core.In(ctx, scope).Where("comment_id IN ?", commentIDs).Order("created_at, id").Find(&rows).Error; err != nil {
		return out
	}
	for _, a := range rows {
		out[a.CommentID] = append(out[a.CommentID], a)
	}
	return out
}

// fillTicketAttachments loads the attachments sent with each ticket.
func (s *Store) fillTicketAttachments(ctx context.Context, ts []*Ticket) {
	if len(ts) == 0 {
		return
	}
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
		t.Attachments = []Attachment{}
	}
	var rows []Attachment
	if err := s.core.In(ctx, models.SystemScope()).Where("ticket_id IN ? AND comment_id = ?", ids, "").Order("created_at, id").Find(&rows).Error; err != nil {
		return
	}
	for _, a := range rows {
		for _, t := range ts {
			if t.ID == a.TicketID && t.OrganizationID == a.OrganizationID {
				t.Attachments = append(t.Attachments, a)
			}
		}
	}
}

// GetAttachment returns an attachment p may see and its content: p must
// see its ticket (its organization and environment, or provider staff of
// the environment), and customers never get the attachments of internal
// comments (NOT_FOUND, like another tenant's). The content is read whole
// (at most MaxAttachmentBytes) and checked against the stored size and
// SHA-256; a mismatch or a missing file is an INTERNAL_ERROR and no byte is
// served. Errors: NOT_FOUND, DEPENDENCY_UNAVAILABLE, INTERNAL_ERROR.
func (s *Store) GetAttachment(ctx context.Context, p *models.Principal, id string) (*Attachment, []byte, error) {
	var a Attachment
	if err := s.core.In(ctx, p.Scope()).Where("id = ?", id).Take(&a).Error; err != nil {
		return nil, nil, notFoundOr(err, "attachment")
	}
	if _, err := s.GetTicket(ctx, p, a.TicketID); err != nil {
		return nil, nil, err
	}
	if a.CommentID != "" {
		var c Comment
		if err := s.core.In(ctx, p.Scope()).Where("id = ?", a.CommentID).Take(&c).Error; err != nil {
			return nil, nil, notFoundOr(err, "attachment")
		}
		if c.Visibility != VisibilityCustomer && !isStaff(p) {
			return nil, nil, models.NotFound("attachment")
		}
	}
	if s.blobs == nil {
		return nil, nil, models.Errorf(models.CodeDependencyUnavailable, "attachments are not available: the blob store (BLOB_URL) is not configured")
	}
	r, err := s.blobs.NewReader(ctx, a.StorageKey, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, nil, models.Internal(fmt.Errorf("attachment %s: its file %s is missing from the blob store", a.ID, a.StorageKey))
		}
		return nil, nil, models.Errorf(models.CodeDependencyUnavailable, "the blob store could not be read").WithDetail("reason", err.Error())
	}
	defer func() { _ = r.Close() }()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(r, a.Size+1)); err != nil {
		return nil, nil, models.Errorf(models.CodeDependencyUnavailable, "the blob store could not be read").WithDetail("reason", err.Error())
	}
	sum := sha256.Sum256(buf.Bytes())
	if int64(buf.Len()) != a.Size || hex.EncodeToString(sum[:]) != a.SHA256 {
		return nil, nil, models.Internal(errors.New("attachment " + a.ID + " failed its integrity check: the stored file's size or SHA-256 differs from its record"))
	}
	return &a, buf.Bytes(), nil
}

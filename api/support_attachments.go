package api

import (
	"context"
	"mime"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models/support"
)

// attachmentInputs converts the attachments of a body for the domain.
func attachmentInputs(bodies []AttachmentBody) []support.AttachmentInput {
	out := make([]support.AttachmentInput, len(bodies))
	for i, b := range bodies {
		data := b.Data
		if data == "" {
			data = b.Content
		}
		out[i] = support.AttachmentInput{Filename: b.Filename, ContentType: b.ContentType, Size: b.Size, Data: data}
	}
	return out
}

// attachmentItems converts attachments (never nil).
func (s *Server) attachmentItems(atts []support.Attachment) []CommentAttachment {
	out := make([]CommentAttachment, len(atts))
	for i, a := range atts {
		out[i] = CommentAttachment{ID: a.ID, Filename: a.Filename, ContentType: a.ContentType, Size: a.Size,
			DownloadURL: s.cfg.PublicBaseURL + "/v1/attachments/" + a.ID}
	}
	return out
}

// AttachmentOutput is an attachment's content.
type AttachmentOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	NoSniff            string `header:"X-Content-Type-Options"`
	ContentLength      string `header:"Content-Length"`
	CacheControl       string `header:"Cache-Control"`
	Body               []byte
}

// registerSupportAttachments registers the download of attachments.
func (s *Server) registerSupportAttachments(tags []string) {
	register(s, huma.Operation{OperationID: "get-attachment", Method: http.MethodGet, Path: "/attachments/{attachment_id}", Summary: "Download an attachment",
		Description: "The file as it was uploaded, with its content type, `Content-Disposition: attachment` and `X-Content-Type-Options: nosniff`. " +
			"Served to those who may see its ticket and comment: another organization's attachment, or a customer asking for one of an internal comment, is 404. " +
			"The content is checked against its stored SHA-256 before it is sent.",
		Tags: tags, Responses: map[string]*huma.Response{"200": {Description: "The file", Content: map[string]*huma.MediaType{"application/octet-stream": {}}}}},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *struct {
			ID string `path:"attachment_id" maxLength:"64" doc:"The attachment (att_...)"`
		}) (*AttachmentOutput, error) {
			a, data, err := s.support.GetAttachment(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return &AttachmentOutput{ContentType: a.ContentType, NoSniff: "nosniff", CacheControl: "private, no-store",
				ContentDisposition: mime.FormatMediaType("attachment", map[string]string{"filename": a.Filename}),
				ContentLength:      strconv.Itoa(len(data)), Body: data}, nil
		})
}

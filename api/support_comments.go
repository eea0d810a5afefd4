package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// CommentAuthorBody is the author a client may name in a comment body;
// the author is always the caller, so it is ignored.
type CommentAuthorBody struct {
	Type string `json:"type,omitempty" maxLength:"16"`
	ID   string `json:"id,omitempty" maxLength:"64"`
	Name string `json:"name,omitempty" maxLength:"200"`
}

// CommentBody is the body of a new comment.
type CommentBody struct {
	Content     string             `json:"content,omitempty" required:"true" minLength:"1" maxLength:"10000" example:"The crew is on site." doc:"Required"`
	Type        string             `json:"type,omitempty" enum:"comment,customer_update,internal_note,resolution" maxLength:"32" doc:"comment (default), customer_update, internal_note or resolution"`
	Visibility  string             `json:"visibility,omitempty" enum:"customer,internal" maxLength:"16" doc:"customer (default) or internal (provider staff only)"`
	Author      *CommentAuthorBody `json:"author,omitempty" doc:"Ignored: the author is the caller"`
	Attachments []AttachmentBody   `json:"attachments,omitempty" maxItems:"10" doc:"Files in base64: at most 10, each at most 10 MiB decoded, the whole body at most 15 MiB"`
	Metadata    map[string]any     `json:"metadata,omitempty" doc:"Free-form; at most 50 keys and 8 KiB of JSON"`
}

// CommentAttachment is a file attached to a ticket or a comment.
type CommentAttachment struct {
	ID          string `json:"id" example:"att_3fK9aZ"`
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size" doc:"Bytes"`
	DownloadURL string `json:"download_url" doc:"GET it with a credential that may see the ticket (and the comment)"`
}

// CommentItem is a comment on a ticket.
type CommentItem struct {
	ID          string              `json:"id" example:"cmt_3fK9aZ"`
	TicketID    string              `json:"ticket_id"`
	Content     string              `json:"content"`
	Type        string              `json:"type"`
	Visibility  string              `json:"visibility" enum:"customer,internal"`
	Author      ActorItem           `json:"author"`
	Attachments []CommentAttachment `json:"attachments"`
	Metadata    map[string]any      `json:"metadata"`
	CreatedAt   string              `json:"created_at"`
}

func (s *Server) commentItem(c *support.Comment) CommentItem {
	it := CommentItem{ID: c.ID, TicketID: c.TicketID, Content: c.Content, Type: c.Type, Visibility: c.Visibility,
		Author:      ActorItem{Type: c.AuthorType, ID: c.AuthorID, Name: c.AuthorName, Email: c.AuthorEmail},
		Attachments: s.attachmentItems(c.Attachments), Metadata: c.Metadata, CreatedAt: models.Timestamp(c.CreatedAt)}
	if it.Metadata == nil {
		it.Metadata = map[string]any{}
	}
	return it
}

// CommentOutput wraps one comment.
type CommentOutput struct {
	Status int
	Body   struct {
		Envelope
		Comment CommentItem `json:"comment"`
	}
}

// CommentsOutput is a page of a ticket's comments.
type CommentsOutput struct {
	Body struct {
		Envelope
		Comments   []CommentItem `json:"comments"`
		Pagination Pagination    `json:"pagination"`
	}
}

// registerSupportComments registers the comments of a ticket.
func (s *Server) registerSupportComments(tags []string) {
	register(s, huma.Operation{OperationID: "create-support-comment", Method: http.MethodPost, Path: "/support/tickets/{ticket_id}/comments", Summary: "Comment on a ticket",
		Description: "Adds a comment by the caller and writes comment.added. Internal comments are provider staff's; a closed ticket takes no comments " +
			"(409 INVALID_STATE_TRANSITION); a customer's comment on a resolved ticket reopens it. Attachments (base64): each at most 10 MiB decoded (413 above), of an allowed type.",
		Tags: tags, DefaultStatus: http.StatusCreated, MaxBodyBytes: MaxAttachmentBody},
		access{permission: support.PermissionCreate}, func(ctx context.Context, in *struct {
			TicketPath
			Body CommentBody
		}) (*CommentOutput, error) {
			b := in.Body
			res, err := s.support.AddComment(ctx, principal(ctx), in.ID, support.CommentInput{Content: b.Content, Type: b.Type, Visibility: b.Visibility,
				Metadata: b.Metadata, Attachments: attachmentInputs(b.Attachments)})
			if err != nil {
				return nil, err
			}
			s.syncSLA(ctx, res.Ticket) // a first response, or a reopen
			out := &CommentOutput{Status: http.StatusCreated}
			out.Body.Comment = s.commentItem(res.Comment)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-support-comments", Method: http.MethodGet, Path: "/support/tickets/{ticket_id}/comments", Summary: "List a ticket's comments",
		Description: "Oldest first. Customers see customer-visible comments only; provider staff see internal ones too.", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *struct {
			TicketPath
			ListParams
		}) (*CommentsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			rows, total, err := s.support.ListComments(ctx, principal(ctx), in.ID, pr)
			if err != nil {
				return nil, err
			}
			out := &CommentsOutput{}
			out.Body.Comments = mapSlice(rows, s.commentItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
}

package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
)

// ArticleBody is the body of an article creation or update (on an
// update, absent fields are unchanged).
type ArticleBody struct {
	Title    *string  `json:"title,omitempty" maxLength:"200" doc:"Required on creation" example:"Diagnosing packet loss on a circuit"`
	Body     *string  `json:"body,omitempty" maxLength:"50000" doc:"Markdown text; required on creation"`
	Category *string  `json:"category,omitempty" maxLength:"40" doc:"Required on creation: a support category id" example:"network"`
	Tags     []string `json:"tags,omitempty" maxItems:"20" doc:"At most 20 tags of at most 50 characters" example:"[\"packet-loss\",\"circuit\"]"`
	Status   *string  `json:"status,omitempty" enum:"draft,published" doc:"draft (default on creation) or published; publishing or withdrawing is an update of status"`
}

func (b *ArticleBody) input() support.ArticleInput {
	in := support.ArticleInput{Title: b.Title, Body: b.Body, Category: b.Category, Status: b.Status}
	if b.Tags != nil {
		in.Tags = &b.Tags
	}
	return in
}

// ArticleItem is a knowledge base article.
type ArticleItem struct {
	ID          string   `json:"id" example:"kb_3fK9aZ"`
	Title       string   `json:"title"`
	Body        string   `json:"body" doc:"Markdown text"`
	Category    string   `json:"category"`
	Tags        []string `json:"tags"`
	Status      string   `json:"status" enum:"draft,published"`
	Score       *float64 `json:"score,omitempty" doc:"Full-text relevance (search results only; higher is more relevant): a match in the title weighs three times one in the body, in the tags twice. Comparable within one answer only"`
	PublishedAt *string  `json:"published_at" doc:"When it was last published; null while never published"`
	CreatedAt   string   `json:"created_at"`
	UpdatedAt   string   `json:"updated_at"`
}

func articleItem(a *support.Article) ArticleItem {
	it := ArticleItem{ID: a.ID, Title: a.Title, Body: a.Body, Category: a.Category, Tags: a.Tags, Status: a.Status,
		CreatedAt: models.Timestamp(a.CreatedAt), UpdatedAt: models.Timestamp(a.UpdatedAt)}
	if it.Tags == nil {
		it.Tags = []string{}
	}
	if a.PublishedAt != nil {
		ts := models.Timestamp(*a.PublishedAt)
		it.PublishedAt = &ts
	}
	return it
}

// ArticleOutput wraps one article.
type ArticleOutput struct {
	Status int
	Body   struct {
		Envelope
		Article ArticleItem `json:"article"`
	}
}

// ArticlesOutput is a page of knowledge search results.
type ArticlesOutput struct {
	Body struct {
		Envelope
		Articles   []ArticleItem `json:"articles"`
		Pagination Pagination    `json:"pagination"`
	}
}

// ArticlePath names an article in the path.
type ArticlePath struct {
	ID string `path:"article_id" maxLength:"64" example:"kb_3fK9aZ"`
}

// KnowledgeParams are the query parameters of a knowledge search.
type KnowledgeParams struct {
	ListParams
	Q        string `query:"q" maxLength:"200" doc:"Keywords (at most 10 words): an article matches when any appears, in any case, in its title, tags or body" example:"packet loss"`
	Category string `query:"category" maxLength:"40" doc:"Articles of this category only" example:"network"`
}

func articleOutput(status int, a *support.Article) *ArticleOutput {
	out := &ArticleOutput{Status: status}
	out.Body.Article = articleItem(a)
	return out
}

// FeedbackBody is the body of a ticket's feedback.
type FeedbackBody struct {
	TicketID string `json:"ticket_id" maxLength:"64" doc:"A resolved or closed ticket of the caller's organization" example:"tkt_3fK9aZ"`
	Rating   int    `json:"rating" doc:"1 (poor) to 5 (excellent)" example:"5"`
	Comment  string `json:"comment,omitempty" maxLength:"2000" doc:"At most 2000 characters"`
}

// FeedbackItem is a ticket's feedback.
type FeedbackItem struct {
	_          struct{} `nullable:"true"` // answered as null where there is none
	ID         string   `json:"id" example:"fdbk_3fK9aZ"`
	TicketID   string   `json:"ticket_id"`
	CustomerID string   `json:"customer_id"`
	Rating     int      `json:"rating"`
	Comment    string   `json:"comment"`
	CreatedBy  string   `json:"created_by"`
	CreatedAt  string   `json:"created_at"`
}

func feedbackItem(f *support.Feedback) *FeedbackItem {
	if f == nil {
		return nil
	}
	return &FeedbackItem{ID: f.ID, TicketID: f.TicketID, CustomerID: f.CustomerID, Rating: f.Rating, Comment: f.Comment,
		CreatedBy: f.CreatedBy, CreatedAt: models.Timestamp(f.CreatedAt)}
}

// FeedbackOutput wraps a ticket's feedback (null when none was given).
type FeedbackOutput struct {
	Status int
	Body   struct {
		Envelope
		Feedback *FeedbackItem `json:"feedback" doc:"null while the customer has given none"`
	}
}

// registerSupportKnowledge registers the knowledge base and ticket
// feedback.
func (s *Server) registerSupportKnowledge(tags []string) {
	staffOnly := " Provider staff with support:admin only (403 for everyone else, before the body is read)."
	register(s, huma.Operation{OperationID: "create-support-article", Method: http.MethodPost, Path: "/support/knowledge", Summary: "Create a knowledge base article",
		Description: "Stores an article {title, body (markdown), category, tags, status}; a draft unless status is published." + staffOnly,
		Tags:        tags, DefaultStatus: http.StatusCreated},
		access{permission: support.PermissionAdmin, staff: true}, func(ctx context.Context, in *struct{ Body ArticleBody }) (*ArticleOutput, error) {
			a, err := s.support.CreateArticle(ctx, principal(ctx), in.Body.input())
			if err != nil {
				return nil, err
			}
			return articleOutput(http.StatusCreated, a), nil
		})
	register(s, huma.Operation{OperationID: "search-support-knowledge", Method: http.MethodGet, Path: "/support/knowledge", Summary: "Search the knowledge base",
		Description: "Published articles, optionally of one category, ranked by keyword relevance: each query word found in the title counts 3, " +
			"in the tags 2, in the body 1; then the most recently updated first. Without q every published article, most recently updated first. " +
			"The ranking is keyword-based (docs/support.md); sort is not accepted.", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *KnowledgeParams) (*ArticlesOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			rows, total, err := s.support.SearchArticles(ctx, support.KnowledgeSearch{Query: in.Q, Category: in.Category}, pr)
			if err != nil {
				return nil, err
			}
			out := &ArticlesOutput{}
			out.Body.Articles = make([]ArticleItem, len(rows))
			for i := range rows {
				out.Body.Articles[i] = articleItem(&rows[i].Article)
				if in.Q != "" {
					score := rows[i].Score
					out.Body.Articles[i].Score = &score
				}
			}
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-support-article", Method: http.MethodGet, Path: "/support/knowledge/{article_id}", Summary: "Get a knowledge base article",
		Description: "A published article; drafts are shown to provider staff only (404 for customers).", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *ArticlePath) (*ArticleOutput, error) {
			a, err := s.support.GetArticle(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return articleOutput(http.StatusOK, a), nil
		})
	register(s, huma.Operation{OperationID: "update-support-article", Method: http.MethodPatch, Path: "/support/knowledge/{article_id}", Summary: "Update a knowledge base article",
		Description: "Applies the fields sent; status published publishes the article, draft withdraws it. The result is validated as a whole article." + staffOnly,
		Tags:        tags},
		access{permission: support.PermissionAdmin, staff: true}, func(ctx context.Context, in *struct {
			ArticlePath
			Body ArticleBody
		}) (*ArticleOutput, error) {
			a, err := s.support.UpdateArticle(ctx, principal(ctx), in.ID, in.Body.input())
			if err != nil {
				return nil, err
			}
			return articleOutput(http.StatusOK, a), nil
		})
	register(s, huma.Operation{OperationID: "create-support-feedback", Method: http.MethodPost, Path: "/support/feedback", Summary: "Rate a resolved ticket",
		Description: "A customer of the ticket's organization rates how a resolved or closed ticket was handled: rating 1 to 5 and an optional comment " +
			"(at most 2000 characters). Once per ticket (409 ALREADY_EXISTS the second time); 409 INVALID_STATE_TRANSITION before the ticket is " +
			"resolved; 404 for another organization's ticket; 403 for provider staff.", Tags: tags, DefaultStatus: http.StatusCreated},
		access{permission: support.PermissionCreate}, func(ctx context.Context, in *struct{ Body FeedbackBody }) (*FeedbackOutput, error) {
			f, err := s.support.SubmitFeedback(ctx, principal(ctx), support.FeedbackInput{TicketID: in.Body.TicketID, Rating: in.Body.Rating, Comment: in.Body.Comment})
			if err != nil {
				return nil, err
			}
			out := &FeedbackOutput{Status: http.StatusCreated}
			out.Body.Feedback = feedbackItem(f)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-support-ticket-feedback", Method: http.MethodGet, Path: "/support/tickets/{ticket_id}/feedback", Summary: "A ticket's feedback",
		Description: "The customer's feedback on the ticket, or null when none was given.", Tags: tags},
		access{permission: support.PermissionRead}, func(ctx context.Context, in *TicketPath) (*FeedbackOutput, error) {
			f, err := s.support.TicketFeedback(ctx, principal(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			out := &FeedbackOutput{Status: http.StatusOK}
			out.Body.Feedback = feedbackItem(f)
			return out, nil
		})
}

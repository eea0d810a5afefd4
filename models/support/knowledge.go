package support

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// PrefixArticle starts knowledge base article ids.
const PrefixArticle = "kb"

// Statuses of a knowledge base article.
const (
	ArticleDraft     = "draft"
	ArticlePublished = "published"
)

// Bounds of a knowledge base article and of a knowledge search.
const (
	MaxArticleTitle = 200
	MaxArticleBody  = 50000 // characters of markdown
	MaxArticleTags  = 20
	MaxArticleTag   = 50
)

// Weights of the keyword ranking: a query word found in the title counts
// more than one found in the tags, which counts more than one in the body.
const (
	WeightTitle = 3
	WeightTags  = 2
	WeightBody  = 1
)

// Article is a knowledge base article: markdown text in one support
// category, with tags, a draft until published. Articles are the
// provider's: the same for every tenant and environment; customers see
// published ones only.
type Article struct {
	ID          string     `gorm:"primaryKey;size:40"`
	Title       string     `gorm:"size:200;not null"`
	Body        string     `gorm:"type:text;not null"`
	Category    string     `gorm:"size:40;not null;index"`
	Tags        []string   `gorm:"serializer:json;type:text"`
	Status      string     `gorm:"size:16;not null;index"`
	CreatedBy   string     `gorm:"size:40;not null"`
	UpdatedBy   string     `gorm:"size:40;not null"`
	PublishedAt *time.Time ``
	CreatedAt   time.Time  `gorm:"not null;index"`
	UpdatedAt   time.Time  `gorm:"not null;index"`
}

// TableName is the knowledge base articles table.
func (Article) TableName() string { return "support_articles" }

// ArticleHit is an article found by a knowledge search, with its
// relevance score (0 when the search had no keywords).
type ArticleHit struct {
	Article
	Score int
}

// ArticleInput is an article's fields as sent; nil fields are absent (on
// creation: empty, status draft; on an update: unchanged).
type ArticleInput struct {
	Title    *string
	Body     *string
	Category *string
	Tags     *[]string
	Status   *string
}

// CanManageKnowledge reports whether p may write articles and read drafts:
// provider staff holding support:admin.
func CanManageKnowledge(p *models.Principal) bool { return p.IsStaff() && p.Can(PermissionAdmin) }

func knowledgeForbidden() error {
	return models.Errorf(models.CodeInsufficientPermissions, "knowledge base articles are written by provider staff with %s", PermissionAdmin).
		WithDetail("required_permission", PermissionAdmin)
}

// CreateArticle validates in and stores a new article (a draft unless
// in.Status is published). Errors: INSUFFICIENT_PERMISSIONS,
// VALIDATION_ERROR.
func (s *Store) CreateArticle(ctx context.Context, p *models.Principal, in ArticleInput) (*Article, error) {
	if !CanManageKnowledge(p) {
		return nil, knowledgeForbidden()
	}
	now := s.now()
	a := &Article{ID: models.NewID(PrefixArticle), Status: ArticleDraft, Tags: []string{}, CreatedBy: actorID(p), CreatedAt: now}
	if err := s.applyArticle(ctx, p, a, in, now); err != nil {
		return nil, err
	}
	if err := s.core.In(ctx, models.SystemScope()).Create(a).Error; err != nil {
		return nil, dbErr(err)
	}
	return a, nil
}

// UpdateArticle applies the fields of in that are present to an article;
// status publishes (published) or withdraws (draft) it. Errors:
// INSUFFICIENT_PERMISSIONS, NOT_FOUND, VALIDATION_ERROR.
func (s *Store) UpdateArticle(ctx context.Context, p *models.Principal, id string, in ArticleInput) (*Article, error) {
	if !CanManageKnowledge(p) {
		return nil, knowledgeForbidden()
	}
	a, err := s.article(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.applyArticle(ctx, p, a, in, s.now()); err != nil {
		return nil, err
	}
	if err := s.core.In(ctx, models.SystemScope()).Save(a).Error; err != nil {
		return nil, dbErr(err)
	}
	return a, nil
}

// GetArticle returns one article: a published one to anyone, a draft to
// provider staff only (NOT_FOUND for customers). Errors: NOT_FOUND.
func (s *Store) GetArticle(ctx context.Context, p *models.Principal, id string) (*Article, error) {
	a, err := s.article(ctx, id)
	if err != nil {
		return nil, err
	}
	if a.Status != ArticlePublished && !isStaff(p) {
		return nil, models.NotFound("article")
	}
	return a, nil
}

func (s *Store) article(ctx context.Context, id string) (*Article, error) {
	var a Article
	if err := s.core.In(ctx, models.SystemScope()).Where("id = ?", id).Take(&a).Error; err != nil {
		return nil, notFoundOr(err, "article")
	}
	return &a, nil
}

// applyArticle sets the present fields of in on a, validates the whole
// article (every issue at once) and stamps the update by p at now.
func (s *Store) applyArticle(ctx context.Context, p *models.Principal, a *Article, in ArticleInput, now time.Time) error {
	var v models.Validator
	if in.Title != nil {
		a.Title = strings.TrimSpace(*in.Title)
	}
	if in.Body != nil {
		a.Body = strings.TrimSpace(*in.Body)
	}
	if in.Category != nil {
		a.Category = strings.TrimSpace(*in.Category)
	}
	if in.Tags != nil {
		a.Tags = cleanList(*in.Tags)
	}
	if in.Status != nil {
		st := strings.TrimSpace(*in.Status)
		v.Check(st == ArticleDraft || st == ArticlePublished, "status", "must be draft or published")
		if st == ArticlePublished && a.Status != ArticlePublished {
			a.PublishedAt = &now
		}
		if st == ArticleDraft || st == ArticlePublished {
			a.Status = st
		}
	}
	v.Check(a.Title != "", "title", "is required")
	checkLen(&v, "title", a.Title, MaxArticleTitle)
	v.Check(a.Body != "", "body", "is required")
	checkLen(&v, "body", a.Body, MaxArticleBody)
	cats, err := s.ListCategories(ctx)
	if err != nil {
		return err
	}
	v.Check(categoryByID(cats, a.Category) != nil, "category", "must be one of "+joinList(categoryIDs(cats)))
	v.Check(len(a.Tags) <= MaxArticleTags, "tags", "must have at most "+itoa(MaxArticleTags)+" tags")
	for _, t := range a.Tags {
		v.Check(utf8.RuneCountInString(t) <= MaxArticleTag, "tags", "must each be at most "+itoa(MaxArticleTag)+" characters")
	}
	if err := v.Err(); err != nil {
		return err
	}
	a.UpdatedBy, a.UpdatedAt = actorID(p), now
	return nil
}

// KnowledgeSearch selects published articles: keywords (q) and a category,
// both optional.
type KnowledgeSearch struct {
	Query    string
	Category string
}

// SearchArticles returns a page of the published articles that in selects,
// ranked by keyword relevance, and the number of them. An article matches
// when any query word appears, in any case, in its title, tags or body;
// its score is the sum, over the query words, of WeightTitle when the
// word is in the title, WeightTags in the tags and WeightBody in the body.
// Rows come by score, then the most recently updated first, then by id.
// The ranking is computed in SQL the same way on SQLite and PostgreSQL.
// page.Sort must be empty (the order is the ranking). Errors:
// VALIDATION_ERROR.
func (s *Store) SearchArticles(ctx context.Context, in KnowledgeSearch, page models.PageRequest) ([]ArticleHit, int64, error) {
	var v models.Validator
	in.Category = strings.TrimSpace(in.Category)
	words := keywords(in.Query)
	v.Check(utf8.RuneCountInString(in.Query) <= MaxQuery, "q", "must be at most "+itoa(MaxQuery)+" characters")
	v.Check(len(words) <= MaxQueryWords, "q", "must have at most "+itoa(MaxQueryWords)+" words")
	v.Check(len(page.Sort) == 0, "sort", "is not accepted: articles come by relevance, then the most recently updated first")
	if in.Category != "" {
		cats, err := s.ListCategories(ctx)
		if err != nil {
			return nil, 0, err
		}
		v.Check(categoryByID(cats, in.Category) != nil, "category", "must be one of "+joinList(categoryIDs(cats)))
	}
	if err := v.Err(); err != nil {
		return nil, 0, err
	}
	words = slices.Compact(slices.Sorted(slices.Values(words)))
	q := s.core.In(ctx, models.SystemScope()).Model(&Article{}).Where("status = ?", ArticlePublished)
	if in.Category != "" {
		q = q.Where("category = ?", in.Category)
	}
	score, args := "0", []any{}
	if len(words) > 0 {
		var ors []string
		var anyArgs []any
		var terms []string
		for _, w := range words {
			pat := likePattern(w)
			ors = append(ors, `LOWER(title) LIKE ? ESCAPE '\' OR LOWER(tags) LIKE ? ESCAPE '\' OR LOWER(body) LIKE ? ESCAPE '\'`)
			anyArgs = append(anyArgs, pat, pat, pat)
			terms = append(terms, `CASE WHEN LOWER(title) LIKE ? ESCAPE '\' THEN `+itoa(WeightTitle)+` ELSE 0 END`,
				`CASE WHEN LOWER(tags) LIKE ? ESCAPE '\' THEN `+itoa(WeightTags)+` ELSE 0 END`,
				`CASE WHEN LOWER(body) LIKE ? ESCAPE '\' THEN `+itoa(WeightBody)+` ELSE 0 END`)
			args = append(args, pat, pat, pat)
		}
		q = q.Where("("+strings.Join(ors, " OR ")+")", anyArgs...)
		score = strings.Join(terms, " + ")
	}
	var total int64
	if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
		return nil, 0, dbErr(err)
	}
	var out []ArticleHit
	err := q.Session(&gorm.Session{}).Select("support_articles.*, ("+score+") AS score", args...).
		Order("score DESC").Order("updated_at DESC").Order("id ASC").Limit(page.Limit).Offset(page.Offset).Find(&out).Error
	if err != nil {
		return nil, 0, dbErr(err)
	}
	return out, total, nil
}

package support

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
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

// Weights of the full-text ranking: a match in the title counts three
// times one in the body, a match in the tags twice (PostgreSQL's ts_rank
// weights A, B and C; SQLite FTS5's bm25 column weights).
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
// relevance score (higher is more relevant; 0 when the search had no
// keywords). Scores order the hits of one search; they are not comparable
// across searches or databases.
type ArticleHit struct {
	Article
	Score float64
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
// ranked by full-text relevance, and the number of them. An article matches
// when any query word (stemmed: "outages" finds "outage") appears in its
// title, tags or body. On PostgreSQL the match and the score come from the
// english text-search configuration (stop words such as "the" are
// ignored) and ts_rank over the stored tsvector; on SQLite from an FTS5
// index with the porter stemmer and bm25. Both weigh a match in the title
// WeightTitle, in the tags WeightTags and in the body WeightBody. Rows come
// by score, then the most recently updated first, then by id. page.Sort must
// be empty (the order is the ranking). Errors: VALIDATION_ERROR.
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
	db := s.core.In(ctx, models.SystemScope())
	q := db.Table("support_articles AS a").Where("a.status = ?", ArticlePublished)
	if in.Category != "" {
		q = q.Where("a.category = ?", in.Category)
	}
	score, scoreArgs := "0", []any(nil)
	if len(words) > 0 {
		var ok bool
		if q, score, scoreArgs, ok = fullText(db, q, words); !ok {
			return nil, 0, nil // no word has a letter or digit: nothing can match
		}
	}
	var total int64
	if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
		return nil, 0, dbErr(err)
	}
	var out []ArticleHit
	err := q.Session(&gorm.Session{}).Select(articleColumns+", ("+score+") AS score", scoreArgs...).
		Order("score DESC").Order("a.updated_at DESC").Order("a.id ASC").Limit(page.Limit).Offset(page.Offset).Find(&out).Error
	if err != nil {
		return nil, 0, dbErr(err)
	}
	return out, total, nil
}

// articleColumns are the columns of an Article, read from the alias a.
const articleColumns = "a.id, a.title, a.body, a.category, a.tags, a.status, a.created_by, a.updated_by, a.published_at, a.created_at, a.updated_at"

// fullText narrows q (over support_articles AS a) to the articles matching
// any of words and returns the score expression with its arguments; ok is
// false when no word has a letter or a digit.
func fullText(db, q *gorm.DB, words []string) (_ *gorm.DB, score string, args []any, ok bool) {
	var phrases []string
	for _, w := range slices.Compact(slices.Sorted(slices.Values(words))) {
		tokens := strings.FieldsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if len(tokens) > 0 {
			phrases = append(phrases, strings.Join(tokens, " "))
		}
	}
	if len(phrases) == 0 {
		return q, "", nil, false
	}
	if models.IsSQLite(db) {
		// Each word is an FTS5 phrase of its tokens, quoted, so that no
		// character of the query is FTS5 syntax; any phrase matches.
		match := make([]string, len(phrases))
		for i, p := range phrases {
			match[i] = `"` + p + `"`
		}
		q = q.Joins("JOIN support_articles_fts ON support_articles_fts.id = a.id").
			Where("support_articles_fts MATCH ?", strings.Join(match, " OR "))
		return q, "-bm25(support_articles_fts, 0, " + itoa(WeightTitle) + ", " + itoa(WeightTags) + ", " + itoa(WeightBody) + ")", nil, true
	}
	// Each word is a plainto_tsquery (its lexemes, all required); any
	// word matches. Weights are {D, C, B, A}, scaled so that A is 1.
	parts := make([]string, len(phrases))
	qargs := make([]any, len(phrases))
	for i, p := range phrases {
		parts[i] = "plainto_tsquery('english', ?)"
		qargs[i] = p
	}
	tsq := "(" + strings.Join(parts, " || ") + ")"
	weights := fmt.Sprintf("'{0, %g, %g, 1}'", float64(WeightBody)/WeightTitle, float64(WeightTags)/WeightTitle)
	q = q.Where("a.search @@ "+tsq, qargs...)
	return q, "ts_rank(" + weights + ", a.search, " + tsq + ")", qargs, true
}

package migrate

import (
	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

// Full-text search of the knowledge base, as migration 202611260130 sets it
// up. On PostgreSQL support_articles gains a stored generated column,
// search, the article's tsvector in the english configuration (title with
// weight A, tags B, body C), with a GIN index. On SQLite an FTS5 table,
// support_articles_fts (id unindexed; title, tags and body with the porter
// stemmer over unicode61), is kept in step with support_articles by three
// triggers. The FTS5 table keeps its own copy of the text rather than
// pointing at support_articles' rowids, which VACUUM may renumber on a table
// whose key is not an INTEGER PRIMARY KEY.
var (
	knowledgeFullTextPostgres = []string{
		`ALTER TABLE support_articles ADD COLUMN search tsvector GENERATED ALWAYS AS (
			setweight(to_tsvector('english', coalesce(title, '')), 'A') ||
			setweight(to_tsvector('english', coalesce(tags, '')), 'B') ||
			setweight(to_tsvector('english', coalesce(body, '')), 'C')) STORED`,
		`CREATE INDEX idx_support_articles_search ON support_articles USING GIN (search)`,
	}
	knowledgeFullTextSQLite = []string{
		`CREATE VIRTUAL TABLE support_articles_fts USING fts5(id UNINDEXED, title, tags, body, tokenize = 'porter unicode61')`,
		`CREATE TRIGGER support_articles_fts_insert AFTER INSERT ON support_articles BEGIN
			INSERT INTO support_articles_fts (id, title, tags, body) VALUES (new.id, new.title, coalesce(new.tags, ''), new.body);
		END`,
		`CREATE TRIGGER support_articles_fts_update AFTER UPDATE ON support_articles BEGIN
			DELETE FROM support_articles_fts WHERE id = old.id;
			INSERT INTO support_articles_fts (id, title, tags, body) VALUES (new.id, new.title, coalesce(new.tags, ''), new.body);
		END`,
		`CREATE TRIGGER support_articles_fts_delete AFTER DELETE ON support_articles BEGIN
			DELETE FROM support_articles_fts WHERE id = old.id;
		END`,
		`INSERT INTO support_articles_fts (id, title, tags, body) SELECT id, title, coalesce(tags, ''), body FROM support_articles`,
	}
)

// migrateKnowledgeFullText sets up full-text search of the knowledge base.
func migrateKnowledgeFullText(tx *gorm.DB) error {
	stmts := knowledgeFullTextPostgres
	if models.IsSQLite(tx) {
		stmts = knowledgeFullTextSQLite
	}
	for _, s := range stmts {
		if err := tx.Exec(s).Error; err != nil {
			return err
		}
	}
	return nil
}

// rollbackKnowledgeFullText removes full-text search of the knowledge base.
func rollbackKnowledgeFullText(tx *gorm.DB) error {
	stmts := []string{`DROP INDEX IF EXISTS idx_support_articles_search`, `ALTER TABLE support_articles DROP COLUMN IF EXISTS search`}
	if models.IsSQLite(tx) {
		stmts = []string{`DROP TRIGGER IF EXISTS support_articles_fts_insert`, `DROP TRIGGER IF EXISTS support_articles_fts_update`,
			`DROP TRIGGER IF EXISTS support_articles_fts_delete`, `DROP TABLE IF EXISTS support_articles_fts`}
	}
	for _, s := range stmts {
		if err := tx.Exec(s).Error; err != nil {
			return err
		}
	}
	return nil
}

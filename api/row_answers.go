package api

import (
	"context"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/rowversion"
)

// rowAnswersMax is how many rows' answers a rowAnswers keeps; beyond it an
// arbitrary entry makes room for the new one. rowAnswerMaxBytes bounds
// the encoding of a kept answer (an entry holds about three times that:
// the row's values, the document, the bytes): a larger one (a bulk
// operation's items) is built on every request, as before.
const (
	rowAnswersMax     = 1024
	rowAnswerMaxBytes = 16 << 10
)

// rowAnswer is a GET's answer derived from one snapshot of its row: the
// answer's document and its encoding without metadata (with its ETag).
// It is exact for as long as a read of the row returns the same snapshot
// (see models.RowReader): the row's columns are compared on every read,
// so a change made anywhere (another API process, a worker's activity,
// the database directly) is seen by the next GET.
type rowAnswer[T, D any] struct {
	snap *models.RowSnapshot[T]
	doc  D
	enc  preEncoded
}

// rowAnswers keeps, per row id, the answer derived from the row's last
// snapshot read by this process: a GET whose read finds the row unchanged
// writes those bytes instead of decoding the row (reflection, JSON
// columns) and encoding the answer again. Ids are primary keys: a row's
// tenant is among the columns compared, and the read itself is scoped to
// the caller, so one entry per id serves every caller allowed to read the
// row. Entries are shared and never modified.
type rowAnswers[T, D any] struct {
	mu      sync.RWMutex
	entries map[string]*rowAnswer[T, D]
}

func newRowAnswers[T, D any]() *rowAnswers[T, D] {
	return &rowAnswers[T, D]{entries: map[string]*rowAnswer[T, D]{}}
}

// get returns the answer kept for id, or nil.
func (c *rowAnswers[T, D]) get(id string) *rowAnswer[T, D] {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.entries[id]
}

// snapshot returns the entry's snapshot (nil for no entry).
func (a *rowAnswer[T, D]) snapshot() *models.RowSnapshot[T] {
	if a == nil {
		return nil
	}
	return a.snap
}

// put keeps a, derived from a.snap, as id's answer.
func (c *rowAnswers[T, D]) put(id string, a *rowAnswer[T, D]) {
	if len(a.enc.raw) > rowAnswerMaxBytes {
		c.mu.Lock()
		delete(c.entries, id) // an older, smaller answer of the row is of no use either
		c.mu.Unlock()
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[id]; !ok && len(c.entries) >= rowAnswersMax {
		for k := range c.entries {
			delete(c.entries, k)
			break
		}
	}
	c.entries[id] = a
}

// serve sets *doc and *enc to id's answer for snap: the answer kept in
// prev when snap is the snapshot it was derived from, or else build's
// document for the row and the encoding of body (the answer's body, which
// holds *doc), then kept as id's answer.
func (c *rowAnswers[T, D]) serve(id string, prev *rowAnswer[T, D], snap *models.RowSnapshot[T], doc *D, enc *preEncoded, body any, build func(*T) D) error {
	if prev != nil && snap.Row == prev.snap.Row {
		*doc, *enc = prev.doc, prev.enc
		if snap != prev.snap { // the same row, read again: kept with this read's version
			c.put(id, &rowAnswer[T, D]{snap: snap, doc: prev.doc, enc: prev.enc})
		}
		return nil
	}
	*doc = build(snap.Row)
	e, err := encodeInAdvance(body)
	if err != nil {
		return err
	}
	*enc = e
	c.put(id, &rowAnswer[T, D]{snap: snap, doc: *doc, enc: e})
	return nil
}

// rowVersionKey carries, in a request's context, the version of the table
// its GET reads, as the rate-limit check read it (before the handler
// reads the row).
type rowVersionKey struct{}

type rowVersionValue struct {
	table   string
	version models.RowVersion
}

// rowVersionOf returns table's version carried by ctx: unknown unless the
// rate-limit check of this request read it.
func rowVersionOf(ctx context.Context, table string) models.RowVersion {
	if v, ok := ctx.Value(rowVersionKey{}).(rowVersionValue); ok && v.table == table {
		return v.version
	}
	return models.RowVersion{}
}

// watchedTable returns the table whose version a request's rate-limit
// check reads: GET /v1/services/{id} and GET /v1/operations/{id} (and
// their /api/v1 copies) read one row of theirs; "" for any other request.
func watchedTable(method, path string) string {
	if method != fiber.MethodGet {
		return ""
	}
	path = strings.TrimPrefix(path, "/api")
	for _, w := range [...]struct{ prefix, table string }{
		{"/v1/services/", rowversion.Services},
		{"/v1/operations/", rowversion.Operations},
	} {
		if rest, ok := strings.CutPrefix(path, w.prefix); ok && rest != "" && !strings.Contains(rest, "/") {
			return w.table
		}
	}
	return ""
}

// Package rowversion keeps, in Redis, one version number per watched
// table: every process of the platform (the API and the worker) changes a
// table's number after each commit that changed rows of the table
// (models.OnWrites), and the API reads it in the same round trip as a
// request's rate-limit check. A GET that finds the number unchanged since
// it last read a row answers from what it kept, without reading the row
// again (models.RowReader); any change in between makes it read the row.
package rowversion

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/models"
)

// Table names of the watched tables.
const (
	Services   = "services"
	Operations = "operations"
)

// Tables returns the watched tables.
func Tables() []string { return []string{Services, Operations} }

// Key returns the Redis key of table's version number.
func Key(table string) string { return "rowver:{" + table + "}" }

const (
	// noticeTimeout bounds a notice's round trip to Redis: the writer
	// waits for it.
	noticeTimeout = 100 * time.Millisecond
	// pauseAfterFailure is how long notices are skipped after one failed:
	// a Redis that does not answer costs each write nothing more, and
	// readers, whose own checks fail too, read their rows meanwhile (or
	// see the writes within models.RowSnapshotMaxAge).
	pauseAfterFailure = time.Second
	// failureLogInterval is the least time between two logs of failures.
	failureLogInterval = time.Minute
	// maxStep bounds the random step a notice adds to a number.
	maxStep = 1 << 30
)

// Notice returns the models.WriteNotice that adds to the changed tables'
// numbers on client, in one round trip, before the writer goes on. Each
// notice adds a random step (1 to 2³⁰), not 1: a Redis that lost its keys
// (a restart without persistence, a failover) counts again from zero, and
// a number that a reader kept from before could otherwise come back after
// as many writes. A notice that fails is logged (at most once a minute)
// and the notices of the next second are skipped.
func Notice(client redis.UniversalClient, log *slog.Logger) models.WriteNotice {
	var (
		lastLog     atomic.Int64 // unix seconds of the last failure logged
		pausedUntil atomic.Int64 // unix nanoseconds until which notices are skipped
	)
	return func(ctx context.Context, tables []string) {
		if time.Now().UnixNano() < pausedUntil.Load() {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, noticeTimeout)
		defer cancel()
		_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, t := range tables {
				p.IncrBy(ctx, Key(t), 1+rand.Int64N(maxStep))
			}
			return nil
		})
		if err == nil {
			return
		}
		now := time.Now()
		pausedUntil.Store(now.Add(pauseAfterFailure).UnixNano())
		if log == nil {
			return
		}
		last := lastLog.Load()
		if now.Unix()-last >= int64(failureLogInterval/time.Second) && lastLog.CompareAndSwap(last, now.Unix()) {
			log.WarnContext(ctx, "a write notice did not reach Redis: other processes see the write within a second", "tables", tables, "error", err)
		}
	}
}

// Watch makes every commit on store that changes rows of a watched table
// add to its number on client (see Notice).
func Watch(store *models.Store, client redis.UniversalClient, log *slog.Logger) error {
	return models.OnWrites(store.DB, Tables(), Notice(client, log))
}

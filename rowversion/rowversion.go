// Package rowversion keeps, in Redis, one version number per watched
// table: every process of the platform (the API and the worker) increments
// a table's number after each commit that wrote the table
// (models.OnWrites), and the API reads it in the same round trip as a
// request's rate-limit check. A GET that finds the number unchanged since
// it last read a row answers from what it kept, without reading the row
// again (models.RowReader); any write in between makes it read the row.
package rowversion

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/ratelimit"
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

// noticeTimeout bounds a notice's round trip to Redis: the writer waits
// for it (the rate limiter's own bound, ratelimit.DefaultTimeout).
const noticeTimeout = ratelimit.DefaultTimeout

// failureLogInterval is the least time between two logs of failed notices.
const failureLogInterval = time.Minute

// Notice returns the models.WriteNotice that increments the written
// tables' numbers on client, in one round trip, before the writer goes on.
// A notice that fails is logged (at most once a minute): readers then see
// the write once their kept snapshot is older than
// models.RowSnapshotMaxAge.
func Notice(client redis.UniversalClient, log *slog.Logger) models.WriteNotice {
	var lastLog atomic.Int64 // unix seconds of the last failure logged
	return func(ctx context.Context, tables []string) {
		ctx, cancel := context.WithTimeout(ctx, noticeTimeout)
		defer cancel()
		_, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, t := range tables {
				p.Incr(ctx, Key(t))
			}
			return nil
		})
		if err == nil || log == nil {
			return
		}
		now, last := time.Now().Unix(), lastLog.Load()
		if now-last >= int64(failureLogInterval/time.Second) && lastLog.CompareAndSwap(last, now) {
			log.WarnContext(ctx, "a write notice did not reach Redis: other processes see the write within a second", "tables", tables, "error", err)
		}
	}
}

// Watch makes every commit on store that writes a watched table increment
// its number on client (see Notice).
func Watch(store *models.Store, client redis.UniversalClient, log *slog.Logger) error {
	return models.OnWrites(store.DB, Tables(), Notice(client, log))
}

package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// HourUsage is a credential's admitted requests in one clock hour (UTC).
type HourUsage struct {
	// Hour is the start of the hour.
	Hour time.Time
	// Requests is the number of admitted requests.
	Requests int64
	// Units is their cost in units.
	Units int64
}

// HourlyHistory returns key's usage for the hours (1..MaxHistoryHours)
// clock hours up to and including the one that holds now, oldest first; an
// hour without requests reports zero. Hours are counted by the Redis
// server's clock, so now should be the current time.
func (l *Limiter) HourlyHistory(ctx context.Context, key string, now time.Time, hours int) ([]HourUsage, error) {
	if key == "" {
		return nil, errors.New("ratelimit: empty key")
	}
	if hours < 1 || hours > MaxHistoryHours {
		return nil, fmt.Errorf("ratelimit: hours %d outside 1..%d", hours, MaxHistoryHours)
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()

	last := now.Unix() / 3600
	if now.Unix() < 0 && now.Unix()%3600 != 0 {
		last-- // floor for times before 1970
	}
	prefix := credentialPrefix(key) + "use:"
	cmds := make([]*redis.SliceCmd, hours)
	_, err := l.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range hours {
			h := last - int64(hours-1-i)
			cmds[i] = p.HMGet(ctx, prefix+strconv.FormatInt(h, 10), "req", "units")
		}
		return nil
	})
	if err != nil {
		return nil, classify(err)
	}
	out := make([]HourUsage, hours)
	for i, c := range cmds {
		h := last - int64(hours-1-i)
		req, units, err := reqUnits(c.Val())
		if err != nil {
			return nil, err
		}
		out[i] = HourUsage{Hour: time.Unix(h*3600, 0).UTC(), Requests: req, Units: units}
	}
	return out, nil
}

// MonthlyUsage returns the requests and cost units an organization had
// admitted in the calendar month (UTC) that holds month; orgID is the
// counter's subject (MonthlySubject: the organization's id for live).
func (l *Limiter) MonthlyUsage(ctx context.Context, orgID string, month time.Time) (requests, units int64, err error) {
	if orgID == "" {
		return 0, 0, errors.New("ratelimit: empty organization")
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	m := month.UTC()
	key := orgPrefix(orgID) + strconv.Itoa(m.Year()*100+int(m.Month()))
	vals, err := l.client.HMGet(ctx, key, "req", "units").Result()
	if err != nil {
		return 0, 0, classify(err)
	}
	return reqUnits(vals)
}

func reqUnits(vals []any) (req, units int64, err error) {
	if len(vals) != 2 {
		return 0, 0, fmt.Errorf("ratelimit: usage has %d fields", len(vals))
	}
	if req, err = toInt64(vals[0]); err != nil {
		return 0, 0, fmt.Errorf("ratelimit: usage requests: %w", err)
	}
	if units, err = toInt64(vals[1]); err != nil {
		return 0, 0, fmt.Errorf("ratelimit: usage units: %w", err)
	}
	return req, units, nil
}

// Package ratelimit enforces the API's rate limits in Redis, so that they hold
// across every API instance.
//
// One Lua script (script.lua, built on the GCRA of
// github.com/go-redis/redis_rate) checks, in one round trip and with Redis
// server time, a credential's suspension, its hourly bucket, its 60-second
// burst bucket and its endpoint-group bucket, and spends from all of them or
// from none. Burst rejections are recorded; more than three within a minute
// suspend the credential for five minutes. Admitted requests are counted per
// credential and hour and per organization and month for usage reports and
// overage billing. Concurrency slots are an expiring sorted set (Acquire).
//
// Redis must be a single primary (standalone or Sentinel): the script builds
// the names of the usage counters from the server's clock, which Redis
// Cluster does not allow. When Redis cannot be reached, every method returns
// an error wrapping ErrUnavailable and the caller fails open.
package ratelimit

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fixed parameters of the limits.
const (
	// HourlyPeriod is the period of the hourly and endpoint-group buckets.
	HourlyPeriod = time.Hour
	// BurstPeriod is the period of the burst bucket.
	BurstPeriod = time.Minute
	// BurstRejectionsTolerated is how many burst rejections a credential may
	// collect within BurstRejectionWindow; the next one suspends it.
	BurstRejectionsTolerated = 3
	// BurstRejectionWindow is the sliding window in which burst rejections
	// are counted.
	BurstRejectionWindow = time.Minute
	// SuspensionDuration is how long a suspension lasts.
	SuspensionDuration = 5 * time.Minute
	// HourlyUsageTTL is how long a credential's per-hour usage counters are
	// kept (a 24-hour history plus the current hour).
	HourlyUsageTTL = 25 * time.Hour
	// MonthlyUsageTTL is how long an organization's per-month usage counters
	// are kept after their last increment, enough for billing to read them
	// after the month has ended.
	MonthlyUsageTTL = 40 * 24 * time.Hour
	// MaxHistoryHours is the largest number of hours HourlyHistory reports.
	MaxHistoryHours = 25
	// DefaultTimeout bounds each Redis round trip of a Limiter unless
	// WithTimeout sets another value.
	DefaultTimeout = 500 * time.Millisecond
)

// ErrUnavailable is wrapped by every error that means Redis could not be
// reached or could not answer (refused or timed-out connections, a closed
// client, a server that is loading or read-only). Callers fail open on it.
var ErrUnavailable = errors.New("ratelimit: redis unavailable")

//go:embed script.lua
var allowScriptSrc string

// Bucket names a limit that can reject a request.
type Bucket string

// Buckets reported in Result.RejectedBy and Result.LimitBucket.
const (
	// BucketHourly is the hourly plan bucket, in cost units.
	BucketHourly Bucket = "hourly"
	// BucketBurst is the 60-second burst bucket, in cost units.
	BucketBurst Bucket = "burst"
	// BucketGroup is the endpoint-group bucket, in requests per hour.
	BucketGroup Bucket = "group"
	// BucketSuspended is a suspension after repeated burst rejections.
	BucketSuspended Bucket = "suspended"
)

// Request describes one request to check.
type Request struct {
	// Key identifies the credential the buckets belong to (an API key id,
	// an OAuth client id, or a client IP for unauthenticated calls).
	Key string
	// OrgID is the organization whose monthly usage the request counts
	// towards, as MonthlySubject names it (the environment apart); empty
	// counts no monthly usage.
	OrgID string
	// Cost is the request's cost in units (see Cost); 0 means 1. It must
	// not exceed MaxCost.
	Cost int
	// Hourly is the effective hourly limit in units (the plan's, or the
	// key's requests_per_minute*60 when lower); 0 means unlimited. A
	// positive limit below MaxCost is raised to MaxCost.
	Hourly int
	// Burst is the effective burst limit in units per 60 seconds (the
	// plan's, or the key's burst_limit when lower); 0 means unlimited. A
	// positive limit below MaxCost is raised to MaxCost.
	Burst int
	// Group is the request's endpoint group; GroupNone for none.
	Group Group
	// Slot, when its Limit is positive, also takes one of the concurrency
	// slots of Slot.Key in the same round trip, if the request is admitted
	// (as AcquireSlot does): Result.Slot holds it, or Result.SlotRefused
	// says every slot was taken. Dry runs (CurrentUsage) take none.
	Slot SlotRequest
	// Watch names Redis keys holding integers (row versions, see package
	// rowversion) that the check reads in the same round trip, after the
	// writes that preceded it: Result.Watched holds their values. Read
	// only by Allow.
	Watch []string

	// extra marks a Charge: units spent, no request counted.
	extra bool
}

// SlotRequest asks Allow for a concurrency slot (see AcquireSlot).
type SlotRequest struct {
	// Key names the slots (e.g. an organization and environment).
	Key string
	// Limit is how many slots of Key may be held at once; 0 asks for none.
	Limit int
	// TTL is the slot's lifetime (DefaultSlotTTL if <= 0).
	TTL time.Duration
}

// BucketState is one bucket's state after a check.
type BucketState struct {
	// Limit is the bucket's capacity (units, or requests for a group);
	// 0 means the bucket does not apply (unlimited or no group).
	Limit int
	// Remaining is what the bucket has left.
	Remaining int
	// Reset is the unix time (seconds) when the bucket is full again.
	Reset int64
	// RetryAfter is how long until this bucket would admit the request; 0
	// when it admits it.
	RetryAfter time.Duration
}

// Result is the outcome of a check. Limit, Remaining, Reset, Burst,
// BurstRemaining and RetryAfter are the values of the X-RateLimit-* and
// Retry-After response headers.
type Result struct {
	// Allowed reports whether the request was admitted (and its units spent).
	Allowed bool
	// RejectedBy is the bucket that rejected the request, empty when
	// allowed. When several reject, it is the one that frees up last.
	RejectedBy Bucket
	// Limit is the limit of the tightest hour-long bucket: the hourly plan
	// bucket, or the endpoint group when that has less left or rejected the
	// request. 0 means unlimited.
	Limit int
	// Remaining is what that bucket has left.
	Remaining int
	// Reset is the unix time (seconds) when that bucket is full again.
	Reset int64
	// LimitBucket says which bucket Limit, Remaining and Reset describe
	// (BucketHourly or BucketGroup); empty when neither applies.
	LimitBucket Bucket
	// Burst is the burst limit in units per 60 seconds; 0 means unlimited.
	Burst int
	// BurstRemaining is what the burst bucket has left.
	BurstRemaining int
	// RetryAfter is how long to wait before the request can pass; 0 when
	// allowed. For a suspension it runs to SuspendedUntil.
	RetryAfter time.Duration
	// SuspendedUntil is the end of the credential's suspension, zero when
	// the credential is not suspended.
	SuspendedUntil time.Time
	// NewSuspension is true on the one request whose burst rejection
	// started a suspension: the caller records it for account review.
	NewSuspension bool
	// HourRequests is the credential's admitted requests in the current
	// clock hour (UTC, server time), this one included when admitted.
	HourRequests int64
	// HourUnits is the cost units of those requests.
	HourUnits int64
	// Hourly, BurstBucket and GroupBucket are the three buckets in detail.
	Hourly, BurstBucket, GroupBucket BucketState
	// Now is the Redis server time of the check.
	Now time.Time
	// Slot is the concurrency slot taken for Request.Slot, nil when none
	// was asked for, the request was not admitted, or every slot was taken.
	// The caller releases it (Slot.Release).
	Slot *Slot
	// SlotRefused is true when the buckets admitted the request but every
	// one of Request.Slot.Limit slots was taken: the caller refuses the
	// request, which spent and counted nothing.
	SlotRefused bool
	// SlotsInUse is how many slots of Request.Slot.Key were held after the
	// check (this one included when taken); 0 when none was asked for.
	SlotsInUse int
	// Watched holds the values of Request.Watch's keys (0 for a missing
	// key), in order; nil when none was asked for or they could not be
	// read.
	Watched []int64

	slotTaken int64 // the script's answer: -1 none asked, 0 refused, 1 taken
}

// RetryAfterSeconds returns RetryAfter in whole seconds, rounded up, for the
// Retry-After header; 0 when allowed.
func (r Result) RetryAfterSeconds() int64 {
	return int64((r.RetryAfter + time.Second - 1) / time.Second)
}

// BurstUsed returns the units the burst bucket has spent and not yet
// regained; 0 when no burst limit applies.
func (r Result) BurstUsed() int {
	if r.Burst <= 0 {
		return 0
	}
	return max(r.Burst-r.BurstRemaining, 0)
}

// Limiter checks requests against limits kept in Redis. It is safe for
// concurrent use, and any number of Limiters (in any number of processes)
// may share one Redis.
type Limiter struct {
	client  redis.UniversalClient
	allow   *redis.Script
	acquire *redis.Script
	renew   *redis.Script
	timeout time.Duration
	batch   *batcher
}

// Option configures a Limiter.
type Option func(*Limiter)

// WithTimeout sets the time budget of each Redis round trip (DefaultTimeout
// if not set). It bounds how long a request waits for an unreachable Redis
// before the caller fails open. Zero or less keeps the default.
func WithTimeout(d time.Duration) Option {
	return func(l *Limiter) {
		if d > 0 {
			l.timeout = d
		}
	}
}

// New returns a Limiter that keeps its state in client's Redis.
func New(client redis.UniversalClient, opts ...Option) *Limiter {
	l := &Limiter{
		client:  client,
		allow:   redis.NewScript(allowScriptSrc),
		acquire: redis.NewScript(acquireScriptSrc),
		renew:   redis.NewScript(renewScriptSrc),
		timeout: DefaultTimeout,
	}
	for _, o := range opts {
		o(l)
	}
	l.batch = &batcher{client: client, timeout: l.timeout}
	return l
}

// Allow checks req against its suspension, hourly, burst and group buckets
// and, when every one admits it, spends its cost from all of them and counts
// it in the hourly and monthly usage. A rejected request spends nothing. A
// burst rejection is recorded; the one that makes more than
// BurstRejectionsTolerated within BurstRejectionWindow suspends req.Key for
// SuspensionDuration and returns NewSuspension.
func (l *Limiter) Allow(ctx context.Context, req Request) (Result, error) {
	if err := normalize(&req); err != nil {
		return Result{}, err
	}
	return l.run(ctx, req, false)
}

// MaxChargeCost is the largest cost Charge accepts.
const MaxChargeCost = 10_000

// Charge spends req.Cost more units from req.Key's hourly and burst
// buckets, and one request from req.Group's bucket when it names one, for
// a request that Allow has admitted already and whose full cost is known
// only later (a GraphQL query's computed cost and the endpoint groups it
// reads). The units count in the hourly and monthly usage; the request is
// not counted again, and no concurrency slot is involved. A cost above a
// bucket's capacity is lowered to the capacity (so that a full bucket
// admits it). When a bucket cannot cover the charge nothing is spent and
// Allowed is false, with the bucket and retry time as for Allow (a burst
// rejection counts towards a suspension). Cost is 0 (the group only) to
// MaxChargeCost.
func (l *Limiter) Charge(ctx context.Context, req Request) (Result, error) {
	if req.Cost < 0 || req.Cost > MaxChargeCost {
		return Result{}, fmt.Errorf("ratelimit: charge %d outside 0..%d", req.Cost, MaxChargeCost)
	}
	cost := req.Cost
	req.Cost, req.Slot, req.extra = 1, SlotRequest{}, true
	if err := normalize(&req); err != nil {
		return Result{}, err
	}
	req.Cost = cost
	if req.Hourly > 0 {
		req.Cost = min(req.Cost, req.Hourly)
	}
	if req.Burst > 0 {
		req.Cost = min(req.Cost, req.Burst)
	}
	return l.run(ctx, req, false)
}

// CurrentUsage reports a credential's buckets and current-hour usage as
// Allow would for a 1-unit request without an endpoint group, without
// spending or recording anything. Allowed says whether such a request would
// pass now. hourly and burst are the effective limits, as in Request.
func (l *Limiter) CurrentUsage(ctx context.Context, key string, hourly, burst int) (Result, error) {
	req := Request{Key: key, Cost: 1, Hourly: hourly, Burst: burst}
	if err := normalize(&req); err != nil {
		return Result{}, err
	}
	return l.run(ctx, req, true)
}

func normalize(req *Request) error {
	if req.Key == "" {
		return errors.New("ratelimit: empty key")
	}
	if req.Cost == 0 {
		req.Cost = 1
	}
	if req.Cost < 0 || req.Cost > MaxCost {
		return fmt.Errorf("ratelimit: cost %d outside 1..%d", req.Cost, MaxCost)
	}
	if req.Hourly < 0 || req.Burst < 0 {
		return errors.New("ratelimit: negative limit")
	}
	if req.Hourly > 0 && req.Hourly < MaxCost {
		req.Hourly = MaxCost
	}
	if req.Burst > 0 && req.Burst < MaxCost {
		req.Burst = MaxCost
	}
	if req.Slot.Limit > 0 && req.Slot.Key == "" {
		return errors.New("ratelimit: empty slot key")
	}
	if req.Slot.TTL <= 0 {
		req.Slot.TTL = DefaultSlotTTL
	}
	return nil
}

func (l *Limiter) run(ctx context.Context, req Request, dry bool) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()

	base := credentialPrefix(req.Key)
	groupLimit := req.Group.HourlyLimit()
	keys := []string{
		base + "susp",
		base + "hour",
		base + "burst",
		base + "group:" + string(req.Group),
		base + "brej",
	}
	monthPrefix := ""
	if req.OrgID != "" {
		monthPrefix = orgPrefix(req.OrgID)
	}
	dryArg := "0"
	if dry {
		dryArg = "1"
	}
	args := []any{
		req.Cost, req.Hourly, req.Burst, groupLimit, dryArg,
		base + "use:", monthPrefix,
		int64(HourlyUsageTTL / time.Second), int64(MonthlyUsageTTL / time.Second),
		BurstRejectionsTolerated, BurstRejectionWindow.Milliseconds(), SuspensionDuration.Milliseconds(),
		int64(HourlyPeriod / time.Second), int64(BurstPeriod / time.Second),
	}
	var token, slots string
	if req.extra {
		args = append(args, 0, "", 0, "1")
	} else if req.Slot.Limit > 0 && !dry {
		var err error
		if token, err = newToken(); err != nil {
			return Result{}, fmt.Errorf("ratelimit: slot token: %w", err)
		}
		slots = slotsKey(req.Slot.Key)
		keys = append(keys, slots)
		args = append(args, req.Slot.Limit, token, req.Slot.TTL.Milliseconds())
	}
	// Sent with the other requests' checks in one pipeline; the first
	// check after Redis lost its scripts loads the script again.
	var (
		raw     []any
		watched *redis.SliceCmd
	)
	cmd, err := l.batch.do(ctx, func(c context.Context, p redis.Pipeliner) redis.Cmder {
		if len(req.Watch) > 0 && !dry && !req.extra {
			watched = p.MGet(c, req.Watch...)
		}
		return l.allow.EvalSha(c, p, keys, args...)
	})
	switch {
	case redis.HasErrorPrefix(err, "NOSCRIPT"):
		// EVAL, not Run (whose EVALSHA is known to fail): it loads the
		// script for the next checks too.
		raw, err = l.allow.Eval(ctx, l.client, keys, args...).Slice()
	case err == nil:
		raw, err = cmd.(*redis.Cmd).Slice()
	}
	if err != nil {
		if token != "" && ctx.Err() != nil {
			// The check may have run and taken a slot the caller never got:
			// free it now rather than after its TTL.
			go l.releaseToken(slots, token)
		}
		return Result{}, classify(err)
	}
	res, err := parseResult(raw)
	if err != nil {
		return Result{}, err
	}
	if res.slotTaken == 1 {
		res.Slot = &Slot{l: l, slots: slots, token: token}
	}
	res.SlotRefused = res.slotTaken == 0
	res.Watched = watchedValues(watched)
	return res, nil
}

// watchedValues returns the integers an MGET of Request.Watch read: nil
// when it was not sent, failed, or a value is not an integer.
func watchedValues(cmd *redis.SliceCmd) []int64 {
	if cmd == nil {
		return nil
	}
	vals, err := cmd.Result()
	if err != nil {
		return nil
	}
	out := make([]int64, len(vals))
	for i, v := range vals {
		if v == nil {
			continue // never written: version 0
		}
		s, ok := v.(string)
		if !ok {
			return nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil
		}
		out[i] = n
	}
	return out
}

func parseResult(raw []any) (Result, error) {
	const fields = 22
	if len(raw) != fields {
		return Result{}, fmt.Errorf("ratelimit: script returned %d values, want %d", len(raw), fields)
	}
	n := make([]int64, fields)
	for i, v := range raw {
		if i == 1 {
			continue
		}
		x, err := toInt64(v)
		if err != nil {
			return Result{}, fmt.Errorf("ratelimit: script value %d: %w", i, err)
		}
		n[i] = x
	}
	rejectedBy, _ := raw[1].(string)
	bucket := func(i int) BucketState {
		return BucketState{
			Limit:      int(n[i]),
			Remaining:  int(n[i+1]),
			Reset:      n[i+2],
			RetryAfter: time.Duration(n[i+3]) * time.Millisecond,
		}
	}
	r := Result{
		Allowed:       n[0] == 1,
		RejectedBy:    Bucket(rejectedBy),
		RetryAfter:    time.Duration(n[2]) * time.Millisecond,
		NewSuspension: n[4] == 1,
		Hourly:        bucket(5),
		BurstBucket:   bucket(9),
		GroupBucket:   bucket(13),
		HourRequests:  n[17],
		HourUnits:     n[18],
		Now:           time.UnixMilli(n[19]),
		slotTaken:     n[20],
		SlotsInUse:    int(n[21]),
	}
	if n[3] > 0 {
		r.SuspendedUntil = time.UnixMilli(n[3])
	}
	r.Burst, r.BurstRemaining = r.BurstBucket.Limit, r.BurstBucket.Remaining
	tight, which := tightest(r.Hourly, r.GroupBucket, r.RejectedBy)
	r.Limit, r.Remaining, r.Reset, r.LimitBucket = tight.Limit, tight.Remaining, tight.Reset, which
	return r, nil
}

// tightest picks the hour-long bucket the headers report: the one that
// rejected the request, else the one with less left.
func tightest(hourly, group BucketState, rejectedBy Bucket) (BucketState, Bucket) {
	switch {
	case hourly.Limit == 0 && group.Limit == 0:
		return BucketState{}, ""
	case group.Limit == 0:
		return hourly, BucketHourly
	case hourly.Limit == 0:
		return group, BucketGroup
	case rejectedBy == BucketGroup:
		return group, BucketGroup
	case rejectedBy == BucketHourly:
		return hourly, BucketHourly
	case group.Remaining < hourly.Remaining:
		return group, BucketGroup
	}
	return hourly, BucketHourly
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("unexpected %T", v)
}

// slotsKey is the Redis key of key's concurrency slots.
func slotsKey(key string) string { return credentialPrefix(key) + "conc" }

// credentialPrefix is the prefix of every key of one credential. The hash
// tag keeps them in one slot.
func credentialPrefix(key string) string {
	return "rl:{" + key + "}:"
}

// MonthlySubject names the monthly usage counter of an organization in
// an environment: the live environment's is the organization's id (the one
// API overage is billed from, and what earlier versions counted), any
// other's (the sandbox's "test") the id and the environment. Sandbox
// requests therefore never count towards, nor show, live usage.
func MonthlySubject(orgID, env string) string {
	if env == "" || env == "live" {
		return orgID
	}
	return orgID + ":" + env
}

// orgPrefix is the prefix of an organization's monthly usage hashes.
func orgPrefix(orgID string) string {
	return "rl:org:{" + orgID + "}:use:"
}

// classify wraps err with ErrUnavailable unless it is an error reply of a
// reachable, working server (a bug, not an outage).
func classify(err error) error {
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	// Error replies that mean the server cannot serve right now.
	msg := strings.TrimPrefix(rerr.Error(), "ERR ")
	for _, p := range [...]string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY", "NOREPLICAS", "MISCONF"} {
		if strings.HasPrefix(msg, p) {
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
	}
	return fmt.Errorf("ratelimit: %w", err)
}

// releaseToken frees the slot token of slots (if it was taken), on a
// context of its own.
func (l *Limiter) releaseToken(slots, token string) {
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	_, _ = l.batch.do(ctx, releaseCmd(slots, token))
}

// releaseCmd is the command that frees the slot token of slots.
func releaseCmd(slots, token string) func(context.Context, redis.Pipeliner) redis.Cmder {
	return func(c context.Context, p redis.Pipeliner) redis.Cmder { return p.ZRem(c, slots, token) }
}

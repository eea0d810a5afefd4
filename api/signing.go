package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// Replay protection of signed requests.
const (
	// signatureMemory is how long an accepted signature is remembered: longer
	// than any timestamp it carries stays acceptable (±SignatureWindow).
	signatureMemory = 2*identity.SignatureWindow + time.Minute
	// maxRememberedSignatures bounds the in-memory store used without Redis.
	maxRememberedSignatures = 100_000
)

// replayGuard refuses a request signature seen before. With Redis every
// instance shares what was seen (SET NX with a TTL); without Redis, or while
// Redis is unreachable, each instance remembers in a bounded map of its own.
type replayGuard struct {
	redis redis.UniversalClient // nil: memory only
	now   func() time.Time

	mu   sync.Mutex
	seen map[string]time.Time // signature id -> forget after
}

func newReplayGuard(rdb redis.UniversalClient, now func() time.Time) *replayGuard {
	return &replayGuard{redis: rdb, now: now, seen: map[string]time.Time{}}
}

// claim records the signature of keyID's request and refuses one already
// recorded. Errors: INVALID_SIGNATURE (a replay), DEPENDENCY_UNAVAILABLE
// (the in-memory store is full).
func (g *replayGuard) claim(ctx context.Context, keyID string, sig *identity.VerifiedSignature) error {
	sum := sha256.Sum256(append([]byte(sig.Scheme+"\x00"+sig.Timestamp+"\x00"), sig.MAC...))
	id := "sigseen:" + keyID + ":" + hex.EncodeToString(sum[:])
	replayed := models.Errorf(models.CodeInvalidSignature, "this signature was already used: sign every request anew (v2, with a new X-Nonce)")
	if g.redis != nil {
		first, err := g.redis.SetNX(ctx, id, 1, signatureMemory).Result()
		if err == nil {
			if !first {
				return replayed
			}
			return nil
		}
		// Redis is unreachable: this instance still refuses what it saw.
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if until, ok := g.seen[id]; ok && until.After(now) {
		return replayed
	}
	if len(g.seen) >= maxRememberedSignatures {
		for k, until := range g.seen {
			if !until.After(now) {
				delete(g.seen, k)
			}
		}
		if len(g.seen) >= maxRememberedSignatures {
			return models.Errorf(models.CodeDependencyUnavailable, "too many signed requests to check for replays; retry shortly").WithDetail("retry_after", 5)
		}
	}
	g.seen[id] = now.Add(signatureMemory)
	return nil
}

package identity

import (
	"testing"
	"time"
)

func TestKeyCache(t *testing.T) {
	now := time.Unix(1000, 0)
	c := NewKeyCache(time.Second)
	c.now = func() time.Time { return now }
	rec := &keyRecord{key: APIKey{ID: "key_1"}}

	// A miss, then the read kept for one second from its start.
	_, ticket, ok := c.get("h")
	if ok {
		t.Fatal("hit in an empty cache")
	}
	now = now.Add(300 * time.Millisecond) // the read takes 300 ms
	c.put("h", rec, ticket)
	if got, _, ok := c.get("h"); !ok || got != rec {
		t.Fatal("the entry is not kept")
	}
	now = now.Add(699 * time.Millisecond)
	if _, _, ok := c.get("h"); !ok {
		t.Fatal("the entry expired early")
	}
	now = now.Add(time.Millisecond) // one second after the read began
	_, ticket, ok = c.get("h")
	if ok {
		t.Fatal("the entry outlived its TTL")
	}

	// A read that raced with Invalidate is not kept.
	c.Invalidate()
	c.put("h", rec, ticket)
	if _, _, ok := c.get("h"); ok {
		t.Fatal("a read begun before Invalidate was kept")
	}
	_, ticket, _ = c.get("h")
	c.put("h", rec, ticket)
	c.Invalidate()
	if _, _, ok := c.get("h"); ok {
		t.Fatal("Invalidate kept an entry")
	}

	// A nil cache caches nothing.
	var none *KeyCache
	_, ticket, ok = none.get("h")
	none.put("h", rec, ticket)
	none.Invalidate()
	if ok {
		t.Fatal("hit in a nil cache")
	}
}

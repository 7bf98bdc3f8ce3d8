package persisted_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
	"github.com/advisorhq/gateway/internal/persisted"
	"github.com/advisorhq/gateway/internal/redisconn"
)

func TestManifestsOfBothFormatsAreRead(t *testing.T) {
	cases := []struct {
		name, manifest string
		ids            []string
	}{
		{"graphql-codegen's client preset", `{"abc123": "query A { version }", "def456": "query B { version }"}`, []string{"abc123", "def456"}},
		{"Apollo's manifest", `{"format": "apollo-persisted-query-manifest", "version": 1, "operations": [
			{"id": "abc123", "name": "A", "type": "query", "body": "query A { version }"}]}`, []string{"abc123"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := persisted.ParseManifest([]byte(c.manifest))
			if err != nil {
				t.Fatal(err)
			}
			if m.Len() != len(c.ids) {
				t.Errorf("got %d documents, want %d", m.Len(), len(c.ids))
			}
			for _, id := range c.ids {
				doc, ok := m.Document(id)
				if !ok || !m.Trusts(doc) {
					t.Errorf("%s: %q, %v; want a trusted document", id, doc, ok)
				}
			}
			if m.Trusts("query A { version } ") {
				t.Error("a document differing by a space is trusted; want only the exact text")
			}
		})
	}
}

func TestManifestsThatCannotBeServedAreRefusedSayingWhy(t *testing.T) {
	cases := []struct{ name, manifest, want string }{
		{"not JSON", `nope`, "not a JSON object"},
		{"an array", `[]`, "not a JSON object"},
		{"empty", `{}`, "it holds no documents"},
		{"a document that is not a string", `{"a": 1}`, `the entry "a" is not a string`},
		{"an empty document", `{"a": " "}`, `the document of "a" is empty`},
		{"an id no client can send", `{"a b": "query { version }"}`, `the id "a b" is not one a client can send`},
		{"another format", `{"format": "relay", "version": 1}`, `format "relay" is not one the gateway reads`},
		{"another version", `{"format": "apollo-persisted-query-manifest", "version": 2, "operations": []}`, "version 2"},
		{"no operations", `{"format": "apollo-persisted-query-manifest", "version": 1, "operations": []}`, "it holds no operations"},
		{"one id, two documents", `{"format": "apollo-persisted-query-manifest", "version": 1, "operations": [
			{"id": "a", "body": "query A { version }"}, {"id": "a", "body": "query B { version }"}]}`, `operations[1]: the id "a" names two different documents`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := persisted.ParseManifest([]byte(c.manifest))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
}

func TestTheMemoryStoreForgetsTheLeastRecentlyUsedBeyondItsSize(t *testing.T) {
	ctx := context.Background()
	m := persisted.NewMemory(3 * (2 + 10)) // three entries of a 2-byte hash and a 10-byte document
	for _, h := range []string{"h1", "h2", "h3"} {
		_ = m.Put(ctx, h, strings.Repeat("x", 10))
	}
	_, _, _ = m.Get(ctx, "h1") // h2 is now the least recently used
	_ = m.Put(ctx, "h4", strings.Repeat("y", 10))
	for h, want := range map[string]bool{"h1": true, "h2": false, "h3": true, "h4": true} {
		if _, ok, _ := m.Get(ctx, h); ok != want {
			t.Errorf("%s kept: %v, want %v", h, ok, want)
		}
	}
	_ = m.Put(ctx, "big", strings.Repeat("z", 100))
	if _, ok, _ := m.Get(ctx, "big"); ok {
		t.Error("a document larger than the store was kept")
	}
	if _, ok, _ := m.Get(ctx, "h4"); !ok {
		t.Error("a document larger than the store pushed out the others")
	}
}

func TestTheRedisStoreKeepsDocumentsForTheirTTLAfterLastUse(t *testing.T) {
	client := eventlogtest.SharedClient(t)
	ctx := context.Background()
	prefix := eventlogtest.KeyPrefix("persisted-test")
	now := time.Unix(1_000_000, 0)
	s := persisted.NewRedis(client, prefix, time.Hour, persisted.WithClock(func() time.Time { return now }))
	t.Cleanup(func() { client.Del(context.Background(), s.Keys()...) })

	if _, ok, err := s.Get(ctx, "h"); ok || err != nil {
		t.Fatalf("before Put: %v, %v; want not found", ok, err)
	}
	for _, h := range []string{"h", "old"} {
		if err := s.Put(ctx, h, "query { version }"); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(59 * time.Minute)
	if doc, ok, err := s.Get(ctx, "h"); !ok || err != nil || doc != "query { version }" {
		t.Fatalf("59 minutes after Put: %q, %v, %v; want the document", doc, ok, err)
	}
	now = now.Add(2 * time.Minute)
	if _, ok, _ := s.Get(ctx, "old"); ok {
		t.Error("a document unused for an hour and a minute was found; want it forgotten after its TTL of an hour")
	}
	if _, ok, _ := s.Get(ctx, "h"); !ok {
		t.Error("a document used two minutes ago was forgotten; want it kept for an hour after its last use")
	}
	for _, key := range s.Keys() {
		if ttl := client.PTTL(ctx, key).Val(); ttl < 59*time.Minute || ttl > time.Hour {
			t.Errorf("%s expires in %v; want an hour, so that a store nobody uses goes", key, ttl)
		}
	}

	deadClient := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer deadClient.Close()
	dead := persisted.NewRedis(deadClient, prefix, time.Hour)
	if _, ok, err := dead.Get(ctx, "h"); ok || err == nil {
		t.Errorf("an unreachable Redis: %v, %v; want an error and not found", ok, err)
	}
}

// redisBytes is what Redis says the store's keys take.
func redisBytes(t *testing.T, client redis.UniversalClient, s *persisted.Redis) int64 {
	t.Helper()
	var total int64
	for _, key := range s.Keys() {
		n, err := client.MemoryUsage(context.Background(), key, 0).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// The Redis store keeps within its budget however much is registered, large documents or
// many small ones, as Redis itself measures it (MEMORY USAGE), forgetting the least recently
// used first.
func TestTheRedisStoreStaysWithinItsBudget(t *testing.T) {
	client := eventlogtest.SharedClient(t)
	ctx := context.Background()
	const budget = 512 << 10
	cases := []struct {
		name      string
		documents int
		size      int
	}{
		{"large documents", 40, 60 << 10},
		{"small documents", 4000, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := persisted.NewRedis(client, eventlogtest.KeyPrefix("persisted-budget"), time.Hour, persisted.MaxBytes(budget))
			t.Cleanup(func() { client.Del(context.Background(), s.Keys()...) })
			hash := func(i int) string { return fmt.Sprintf("%064x", i) }
			for i := range c.documents {
				if err := s.Put(ctx, hash(i), fmt.Sprintf("%0*d", c.size, i)); err != nil {
					t.Fatal(err)
				}
				if i == 0 || i == c.documents/2 {
					// The first is used all along, so it is never the least recently used.
					continue
				}
				if _, ok, _ := s.Get(ctx, hash(0)); !ok {
					t.Fatalf("the document used after every registration was forgotten at %d", i)
				}
			}
			used := redisBytes(t, client, s)
			t.Logf("%d documents of %d bytes registered; Redis holds %d KiB of them against a budget of %d KiB",
				c.documents, c.size, used>>10, budget>>10)
			// Redis rounds allocations up; a tenth more than the budget is its own overhead.
			if used > budget*11/10 {
				t.Errorf("Redis holds %d KiB, want at most the budget of %d KiB", used>>10, budget>>10)
			}
			if _, ok, _ := s.Get(ctx, hash(c.documents-1)); !ok {
				t.Error("the last document registered was not kept")
			}
			if _, ok, _ := s.Get(ctx, hash(1)); ok {
				t.Error("the least recently used document was kept past the budget")
			}
		})
	}
	t.Run("a document larger than the budget", func(t *testing.T) {
		s := persisted.NewRedis(client, eventlogtest.KeyPrefix("persisted-budget"), time.Hour, persisted.MaxBytes(1<<10))
		t.Cleanup(func() { client.Del(context.Background(), s.Keys()...) })
		if err := s.Put(ctx, "h", strings.Repeat("x", 2<<10)); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.Get(ctx, "h"); ok {
			t.Error("a document larger than the whole budget was kept")
		}
	})
}

// On a Redis Cluster the store's scripts touch keys of one slot, as a cluster requires.
func TestTheRedisStoreRunsOnACluster(t *testing.T) {
	cluster := eventlogtest.StartCluster(t)
	target, err := redisconn.Parse(cluster.URL(), true)
	if err != nil {
		t.Fatal(err)
	}
	client := target.Open(eventlog.CallTimeout)
	t.Cleanup(func() { _ = client.Close() })
	ctx := context.Background()
	s := persisted.NewRedis(client, "persisted-cluster:", time.Hour, persisted.MaxBytes(4<<10))
	for i := range 20 {
		if err := s.Put(ctx, fmt.Sprintf("h%d", i), strings.Repeat("x", 500)); err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
	}
	if doc, ok, err := s.Get(ctx, "h19"); !ok || err != nil || len(doc) != 500 {
		t.Fatalf("Get: %d bytes, %v, %v; want the document", len(doc), ok, err)
	}
	if _, ok, err := s.Get(ctx, "h0"); ok || err != nil {
		t.Fatalf("Get of the least recently used: %v, %v; want it forgotten within the budget", ok, err)
	}
}

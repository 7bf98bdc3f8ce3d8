package persisted_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
	"github.com/advisorhq/gateway/internal/persisted"
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
	defer client.Del(ctx, prefix+"apq:h")

	s := persisted.NewRedis(client, prefix, time.Hour)
	if _, ok, err := s.Get(ctx, "h"); ok || err != nil {
		t.Fatalf("before Put: %v, %v; want not found", ok, err)
	}
	if err := s.Put(ctx, "h", "query { version }"); err != nil {
		t.Fatal(err)
	}
	client.Expire(ctx, prefix+"apq:h", time.Minute)
	if doc, ok, err := s.Get(ctx, "h"); !ok || err != nil || doc != "query { version }" {
		t.Fatalf("after Put: %q, %v, %v", doc, ok, err)
	}
	if ttl := client.TTL(ctx, prefix+"apq:h").Val(); ttl < 59*time.Minute {
		t.Errorf("TTL after a Get: %s, want the hour again", ttl)
	}

	deadClient := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer deadClient.Close()
	dead := persisted.NewRedis(deadClient, prefix, time.Hour)
	if _, ok, err := dead.Get(ctx, "h"); ok || err == nil {
		t.Errorf("an unreachable Redis: %v, %v; want an error and not found", ok, err)
	}
}

package eventlog_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
)

// Each firm's events are its own: the same body from two firms is two events, each record names
// its firm, and a redelivery is a duplicate only of the same firm's event. Firm ids are arbitrary
// strings, so ones that look like another's key or body joined with a separator must stay apart.
func TestEachFirmsEventsAreItsOwn(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(1000, longTTL)
		cases := []struct {
			name       string
			firm, body string
		}{
			{"a firm", "a", `{"same":1}`},
			{"another firm, the same body", "b", `{"same":1}`},
			{"a firm named as another and a separator", "a:b", `{"same":1}`},
			{"a firm whose name runs into the body", "a", `:{"same":1}`},
			{"the same bytes split between firm and body otherwise", "a:", `{"same":1}`},
			{"a firm with a hash tag", "{events}", `{"same":1}`},
			{"a firm with a NUL", "a\x00b", `{"same":1}`},
			{"a firm in another script", "firmé 1", `{"same":1}`},
			{"a firm that looks like a key", "seen:0123", `{"same":1}`},
		}
		ids := make([]string, len(cases))
		for i, c := range cases {
			id, dup, err := f.log.Append(ctxT(t), c.firm, []byte(c.body))
			if err != nil || dup {
				t.Fatalf("%s: Append = %s, dup=%v, %v; want a new event", c.name, id, dup, err)
			}
			ids[i] = id
		}
		for i, c := range cases {
			id, dup, err := f.log.Append(ctxT(t), c.firm, []byte(c.body))
			if err != nil || !dup || id != ids[i] {
				t.Errorf("%s: redelivery = %s, dup=%v, %v; want %s, dup=true", c.name, id, dup, err, ids[i])
			}
			if f.replica != nil {
				id, dup, err := f.replica().Append(ctxT(t), c.firm, []byte(c.body))
				if err != nil || !dup || id != ids[i] {
					t.Errorf("%s: redelivery to another replica = %s, dup=%v, %v; want %s, dup=true", c.name, id, dup, err, ids[i])
				}
			}
		}
		recs, err := f.log.After(ctxT(t), "", 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(cases) {
			t.Fatalf("stored %d records, want %d", len(recs), len(cases))
		}
		newest, err := f.log.Before(ctxT(t), "", 1)
		if err != nil || len(newest) != 1 {
			t.Fatalf("Before = %v, %v", newest, err)
		}
		for i, c := range cases {
			if r := recs[i]; r.ID != ids[i] || r.Firm != c.firm || string(r.Body) != c.body {
				t.Errorf("%s: read back %s of firm %q, %q; want %s of firm %q, %q", c.name, r.ID, r.Firm, r.Body, ids[i], c.firm, c.body)
			}
		}
		if last := cases[len(cases)-1]; newest[0].Firm != last.firm {
			t.Errorf("Before read firm %q, want %q", newest[0].Firm, last.firm)
		}
	})
}

func TestAnEventOfNoFirmIsRefused(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(100, longTTL)
		_, _, err := f.log.Append(ctxT(t), "", []byte(`{"x":1}`))
		if !errors.Is(err, eventlog.ErrNoFirm) || errors.Is(err, eventlog.ErrUnavailable) {
			t.Errorf("got %v, want ErrNoFirm (and not ErrUnavailable: trying again will not help)", err)
		}
		if got := after(t, f.log, "", 10); len(got) != 0 {
			t.Errorf("stored %v, want nothing", got)
		}
	})
}

// A Redis Stream outlives a deployment: entries that a gateway from before firms stored have no
// firm field, and read back with none, for the hub to attribute. Every key the log writes is in
// the {events} slot, so that its scripts run on a Cluster, and no key holds a firm's id as it is.
func TestRedisKeepsEntriesOfBeforeFirmsAndOneSlot(t *testing.T) {
	client := redisClient(t)
	prefix := redisPrefix(t, client)
	log := eventlog.NewRedis(client, prefix, 100, longTTL)
	ctx := ctxT(t)
	legacy, err := client.XAdd(ctx, &redis.XAddArgs{Stream: prefix + "{events}:stream", Values: []string{"body", `{"old":1}`}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "firm-with-a-telling-name"
	id, _, err := log.Append(ctx, secret, []byte(`{"new":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := log.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := log.After(ctx, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []eventlog.Record{{ID: legacy, Body: []byte(`{"old":1}`)}, {ID: id, Firm: secret, Body: []byte(`{"new":1}`)}}
	if len(recs) != len(want) {
		t.Fatalf("read %d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		if r := recs[i]; r.ID != w.ID || r.Firm != w.Firm || !bytes.Equal(r.Body, w.Body) {
			t.Errorf("record %d = %+v, want %+v", i, r, w)
		}
	}
	keys, err := client.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 3 { // the stream, a de-duplication key, the readiness key
		t.Errorf("keys %v, want the stream, a de-duplication key and the readiness key", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, prefix+"{events}:") {
			t.Errorf("key %q is outside the {events} slot", k)
		}
		if strings.Contains(k, secret) {
			t.Errorf("key %q holds the firm's id", k)
		}
	}
}

// A Redis at maxmemory with noeviction answers PING and reads, and refuses every write: the log
// must not look writable then, since webhooks are refused. It is writable again once memory is
// freed.
func TestAFullRedisIsNotWritableUntilMemoryIsFreed(t *testing.T) {
	t.Parallel()
	srv := eventlogtest.StartFull(t)
	opts := &redis.Options{Addr: srv.Addr()}
	eventlog.Bound(opts)
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	log := eventlog.NewRedis(client, "eventlog-test-full:", 100, time.Minute)
	ctx := context.Background()
	stored, _, err := log.Append(ctx, firm, body("before", 0))
	if err != nil {
		t.Fatalf("Append before Redis is full: %v", err)
	}
	free := srv.Fill()

	if err := client.Ping(ctx).Err(); err != nil {
		t.Fatalf("a full Redis should still answer PING: %v", err)
	}
	if recs, err := log.After(ctx, "", 10); err != nil || len(recs) != 1 || recs[0].ID != stored {
		t.Errorf("reading a full Redis: %v, %v; want the record stored before", recs, err)
	}
	for name, call := range map[string]func() error{
		"Ping":   func() error { return log.Ping(ctx) },
		"Append": func() error { _, _, err := log.Append(ctx, firm, body("full", 0)); return err },
	} {
		err := call()
		t.Logf("%s on a full Redis: %v", name, err)
		if !errors.Is(err, eventlog.ErrUnavailable) || !strings.Contains(fmtErr(err), "maxmemory") {
			t.Errorf("%s on a full Redis: got %v, want ErrUnavailable saying Redis reached its maxmemory", name, err)
		}
	}

	free()
	if err := log.Ping(ctx); err != nil {
		t.Errorf("Ping once memory is freed: %v", err)
	}
	if _, dup, err := log.Append(ctx, firm, body("freed", 0)); err != nil || dup {
		t.Errorf("Append once memory is freed: dup=%v, %v", dup, err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

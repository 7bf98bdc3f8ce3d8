package eventlog_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/clock"
	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
	"github.com/advisorhq/gateway/internal/redisconn"
)

// The contract tests below run against every implementation of eventlog.Log: the in-process
// Memory and the Redis Stream. Redis is a real server at REDIS_URL (default
// redis://127.0.0.1:6379); each test gets keys under a random prefix of its own, deleted after.
// Without a reachable Redis its cases are skipped, unless REQUIRE_REDIS is set.

const longTTL = 10 * time.Minute

// firm is the firm of the events the contract tests append when firms are not what they test.
const firm = "firm-001"

// fixture is one log under test and what the contract tests need to drive it.
type fixture struct {
	log eventlog.Log
	// pass lets d go by for the de-duplication window: Memory's clock moves, Redis waits.
	pass func(d time.Duration)
	// replica opens another log over the same store, as another gateway replica would; nil
	// for Memory, whose store is its own process.
	replica func() eventlog.Log
	// slack is how many records over max the log may keep: Redis trims approximately. Memory
	// (slack 0) also knows exactly which id it trimmed last.
	slack int
}

type backend struct {
	name string
	open func(t *testing.T, max int, dedupTTL time.Duration) *fixture
}

var backends = []backend{
	{"memory", openMemory},
	{"redis", openRedisLog},
	{"redis cluster", openClusterLog},
}

// eachBackend runs test as a subtest once per implementation.
func eachBackend(t *testing.T, test func(t *testing.T, open func(max int, dedupTTL time.Duration) *fixture)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			test(t, func(max int, dedupTTL time.Duration) *fixture { return b.open(t, max, dedupTTL) })
		})
	}
}

func openMemory(_ *testing.T, max int, dedupTTL time.Duration) *fixture {
	c := clock.NewSettable(time.Now())
	return &fixture{log: eventlog.NewMemory(max, dedupTTL, c.Now), pass: c.Advance}
}

func redisURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379"
}

// redisClient connects to the test Redis, skipping the test (or failing it, with
// REQUIRE_REDIS) when there is none. The client is closed when the test ends.
func redisClient(t *testing.T) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(redisURL())
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	if err := redisReachable(); err != nil {
		if os.Getenv("REQUIRE_REDIS") != "" {
			t.Fatalf("Redis at %s is required (REQUIRE_REDIS) but unreachable: %v", redisURL(), err)
		}
		t.Skipf("no Redis at %s (%v); set REDIS_URL, or REQUIRE_REDIS to fail instead", redisURL(), err)
	}
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// redisReachable pings the test Redis once per run, without retries, so that every Redis case
// skips at once when there is none.
var redisReachable = sync.OnceValue(func() error {
	opts, err := redis.ParseURL(redisURL())
	if err != nil {
		return err
	}
	opts.DialTimeout, opts.MaxRetries, opts.DialerRetries = 2*time.Second, -1, 1
	client := redis.NewClient(opts)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return client.Ping(ctx).Err()
})

// redisPrefix returns a key prefix used by no other test, and deletes its keys when the test
// ends.
func redisPrefix(t *testing.T, client *redis.Client) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	prefix := "eventlog-test:" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var cursor uint64
		for {
			keys, next, err := client.Scan(ctx, cursor, prefix+"*", 500).Result()
			if err != nil {
				t.Errorf("clean up keys %s*: %v", prefix, err)
				return
			}
			if len(keys) > 0 {
				if err := client.Del(ctx, keys...).Err(); err != nil {
					t.Errorf("clean up keys %s*: %v", prefix, err)
					return
				}
			}
			if cursor = next; cursor == 0 {
				return
			}
		}
	})
	return prefix
}

func openRedisLog(t *testing.T, max int, dedupTTL time.Duration) *fixture {
	client := redisClient(t)
	prefix := redisPrefix(t, client)
	return &fixture{
		log:  eventlog.NewRedis(client, prefix, max, dedupTTL),
		pass: time.Sleep,
		replica: func() eventlog.Log {
			return eventlog.NewRedis(redisClient(t), prefix, max, dedupTTL)
		},
		// MAXLEN ~ drops whole stream nodes only (stream-node-max-entries, 100 by default).
		slack: 100,
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// appendN appends n distinct bodies and returns their ids.
func appendN(t *testing.T, log eventlog.Log, n int, tag string) []string {
	t.Helper()
	ids := make([]string, 0, n)
	for i := range n {
		id, dup, err := log.Append(ctxT(t), firm, body(tag, i))
		if err != nil {
			t.Fatalf("Append #%d: %v", i, err)
		}
		if dup {
			t.Fatalf("Append #%d of a new body reported a duplicate of %s", i, id)
		}
		ids = append(ids, id)
	}
	return ids
}

func body(tag string, i int) []byte {
	return fmt.Appendf(nil, `{"type":"test","tag":%q,"n":%d}`, tag, i)
}

func recordIDs(recs []eventlog.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func reversed(ids []string) []string {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

func after(t *testing.T, log eventlog.Log, cur string, n int) []string {
	t.Helper()
	recs, err := log.After(ctxT(t), cur, n)
	if err != nil {
		t.Fatalf("After(%q, %d): %v", cur, n, err)
	}
	return recordIDs(recs)
}

func before(t *testing.T, log eventlog.Log, cur string, n int) []string {
	t.Helper()
	recs, err := log.Before(ctxT(t), cur, n)
	if err != nil {
		t.Fatalf("Before(%q, %d): %v", cur, n, err)
	}
	return recordIDs(recs)
}

func bounds(t *testing.T, log eventlog.Log) (string, string) {
	t.Helper()
	oldest, newest, err := log.Bounds(ctxT(t))
	if err != nil {
		t.Fatalf("Bounds: %v", err)
	}
	return oldest, newest
}

func trimmed(t *testing.T, log eventlog.Log) string {
	t.Helper()
	id, err := log.Trimmed(ctxT(t))
	if err != nil {
		t.Fatalf("Trimmed: %v", err)
	}
	return id
}

func mustParse(t *testing.T, s string) eventlog.ID {
	t.Helper()
	id, err := eventlog.ParseID(s)
	if err != nil {
		t.Fatalf("ParseID(%q): %v", s, err)
	}
	return id
}

func TestIDsIncreaseStrictly(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(1000, longTTL)
		ids := appendN(t, f.log, 50, "order")
		for i, s := range ids {
			id := mustParse(t, s)
			if id.String() != s {
				t.Errorf("id %q prints back as %q", s, id.String())
			}
			if i == 0 {
				continue
			}
			prev := mustParse(t, ids[i-1])
			if !prev.Less(id) || id.Less(prev) {
				t.Errorf("id #%d %s does not come after #%d %s", i, s, i-1, ids[i-1])
			}
			if !eventlog.Less(ids[i-1], s) || eventlog.Less(s, ids[i-1]) {
				t.Errorf("Less does not order %s before %s", ids[i-1], s)
			}
		}
		if got := after(t, f.log, "", 1000); !slices.Equal(got, ids) {
			t.Errorf("After(\"\") = %v, want the appended ids %v", got, ids)
		}
	})
}

func TestConcurrentAppendsGetDistinctOrderedIDs(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(1000, longTTL)
		const writers, each = 8, 25
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					if _, dup, err := f.log.Append(context.Background(), firm, body(fmt.Sprint("w", w), i)); err != nil || dup {
						errs <- fmt.Errorf("writer %d append %d: dup=%v err=%v", w, i, dup, err)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		ids := after(t, f.log, "", 1000)
		if len(ids) != writers*each {
			t.Fatalf("stored %d records, want %d", len(ids), writers*each)
		}
		for i := 1; i < len(ids); i++ {
			if !eventlog.Less(ids[i-1], ids[i]) {
				t.Fatalf("ids out of order or repeated: %s then %s", ids[i-1], ids[i])
			}
		}
	})
}

func TestBodiesRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(100, longTTL)
		bodies := [][]byte{
			[]byte(`{"type":"a"}`),
			{0, 1, 2, 0xff, 0xfe, '\n', 0},
			[]byte(""),
			bytes.Repeat([]byte("x"), 64<<10),
		}
		var ids []string
		for _, b := range bodies {
			in := slices.Clone(b)
			id, _, err := f.log.Append(ctxT(t), firm, in)
			if err != nil {
				t.Fatalf("Append: %v", err)
			}
			for i := range in { // the log must not keep the caller's buffer
				in[i] = '!'
			}
			ids = append(ids, id)
		}
		recs, err := f.log.After(ctxT(t), "", 100)
		if err != nil {
			t.Fatalf("After: %v", err)
		}
		if len(recs) != len(bodies) {
			t.Fatalf("After returned %d records, want %d", len(recs), len(bodies))
		}
		for i, r := range recs {
			if r.ID != ids[i] || r.Firm != firm || !bytes.Equal(r.Body, bodies[i]) {
				t.Errorf("record %d = %s of %q, %q (%d bytes), want %s of %q, %q (%d bytes)", i, r.ID, r.Firm, clip(r.Body), len(r.Body), ids[i], firm, clip(bodies[i]), len(bodies[i]))
			}
		}
		recs, err = f.log.Before(ctxT(t), "", 1)
		if err != nil || len(recs) != 1 || !bytes.Equal(recs[0].Body, bodies[len(bodies)-1]) {
			t.Errorf("Before(\"\", 1) did not return the newest body intact: %d records, %v", len(recs), err)
		}
	})
}

func clip(b []byte) []byte { return b[:min(len(b), 16)] }

func TestAfterPaging(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(100, longTTL)
		if got := after(t, f.log, "", 10); len(got) != 0 {
			t.Errorf("After on an empty log = %v", got)
		}
		ids := appendN(t, f.log, 10, "after")
		first, last := mustParse(t, ids[0]), mustParse(t, ids[9])
		beforeAll := eventlog.ID{MS: first.MS - 1, Seq: 0}.String()
		pastAll := eventlog.ID{MS: last.MS + 1000}.String()
		maxID := eventlog.ID{MS: ^uint64(0), Seq: ^uint64(0)}.String()
		cases := []struct {
			name  string
			after string
			n     int
			want  []string
		}{
			{"from the start with empty", "", 3, ids[:3]},
			{"from the start with zero", eventlog.Zero, 3, ids[:3]},
			{"all with a large n", "", 1000, ids},
			{"exactly n left", ids[6], 3, ids[7:]},
			{"fewer than n left", ids[7], 5, ids[8:]},
			{"exclusive of the cursor", ids[2], 3, ids[3:6]},
			{"after the newest", ids[9], 5, nil},
			{"a cursor before the oldest", beforeAll, 4, ids[:4]},
			{"a cursor past the newest", pastAll, 4, nil},
			{"the largest id", maxID, 4, nil},
			{"n of one", ids[4], 1, ids[5:6]},
			{"n of zero", "", 0, nil},
			{"negative n", "", -1, nil},
		}
		for _, c := range cases {
			if got := after(t, f.log, c.after, c.n); !slices.Equal(got, c.want) {
				t.Errorf("%s: After(%q, %d) = %v, want %v", c.name, c.after, c.n, got, c.want)
			}
		}
		// Paging from the start with the last id seen walks the whole log once.
		walked := walk(t, 3, func(cur string, n int) []string { return after(t, f.log, cur, n) })
		if !slices.Equal(walked, ids) {
			t.Errorf("paging with After visited %v, want %v", walked, ids)
		}
	})
}

// walk pages through the log n at a time, each page starting from the last id of the one
// before, until a page is empty, and returns every id seen.
func walk(t *testing.T, n int, page func(cur string, n int) []string) []string {
	t.Helper()
	var walked []string
	for cur := ""; ; {
		p := page(cur, n)
		if len(p) == 0 {
			return walked
		}
		if len(p) > n {
			t.Fatalf("page of %d records for n=%d", len(p), n)
		}
		walked = append(walked, p...)
		cur = p[len(p)-1]
	}
}

func TestBeforePaging(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(100, longTTL)
		if got := before(t, f.log, "", 10); len(got) != 0 {
			t.Errorf("Before on an empty log = %v", got)
		}
		ids := appendN(t, f.log, 10, "before")
		last := mustParse(t, ids[9])
		pastAll := eventlog.ID{MS: last.MS + 1000}.String()
		rev := reversed(ids)
		cases := []struct {
			name   string
			before string
			n      int
			want   []string
		}{
			{"from the newest", "", 3, rev[:3]},
			{"all with a large n", "", 1000, rev},
			{"exclusive of the cursor", ids[7], 3, []string{ids[6], ids[5], ids[4]}},
			{"fewer than n left", ids[2], 5, []string{ids[1], ids[0]}},
			{"before the oldest", ids[0], 5, nil},
			{"before zero", eventlog.Zero, 5, nil},
			{"a cursor past the newest", pastAll, 2, rev[:2]},
			{"n of one", ids[5], 1, ids[4:5]},
			{"n of zero", "", 0, nil},
			{"negative n", "", -1, nil},
		}
		for _, c := range cases {
			if got := before(t, f.log, c.before, c.n); !slices.Equal(got, c.want) {
				t.Errorf("%s: Before(%q, %d) = %v, want %v", c.name, c.before, c.n, got, c.want)
			}
		}
		walked := walk(t, 4, func(cur string, n int) []string { return before(t, f.log, cur, n) })
		if !slices.Equal(walked, rev) {
			t.Errorf("paging with Before visited %v, want %v", walked, rev)
		}
	})
}

func TestMalformedCursorsAreInputErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(100, longTTL)
		appendN(t, f.log, 2, "cursor")
		for _, cur := range []string{"nope", "1", "1-", "-1", "a-b", "+", "-"} {
			if _, err := f.log.After(ctxT(t), cur, 5); err == nil || errors.Is(err, eventlog.ErrUnavailable) {
				t.Errorf("After(%q) error = %v, want an input error (not ErrUnavailable)", cur, err)
			}
			if _, err := f.log.Before(ctxT(t), cur, 5); err == nil || errors.Is(err, eventlog.ErrUnavailable) {
				t.Errorf("Before(%q) error = %v, want an input error (not ErrUnavailable)", cur, err)
			}
		}
	})
}

func TestBounds(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(100, longTTL)
		if oldest, newest := bounds(t, f.log); oldest != eventlog.Zero || newest != eventlog.Zero {
			t.Errorf("Bounds of an empty log = %s, %s, want both %s", oldest, newest, eventlog.Zero)
		}
		if got := trimmed(t, f.log); got != eventlog.Zero {
			t.Errorf("Trimmed of an empty log = %s, want %s", got, eventlog.Zero)
		}
		ids := appendN(t, f.log, 1, "bounds")
		if oldest, newest := bounds(t, f.log); oldest != ids[0] || newest != ids[0] {
			t.Errorf("Bounds with one record = %s, %s, want %s twice", oldest, newest, ids[0])
		}
		ids = append(ids, appendN(t, f.log, 4, "bounds-more")...)
		if oldest, newest := bounds(t, f.log); oldest != ids[0] || newest != ids[4] {
			t.Errorf("Bounds = %s, %s, want %s, %s", oldest, newest, ids[0], ids[4])
		}
		if got := trimmed(t, f.log); got != eventlog.Zero {
			t.Errorf("Trimmed below the bound = %s, want %s", got, eventlog.Zero)
		}
	})
}

func TestIdenticalBodiesAreStoredOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(100, longTTL)
		b := []byte(`{"type":"account.updated","id":"a1"}`)
		id1, dup, err := f.log.Append(ctxT(t), firm, b)
		if err != nil || dup {
			t.Fatalf("first Append = %s, dup=%v, %v", id1, dup, err)
		}
		other, dup, err := f.log.Append(ctxT(t), firm, []byte(`{"type":"account.updated","id":"a2"}`))
		if err != nil || dup {
			t.Fatalf("Append of a different body = %s, dup=%v, %v", other, dup, err)
		}
		for i := range 3 {
			id, dup, err := f.log.Append(ctxT(t), firm, slices.Clone(b))
			if err != nil || !dup || id != id1 {
				t.Errorf("redelivery %d = %s, dup=%v, %v; want %s, dup=true", i, id, dup, err, id1)
			}
		}
		if got := after(t, f.log, "", 100); !slices.Equal(got, []string{id1, other}) {
			t.Errorf("stored %v, want %v", got, []string{id1, other})
		}
		if f.replica != nil { // another replica sees the same window
			id, dup, err := f.replica().Append(ctxT(t), firm, b)
			if err != nil || !dup || id != id1 {
				t.Errorf("redelivery to another replica = %s, dup=%v, %v; want %s, dup=true", id, dup, err, id1)
			}
		}
	})
}

// TestDuplicateWindowExpires is the one test that waits for real time with Redis (1s window).
func TestDuplicateWindowExpires(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(100, time.Second)
		b := []byte(`{"type":"window"}`)
		id1, dup, err := f.log.Append(ctxT(t), firm, b)
		if err != nil || dup {
			t.Fatalf("first Append = %s, dup=%v, %v", id1, dup, err)
		}
		if id, dup, err := f.log.Append(ctxT(t), firm, b); err != nil || !dup || id != id1 {
			t.Fatalf("redelivery within the window = %s, dup=%v, %v; want %s, dup=true", id, dup, err, id1)
		}
		f.pass(1100 * time.Millisecond)
		id2, dup, err := f.log.Append(ctxT(t), firm, b)
		if err != nil || dup {
			t.Fatalf("Append after the window = %s, dup=%v, %v; want a new record", id2, dup, err)
		}
		if !eventlog.Less(id1, id2) {
			t.Errorf("id after the window %s does not follow %s", id2, id1)
		}
		if id, dup, err := f.log.Append(ctxT(t), firm, b); err != nil || !dup || id != id2 {
			t.Errorf("redelivery in the new window = %s, dup=%v, %v; want %s, dup=true", id, dup, err, id2)
		}
		if got := after(t, f.log, "", 100); !slices.Equal(got, []string{id1, id2}) {
			t.Errorf("stored %v, want %v", got, []string{id1, id2})
		}
	})
}

func TestHistoryIsBounded(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		const max, total = 10, 300
		f := open(max, longTTL)
		ids := appendN(t, f.log, total, "bounded")
		kept := after(t, f.log, "", 10*total)
		if len(kept) < max || len(kept) > max+f.slack {
			t.Fatalf("kept %d records, want between %d and %d", len(kept), max, max+f.slack)
		}
		if f.slack == 0 && len(kept) != max {
			t.Fatalf("kept %d records, want exactly %d", len(kept), max)
		}
		dropped := total - len(kept)
		if !slices.Equal(kept, ids[dropped:]) {
			t.Fatalf("kept %v, want the newest %d appended: %v", kept, len(kept), ids[dropped:])
		}
		oldest, newest := bounds(t, f.log)
		if oldest != kept[0] || newest != ids[total-1] {
			t.Errorf("Bounds = %s, %s, want %s, %s", oldest, newest, kept[0], ids[total-1])
		}
		tr := trimmed(t, f.log)
		if tr == eventlog.Zero {
			t.Fatalf("Trimmed = %s after dropping %d records", tr, dropped)
		}
		if !eventlog.Less(tr, oldest) {
			t.Errorf("Trimmed %s is not older than the oldest kept %s", tr, oldest)
		}
		if f.slack == 0 && tr != ids[dropped-1] {
			t.Errorf("Trimmed = %s, want the newest dropped %s", tr, ids[dropped-1])
		}
		// Redis forgets the ids it trims, so its answer may be newer than the newest dropped,
		// but never older: a resume point before it would skip events silently.
		if eventlog.Less(tr, ids[dropped-1]) {
			t.Errorf("Trimmed = %s, older than the newest dropped %s", tr, ids[dropped-1])
		}
		if got := before(t, f.log, "", 10*total); !slices.Equal(got, reversed(kept)) {
			t.Errorf("Before(\"\") returned %d records, want the %d kept newest first", len(got), len(kept))
		}
		// A cursor among the dropped records reads on from the oldest kept.
		if got := after(t, f.log, ids[0], 2); !slices.Equal(got, kept[:2]) {
			t.Errorf("After(a dropped id) = %v, want %v", got, kept[:2])
		}
	})
}

// watcher runs log.Watch until stop; woke receives (without blocking) on every wake-up.
type watcher struct {
	woke  chan struct{}
	count atomic.Int64
	stop  func()
}

func watch(t *testing.T, log eventlog.Log) *watcher {
	t.Helper()
	w := &watcher{woke: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		log.Watch(ctx, func() {
			w.count.Add(1)
			select {
			case w.woke <- struct{}{}:
			default:
			}
		})
	}()
	stopped := false
	w.stop = func() {
		t.Helper()
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Watch did not return within 5s of its context ending")
		}
	}
	t.Cleanup(w.stop)
	return w
}

// awaitWake appends through writer until w wakes. It appends more than once because the
// watcher may not be listening yet when the first append happens (and wake-ups can be lost).
func awaitWake(t *testing.T, w *watcher, writer eventlog.Log, tag string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		if _, _, err := writer.Append(ctxT(t), firm, body(tag, i)); err != nil {
			t.Fatalf("Append: %v", err)
		}
		select {
		case <-w.woke:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("Watch was not woken by appends within 10s")
}

func TestWatchWakesOnAppend(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(1000, longTTL)
		w := watch(t, f.log)
		awaitWake(t, w, f.log, "wake")
		// Once listening, every append wakes it again.
		for i := range 3 {
			if _, _, err := f.log.Append(ctxT(t), firm, body("wake-again", i)); err != nil {
				t.Fatalf("Append: %v", err)
			}
			select {
			case <-w.woke:
			case <-time.After(5 * time.Second):
				t.Fatalf("append %d after the first wake-up did not wake the watcher", i)
			}
		}
		w.stop()
		n := w.count.Load()
		appendN(t, f.log, 2, "after-stop")
		time.Sleep(100 * time.Millisecond)
		if got := w.count.Load(); got != n {
			t.Errorf("wake called %d times after Watch returned", got-n)
		}
	})
}

func TestWatchWakesOnAnotherReplicasAppend(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(1000, longTTL)
		if f.replica == nil {
			t.Skip("this log lives in one process: there is no other replica")
		}
		other := f.replica()
		w := watch(t, f.log)
		awaitWake(t, w, other, "replica")
		// And what the other replica appended can be read here.
		ids := appendN(t, other, 1, "replica-read")
		if _, newest := bounds(t, f.log); newest != ids[0] {
			t.Errorf("newest id seen here = %s, want %s appended by the other replica", newest, ids[0])
		}
	})
}

func TestWatchReturnsWhenContextEnds(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(100, longTTL)
		for _, name := range []string{"cancelled later", "already cancelled"} {
			ctx, cancel := context.WithCancel(context.Background())
			if name == "already cancelled" {
				cancel()
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				f.log.Watch(ctx, func() {})
			}()
			if name == "cancelled later" {
				time.Sleep(50 * time.Millisecond)
				select {
				case <-done:
					t.Fatalf("%s: Watch returned before its context ended", name)
				default:
				}
				cancel()
			}
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s: Watch did not return within 5s of its context ending", name)
			}
			cancel()
		}
	})
}

func TestPing(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(int, time.Duration) *fixture) {
		f := open(100, longTTL)
		if err := f.log.Ping(ctxT(t)); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
}

// TestUnreachableRedisIsUnavailable points a log at a port nothing listens on: every call that
// needs the store fails with ErrUnavailable, so callers answer "try again".
func TestUnreachableRedisIsUnavailable(t *testing.T) {
	opts, err := redis.ParseURL("redis://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	opts.DialTimeout = 200 * time.Millisecond
	opts.MaxRetries = -1
	opts.DialerRetries = 1
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	log := eventlog.NewRedis(client, "eventlog-test-unreachable:", 10, time.Minute)

	checks := map[string]func(ctx context.Context) error{
		"Append": func(ctx context.Context) error { _, _, err := log.Append(ctx, firm, []byte("x")); return err },
		"After":  func(ctx context.Context) error { _, err := log.After(ctx, "", 10); return err },
		"After a cursor": func(ctx context.Context) error {
			_, err := log.After(ctx, "1732266000000-0", 10)
			return err
		},
		"Before":  func(ctx context.Context) error { _, err := log.Before(ctx, "", 10); return err },
		"Bounds":  func(ctx context.Context) error { _, _, err := log.Bounds(ctx); return err },
		"Trimmed": func(ctx context.Context) error { _, err := log.Trimmed(ctx); return err },
		"Ping":    func(ctx context.Context) error { return log.Ping(ctx) },
	}
	for name, call := range checks {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := call(ctx)
		cancel()
		if !errors.Is(err, eventlog.ErrUnavailable) {
			t.Errorf("%s error = %v, want one wrapping ErrUnavailable", name, err)
		}
	}

	// Watch keeps trying but still returns when its context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		log.Watch(ctx, func() { t.Error("woken with no Redis") })
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Watch on an unreachable Redis did not return after its context ended")
	}
}

func TestMemoryIDsFollowTheClock(t *testing.T) {
	start := time.UnixMilli(1732266000000)
	c := clock.NewSettable(start)
	log := eventlog.NewMemory(100, time.Minute, c.Now)
	ids := appendN(t, log, 3, "clock")
	want := []string{"1732266000000-0", "1732266000000-1", "1732266000000-2"}
	if !slices.Equal(ids, want) {
		t.Errorf("ids within one millisecond = %v, want %v", ids, want)
	}
	c.Advance(5 * time.Millisecond)
	if got := appendN(t, log, 1, "clock-later")[0]; got != "1732266000005-0" {
		t.Errorf("id 5ms later = %s, want 1732266000005-0", got)
	}
	// A clock that steps back never makes an id go back.
	c.Set(start.Add(-time.Hour))
	if got := appendN(t, log, 1, "clock-back")[0]; got != "1732266000005-1" {
		t.Errorf("id after the clock stepped back = %s, want 1732266000005-1", got)
	}
	// Nil means the wall clock.
	wall := eventlog.NewMemory(10, time.Minute, nil)
	lo := time.Now().UnixMilli()
	id := mustParse(t, appendN(t, wall, 1, "wall")[0])
	if hi := time.Now().UnixMilli(); int64(id.MS) < lo || int64(id.MS) > hi {
		t.Errorf("wall-clock id %v outside [%d, %d]", id, lo, hi)
	}
}

func TestMemoryTrimsExactly(t *testing.T) {
	log := eventlog.NewMemory(3, time.Minute, clock.NewSettable(time.UnixMilli(1000)).Now)
	var ids []string
	for i := range 6 {
		ids = append(ids, appendN(t, log, 1, fmt.Sprint("trim", i))...)
		keep := min(i+1, 3)
		if got := after(t, log, "", 100); !slices.Equal(got, ids[len(ids)-keep:]) {
			t.Fatalf("after %d appends kept %v, want %v", i+1, got, ids[len(ids)-keep:])
		}
		want := eventlog.Zero
		if i >= 3 {
			want = ids[i-3]
		}
		if got := trimmed(t, log); got != want {
			t.Errorf("after %d appends Trimmed = %s, want %s", i+1, got, want)
		}
	}
}

func TestParseID(t *testing.T) {
	valid := []struct {
		in   string
		want eventlog.ID
	}{
		{"1732266000000-0", eventlog.ID{MS: 1732266000000}},
		{"0-0", eventlog.ID{}},
		{"0-1", eventlog.ID{Seq: 1}},
		{"1-2", eventlog.ID{MS: 1, Seq: 2}},
		{"007-08", eventlog.ID{MS: 7, Seq: 8}},
		{"18446744073709551615-18446744073709551615", eventlog.ID{MS: ^uint64(0), Seq: ^uint64(0)}},
	}
	for _, c := range valid {
		got, err := eventlog.ParseID(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseID(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range valid[:4] {
		if got := c.want.String(); got != c.in {
			t.Errorf("%+v.String() = %q, want %q", c.want, got, c.in)
		}
	}
	for _, in := range []string{
		"", "-", "0", "1732266000000", "1-", "-1", "1--1", "1-2-3", "a-b", "1-b", "a-1",
		"+1-2", "1-+2", " 1-2", "1-2 ", "-1-2", "1.5-2", "0x1-2",
		"18446744073709551616-0", "0-18446744073709551616", "$", ">", "*",
	} {
		if got, err := eventlog.ParseID(in); err == nil {
			t.Errorf("ParseID(%q) = %+v, want an error", in, got)
		}
	}
}

func TestLess(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"1-0", "2-0", true},
		{"2-0", "1-0", false},
		{"1-0", "1-0", false},
		{"1-0", "1-1", true},
		{"1-1", "1-0", false},
		{"1-99", "2-0", true},
		{"2-0", "1-99", false},
		{"9-0", "10-0", true}, // numeric, not lexical
		{"1-9", "1-10", true},
		{"0-0", "0-1", true},
		{"0-0", "0-0", false},
		{"18446744073709551614-0", "18446744073709551615-0", true},
		{"1-18446744073709551615", "2-0", true},
		// Ids that do not parse sort first, as 0-0.
		{"garbage", "0-1", true},
		{"", "1-0", true},
		{"0-1", "garbage", false},
		{"garbage", "0-0", false},
		{"0-0", "garbage", false},
		{"garbage", "nonsense", false},
	}
	for _, c := range cases {
		if got := eventlog.Less(c.a, c.b); got != c.want {
			t.Errorf("Less(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		x, errx := eventlog.ParseID(c.a)
		y, erry := eventlog.ParseID(c.b)
		if errx == nil && erry == nil {
			if got := x.Less(y); got != c.want {
				t.Errorf("%v.Less(%v) = %v, want %v", x, y, got, c.want)
			}
		}
	}
}

// openClusterLog is the Redis log on a Redis Cluster of its own: every script and transaction
// must touch one slot, and announcements must reach a subscriber connected to any node.
func openClusterLog(t *testing.T, max int, dedupTTL time.Duration) *fixture {
	cluster := clusterFor(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	prefix := "cluster-test:" + hex.EncodeToString(b[:]) + ":"
	open := func() eventlog.Log {
		target, err := redisconn.Parse(cluster.URL(), false)
		if err != nil {
			t.Fatal(err)
		}
		client := target.Open(eventlog.CallTimeout)
		t.Cleanup(func() { _ = client.Close() })
		return eventlog.NewRedis(client, prefix, max, dedupTTL)
	}
	return &fixture{log: open(), pass: time.Sleep, replica: open, slack: 100}
}

// clusterFor is the package's Redis Cluster, started for the first test that asks and stopped
// by TestMain; each fixture keeps to its own key prefix.
func clusterFor(t *testing.T) *eventlogtest.Cluster {
	t.Helper()
	c, err := sharedCluster()
	if err != nil {
		if os.Getenv("REQUIRE_REDIS") != "" {
			t.Fatalf("a Redis Cluster is required (REQUIRE_REDIS): %v", err)
		}
		t.Skipf("no Redis Cluster: %v", err)
	}
	return c
}

var clusterDir string

var sharedCluster = sync.OnceValues(func() (*eventlogtest.Cluster, error) {
	dir, err := os.MkdirTemp("", "eventlog-cluster-")
	if err != nil {
		return nil, err
	}
	clusterDir = dir
	return eventlogtest.NewCluster(dir)
})

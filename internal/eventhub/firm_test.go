package eventhub_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/eventhub"
	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
)

// legacy is the firm whose records legacyLog reads back as of no firm, as a gateway from before
// events had firms stored them.
const legacy = "legacy"

// legacyLog is the in-memory log in which legacy's records have no firm.
type legacyLog struct{ *eventlog.Memory }

func unfirm(recs []eventlog.Record, err error) ([]eventlog.Record, error) {
	for i := range recs {
		if recs[i].Firm == legacy {
			recs[i].Firm = ""
		}
	}
	return recs, err
}

func (l legacyLog) After(ctx context.Context, after string, n int) ([]eventlog.Record, error) {
	return unfirm(l.Memory.After(ctx, after, n))
}

func (l legacyLog) Before(ctx context.Context, before string, n int) ([]eventlog.Record, error) {
	return unfirm(l.Memory.Before(ctx, before, n))
}

// firmsLog is a log holding interleaved events of two firms and of none, and the ids each firm's
// subscriber may see with firm-a as the default firm.
type firmsLog struct {
	log legacyLog
	// seen are the ids each firm may be given, in order.
	seen map[string][]string
	// of are the ids each firm stored, legacy's too.
	of map[string][]string
	// all are every id in order.
	all []string
	n   int
}

func newFirmsLog() *firmsLog {
	return &firmsLog{log: legacyLog{eventlog.NewMemory(100000, time.Hour, nil)}, seen: map[string][]string{}, of: map[string][]string{}}
}

// add appends one event of each firm in turn, count times, and returns their ids.
func (f *firmsLog) add(t testing.TB, count int, firms ...string) []string {
	t.Helper()
	var out []string
	for range count {
		for _, firm := range firms {
			// The same client in every firm: only the firm tells the events apart.
			id, _, err := f.log.Append(context.Background(), firm, body("w-1", f.n))
			if err != nil {
				t.Fatal(err)
			}
			f.n++
			f.all = append(f.all, id)
			f.of[firm] = append(f.of[firm], id)
			seenBy := firm
			if firm == legacy {
				seenBy = "firm-a"
			}
			f.seen[seenBy] = append(f.seen[seenBy], id)
			out = append(out, id)
		}
	}
	return out
}

// until receives from s until the event with id last, and returns the ids received.
func until(t testing.TB, s *eventhub.Subscription, last string) []string {
	t.Helper()
	var got []string
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				t.Fatalf("the subscription ended after %d events, before %s", len(got), last)
			}
			got = append(got, ev.Header().ID)
			if ev.Header().ID == last {
				return got
			}
		case <-timeout:
			t.Fatalf("%s did not come within 10 s (got %d events)", last, len(got))
		}
	}
}

// awaitHead waits until the hub has handed out (or skipped) id: what was stored up to it is
// history to a new subscriber.
func awaitHead(t testing.TB, h *eventhub.Hub, firm, id string) {
	t.Helper()
	s, err := h.Subscribe(t.Context(), firm, nil, eventlog.Zero, nil)
	if err != nil {
		t.Fatal(err)
	}
	until(t, s, id)
}

func after(ids []string, id string) []string {
	if id == "" || id == eventlog.Zero {
		return ids
	}
	i := slices.IndexFunc(ids, func(x string) bool { return eventlog.Less(id, x) })
	if i < 0 {
		return nil
	}
	return ids[i:]
}

// Each firm's subscribers get that firm's events only, live, from the log (resuming from the
// start, after one of its own events or after another firm's) and while catching up after
// falling behind; records of no firm go to the default firm; a firm with no events gets none.
func TestEachFirmIsDeliveredOnlyItsOwnEvents(t *testing.T) {
	t.Parallel()
	firms := []string{"firm-a", "firm-b", legacy, "firm-b", "firm-a", "firm-a", legacy}
	subscribers := []string{"firm-a", "firm-b", "firm-c"}
	for _, tc := range []struct {
		name string
		// history is how many rounds of firms are stored before subscribing; live after.
		history, live int
		// after picks the resume point from the history: "" for none.
		after func(f *firmsLog) string
		// buffer is the subscription's; a small one makes it fall behind and catch up.
		buffer int
	}{
		{name: "live", live: 20},
		{name: "from the start of the log", history: 20, live: 5, after: func(*firmsLog) string { return eventlog.Zero }},
		{name: "after one of firm-a's events", history: 20, live: 5, after: func(f *firmsLog) string { return f.of["firm-a"][7] }},
		{name: "after one of firm-b's events", history: 20, live: 5, after: func(f *firmsLog) string { return f.of["firm-b"][7] }},
		{name: "after an event of no firm", history: 20, live: 5, after: func(f *firmsLog) string { return f.of[legacy][7] }},
		{name: "falling behind and catching up", live: 100, buffer: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFirmsLog()
			h := running(t, f.log, eventhub.Options{DefaultFirm: "firm-a", Buffer: tc.buffer})
			if err := awaitReady(t, h, true); err != nil {
				t.Fatal(err)
			}
			f.add(t, tc.history, firms...)
			// The hub has read the history once it has handed out a last event after it: a
			// subscriber that does not resume starts after that.
			head := f.add(t, 1, "firm-b")[0]
			awaitHead(t, h, "firm-b", head)
			from := head
			if tc.after != nil {
				from = tc.after(f)
			}
			subs := map[string]*eventhub.Subscription{}
			for _, firm := range subscribers {
				resume := from
				if tc.after == nil {
					resume = ""
				}
				s, err := h.Subscribe(t.Context(), firm, nil, resume, nil)
				if err != nil {
					t.Fatalf("%s: %v", firm, err)
				}
				subs[firm] = s
			}
			f.add(t, tc.live, firms...)
			// The last event of each subscriber's firm ends its stream: a foreign event would
			// show up before it.
			end := f.add(t, 1, subscribers...)
			for i, firm := range subscribers {
				want := after(f.seen[firm], from)
				got := until(t, subs[firm], end[i])
				if !slices.Equal(got, want) {
					t.Errorf("%s got %d events %v\nwant %d %v", firm, len(got), got, len(want), want)
				}
			}
		})
	}
}

// Recent is the firm's latest events; records of no firm are the default firm's, or nobody's
// without one; an empty firm has none, and cannot subscribe.
func TestRecentAndSubscribeKeepToTheCallersFirm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		defaultFirm string
		firm        string
		want        func(f *firmsLog) []string
	}{
		{"firm-a with its records of no firm", "firm-a", "firm-a", func(f *firmsLog) []string { return f.seen["firm-a"] }},
		{"firm-b without firm-a's records of no firm", "firm-a", "firm-b", func(f *firmsLog) []string { return f.seen["firm-b"] }},
		{"firm-a without a default firm", "", "firm-a", func(f *firmsLog) []string { return f.of["firm-a"] }},
		{"a firm of no events", "firm-a", "firm-c", func(*firmsLog) []string { return nil }},
		{"no firm, though events of no firm exist", "", "", func(*firmsLog) []string { return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFirmsLog()
			h := running(t, f.log, eventhub.Options{DefaultFirm: tc.defaultFirm})
			f.add(t, 10, "firm-a", legacy, "firm-b", "firm-b")
			got, err := h.Recent(t.Context(), tc.firm, nil, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.want(f); !slices.Equal(ids(got), want) {
				t.Errorf("got %v, want %v", ids(got), want)
			}
			for _, ev := range got {
				if ev.Header().Firm != tc.firm {
					t.Errorf("event %s is of firm %q, want %q", ev.Header().ID, ev.Header().Firm, tc.firm)
				}
			}
			if got, err := h.Recent(t.Context(), tc.firm, &event.Filter{Wids: []string{"w-1"}}, 2); err != nil || len(got) > 2 {
				t.Errorf("the last 2: %v, %v", ids(got), err)
			} else if want := tc.want(f); len(want) >= 2 && !slices.Equal(ids(got), want[len(want)-2:]) {
				t.Errorf("the last 2: %v, want %v", ids(got), want[len(want)-2:])
			}
		})
	}
	h := running(t, newFirmsLog().log, eventhub.Options{DefaultFirm: "firm-a"})
	if _, err := h.Subscribe(t.Context(), "", nil, "", nil); !errors.Is(err, eventhub.ErrNoFirm) {
		t.Errorf("subscribing without a firm: got %v, want ErrNoFirm", err)
	}
	if _, err := h.Subscribe(t.Context(), "", nil, eventlog.Zero, nil); !errors.Is(err, eventhub.ErrNoFirm) {
		t.Errorf("resuming without a firm: got %v, want ErrNoFirm", err)
	}
}

// A resume point older than the log keeps is refused without naming the oldest event kept, which
// may be another firm's.
func TestAnExpiredResumePointNamesNoOtherEvent(t *testing.T) {
	t.Parallel()
	f := newFirmsLog()
	f.log = legacyLog{eventlog.NewMemory(5, time.Hour, nil)}
	h := running(t, f.log, eventhub.Options{})
	watching, err := h.Subscribe(t.Context(), "firm-b", nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	f.add(t, 10, "firm-a", "firm-b")
	until(t, watching, f.of["firm-b"][9]) // the hub has read them all
	_, err = h.Subscribe(t.Context(), "firm-a", nil, f.of["firm-a"][0], nil)
	if apperr.CodeOf(err) != apperr.EventsExpired {
		t.Fatalf("got %v, want %s", err, apperr.EventsExpired)
	}
	for _, id := range f.all[1:] {
		if strings.Contains(err.Error(), id) {
			t.Errorf("the refusal %q names event %s", err, id)
		}
	}
}

// A Redis at maxmemory answers reads and PING but refuses writes, and so webhooks: the hub is not
// ready then, saying why, and is again once memory is freed.
func TestAFullRedisIsNotReady(t *testing.T) {
	t.Parallel()
	srv := eventlogtest.StartFull(t)
	opts := &redis.Options{Addr: srv.Addr()}
	eventlog.Bound(opts)
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	log := eventlog.NewRedis(client, "eventhub-test-full:", 1000, time.Hour)
	h := running(t, log, eventhub.Options{})
	if err := awaitReady(t, h, true); err != nil {
		t.Fatalf("before Redis is full: %v", err)
	}
	free := srv.Fill()
	err := awaitReady(t, h, false)
	if apperr.CodeOf(err) != apperr.EventsUnavailable || !errors.Is(err, eventlog.ErrUnavailable) || !strings.Contains(err.Error(), "maxmemory") {
		t.Errorf("got %v with Redis full, want %s saying Redis reached its maxmemory", err, apperr.EventsUnavailable)
	}
	free()
	if err := awaitReady(t, h, true); err != nil {
		t.Errorf("got %v once memory was freed, want ready", err)
	}
}

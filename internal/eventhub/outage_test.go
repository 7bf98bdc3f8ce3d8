package eventhub_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/eventhub"
	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
)

// linkLog is a log this replica can lose touch with while the store goes on: while down every
// call fails as unavailable, and other replicas (writing to the Memory underneath) still append.
type linkLog struct {
	*eventlog.Memory
	down atomic.Bool
}

func (l *linkLog) fail() error {
	if l.down.Load() {
		return errDown
	}
	return nil
}

func (l *linkLog) Append(ctx context.Context, firm string, body []byte) (string, bool, error) {
	if err := l.fail(); err != nil {
		return "", false, err
	}
	return l.Memory.Append(ctx, firm, body)
}

func (l *linkLog) After(ctx context.Context, after string, n int) ([]eventlog.Record, error) {
	if err := l.fail(); err != nil {
		return nil, err
	}
	return l.Memory.After(ctx, after, n)
}

func (l *linkLog) Before(ctx context.Context, before string, n int) ([]eventlog.Record, error) {
	if err := l.fail(); err != nil {
		return nil, err
	}
	return l.Memory.Before(ctx, before, n)
}

func (l *linkLog) Bounds(ctx context.Context) (string, string, error) {
	if err := l.fail(); err != nil {
		return "", "", err
	}
	return l.Memory.Bounds(ctx)
}

func (l *linkLog) Trimmed(ctx context.Context) (string, error) {
	if err := l.fail(); err != nil {
		return "", err
	}
	return l.Memory.Trimmed(ctx)
}

func (l *linkLog) Ping(ctx context.Context) error { return l.fail() }

// ending records why the hub ended a subscription.
type ending struct {
	once sync.Once
	err  error
	at   time.Time
	done chan struct{}
}

func newEnding() *ending { return &ending{done: make(chan struct{})} }

func (e *ending) report(err error) {
	e.once.Do(func() { e.err, e.at = err, time.Now(); close(e.done) })
}

// drain reads s until it closes, failing after wait.
func drain(t testing.TB, s *eventhub.Subscription, wait time.Duration) []event.Event {
	t.Helper()
	var out []event.Event
	timeout := time.After(wait)
	for {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("the subscription was still open after %v (%d events)", wait, len(out))
		}
	}
}

// waitUnready waits until the hub has noticed that the log is down.
func waitUnready(t testing.TB, h *eventhub.Hub) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for h.Ready(t.Context()) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the hub did not notice the outage within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitBuffered waits until n events wait in s's buffer.
func waitBuffered(t testing.TB, s *eventhub.Subscription, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(s.Events()) < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d events wait in the subscription's buffer after 5 s, want %d", len(s.Events()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func joined(evs []event.Event) string { return strings.Join(ids(evs), ",") }

func TestSubscribersGetWhatTheyMissedAfterAnOutageShorterThanTheGrace(t *testing.T) {
	t.Parallel()
	log := &linkLog{Memory: eventlog.NewMemory(10000, time.Hour, nil)}
	h := running(t, log, eventhub.Options{Buffer: 32, OutageGrace: 2 * time.Second})
	history := appendAll(t, log, "w", 0, 300)
	time.Sleep(50 * time.Millisecond) // the hub has read them: they are history, not live

	liveEnd, resumedEnd := newEnding(), newEnding()
	live, err := h.Subscribe(t.Context(), firm, nil, "", eventhub.EndFunc(liveEnd.report))
	if err != nil {
		t.Fatal(err)
	}
	// This one is still reading history when the outage begins (its buffer is full), and its
	// backfill must wait too.
	resumed, err := h.Subscribe(t.Context(), firm, nil, history[0], eventhub.EndFunc(resumedEnd.report))
	if err != nil {
		t.Fatal(err)
	}
	before := appendAll(t, log, "w", 300, 305)
	if got := ids(receive(t, live, 5)); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("before the outage the live subscriber got %v, want %v", got, before)
	}

	waitBuffered(t, resumed, 32) // its backfill has read a batch and waits for room

	log.down.Store(true)
	waitUnready(t, h)
	start := time.Now()
	if _, err := h.Subscribe(t.Context(), firm, nil, "", nil); apperr.CodeOf(err) != apperr.EventsUnavailable {
		t.Errorf("subscribing during the outage: got %v, want %s", err, apperr.EventsUnavailable)
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("subscribing during the outage was refused after %v, want at once", took)
	}
	// Other replicas go on storing what this one cannot read.
	missed := appendAll(t, log.Memory, "w", 305, 320)
	// Taking the backfill's first batch (256 records) makes it read the log again, now down.
	resumedGot := receive(t, resumed, 256)
	time.Sleep(time.Second)
	log.down.Store(false)
	after := appendAll(t, log, "w", 320, 325)

	want := append(append([]string(nil), missed...), after...)
	if got := ids(receive(t, live, len(want))); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after the outage the live subscriber got\n%v\nwant\n%v", got, want)
	}
	want = append(append(append([]string(nil), history[1:]...), before...), want...)
	resumedGot = append(resumedGot, receive(t, resumed, len(want)-len(resumedGot))...)
	if got := ids(resumedGot); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("the resuming subscriber got %d events, want %d in order (%s ... %s)", len(got), len(want), want[0], want[len(want)-1])
	}
	// Nothing more is pending: a repeat would come before this one.
	next := appendAll(t, log, "w", 325, 326)
	for name, s := range map[string]*eventhub.Subscription{"live": live, "resuming": resumed} {
		if got := ids(receive(t, s, 1)); got[0] != next[0] {
			t.Errorf("the %s subscriber then got %s, want %s", name, got[0], next[0])
		}
	}
	for name, e := range map[string]*ending{"live": liveEnd, "resuming": resumedEnd} {
		select {
		case <-e.done:
			t.Errorf("the %s subscription ended: %v, want it open", name, e.err)
		default:
		}
	}
}

func TestAnOutageLongerThanTheGraceEndsSubscriptionsWithWhereToResume(t *testing.T) {
	t.Parallel()
	const grace = 500 * time.Millisecond
	log := &linkLog{Memory: eventlog.NewMemory(10000, time.Hour, nil)}
	h := running(t, log, eventhub.Options{Buffer: 8, OutageGrace: grace})
	history := appendAll(t, log, "w", 0, 100)
	time.Sleep(50 * time.Millisecond)

	liveEnd, resumedEnd := newEnding(), newEnding()
	live, err := h.Subscribe(t.Context(), firm, nil, "", eventhub.EndFunc(liveEnd.report))
	if err != nil {
		t.Fatal(err)
	}
	// Not read until the end: its backfill waits for room when the outage ends it.
	resumed, err := h.Subscribe(t.Context(), firm, nil, history[0], eventhub.EndFunc(resumedEnd.report))
	if err != nil {
		t.Fatal(err)
	}
	delivered := appendAll(t, log, "w", 100, 103)
	receive(t, live, 3)
	waitBuffered(t, resumed, 8)

	start := time.Now()
	log.down.Store(true)
	cases := []struct {
		name string
		s    *eventhub.Subscription
		end  *ending
		// resumeAfter is the last event the subscriber has, when it cannot read it from the
		// stream (already received); "" to take the last one drained.
		resumeAfter string
	}{
		{"live", live, liveEnd, delivered[2]},
		{"resuming", resumed, resumedEnd, ""},
	}
	for _, tc := range cases {
		got := drain(t, tc.s, grace+5*time.Second)
		<-tc.end.done
		took := tc.end.at.Sub(start)
		t.Logf("the %s subscription ended %v into an outage, with a grace of %v", tc.name, took.Round(time.Millisecond), grace)
		if took < grace || took > grace+time.Second {
			t.Errorf("the %s subscription ended %v into the outage, want between the grace %v and a second more", tc.name, took, grace)
		}
		e, ok := apperr.As(tc.end.err)
		if !ok || e.Code != apperr.EventsUnavailable {
			t.Fatalf("the %s subscription ended with %v, want %s", tc.name, tc.end.err, apperr.EventsUnavailable)
		}
		last := tc.resumeAfter
		if last == "" {
			if len(got) == 0 {
				t.Fatalf("the %s subscriber drained nothing, want its buffered events", tc.name)
			}
			last = got[len(got)-1].Header().ID
		}
		if !strings.Contains(e.Message, fmt.Sprintf("after: %q", last)) {
			t.Errorf("the %s subscription's message %q does not name the last event delivered, %s", tc.name, e.Message, last)
		}
	}
	if n := h.Subscribers(); n != 0 {
		t.Errorf("%d subscribers after the grace, want 0", n)
	}

	// Resuming where the message says, once the store is back, loses and repeats nothing.
	log.down.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for h.Ready(t.Context()) != nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	again, err := h.Subscribe(t.Context(), firm, nil, delivered[1], nil)
	if err != nil {
		t.Fatalf("resuming after the outage: %v", err)
	}
	if got := ids(receive(t, again, 1)); got[0] != delivered[2] {
		t.Errorf("resumed at %s, want %s", got[0], delivered[2])
	}
}

func TestEndingASubscriptionWhileItCatchesUpClosesItsStream(t *testing.T) {
	t.Parallel()
	log := eventlog.NewMemory(10000, time.Hour, nil)
	h := eventhub.New(log, eventhub.Options{Buffer: 4, Poll: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	defer cancel()
	history := appendAll(t, log, "w", 0, 100)
	time.Sleep(50 * time.Millisecond)

	end := newEnding()
	s, err := h.Subscribe(t.Context(), firm, nil, history[0], eventhub.EndFunc(end.report))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the backfill fills the buffer and waits for room
	cancel()                          // the hub shuts down, ending every subscription
	<-done
	got := drain(t, s, 5*time.Second)
	<-end.done
	if apperr.CodeOf(end.err) != apperr.EventsUnavailable {
		t.Errorf("ended with %v, want %s", end.err, apperr.EventsUnavailable)
	}
	if want := history[1 : 1+len(got)]; joined(got) != strings.Join(want, ",") {
		t.Errorf("drained %v, want %v", ids(got), want)
	}
}

// TestAFrozenRedisHoldsSubscriptionsForTheGraceOnly freezes a Redis of the test's own: a short
// freeze delays the events stored after it, a long one ends subscriptions after the grace.
func TestAFrozenRedisHoldsSubscriptionsForTheGraceOnly(t *testing.T) {
	t.Parallel()
	// Longer than CallTimeout, which is how long the hub takes to learn that a read failed.
	const grace = eventlog.CallTimeout + 2*time.Second
	srv := eventlogtest.StartRedis(t)
	opts := &redis.Options{Addr: srv.Addr()}
	eventlog.Bound(opts)
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	log := eventlog.NewRedis(client, "eventhub-test:", 10000, time.Hour)
	h := running(t, log, eventhub.Options{OutageGrace: grace, Poll: 100 * time.Millisecond})
	end := newEnding()
	s, err := h.Subscribe(t.Context(), firm, nil, "", eventhub.EndFunc(end.report))
	if err != nil {
		t.Fatal(err)
	}
	want := appendAll(t, log, "w", 0, 2)
	receive(t, s, 2)

	// Shorter than the grace, but long enough for reads to fail: the subscription waits, then
	// goes on.
	srv.Freeze()
	waitUnready(t, h)
	srv.Thaw()
	want = appendAll(t, log, "w", 2, 4)
	if got := ids(receive(t, s, 2)); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after a short freeze got %v, want %v", got, want)
	}

	// Longer: it ends after the grace, counted from the first read that hung.
	srv.Freeze()
	defer srv.Thaw()
	start := time.Now()
	drain(t, s, grace+eventlog.CallTimeout+5*time.Second)
	<-end.done
	took := end.at.Sub(start)
	t.Logf("the subscription ended %v into the freeze, with a grace of %v", took.Round(time.Millisecond), grace)
	if e, ok := apperr.As(end.err); !ok || e.Code != apperr.EventsUnavailable || !strings.Contains(e.Message, want[1]) {
		t.Errorf("ended with %v, want %s naming %s", end.err, apperr.EventsUnavailable, want[1])
	}
	// The hub reads every poll: the grace starts at most one poll (plus scheduling) in.
	if took < grace || took > grace+time.Second {
		t.Errorf("ended %v into the freeze, want between the grace %v and a second more", took, grace)
	}
}

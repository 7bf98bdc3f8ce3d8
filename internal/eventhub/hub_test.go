package eventhub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/eventhub"
	"github.com/advisorhq/gateway/internal/eventlog"
)

// firm is the firm of the events and subscribers of tests that are not about firms.
const firm = "firm-001"

// body is the record the receiver stores for a ClientProgressChanged delivery; n makes each one
// distinct.
func body(wid string, n int) []byte {
	b, _ := json.Marshal(map[string]any{
		"EventType": "ClientProgressChanged", "Wid": wid,
		"Timestamp":    time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second).Format(time.RFC3339),
		"EstateStatus": "InProgress", "CompletionPercentage": n % 101,
	})
	w, bad := advisorspec.ParseWebhook(b)
	if bad != nil {
		panic(bad)
	}
	return event.Record(w)
}

// running starts a hub over log and stops it when the test ends.
func running(t testing.TB, log eventlog.Log, opts eventhub.Options) *eventhub.Hub {
	t.Helper()
	if opts.Poll == 0 {
		opts.Poll = 20 * time.Millisecond
	}
	h := eventhub.New(log, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func appendAll(t testing.TB, log eventlog.Log, wid string, from, to int) []string {
	t.Helper()
	var ids []string
	for n := from; n < to; n++ {
		id, _, err := log.Append(context.Background(), firm, body(wid, n))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// receive takes n events from s, failing after a few seconds without one.
func receive(t testing.TB, s *eventhub.Subscription, n int) []event.Event {
	t.Helper()
	var out []event.Event
	for len(out) < n {
		select {
		case ev, ok := <-s.Events():
			if !ok {
				t.Fatalf("the subscription ended after %d of %d events", len(out), n)
			}
			out = append(out, ev)
		case <-time.After(5 * time.Second):
			t.Fatalf("got %d of %d events within 5 s", len(out), n)
		}
	}
	return out
}

func ids(evs []event.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Header().ID
	}
	return out
}

func TestLiveEventsReachMatchingSubscribersOnly(t *testing.T) {
	t.Parallel()
	log := eventlog.NewMemory(1000, time.Hour, nil)
	h := running(t, log, eventhub.Options{})
	ctx := t.Context()
	all, err := h.Subscribe(ctx, firm, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := h.Subscribe(ctx, firm, &event.Filter{Wids: []string{"w-2"}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := appendAll(t, log, "w-1", 0, 2)
	want = append(want, appendAll(t, log, "w-2", 2, 3)...)
	if got := ids(receive(t, all, 3)); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("unfiltered subscriber got %v, want %v", got, want)
	}
	if got := ids(receive(t, mine, 1)); got[0] != want[2] {
		t.Errorf("filtered subscriber got %v, want [%s]", got, want[2])
	}
}

func TestResumeBackfillsThenGoesLiveWithoutGapOrRepeat(t *testing.T) {
	t.Parallel()
	log := eventlog.NewMemory(100000, time.Hour, nil)
	// The buffer holds every live event, so a receiver starved of CPU on a loaded machine is
	// not dropped as a slow consumer (seen once in a fresh-clone run): this test is about the
	// handover from history to live, not about falling behind.
	h := running(t, log, eventhub.Options{Buffer: 1024})
	before := appendAll(t, log, "w", 0, 500)
	time.Sleep(50 * time.Millisecond) // the hub has read them: they are history, not live

	s, err := h.Subscribe(t.Context(), firm, nil, before[99], nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { appendAll(t, log, "w", 500, 1000) }) // arrive while the backfill runs
	got := receive(t, s, 900)
	wg.Wait()
	for i, ev := range got {
		if seq := ev.(*event.ClientProgressChanged).CompletionPercentage; seq != (100+i)%101 {
			t.Fatalf("event %d has percentage %d, want %d: a gap or a repeat", i, seq, (100+i)%101)
		}
		if i > 0 && !eventlog.Less(got[i-1].Header().ID, ev.Header().ID) {
			t.Fatalf("ids out of order at %d: %s then %s", i, got[i-1].Header().ID, ev.Header().ID)
		}
	}
}

// A subscription whose reader falls more than the buffer behind is neither waited for nor
// ended: it reads on from the log and gets every event, in order, while the others go on.
func TestASlowSubscriberCatchesUpFromTheLogAndNobodyWaits(t *testing.T) {
	t.Parallel()
	log := eventlog.NewMemory(1000, time.Hour, nil)
	h := running(t, log, eventhub.Options{Buffer: 4})
	var ended error
	var mu sync.Mutex
	slow, err := h.Subscribe(t.Context(), firm, nil, "", eventhub.EndFunc(func(err error) { mu.Lock(); ended = err; mu.Unlock() }))
	if err != nil {
		t.Fatal(err)
	}
	fast, err := h.Subscribe(t.Context(), firm, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []event.Event)
	go func() { done <- receive(t, fast, 20) }()
	// One at a time, so the fast subscriber keeps up while the slow one's buffer fills.
	var written []string
	for n := range 20 {
		written = append(written, appendAll(t, log, "w", n, n+1)...)
		time.Sleep(5 * time.Millisecond)
	}
	if got := ids(<-done); strings.Join(got, ",") != strings.Join(written, ",") {
		t.Errorf("the fast subscriber got %v, want all of %v: the slow one held it back", got, written)
	}
	if got := ids(receive(t, slow, 20)); strings.Join(got, ",") != strings.Join(written, ",") {
		t.Errorf("the slow subscriber got %v, want all of %v, in order", got, written)
	}
	more := appendAll(t, log, "w", 20, 22)
	if got := ids(receive(t, slow, 2)); strings.Join(got, ",") != strings.Join(more, ",") {
		t.Errorf("after catching up, the slow subscriber got %v, want the live %v", got, more)
	}
	mu.Lock()
	defer mu.Unlock()
	if ended != nil {
		t.Errorf("the slow subscription ended: %v", ended)
	}
}

func TestResumeRefusesWhatItCannotHonour(t *testing.T) {
	t.Parallel()
	log := eventlog.NewMemory(10, time.Hour, nil)
	h := running(t, log, eventhub.Options{})
	written := appendAll(t, log, "w", 0, 30) // only the last 10 are kept
	time.Sleep(50 * time.Millisecond)
	for _, tc := range []struct {
		name, after string
		code        apperr.Code
	}{
		{"an id that is not one", "yesterday", apperr.BadUserInput},
		{"an id older than the history kept", written[5], apperr.EventsExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.Subscribe(t.Context(), firm, nil, tc.after, nil)
			if apperr.CodeOf(err) != tc.code {
				t.Errorf("got %v, want %s", err, tc.code)
			}
		})
	}
	s, err := h.Subscribe(t.Context(), firm, nil, written[19], nil)
	if err != nil {
		t.Fatalf("resuming right at the oldest kept: %v", err)
	}
	if got := ids(receive(t, s, 10)); got[0] != written[20] {
		t.Errorf("resumed at %s, want %s", got[0], written[20])
	}
}

func TestRecentReturnsTheLatestMatchesOldestFirst(t *testing.T) {
	t.Parallel()
	log := eventlog.NewMemory(10000, time.Hour, nil)
	h := running(t, log, eventhub.Options{})
	a := appendAll(t, log, "a", 0, 600)
	appendAll(t, log, "b", 600, 700)
	got, err := h.Recent(t.Context(), firm, &event.Filter{Wids: []string{"a"}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids(got), ",") != strings.Join(a[597:], ",") {
		t.Errorf("got %v, want %v", ids(got), a[597:])
	}
	for _, n := range []int{0, 1001} {
		if _, err := h.Recent(t.Context(), firm, nil, n); apperr.CodeOf(err) != apperr.BadUserInput {
			t.Errorf("last %d: %v, want BAD_USER_INPUT", n, err)
		}
	}
}

func TestAGoneSubscriberIsForgotten(t *testing.T) {
	t.Parallel()
	log := eventlog.NewMemory(100, time.Hour, nil)
	h := running(t, log, eventhub.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	if _, err := h.Subscribe(ctx, firm, nil, "", nil); err != nil {
		t.Fatal(err)
	}
	if n := h.Subscribers(); n != 1 {
		t.Fatalf("%d subscribers, want 1", n)
	}
	cancel()
	deadline := time.Now().Add(2 * time.Second)
	for h.Subscribers() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := h.Subscribers(); n != 0 {
		t.Errorf("%d subscribers after the only one left, want 0", n)
	}
}

// downLog is a log whose store cannot be reached.
type downLog struct{ eventlog.Log }

var errDown = fmt.Errorf("dial: %w", eventlog.ErrUnavailable)

func (downLog) Append(context.Context, string, []byte) (string, bool, error) {
	return "", false, errDown
}
func (downLog) After(context.Context, string, int) ([]eventlog.Record, error) {
	return nil, errDown
}
func (downLog) Before(context.Context, string, int) ([]eventlog.Record, error) {
	return nil, errDown
}
func (downLog) Bounds(context.Context) (string, string, error) { return "", "", errDown }
func (downLog) Ping(context.Context) error                     { return errDown }
func (downLog) Watch(ctx context.Context, _ func())            { <-ctx.Done() }

func TestAnUnreachableStoreTurnsSubscribersAwayToRetry(t *testing.T) {
	t.Parallel()
	h := running(t, downLog{}, eventhub.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := h.Subscribe(ctx, firm, nil, "", nil)
	if apperr.CodeOf(err) != apperr.EventsUnavailable {
		t.Errorf("subscribe: %v, want %s", err, apperr.EventsUnavailable)
	}
	if _, err := h.Recent(ctx, firm, nil, 5); apperr.CodeOf(err) != apperr.EventsUnavailable {
		t.Errorf("recent: %v, want %s", err, apperr.EventsUnavailable)
	}
	if err := h.Ready(ctx); !errors.Is(err, eventlog.ErrUnavailable) {
		t.Errorf("ready: %v, want the store's failure", err)
	}
}

// A tracker learns the resume point first, then each event's id before its subscriber can take
// it, from the backfill as from the live stream: what the transport needs to name, for any
// response, the event it was made of.
func TestATrackerLearnsTheStartAndEachEventBeforeItsSubscriber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		resume bool
	}{{"live", false}, {"resumed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log := eventlog.NewMemory(1000, time.Hour, nil)
			h := running(t, log, eventhub.Options{})
			history := appendAll(t, log, "w", 0, 3)
			time.Sleep(50 * time.Millisecond) // the hub has read them
			after, wantStart := "", history[2]
			if tc.resume {
				after, wantStart = history[0], history[0]
			}
			track := &recorder{}
			s, err := h.Subscribe(t.Context(), firm, nil, after, track)
			if err != nil {
				t.Fatal(err)
			}
			if got := track.begun(); got != wantStart {
				t.Fatalf("start: %q, want %q", got, wantStart)
			}
			live := appendAll(t, log, "w", 3, 5)
			for i, ev := range receive(t, s, len(live)+map[bool]int{true: 2}[tc.resume]) {
				if sent := track.sentSoFar(); len(sent) <= i || sent[i] != ev.Header().ID {
					t.Fatalf("the tracker was told of %q when the subscriber took its event %d, %q", sent, i, ev.Header().ID)
				}
			}
		})
	}
}

// recorder is a Tracker that keeps what it is told.
type recorder struct {
	mu    sync.Mutex
	start string
	sent  []string
}

func (r *recorder) Start(last string) { r.mu.Lock(); r.start = last; r.mu.Unlock() }
func (r *recorder) Sent(id string)    { r.mu.Lock(); r.sent = append(r.sent, id); r.mu.Unlock() }
func (r *recorder) End(error)         {}

func (r *recorder) begun() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.start
}

func (r *recorder) sentSoFar() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.sent)
}

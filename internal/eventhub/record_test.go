package eventhub_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/eventhub"
	"github.com/advisorhq/gateway/internal/eventlog"
)

// A Redis Stream outlives a deployment: deliveries that an earlier gateway stored as they arrived
// reach subscribers, resuming ones and recentEvents beside the records stored now, and a record
// that cannot be read is skipped without holding up the ones after it. An event of a type this
// gateway does not know, whoever stored it, reaches them as an UnknownEvent.
func TestEveryStoredFormReachesSubscribersInOrder(t *testing.T) {
	t.Parallel()
	log := eventlog.NewMemory(100, time.Hour, nil)
	h := running(t, log, eventhub.Options{})
	live, err := h.Subscribe(t.Context(), firm, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, rec := range []struct {
		name     string
		body     string
		readable bool
	}{
		{"a record", string(body("w-1", 1)), true},
		{"a delivery stored as it arrived", `{"Wid": "w-1", "EventType": "AssetDeleted", "Timestamp": "2026-11-22T10:00:00", "AssetName": "Boat", "Extra": 1}`, true},
		{"a record a newer gateway made of a type unknown here", `{"GatewayRecord":1,"EventType":"ClientWaved","Wid":"w-1","Timestamp":"2026-11-22T10:00:00Z"}`, true},
		{"a delivery of a type unknown here", `{"EventType":"ClientMovedHouse","Wid":"w-1","Timestamp":"2026-11-22T10:00:00Z","City":"Lyon"}`, true},
		{"a delivery stored as it arrived that breaks a rule", `{"Wid": "w-1", "EventType": "AssetDeleted", "Timestamp": "2026-11-22T10:00:00Z"}`, false},
		{"another record", string(body("w-1", 2)), true},
	} {
		id, _, err := log.Append(t.Context(), firm, []byte(rec.body))
		if err != nil {
			t.Fatalf("%s: %v", rec.name, err)
		}
		if rec.readable {
			want = append(want, id)
		}
	}
	if got := ids(receive(t, live, len(want))); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("live: got %v, want %v", got, want)
	}
	resumed, err := h.Subscribe(t.Context(), firm, nil, eventlog.Zero, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(receive(t, resumed, len(want))); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("resumed: got %v, want %v", got, want)
	}
	recent, err := h.Recent(t.Context(), firm, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(recent); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("recent: got %v, want %v", got, want)
	}
	if del, ok := recent[1].(*event.AssetDeleted); !ok || del.AssetName != "Boat" || !del.Timestamp.Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("got %+v, want the Boat deleted at 10:00 UTC", recent[1])
	}
	for i, rawType := range map[int]string{2: "ClientWaved", 3: "ClientMovedHouse"} {
		if u, ok := recent[i].(*event.UnknownEvent); !ok || u.RawType() != rawType || u.Wid != "w-1" {
			t.Errorf("got %+v, want an UnknownEvent of type %s", recent[i], rawType)
		}
	}
}

// pingLog is a log whose reads work while its Ping fails on demand: the store went away, or
// refuses writes, since the hub last read it. It counts the Pings.
type pingLog struct {
	*eventlog.Memory
	down  atomic.Bool
	pings atomic.Int64
}

func (l *pingLog) Ping(ctx context.Context) error {
	l.pings.Add(1)
	if l.down.Load() {
		return errDown
	}
	return l.Memory.Ping(ctx)
}

// awaitReady waits until h's readiness is want (nil for ready), and returns its last answer.
func awaitReady(t testing.TB, h *eventhub.Hub, ready bool) error {
	t.Helper()
	err := h.Ready(t.Context())
	for deadline := time.Now().Add(5 * time.Second); (err == nil) != ready && time.Now().Before(deadline); err = h.Ready(t.Context()) {
		time.Sleep(10 * time.Millisecond)
	}
	return err
}

// Readiness is the hub's: it has read the log, its last read worked, and the store's Ping
// succeeded within the last quarter of a second. Its answer serves a quarter of a second,
// failures too, so readiness follows the store within that.
func TestReadyAsksTheStore(t *testing.T) {
	t.Parallel()
	log := &pingLog{Memory: eventlog.NewMemory(10, time.Hour, nil)}
	h := running(t, log, eventhub.Options{})
	if err := awaitReady(t, h, true); err != nil {
		t.Fatalf("got %v once the hub has read the log, want ready", err)
	}
	log.down.Store(true)
	if err := awaitReady(t, h, false); apperr.CodeOf(err) != apperr.EventsUnavailable || !errors.Is(err, eventlog.ErrUnavailable) {
		t.Errorf("got %v with the store gone, want %s wrapping the store's failure", err, apperr.EventsUnavailable)
	}
	if _, err := h.Subscribe(t.Context(), firm, nil, "", nil); apperr.CodeOf(err) != apperr.EventsUnavailable {
		t.Errorf("subscribe: got %v with the store gone, want %s", err, apperr.EventsUnavailable)
	}
	log.down.Store(false)
	if err := awaitReady(t, h, true); err != nil {
		t.Errorf("got %v with the store back, want ready", err)
	}
}

// Each Ping of a Redis log is a write: however often readiness is asked, by probes or by
// subscribers reconnecting in their thousands, the store is asked at most every quarter of a
// second, whether it answered yes or no.
func TestReadinessAsksTheStoreAtMostEveryQuarterSecond(t *testing.T) {
	t.Parallel()
	for _, down := range []bool{false, true} {
		t.Run(map[bool]string{false: "store up", true: "store down"}[down], func(t *testing.T) {
			t.Parallel()
			log := &pingLog{Memory: eventlog.NewMemory(10, time.Hour, nil)}
			h := running(t, log, eventhub.Options{})
			if err := awaitReady(t, h, true); err != nil {
				t.Fatal(err)
			}
			log.down.Store(down)
			before := log.pings.Load()
			start := time.Now()
			var wg sync.WaitGroup
			var checks atomic.Int64
			for range 16 {
				wg.Go(func() {
					for time.Since(start) < 600*time.Millisecond {
						_ = h.Ready(t.Context())
						checks.Add(1)
					}
				})
			}
			wg.Wait()
			took := time.Since(start)
			pings := log.pings.Load() - before
			allowed := 1 + int64(took/(250*time.Millisecond))
			t.Logf("%d readiness checks in %v asked the store %d times", checks.Load(), took.Round(time.Millisecond), pings)
			if pings > allowed {
				t.Errorf("the store was asked %d times in %v, want at most %d (one every 250 ms)", pings, took, allowed)
			}
		})
	}
}

package familyload_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/familyload"
)

// fakeGateways answer the family query with a family of two cards, and record which of them
// answered each query, in order.
type fakeGateways struct {
	mu    sync.Mutex
	order []int
}

func (f *fakeGateways) start(t *testing.T, id int, fail bool) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.order = append(f.order, id)
		f.mu.Unlock()
		if fail {
			w.Write([]byte(`{"errors":[{"message":"no"}],"data":null}`))
			return
		}
		w.Write([]byte(`{"data":{"topAccount":{"contacts":[{},{}]}}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// switches counts how often the answering gateway changes.
func (f *fakeGateways) switches() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for i := 1; i < len(f.order); i++ {
		if f.order[i] != f.order[i-1] {
			n++
		}
	}
	return n
}

func TestGatewaysTakeTurnsUntilEachHasHadItsWindow(t *testing.T) {
	t.Parallel()
	var f fakeGateways
	cfg := familyload.Config{Contacts: 2, Connections: 2, Duration: 400 * time.Millisecond}
	a, b := cfg, cfg
	a.Gateway, b.Gateway = f.start(t, 0, false), f.start(t, 1, false)
	res, err := familyload.RunTurns(context.Background(), []familyload.Config{a, b}, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Queries == 0 || r.Seconds < 0.4 || r.Seconds > 1 {
			t.Errorf("gateway %d: %d queries in %.2f s; want some, in about the 0.4 s asked for", i, r.Queries, r.Seconds)
		}
	}
	// Eight turns each, in the order A B B A A B...: seven changes of gateway at least.
	if n := f.switches(); n < 7 {
		t.Errorf("the answering gateway changed %d times, want 7 or more: the gateways did not take turns", n)
	}
}

func TestATurnsWrongAnswerStopsTheMeasurementAndNamesItsGateway(t *testing.T) {
	t.Parallel()
	var f fakeGateways
	cfg := familyload.Config{Contacts: 2, Connections: 1, Duration: time.Minute}
	a, b := cfg, cfg
	a.Gateway, b.Gateway = f.start(t, 0, false), f.start(t, 1, true)
	begin := time.Now()
	_, err := familyload.RunTurns(context.Background(), []familyload.Config{a, b}, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "has errors") || !strings.Contains(err.Error(), b.Gateway) {
		t.Fatalf("error %v, want the wrong answer's, naming %s", err, b.Gateway)
	}
	if time.Since(begin) > 30*time.Second {
		t.Errorf("the measurement went on for %v after a wrong answer", time.Since(begin))
	}
}

func TestTurnsNeedAPositiveTurnAndADuration(t *testing.T) {
	t.Parallel()
	ok := familyload.Config{Gateway: "http://127.0.0.1:1", Contacts: 2, Duration: time.Second}
	noDuration := ok
	noDuration.Duration, noDuration.Queries = 0, 10
	for name, tc := range map[string]struct {
		cfgs []familyload.Config
		turn time.Duration
		want string
	}{
		"no turn":     {[]familyload.Config{ok}, 0, "turn"},
		"no duration": {[]familyload.Config{noDuration}, time.Second, "Duration"},
	} {
		if _, err := familyload.RunTurns(context.Background(), tc.cfgs, tc.turn); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one about %s", name, err, tc.want)
		}
	}
}

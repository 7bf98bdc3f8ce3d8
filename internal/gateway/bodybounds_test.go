package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bombBody is about 2 MiB of JSON: head, then as many empty objects as fit, then tail.
func bombBody(head, tail string) []byte {
	const size = 2 << 20
	n := (size - len(head) - len(tail)) / 3
	var b bytes.Buffer
	b.WriteString(head)
	b.WriteString(strings.TrimSuffix(strings.Repeat("{},", n), ","))
	b.WriteString(tail)
	return b.Bytes()
}

// heapInUse is the bytes of the heap's spans in use, as runtime.MemStats.HeapInuse counts them,
// read without stopping the world.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

// Sixteen clients at once sending 2 MiB bodies that hold 700,000 empty objects (in variables,
// in extensions, as a batch, behind a query of the wrong type) are each refused with 400 before
// the body is decoded, and the gateway's heap grows by far less than 300 MB meanwhile (it grew
// to 1.75 GB when each was decoded). Not parallel: it measures the process's heap.
func TestSixteenClientsSendingBodyBombsStayUnder300MB(t *testing.T) {
	g := newGateway(t, newUpstream(t, false), map[string]string{"GRAPHQL_BATCH_LIMIT": "10"})
	bombs := [][]byte{
		bombBody(`{"query":"{ version }","variables":{"a":[`, `]}}`),
		bombBody(`{"query":"{ version }","extensions":{"a":[`, `]}}`),
		bombBody(`[`, `]`),
		bombBody(`{"query":5,"variables":{"a":[`, `]}}`),
	}
	runtime.GC()
	base := heapInUse()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := heapInUse(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	const clients, rounds = 16, 8
	var wg sync.WaitGroup
	errs := make(chan error, clients*rounds)
	for c := range clients {
		wg.Go(func() {
			for i := range rounds {
				body := bombs[(c+i)%len(bombs)]
				resp, err := http.Post(g.url+"/graphql", "application/json", bytes.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var r result
				if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(data, &r) != nil || len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != "BAD_USER_INPUT" {
					errs <- fmt.Errorf("bomb %d: status %d: %.200s; want 400 BAD_USER_INPUT", (c+i)%len(bombs), resp.StatusCode, data)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	grew := int64(peak.Load()) - int64(base)
	t.Logf("heap in use: %d MB before, peak %d MB (+%d MB) over %d bombs from %d clients",
		base>>20, peak.Load()>>20, grew>>20, clients*rounds, clients)
	if grew > 300<<20 {
		t.Errorf("the heap grew by %d MB; want under 300 MB", grew>>20)
	}
}

// A request refused for its body counts against the caller's rate limit like an operation:
// two malformed bodies spend a budget of two.
func TestAMalformedBodySpendsTheRateLimit(t *testing.T) {
	t.Parallel()
	g := newGateway(t, newUpstream(t, false), map[string]string{"RATE_LIMIT": "2"})
	for range 2 {
		g.postBody(t, map[string]any{"query": 5}, nil).wantError(t, "BAD_USER_INPUT", "")
	}
	wantRateLimited(t, g.post(t, versionQuery, nil), "operations", "RATE_LIMIT")
}

// A batch is priced as a whole: ten operations each within GRAPHQL_MAX_COST but together past
// it are refused before any reaches the upstream; eight within it run.
func TestABatchIsPricedAsAWholeBeforeAnyOperationRuns(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	g := newGateway(t, up, map[string]string{"GRAPHQL_BATCH_LIMIT": "10", "GRAPHQL_MAX_COST": "100"})
	// topAccounts(limit: 10) { nodes { wid } } costs 11 or 12: 10 of them pass 100, 8 do not.
	batch := func(n int) []map[string]any {
		ops := make([]map[string]any, n)
		for i := range ops {
			ops[i] = map[string]any{"query": "{ topAccounts(limit: 10) { nodes { wid } } }"}
		}
		return ops
	}
	up.ResetRequests()
	r := g.postBody(t, batch(10), nil)
	e := r.wantError(t, "OPERATION_LIMIT_EXCEEDED", "")
	if !strings.HasPrefix(e.Message, "The batch's 10 operations cost ") || !strings.HasSuffix(e.Message, "; a batch may cost at most 100, as one operation may (GRAPHQL_MAX_COST)") {
		t.Errorf("got %q, want the batch's cost and the limit", e.Message)
	}
	if r.status != http.StatusBadRequest {
		t.Errorf("status %d, want 400", r.status)
	}
	if reqs := up.Requests(); len(reqs) > 0 {
		t.Errorf("the upstream was asked %v; a batch refused as a whole reaches it not at all", reqs)
	}

	data, _ := json.Marshal(batch(8))
	req, _ := http.NewRequest(http.MethodPost, g.url+"/graphql", bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []result
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK || len(got) != 8 {
		t.Fatalf("eight: status %d, %d responses, %v", resp.StatusCode, len(got), err)
	}
	for i := range got {
		got[i].ok(t, nil)
	}
}

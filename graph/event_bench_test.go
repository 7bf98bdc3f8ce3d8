package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/eventhub"
	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/tenant"
)

// BenchmarkEventFanOut measures the path from a stored event to the GraphQL responses of many
// subscribers in one replica: the hub's fan-out and each subscription's execution, as the
// WebSocket and SSE transports run it (the socket writes are left out). It reports events and
// deliveries per second, the delay from storing an event to a subscriber's response (p50,
// p99), and the memory each idle subscription holds.
//
// Events are stored in bursts, each once the last has reached every subscriber. burst=1 is a
// quiet family screen: the latency there is that of one event on its own. burst=50 (under
// the subscribers' buffer of 256, so nobody is dropped) is the rate the replica sustains; its
// latency includes the wait behind the rest of the burst.
//
//	go test -run '^$' -bench EventFanOut -benchtime 200x ./graph
func BenchmarkEventFanOut(b *testing.B) {
	for _, n := range benchSubscriberCounts() {
		for _, burst := range []int{1, 50} {
			b.Run(fmt.Sprintf("subscribers=%d/burst=%d", n, burst), func(b *testing.B) { benchFanOut(b, n, burst) })
		}
	}
}

const fanOutQuery = `subscription { events { id wid eventType timestamp ... on AssetAdded { assetName dollarAmount } } }`

func benchFanOut(b *testing.B, n, burst int) {
	// The subscribers are callers of one firm, whose events the log holds.
	ctx, cancel := context.WithCancel(tenant.WithFirm(context.Background(), &tenant.Firm{ID: "firm-bench"}))
	log := eventlog.NewMemory(100000, time.Hour, nil)
	hub := eventhub.New(log, eventhub.Options{Buffer: 256})
	var hubDone sync.WaitGroup
	hubDone.Go(func() { hub.Run(ctx) })
	// Deferred calls run last first: stop the hub, then wait for it.
	defer hubDone.Wait()
	defer cancel()
	exec := executor.New(generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{Hub: hub}}))

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	var received atomic.Int64
	latencies := make([][]time.Duration, n)
	var subs sync.WaitGroup
	for i := range n {
		params := &graphql.RawParams{Query: fanOutQuery}
		opCtx, errs := exec.CreateOperationContext(graphql.StartOperationTrace(ctx), params)
		if errs != nil {
			b.Fatal(errs)
		}
		responses, rctx := exec.DispatchOperation(ctx, opCtx)
		subs.Go(func() {
			for {
				resp := responses(rctx)
				if resp == nil {
					return
				}
				var data struct{ Events struct{ AssetName string } }
				if err := json.Unmarshal(resp.Data, &data); err != nil || len(resp.Errors) > 0 {
					panic(fmt.Sprintf("response %s %v", resp.Data, resp.Errors))
				}
				sent, _ := strconv.ParseInt(data.Events.AssetName, 10, 64)
				latencies[i] = append(latencies[i], time.Duration(time.Now().UnixNano()-sent))
				received.Add(1)
			}
		})
	}
	for hub.Subscribers() < n {
		time.Sleep(time.Millisecond)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	perSub := float64(int64(after.HeapInuse+after.StackInuse)-int64(before.HeapInuse+before.StackInuse)) / float64(n)

	b.ResetTimer()
	start := time.Now()
	for sent := 0; sent < b.N; {
		k := min(burst, b.N-sent)
		for range k {
			body := fmt.Sprintf(`{"EventType":"AssetAdded","Wid":"bench","Timestamp":"2026-11-22T10:00:00Z","AssetName":"%d","DollarAmount":%d}`,
				time.Now().UnixNano(), sent)
			w, perr := advisorspec.ParseWebhook([]byte(body))
			if perr != nil {
				b.Fatal(perr)
			}
			// What the receiver stores: the canonical record, checked once.
			if _, _, err := log.Append(ctx, "firm-bench", event.Record(w)); err != nil {
				b.Fatal(err)
			}
			sent++
		}
		for received.Load() < int64(sent*n) {
			time.Sleep(50 * time.Microsecond)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	subs.Wait()

	var all []time.Duration
	for _, l := range latencies {
		all = append(all, l...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(b.N*n)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(perSub, "B/subscriber")
}

func benchSubscriberCounts() []int {
	if s := os.Getenv("BENCH_SUBSCRIBERS"); s != "" {
		n, _ := strconv.Atoi(s)
		return []int{n}
	}
	return []int{1000, 10000}
}

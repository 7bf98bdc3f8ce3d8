package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/fanoutload"
)

// TestFanoutBenchmark runs issue 14's load tool in a tiny configuration against a gateway in
// this process, so the instrument keeps working: every subscriber, over WebSockets and over
// SSE, gets every event once, in order.
func TestFanoutBenchmark(t *testing.T) {
	gw := newGateway(t, newUpstream(t, false), nil)
	for _, tc := range []struct {
		name      string
		sse       bool
		perSocket int
	}{
		{name: "graphql-ws, two subscriptions a socket", perSocket: 2},
		{name: "SSE", sse: true, perSocket: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := fanoutload.Run(ctx, fanoutload.Config{
				Gateway: gw.url, WebhookKey: webhookKey,
				Subscribers: 10, PerSocket: tc.perSocket, SSE: tc.sse, PerWorker: 5,
				Burst: 5, Drain: 5 * time.Second, Setup: 5 * time.Second,
				Spawn: fanoutload.InProcess(),
			})
			if err != nil {
				t.Fatal(err)
			}
			want := 10 * tc.perSocket
			if res.Workers != 2 || res.Open != want || res.Stored != 5 {
				t.Fatalf("got %d workers, %d open, %d stored, want 2, %d, 5", res.Workers, res.Open, res.Stored, want)
			}
			if res.Delivered != 5*want || res.Lost != 0 || res.LostSilently != 0 || res.Duplicated != 0 || res.OutOfOrder != 0 || res.SubsEnded != 0 {
				t.Errorf("got %d delivered, %d lost, %d duplicated, %d out of order, %d ended (%s); want %d, 0, 0, 0, 0",
					res.Delivered, res.Lost, res.Duplicated, res.OutOfOrder, res.SubsEnded, res.EndReason, 5*want)
			}
			if res.LatencyMS.P50 <= 0 || res.LatencyMS.Max < res.LatencyMS.P99 {
				t.Errorf("latency %+v: want positive, max ≥ p99", res.LatencyMS)
			}
		})
	}
}

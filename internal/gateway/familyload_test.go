package gateway_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/familyload"
)

// TestFamilyLoad runs issue 28's load test of the family query in a tiny configuration against
// a gateway in this process, so the instrument keeps working: every answer is checked, and an
// answer without the family's every card stops the run.
func TestFamilyLoad(t *testing.T) {
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := up.family(t, "FAMILYLOAD", 7)
	for _, tc := range []struct {
		name     string
		contacts int
		wantErr  string
	}{
		{name: "the family's cards: measured", contacts: 7},
		{name: "a card missing: the run stops", contacts: 8, wantErr: "does not have the family's 8 cards"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := familyload.Run(ctx, familyload.Config{
				Gateway: gw.url, GatewayPID: os.Getpid(), WID: wid, Contacts: tc.contacts,
				Connections: 2, Warmup: 10 * time.Millisecond, Queries: 10,
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Queries != 10 || res.QPS <= 0 || res.LatencyMS.P50 <= 0 || res.LatencyMS.P99 < res.LatencyMS.P50 || res.RSSKB <= 0 || res.AnswerBytes <= 0 || res.Encoding != "gzip" {
				t.Errorf("got %+v: want 10 queries, positive queries/s, latency, memory and answer size, p99 ≥ p50, gzip", res)
			}
		})
	}
}

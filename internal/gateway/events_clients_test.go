package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// clientsDir holds the JavaScript subscription clients; the tests install their pinned packages
// themselves.
const clientsDir = "testdata/events"

func TestRealClientsReceiveEventsInOrder(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	npmInstall(t, clientsDir, "graphql-ws")
	gw := newGateway(t, newUpstream(t, false), nil)
	for _, mode := range []string{"ws", "sse"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			wid := "js-" + mode
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", filepath.Join(clientsDir, "subscribe.mjs"), mode, gw.url+"/graphql", wid, "3")
			stdout, _ := cmd.StdoutPipe()
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := make(chan string)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
			// The client subscribes when it is ready; deliver until it has had three events,
			// so the test need not guess when that is.
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			var got []map[string]any
			for pct := 0; len(got) < 3; {
				select {
				case line, ok := <-lines:
					if !ok {
						t.Fatalf("the client ended after %d events: %v", len(got), cmd.Wait())
					}
					var ev map[string]any
					if err := json.Unmarshal([]byte(line), &ev); err != nil || ev["error"] != nil {
						t.Fatalf("client: %s", line)
					}
					got = append(got, ev)
				case <-tick.C:
					gw.mustDeliver(t, progress(wid, pct))
					pct++
				case <-ctx.Done():
					t.Fatal("the client received nothing within 30 s")
				}
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("client exit: %v", err)
			}
			for i := 1; i < len(got); i++ {
				if got[i]["completionPercentage"].(float64) != got[i-1]["completionPercentage"].(float64)+1 {
					t.Errorf("events out of order or with a gap: %v", got)
				}
			}
		})
	}
}

package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// Subscribers asking for the same live events in the same words, as the same caller, are served
// by one execution whose answers are encoded once; the metrics show how many executions serve
// how many subscribers.
func TestSubscribersOfTheSameOperationShareOneExecution(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// vars are each WebSocket subscriber's variables.
		vars       []map[string]any
		executions int
	}{
		{"same variables", []map[string]any{filterWids("w-share"), filterWids("w-share"), filterWids("w-share")}, 1},
		{"different filters", []map[string]any{filterWids("w-share"), filterWids("w-share", "w-other")}, 2},
		{"resuming after an id", []map[string]any{resumeAfter("w-share", "1-0"), resumeAfter("w-share", "1-0")}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gw := newGateway(t, newUpstream(t, false), nil)
			clients := make([]*wsClient, len(tc.vars))
			for i, vars := range tc.vars {
				clients[i] = dialWS(t, gw, "graphql-transport-ws", nil)
				clients[i].init()
				clients[i].subscribe("s", progressSubscription, vars)
			}
			waitSubscribers(t, gw, len(tc.vars))
			waitGauge(t, gw, "advisor_subscription_executions", tc.executions)
			for pct := 1; pct <= 3; pct++ {
				gw.mustDeliver(t, progress("w-share", pct))
			}
			for i, c := range clients {
				for pct := 1; pct <= 3; pct++ {
					if got := c.nextData("s")["events"].(map[string]any)["completionPercentage"]; got != float64(pct) {
						t.Fatalf("subscriber %d: got %v%%, want %d%%", i, got, pct)
					}
				}
			}
		})
	}
}

func filterWids(wids ...string) map[string]any {
	return map[string]any{"filter": map[string]any{"wids": wids}}
}

func resumeAfter(wid, after string) map[string]any {
	vars := filterWids(wid)
	vars["after"] = after
	return vars
}

// A shared execution serves WebSocket and SSE subscribers alike; one leaving takes nothing from
// the others, and the execution ends with the last of them.
func TestASharedExecutionOutlivesEachSubscriberButNotTheLast(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	vars := filterWids("w-outlive")
	leaving := dialWS(t, gw, "graphql-transport-ws", nil)
	leaving.init()
	leaving.subscribe("a", progressSubscription, vars)
	staying := dialWS(t, gw, "graphql-transport-ws", nil)
	staying.init()
	staying.subscribe("b", progressSubscription, vars)
	sse := openSSE(t, gw, progressSubscription, vars)
	waitSubscribers(t, gw, 3)
	waitGauge(t, gw, "advisor_subscription_executions", 1)

	gw.mustDeliver(t, progress("w-outlive", 10))
	leaving.nextData("a")
	leaving.send(map[string]any{"id": "a", "type": "complete"})
	waitSubscribers(t, gw, 2)
	gw.mustDeliver(t, progress("w-outlive", 11))
	for _, want := range []float64{10, 11} {
		if got := staying.nextData("b")["events"].(map[string]any)["completionPercentage"]; got != want {
			t.Fatalf("the WebSocket subscriber that stayed: got %v%%, want %v%%", got, want)
		}
		ev := sse.next()
		var payload struct {
			Data struct {
				Events struct{ CompletionPercentage float64 }
			}
		}
		if err := json.Unmarshal([]byte(ev.data), &payload); ev.name != "next" || err != nil || payload.Data.Events.CompletionPercentage != want {
			t.Fatalf("the SSE subscriber: got %s %s, want next with %v%%", ev.name, ev.data, want)
		}
	}

	staying.send(map[string]any{"id": "b", "type": "complete"})
	sse.body.Close()
	waitSubscribers(t, gw, 0)
	waitGauge(t, gw, "advisor_subscription_executions", 0)
}

// Events link to documents read on the caller's behalf: subscribers who are different callers
// never share an execution, whatever else they share.
func TestSubscribersWhoAreDifferentCallersDoNotShareAnExecution(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw, _ := callerGateway(t, up, nil)
	vars := filterWids("w-callers")
	var clients []*wsClient
	for _, who := range []struct{ advisor, firm string }{{"adv-1", sandbox.DemoFirmID}, {"adv-2", sandbox.DemoFirmID}, {"adv-1", sandbox.DemoFirmID}} {
		token := sandboxToken(t, up.URL, upstreamToken, who.advisor, who.firm)
		c := dialWS(t, gw, "graphql-transport-ws", http.Header{})
		c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}})
		if m := c.read(); m["type"] != "connection_ack" {
			t.Fatalf("got %v, want connection_ack", m)
		}
		c.subscribe("s", progressSubscription, vars)
		clients = append(clients, c)
	}
	waitSubscribers(t, gw, 3)
	waitGauge(t, gw, "advisor_subscription_executions", 2)
	gw.mustDeliver(t, progress("w-callers", 5))
	for i, c := range clients {
		if got := c.nextData("s")["events"].(map[string]any)["completionPercentage"]; got != 5.0 {
			t.Fatalf("subscriber %d: got %v%%, want 5%%", i, got)
		}
	}
}

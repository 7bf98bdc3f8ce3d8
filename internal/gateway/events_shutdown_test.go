package gateway_test

import (
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Shutting down (SIGTERM) must not leave subscribers hanging or tell them their subscription
// failed: WebSockets close with 1012 (service restart) and SSE streams end without
// `complete`, which clients of both protocols retry, and the program waits for both.
func TestShuttingDownTellsSubscribersToReconnect(t *testing.T) {
	t.Parallel()
	urls, stop := launch(t, nil, map[string]string{"ADDR": "127.0.0.1:0"}, "gateway serving", "embedded Advisor sandbox at")
	gw, sb := &testGateway{url: urls[0]}, urls[1]
	ws := dialWS(t, gw, "graphql-transport-ws", nil)
	ws.init()
	ws.subscribe("live", progressSubscription, nil)
	sse := openSSE(t, gw, progressSubscription, nil)
	waitSubscribers(t, gw, 2)
	sandboxPost(t, sb+"/sandbox/events", map[string]any{"EventType": "ClientProgressChanged"})
	ws.nextData("live")
	if ev := sse.next(); ev.name != "next" {
		t.Fatalf("SSE got %q, want next", ev.name)
	}

	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	if code, reason := ws.closed(10 * time.Second); code != websocket.StatusServiceRestart {
		t.Errorf("the WebSocket closed with %d %q, want 1012 (service restart)", code, reason)
	}
	for ev := range sse.events {
		if ev.name == "complete" || ev.name == "next" {
			t.Errorf("the SSE stream sent %q while shutting down; want it to end without complete", ev.name)
		}
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("run returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return within 15 s of being stopped")
	}
}

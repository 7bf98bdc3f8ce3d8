package gateway_test

import (
	"bufio"
	"strings"
	"testing"
	"time"
)

// Every transport keeps a quiet stream alive at STREAM_KEEPALIVE: graphql-transport-ws with
// ping messages, the legacy protocol with ka, SSE with comment lines.
func TestQuietStreamsGetKeepAlives(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), map[string]string{"STREAM_KEEPALIVE": "100ms"})
	for _, tt := range []struct{ protocol, init, want string }{
		{"graphql-transport-ws", "connection_init", "ping"},
		{"graphql-ws", "connection_init", "ka"},
	} {
		t.Run(tt.protocol, func(t *testing.T) {
			c := dialWS(t, gw, tt.protocol, nil)
			c.send(map[string]any{"type": tt.init})
			var got []string
			for len(got) < 4 {
				m, err := c.next(5 * time.Second)
				if err != nil {
					t.Fatalf("after %v: %v", got, err)
				}
				got = append(got, m["type"].(string))
			}
			// The ack, then keep-alives only (the legacy protocol's first ka comes with it).
			for _, typ := range got[1:] {
				if typ != tt.want {
					t.Fatalf("got %v, want connection_ack then %s messages", got, tt.want)
				}
			}
		})
	}
	t.Run("sse", func(t *testing.T) {
		resp := postSSE(t, gw, progressSubscription, nil)
		lines := make(chan string)
		go func() { // ends with the test
			defer close(lines)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				select {
				case lines <- sc.Text():
				case <-t.Context().Done():
					return
				}
			}
		}()
		comments := 0
		timeout := time.After(5 * time.Second)
		for comments < 2 {
			select {
			case line := <-lines:
				if strings.HasPrefix(line, ": keep-alive") {
					comments++
				}
			case <-timeout:
				t.Fatalf("%d keep-alive comments within 5 s, want 2", comments)
			}
		}
	})
}

// A WebSocket whose peer vanished without closing (it stopped reading, as a sleeping laptop
// does) is closed at the next keep-alive, and its subscription ends with it.
func TestAWebSocketWhosePeerStopsAnsweringIsClosed(t *testing.T) {
	t.Parallel()
	// Long enough that the subscription is seen before the first ping is missed.
	gw := newGateway(t, newUpstream(t, false), map[string]string{"STREAM_KEEPALIVE": "500ms"})
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("1", progressSubscription, nil)
	waitSubscribers(t, gw, 1)
	// From here the client reads nothing, so it answers no WebSocket ping.
	waitSubscribers(t, gw, 0)
}

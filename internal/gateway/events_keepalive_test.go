package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
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

// A stream that results keep busy gets no keep-alive: graphql-transport-ws no ping (whose pong
// would wake the gateway's reader for each socket, costing as much as five deliveries), SSE no
// comment. The legacy protocol's ka goes on, since its clients close a socket on which none
// arrives for a while. A vanished peer of a busy socket is left to TCP_USER_TIMEOUT (socket).
func TestBusyStreamsGetNoKeepAlivesButTheLegacyKa(t *testing.T) {
	t.Parallel()
	const (
		interval = 500 * time.Millisecond
		events   = 120
		every    = 25 * time.Millisecond // 3 s of results: six keep-alive intervals
	)
	// A quiet stream would get six keep-alives; a busy one at most the first, before the
	// results begin, and one more should the machine stall the results for an interval.
	const atMost = 2
	gw := newGateway(t, newUpstream(t, false), map[string]string{"STREAM_KEEPALIVE": interval.String()})
	var serial sync.Mutex // one subtest's results at a time: each counts only its own
	deliverAll := func(t *testing.T, stream string) {
		for i := range events {
			// Each distinct: the same event twice is stored once.
			body, _ := json.Marshal(progress(fmt.Sprintf("c-busy-%s-%d", stream, i), 50))
			if status, out := gw.deliver(t, webhookKey, body); status != http.StatusOK {
				t.Errorf("deliver: status %d: %v", status, out)
				return
			}
			time.Sleep(every)
		}
	}
	for _, tt := range []struct {
		protocol, keepAlive string
		min, max            int
	}{
		{"graphql-transport-ws", "ping", 0, atMost},
		{"graphql-ws", "ka", 4, events},
	} {
		t.Run(tt.protocol, func(t *testing.T) {
			serial.Lock()
			defer serial.Unlock()
			c := dialWS(t, gw, tt.protocol, nil)
			c.send(map[string]any{"type": "connection_init"})
			subscribe := "subscribe"
			if tt.protocol == "graphql-ws" {
				subscribe = "start"
			}
			c.send(map[string]any{"id": "1", "type": subscribe, "payload": map[string]any{"query": progressSubscription}})
			waitSubscribers(t, gw, 1)
			done := make(chan struct{})
			go func() { defer close(done); deliverAll(t, tt.protocol) }()
			defer func() { <-done }()
			results, keepAlives := 0, 0
			deadline := time.Now().Add(30 * time.Second) // keep-alives alone would go on for ever
			for results < events && time.Now().Before(deadline) {
				m, err := c.next(5 * time.Second)
				if err != nil {
					t.Fatalf("after %d results: %v", results, err)
				}
				switch m["type"] {
				case tt.keepAlive:
					keepAlives++
				case "next", "data":
					results++
				}
			}
			if results < events {
				t.Fatalf("%d results of %d within 30 s", results, events)
			}
			if keepAlives < tt.min || keepAlives > tt.max {
				t.Fatalf("%d %s messages among %d results over %v, want %d to %d", keepAlives, tt.keepAlive, events,
					time.Duration(events)*every, tt.min, tt.max)
			}
			c.conn.CloseNow()
			waitSubscribers(t, gw, 0)
		})
	}
	t.Run("sse", func(t *testing.T) {
		serial.Lock()
		defer serial.Unlock()
		resp := postSSE(t, gw, progressSubscription, nil)
		waitSubscribers(t, gw, 1)
		done := make(chan struct{})
		go func() { defer close(done); deliverAll(t, "sse") }()
		defer func() { <-done }()
		stop := time.AfterFunc(30*time.Second, func() { resp.Body.Close() }) // keep-alives alone would go on for ever
		defer stop.Stop()
		results, comments := 0, 0
		sc := bufio.NewScanner(resp.Body)
		for results < events && sc.Scan() {
			switch line := sc.Text(); {
			case strings.HasPrefix(line, ": keep-alive"):
				comments++
			case line == "event: next":
				results++
			}
		}
		if results < events {
			t.Fatalf("%d results of %d within 30 s: %v", results, events, sc.Err())
		}
		if comments > atMost {
			t.Fatalf("%d keep-alive comments among %d results, want at most %d", comments, events, atMost)
		}
	})
}

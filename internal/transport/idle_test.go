package transport

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// An idle subscriber, over a WebSocket or an SSE stream, holds no goroutine on Linux, where the
// streams' watcher waits on its socket, and one elsewhere: thousands of them wait at once. That
// goroutine's stack stays the smallest (onFreshStack), which the fan-out benchmark's memory per
// subscriber shows; the stack in use is only logged here, since the runtime reuses freed stacks
// and sizes new ones by the process's average (larger under -race).
func TestAnIdleSubscriberHoldsNoGoroutineOnLinuxAndOneElsewhere(t *testing.T) {
	const n = 200
	for _, tc := range []struct {
		name string
		// open subscribes to hold, which answers once and then waits; first says whether it is
		// the first subscriber, which starts the execution the others share and gets its answer.
		open func(t *testing.T, addr string, first bool) net.Conn
	}{
		{"websocket", func(t *testing.T, addr string, first bool) net.Conn {
			s := dialRawAt(t, addr)
			s.sendJSON(wsMessage{Type: "connection_init"})
			s.receiveType("connection_ack")
			s.sendJSON(map[string]any{"id": "h", "type": "subscribe", "payload": map[string]any{"query": "subscription { hold }"}})
			if first {
				if m := s.message(); m.Type != "next" {
					t.Fatalf("got %s, want the first next", m.Type)
				}
			}
			return s.conn
		}},
		{"sse", openSSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := probeServer(t, Config{Share: shareAll})
			addr := srv.Listener.Addr().String()
			first := tc.open(t, addr, true) // the shared execution, and what a first request sets up
			t.Cleanup(func() { first.Close() })
			goroutines, stack := idleFootprint()
			for i := 0; i < n; i++ {
				c := tc.open(t, addr, false)
				t.Cleanup(func() { c.Close() })
			}
			var grew, stackGrew int
			each := 1
			if runtime.GOOS == "linux" {
				each = 0
			}
			// The writers and the handshakes' goroutines end after the answers are read.
			eventually(func() bool {
				g, s := idleFootprint()
				grew, stackGrew = g-goroutines, s-stack
				return grew <= each*n+2
			})
			if grew > each*n+2 {
				t.Errorf("%d idle subscribers hold %d goroutines, want %d each", n, grew, each)
			}
			t.Logf("%d idle subscribers: %d goroutines, %d bytes of stack", n, grew, stackGrew)
		})
	}
}

// idleFootprint counts the goroutines and the bytes of stack in use, after a collection has
// shrunk what it can.
func idleFootprint() (goroutines, stack int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return runtime.NumGoroutine(), int(m.StackInuse)
}

// dialRawAt is dialRaw for a server known by its address.
func dialRawAt(t *testing.T, addr string) *rawSocket {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET /graphql HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n\r\n",
		addr, protocolTransportWS)
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, " 101 ") {
		conn.Close()
		t.Fatalf("upgrade answered %q (%v), want 101", line, err)
	}
	for line != "\r\n" {
		if line, err = br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	return &rawSocket{t: t, conn: conn, br: br}
}

// openSSE subscribes to hold over SSE on a raw connection (a client of net/http would hold
// goroutines of its own) and reads up to its first event, or for a later subscriber, which joins
// after it, the stream's opening comment.
func openSSE(t *testing.T, addr string, first bool) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	body := `{"query":"subscription { hold }"}`
	fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, len(body), body)
	br := bufio.NewReader(conn)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			conn.Close()
			t.Fatalf("read the stream: %v", err)
		}
		if strings.Contains(line, `"hold":true`) || !first && line == ":\n" {
			return conn
		}
	}
}

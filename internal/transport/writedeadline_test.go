//go:build unix

package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// bigAnswer is larger than what the kernel buffers between a server and a client that does not
// read (a 4 MiB send buffer at most here, and the client's small receive buffer): its writer
// must wait for the client.
const bigAnswer = 8 << 20

// dialSmall connects to addr with a small receive buffer, which the kernel does not grow for a
// reader that does not read.
func dialSmall(t *testing.T, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }); err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// postRaw sends a POST of body to /graphql on conn and reads nothing.
func postRaw(t *testing.T, conn net.Conn, accept, body string) {
	t.Helper()
	if _, err := fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: gateway\r\nAccept: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		accept, len(body), body); err != nil {
		t.Fatal(err)
	}
}

// Clients that never read their answers are cut off once a write has waited WriteTimeout for
// them, whatever carries the answer: the handlers return, the streams end, and the goroutines
// and descriptors they held are given back. (Before, a one-off answer's writer waited for as
// long as the client kept its connection open.)
func TestClientsThatNeverReadAreCutOffAfterTheWriteTimeout(t *testing.T) {
	const clients, timeout = 3, 300 * time.Millisecond
	subscribe := func(query string) string { return fmt.Sprintf(`{"query":%q}`, query) }
	// More than the kernel buffers; the subscriber buffer bounds what waits in memory.
	ticks := fmt.Sprintf("subscription { ticks(n: 300, size: %d, every: 0) }", 64<<10)
	for _, tc := range []struct {
		name string
		// h2 serves HTTP/2, whose connections outlive the streams reset on them: each holds a
		// descriptor and goroutines on both sides until its client closes it.
		h2 bool
		// open starts one client that never reads, on a server at addr.
		open func(t *testing.T, srv *lifetimeServer) (close func())
	}{
		{"a one-off JSON answer", false, func(t *testing.T, srv *lifetimeServer) func() {
			c := dialSmall(t, srv.Listener.Addr().String())
			postRaw(t, c, "application/json", subscribe(fmt.Sprintf("{ big(size: %d) }", bigAnswer)))
			return func() { c.Close() }
		}},
		{"a multipart @defer answer", false, func(t *testing.T, srv *lifetimeServer) func() {
			c := dialSmall(t, srv.Listener.Addr().String())
			postRaw(t, c, "multipart/mixed", subscribe(fmt.Sprintf("{ deferred(size: %d) }", bigAnswer)))
			return func() { c.Close() }
		}},
		{"an SSE stream over HTTP/1.1, which takes its connection over", false, func(t *testing.T, srv *lifetimeServer) func() {
			c := dialSmall(t, srv.Listener.Addr().String())
			postRaw(t, c, "text/event-stream", subscribe(ticks))
			// The status line's first bytes, and nothing more: the stream is open on the
			// server before the test waits for the streams to end (a WaitGroup's Add must
			// not race its Wait).
			head := make([]byte, len("HTTP/1.1 200"))
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadFull(c, head); err != nil || string(head) != "HTTP/1.1 200" {
				t.Fatalf("the stream began %q, %v; want HTTP/1.1 200", head, err)
			}
			return func() { c.Close() }
		}},
		{"an SSE stream over HTTP/2", true, func(t *testing.T, srv *lifetimeServer) func() {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(subscribe(ticks)))
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Content-Type", "application/json")
			// A client of its own, whose connection closes with it.
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}, ForceAttemptHTTP2: true}}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.ProtoMajor != 2 {
				t.Fatalf("answered over HTTP/%d, want HTTP/2", resp.ProtoMajor)
			}
			return func() {
				resp.Body.Close()
				client.CloseIdleConnections()
			}
		}},
		{"a WebSocket", false, func(t *testing.T, srv *lifetimeServer) func() {
			s := dialRaw(t, srv.Server, protocolTransportWS)
			s.sendJSON(wsMessage{Type: "connection_init"})
			s.receiveType("connection_ack")
			s.sendJSON(map[string]any{"id": "t", "type": "subscribe", "payload": map[string]any{"query": ticks}})
			return func() { s.conn.Close() }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newLifetimeServer(t, Config{WriteTimeout: timeout}, tc.h2, 0)
			perClient := 1 // descriptors, the client's own
			if tc.h2 {
				perClient = 2
			}
			runtime.GC()
			goroutines, descriptors := runtime.NumGoroutine(), openDescriptors(t)
			var closers []func()
			defer func() {
				for _, c := range closers {
					c()
				}
			}()
			for range clients {
				closers = append(closers, tc.open(t, srv))
			}
			ended := func() bool {
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
				defer cancel()
				return srv.inFlight.Load() == 0 && srv.streams.Wait(ctx) == nil
			}
			// Generous: the clock starts once the buffers are full, and the machine is shared.
			if !eventually(ended) {
				t.Fatalf("%d handlers still writing, streams open: %v, %v after the clients stopped reading",
					srv.inFlight.Load(), srv.streams.Subscriptions(), 8*time.Second)
			}
			// The server's side of each connection is closed: only the clients' remain open.
			// (Over HTTP/2 the clients' connections stay up; their streams were reset.)
			if !eventually(func() bool { return openDescriptors(t) <= descriptors+perClient*clients }) {
				t.Errorf("%d descriptors open, want at most %d (the connections' own)", openDescriptors(t), descriptors+perClient*clients)
			}
			if !eventually(func() bool { return runtime.NumGoroutine() <= goroutines+2*perClient*clients }) {
				t.Errorf("%d goroutines, want at most %d (the connections' own)", runtime.NumGoroutine(), goroutines+2*perClient*clients)
			}
		})
	}
}

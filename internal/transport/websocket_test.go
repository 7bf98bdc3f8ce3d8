package transport

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// rawSocket is a WebSocket client that does only what a test tells it, so that it can leave
// the way a crashed client or a cut network does: without a close frame.
type rawSocket struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

// dialRaw upgrades a TCP connection to /graphql with subprotocol.
func dialRaw(t *testing.T, srv *httptest.Server, subprotocol string) *rawSocket {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "GET /graphql HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n\r\n",
		srv.Listener.Addr(), subprotocol)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		conn.Close()
		t.Fatalf("upgrade answered %d, want 101", resp.StatusCode)
	}
	return &rawSocket{t: t, conn: conn, br: br}
}

// send writes one masked frame, as a client must.
func (s *rawSocket) send(opcode byte, payload []byte) {
	s.t.Helper()
	hdr := []byte{0x80 | opcode}
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126)
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	hdr = append(hdr, 0, 0, 0, 0) // a zero mask leaves the payload as it is
	if _, err := s.conn.Write(append(hdr, payload...)); err != nil {
		s.t.Fatal(err)
	}
}

func (s *rawSocket) sendJSON(v any) {
	s.t.Helper()
	b, _ := json.Marshal(v)
	s.send(0x1, b)
}

// receive reads one unfragmented server frame.
func (s *rawSocket) receive() (opcode byte, payload []byte) {
	s.t.Helper()
	var hdr [2]byte
	if _, err := io.ReadFull(s.br, hdr[:]); err != nil {
		s.t.Fatal(err)
	}
	n := uint64(hdr[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		_, _ = io.ReadFull(s.br, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		_, _ = io.ReadFull(s.br, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(s.br, payload); err != nil {
		s.t.Fatal(err)
	}
	return hdr[0] & 0x0f, payload
}

// receiveType reads messages until one of type typ, and fails on a close frame.
func (s *rawSocket) receiveType(typ string) {
	s.t.Helper()
	for {
		op, payload := s.receive()
		if op == 0x8 {
			s.t.Fatalf("got a close frame %q, want a %s message", payload, typ)
		}
		var m wsMessage
		if op == 0x1 && json.Unmarshal(payload, &m) == nil && m.Type == typ {
			return
		}
	}
}

func TestWebSocketsDroppedWithoutACloseFrameReleaseTheirDescriptors(t *testing.T) {
	const drops = 50
	tests := []struct {
		name     string
		protocol string
		before   func(s *rawSocket) // what the client does before it vanishes
	}{
		{"right after the upgrade", protocolTransportWS, func(*rawSocket) {}},
		{"after connection_init", protocolTransportWS, func(s *rawSocket) {
			s.sendJSON(map[string]any{"type": "connection_init"})
			s.receiveType("connection_ack")
		}},
		{"with a subscription running", protocolTransportWS, func(s *rawSocket) {
			s.sendJSON(map[string]any{"type": "connection_init"})
			s.receiveType("connection_ack")
			s.sendJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "subscription { hold }"}})
			s.receiveType("next")
		}},
		{"legacy protocol with a subscription running", protocolLegacy, func(s *rawSocket) {
			s.sendJSON(map[string]any{"type": "connection_init"})
			s.receiveType("connection_ack")
			s.sendJSON(map[string]any{"id": "1", "type": "start", "payload": map[string]any{"query": "subscription { hold }"}})
			s.receiveType("data")
		}},
		{"after a message over the limit", protocolTransportWS, func(s *rawSocket) {
			s.sendJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"pad": strings.Repeat("x", 4096)}})
			if op, _ := s.receive(); op != 0x8 {
				s.t.Fatalf("got opcode %d, want a close frame", op)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := probeServer(t, Config{MaxMessageBytes: 1024})
			fds, goroutines := openDescriptors(t), runtime.NumGoroutine()
			for range drops {
				s := dialRaw(t, srv, tt.protocol)
				tt.before(s)
				s.conn.Close()
			}
			if !eventually(func() bool { return openDescriptors(t) <= fds }) {
				t.Errorf("got %d open descriptors after %d dropped WebSockets, want at most %d as before",
					openDescriptors(t), drops, fds)
			}
			if !eventually(func() bool { return runtime.NumGoroutine() <= goroutines }) {
				t.Errorf("got %d goroutines after %d dropped WebSockets, want at most %d as before",
					runtime.NumGoroutine(), drops, goroutines)
			}
		})
	}
}

// dialWS opens a WebSocket to srv's /graphql with a real client.
func dialWS(t *testing.T, ctx context.Context, srv *httptest.Server, protocol string) *websocket.Conn {
	t.Helper()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/graphql"
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{protocol}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	return conn
}

func TestAWebSocketMessageOverTheReadLimitClosesTheSocketWith1009(t *testing.T) {
	for _, protocol := range []string{protocolTransportWS, protocolLegacy} {
		t.Run(protocol, func(t *testing.T) {
			srv := probeServer(t, Config{MaxMessageBytes: 1024})
			fds := openDescriptors(t)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			conn := dialWS(t, ctx, srv, protocol)
			big, _ := json.Marshal(map[string]any{"type": "connection_init", "payload": map[string]any{"pad": strings.Repeat("x", 4096)}})
			if err := conn.Write(ctx, websocket.MessageText, big); err != nil {
				t.Fatal(err)
			}
			_, data, err := conn.Read(ctx)
			if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
				t.Fatalf("got close status %d (message %q, error %v), want %d", got, data, err, websocket.StatusMessageTooBig)
			}
			_ = conn.CloseNow()
			// The client has answered the close; the server must now let go of its end too.
			if !eventually(func() bool { return openDescriptors(t) <= fds }) {
				t.Errorf("got %d open descriptors after the socket closed, want at most %d as before", openDescriptors(t), fds)
			}
		})
	}
}

// wsClient speaks one of the two subprotocols over a real client.
type wsClient struct {
	t      *testing.T
	ctx    context.Context
	conn   *websocket.Conn
	legacy bool
}

func (c *wsClient) send(id, typ string, payload any) {
	c.t.Helper()
	m := map[string]any{"type": typ}
	if id != "" {
		m["id"] = id
	}
	if payload != nil {
		m["payload"] = payload
	}
	b, _ := json.Marshal(m)
	if err := c.conn.Write(c.ctx, websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

// next reads the next message that is not a keep-alive.
func (c *wsClient) next() wsMessage {
	c.t.Helper()
	for {
		_, data, err := c.conn.Read(c.ctx)
		if err != nil {
			c.t.Fatalf("got %v (close status %d), want a message", err, websocket.CloseStatus(err))
		}
		var m wsMessage
		if err := json.Unmarshal(data, &m); err != nil {
			c.t.Fatalf("got %q, want a JSON message", data)
		}
		if m.Type != "ka" && m.Type != "ping" && m.Type != "pong" {
			return m
		}
	}
}

func (c *wsClient) start(id string) {
	typ := "subscribe"
	if c.legacy {
		typ = "start"
	}
	c.send(id, typ, map[string]any{"query": "subscription { hold }"})
}

func (c *wsClient) stop(id string) {
	typ := "complete"
	if c.legacy {
		typ = "stop"
	}
	c.send(id, typ, nil)
}

// wantEvent reads the first event of operation id.
func (c *wsClient) wantEvent(id string) {
	c.t.Helper()
	want := "next"
	if c.legacy {
		want = "data"
	}
	if m := c.next(); m.ID != id || m.Type != want {
		c.t.Fatalf("got %s for %q (%s), want %s for %q", m.Type, m.ID, m.Payload, want, id)
	}
}

func TestOperationsOverThePerSocketLimitAreRefusedAndTheSocketStaysOpen(t *testing.T) {
	tests := []struct {
		protocol string
		setting  int // Config.MaxOperationsPerSocket
		limit    int // the limit that applies
	}{
		{protocolTransportWS, 3, 3},
		{protocolLegacy, 3, 3},
		{protocolTransportWS, 0, 100},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s, setting %d", tt.protocol, tt.setting), func(t *testing.T) {
			srv := probeServer(t, Config{MaxOperationsPerSocket: tt.setting})
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			c := &wsClient{t: t, ctx: ctx, conn: dialWS(t, ctx, srv, tt.protocol), legacy: tt.protocol == protocolLegacy}
			c.send("", "connection_init", nil)
			if m := c.next(); m.Type != "connection_ack" {
				t.Fatalf("got %s, want connection_ack", m.Type)
			}
			for i := range tt.limit {
				id := fmt.Sprint(i)
				c.start(id)
				c.wantEvent(id)
			}

			c.start("over")
			m := c.next()
			if m.ID != "over" || m.Type != "error" {
				t.Fatalf("got %s for %q (%s), want error for \"over\"", m.Type, m.ID, m.Payload)
			}
			type gqlError struct {
				Message    string
				Extensions struct{ Code string }
			}
			var errs []gqlError
			if c.legacy {
				var e gqlError // the legacy protocol's error payload is one error
				_ = json.Unmarshal(m.Payload, &e)
				errs = append(errs, e)
			} else {
				_ = json.Unmarshal(m.Payload, &errs)
			}
			if len(errs) != 1 || errs[0].Extensions.Code != "OPERATION_LIMIT_EXCEEDED" {
				t.Fatalf("got payload %s, want one error with code OPERATION_LIMIT_EXCEEDED", m.Payload)
			}
			for _, part := range []string{fmt.Sprint(tt.limit), "MAX_SUBSCRIPTIONS_PER_SOCKET"} {
				if !strings.Contains(errs[0].Message, part) {
					t.Errorf("got message %q, want it to name %s", errs[0].Message, part)
				}
			}

			// The socket is still open, and ending one operation makes room for another.
			c.stop("0")
			c.start("again")
			c.wantEvent("again")
		})
	}
}

// wsStep is one step of a conversation over a raw socket: a message to send, or what to
// receive next, as "<type> <id> <payload>" (a prefix of it), or "close <code>".
type wsStep struct{ send, want string }

// converse upgrades a socket to srv in protocol and goes through the steps.
func converse(t *testing.T, srv *httptest.Server, protocol string, steps []wsStep) {
	t.Helper()
	s := dialRaw(t, srv, protocol)
	defer s.conn.Close()
	_ = s.conn.SetDeadline(time.Now().Add(3 * time.Second)) // an answer that does not come fails soon
	for i, step := range steps {
		if step.send != "" {
			s.send(0x1, []byte(step.send))
			continue
		}
		op, payload := s.receive()
		got := ""
		if op == 0x8 && len(payload) >= 2 {
			got = fmt.Sprintf("close %d", binary.BigEndian.Uint16(payload))
		} else {
			var m wsMessage
			if err := json.Unmarshal(payload, &m); err != nil {
				t.Fatalf("step %d: got frame %#x %q, want %s", i, op, payload, step.want)
			}
			got = strings.TrimSpace(fmt.Sprintf("%s %s %s", m.Type, m.ID, m.Payload))
		}
		if !strings.HasPrefix(got, step.want) {
			t.Fatalf("step %d: got %s, want %s", i, got, step.want)
		}
	}
}

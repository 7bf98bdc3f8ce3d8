package transport

import (
	"bufio"
	"bytes"
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
	"github.com/klauspost/compress/flate"
)

// dialDeflate upgrades a TCP connection to /graphql in graphql-transport-ws, offering
// extensions when not empty, and returns the socket and the extensions the server accepted.
func dialDeflate(t *testing.T, srv *httptest.Server, extensions string) (*rawSocket, string) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	ext := ""
	if extensions != "" {
		ext = "Sec-WebSocket-Extensions: " + extensions + "\r\n"
	}
	fmt.Fprintf(conn, "GET /graphql HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n%s\r\n",
		srv.Listener.Addr(), protocolTransportWS, ext)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade answered %d, want 101", resp.StatusCode)
	}
	return &rawSocket{t: t, conn: conn, br: br}, resp.Header.Get("Sec-WebSocket-Extensions")
}

// sendRsv1 writes one masked text frame with RSV1 set.
func (s *rawSocket) sendRsv1(payload []byte) {
	s.t.Helper()
	hdr := []byte{0x80 | 0x40 | 0x1}
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = binary.BigEndian.AppendUint16(append(hdr, 0x80|126), uint16(n))
	default:
		hdr = binary.BigEndian.AppendUint64(append(hdr, 0x80|127), uint64(n))
	}
	hdr = append(hdr, 0, 0, 0, 0)
	if _, err := s.conn.Write(append(hdr, payload...)); err != nil {
		s.t.Fatal(err)
	}
}

// receiveFrame reads one server frame and reports its RSV1 bit.
func (s *rawSocket) receiveFrame() (opcode byte, rsv1 bool, payload []byte) {
	s.t.Helper()
	first, err := s.br.Peek(1)
	if err != nil {
		s.t.Fatal(err)
	}
	rsv1 = first[0]&0x40 != 0
	opcode, payload = s.receive()
	return opcode, rsv1, payload
}

// wantClose reads frames until the close frame, which must carry code.
func (s *rawSocket) wantClose(code uint16) {
	s.t.Helper()
	for {
		op, _, p := s.receiveFrame()
		if op == 0x8 {
			if len(p) < 2 || binary.BigEndian.Uint16(p) != code {
				s.t.Fatalf("closed with %q, want %d", p, code)
			}
			return
		}
	}
}

// deflateTail is the empty stored block a sync flush ends with, which RFC 7692 has the sender
// of a compressed message drop and its receiver put back.
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff}

// clientDeflate compresses p as a client would for a message, the sync flush's tail dropped.
func clientDeflate(t *testing.T, p []byte) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	_, _ = w.Write(p)
	_ = w.Flush()
	return bytes.TrimSuffix(b.Bytes(), deflateTail)
}

func inflateForTest(t *testing.T, p []byte) []byte {
	t.Helper()
	out, err := io.ReadAll(flate.NewReader(io.MultiReader(bytes.NewReader(p), bytes.NewReader(deflateTail))))
	if err != nil && err != io.ErrUnexpectedEOF {
		t.Fatalf("inflate: %v", err)
	}
	return out
}

// A client that offers permessage-deflate gets it without context takeover either way; large
// messages arrive compressed (RSV1) and inflate to the right JSON, small ones plain; the
// client's own compressed messages are understood.
func TestPermessageDeflateIsNegotiatedWhenOffered(t *testing.T) {
	srv := probeServer(t, Config{})
	s, ext := dialDeflate(t, srv, "permessage-deflate; client_max_window_bits")
	if !strings.Contains(ext, "permessage-deflate") || !strings.Contains(ext, "server_no_context_takeover") ||
		!strings.Contains(ext, "client_no_context_takeover") {
		t.Fatalf("Sec-WebSocket-Extensions %q, want permessage-deflate without context takeover", ext)
	}
	// connection_init compressed by the client.
	s.sendRsv1(clientDeflate(t, []byte(`{"type":"connection_init"}`)))
	if op, rsv1, p := s.receiveFrame(); op != 0x1 || rsv1 || !bytes.Contains(p, []byte("connection_ack")) {
		t.Fatalf("got op %d rsv1 %v %q, want a plain connection_ack", op, rsv1, p)
	}
	s.sendJSON(map[string]any{"id": "op-7", "type": "subscribe", "payload": map[string]any{"query": "subscription { ticks(n: 3, size: 3000, every: 1) }"}})
	for i := 0; i < 3; i++ {
		op, rsv1, p := s.receiveFrame()
		if op != 0x1 || !rsv1 {
			t.Fatalf("tick %d: got op %d rsv1 %v, want a compressed text frame", i, op, rsv1)
		}
		var m struct {
			ID, Type string
			Payload  struct{ Data struct{ Ticks string } }
		}
		if err := json.Unmarshal(inflateForTest(t, p), &m); err != nil {
			t.Fatalf("tick %d: %v", i, err)
		}
		if m.ID != "op-7" || m.Type != "next" || len(m.Payload.Data.Ticks) != 3000 {
			t.Fatalf("tick %d: got %s %s of %d bytes, want next for op-7 of 3000", i, m.ID, m.Type, len(m.Payload.Data.Ticks))
		}
		if len(p) > 600 {
			t.Errorf("tick %d: %d bytes compressed, want far fewer than 3000", i, len(p))
		}
	}
	if op, rsv1, p := s.receiveFrame(); op != 0x1 || rsv1 || !bytes.Contains(p, []byte(`"complete"`)) {
		t.Fatalf("got op %d rsv1 %v %q, want a plain complete", op, rsv1, p)
	}
}

// A client that does not offer it gets plain frames; RSV1 from it is a protocol error.
func TestWithoutPermessageDeflateFramesArePlainAndRSV1Is1002(t *testing.T) {
	srv := probeServer(t, Config{})
	s, ext := dialDeflate(t, srv, "")
	if ext != "" {
		t.Fatalf("Sec-WebSocket-Extensions %q, want none", ext)
	}
	s.sendJSON(map[string]any{"type": "connection_init"})
	s.receiveType("connection_ack")
	s.sendJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "subscription { ticks(n: 1, size: 3000, every: 1) }"}})
	if op, rsv1, p := s.receiveFrame(); op != 0x1 || rsv1 || !bytes.Contains(p, []byte(`"next"`)) {
		t.Fatalf("got op %d rsv1 %v, want a plain next", op, rsv1)
	}
	s.sendRsv1(clientDeflate(t, []byte(`{"type":"ping"}`)))
	s.wantClose(1002)
}

// A small compressed message that inflates past MaxMessageBytes closes the socket with 1009,
// having cost the server no more than the limit.
func TestADeflateBombClosesWith1009(t *testing.T) {
	// The bomb is built before dialling: compressing 48 MB takes seconds under -race, longer
	// than the connection_init timeout the socket would otherwise be closed by.
	bomb := clientDeflate(t, append(append([]byte(`{"type":"connection_init","payload":{"pad":"`), bytes.Repeat([]byte{' '}, 48<<20)...), `"}}`...))
	if len(bomb) > 64<<10 {
		t.Fatalf("the bomb is %d bytes compressed, want it under the limit", len(bomb))
	}
	srv := probeServer(t, Config{MaxMessageBytes: 64 << 10})
	s, _ := dialDeflate(t, srv, "permessage-deflate")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s.sendRsv1(bomb)
	s.wantClose(1009)
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("the server allocated %d bytes for a 48 MB bomb, want it bounded by the 64 KB limit", grew)
	}
}

// coder/websocket, in both its modes, talks graphql-transport-ws over the negotiated extension.
func TestPermessageDeflateWithARealClient(t *testing.T) {
	for _, mode := range []websocket.CompressionMode{websocket.CompressionNoContextTakeover, websocket.CompressionContextTakeover} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			srv := probeServer(t, Config{})
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/graphql"
			conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
				Subprotocols: []string{protocolTransportWS}, CompressionMode: mode, CompressionThreshold: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "client_no_context_takeover") {
				t.Fatalf("Sec-WebSocket-Extensions %q", ext)
			}
			c := &wsClient{t: t, ctx: ctx, conn: conn}
			c.send("", "connection_init", nil)
			if m := c.next(); m.Type != "connection_ack" {
				t.Fatalf("got %s, want connection_ack", m.Type)
			}
			c.send("a", "subscribe", map[string]any{"query": "subscription { ticks(n: 2, size: 5000, every: 1) }"})
			for i := 0; i < 2; i++ {
				m := c.next()
				var p struct{ Data struct{ Ticks string } }
				_ = json.Unmarshal(m.Payload, &p)
				if m.Type != "next" || m.ID != "a" || len(p.Data.Ticks) != 5000 {
					t.Fatalf("got %s for %s with %d bytes, want next for a with 5000", m.Type, m.ID, len(p.Data.Ticks))
				}
			}
			if m := c.next(); m.Type != "complete" {
				t.Fatalf("got %s, want complete", m.Type)
			}
		})
	}
}

// Subscribers that share an execution get the same compressed result, each framed with its
// own operation id.
func TestASharedResultIsCompressedOnceForEveryMember(t *testing.T) {
	srv := probeServer(t, Config{Share: shareAll})
	query := "subscription { ticks(n: 40, size: 3000, every: 25) }"
	var socks []*rawSocket
	for _, id := range []string{"first", "second-member"} {
		s, _ := dialDeflate(t, srv, "permessage-deflate")
		s.sendJSON(map[string]any{"type": "connection_init"})
		s.receiveType("connection_ack")
		s.sendJSON(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query}})
		socks = append(socks, s)
	}
	for i, id := range []string{"first", "second-member"} {
		for range 3 {
			op, rsv1, p := socks[i].receiveFrame()
			var m struct {
				ID, Type string
				Payload  struct{ Data struct{ Ticks string } }
			}
			if err := json.Unmarshal(inflateForTest(t, p), &m); op != 0x1 || !rsv1 || err != nil {
				t.Fatalf("%s: op %d rsv1 %v: %v", id, op, rsv1, err)
			}
			if m.ID != id || m.Type != "next" || len(m.Payload.Data.Ticks) != 3000 {
				t.Fatalf("%s: got %s %s with %d bytes", id, m.ID, m.Type, len(m.Payload.Data.Ticks))
			}
		}
	}
}

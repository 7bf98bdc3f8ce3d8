package transport

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// shareAll lets every subscription share its execution.
func shareAll(context.Context, *graphql.OperationContext) (string, bool) { return "", true }

// A subscriber that stops reading falls behind by the buffer and is ended with SLOW_CONSUMER;
// the subscriber sharing its execution gets every response and nobody waits.
func TestASubscriberThatFallsBehindIsEndedAndTheOthersGoOn(t *testing.T) {
	// Paced so that a reader keeps up even under the race detector; sized so that the kernel's
	// socket buffers fill within a few hundred.
	const n, size, every, buffer = 400, 32 << 10, 3, 16
	srv := probeServer(t, Config{SubscriberBuffer: buffer, Share: shareAll})
	query := fmt.Sprintf(`subscription { ticks(n: %d, size: %d, every: %d) }`, n, size, every)
	subscribe := func() *rawSocket {
		s := dialRaw(t, srv, protocolTransportWS)
		s.sendJSON(wsMessage{Type: "connection_init"})
		s.receiveType("connection_ack")
		s.sendJSON(map[string]any{"id": "t", "type": "subscribe", "payload": map[string]any{"query": query}})
		return s
	}
	fast := subscribe()
	slow := subscribe() // reads nothing until the stream is over

	// The fast subscriber gets every tick, in order, then complete.
	for i := 0; ; {
		m := fast.message()
		if m.Type == "complete" {
			if i != n {
				t.Fatalf("the fast subscriber got %d ticks before complete, want %d", i, n)
			}
			break
		}
		var payload struct{ Data struct{ Ticks string } }
		_ = json.Unmarshal(m.Payload, &payload)
		// The first subscriber started the execution; it misses nothing.
		if m.Type != "next" || !strings.HasPrefix(payload.Data.Ticks, fmt.Sprintf("%d:", i)) {
			t.Fatalf("the fast subscriber's message %d: got %s %.40s, want next with tick %d", i, m.Type, m.Payload, i)
		}
		i++
	}

	// The slow one gets what was queued for it before it fell behind, in order, then the error.
	last := -1
	for {
		m := slow.message()
		if m.Type == "next" {
			var payload struct{ Data struct{ Ticks string } }
			_ = json.Unmarshal(m.Payload, &payload)
			var tick int
			fmt.Sscanf(payload.Data.Ticks, "%d:", &tick)
			if tick <= last {
				t.Fatalf("the slow subscriber got tick %d after %d", tick, last)
			}
			last = tick
			continue
		}
		var errs []struct {
			Message    string
			Extensions struct{ Code string }
		}
		_ = json.Unmarshal(m.Payload, &errs)
		if m.Type != "error" || len(errs) != 1 || errs[0].Extensions.Code != "SLOW_CONSUMER" ||
			!strings.Contains(errs[0].Message, fmt.Sprint(buffer)) {
			t.Fatalf("the slow subscriber: got %s %s, want an error with code SLOW_CONSUMER naming the buffer", m.Type, m.Payload)
		}
		break
	}
	if last >= n-1 {
		t.Fatalf("the slow subscriber got every tick (the last, %d): it never fell behind, so the test proves nothing", last)
	}
	t.Logf("the slow subscriber got ticks up to %d of %d before it was ended", last, n)
}

// message reads the next graphql-transport-ws message that is not a ping or a pong, and fails on
// a close frame.
func (s *rawSocket) message() wsMessage {
	s.t.Helper()
	for {
		op, payload := s.receive()
		if op == 0x8 {
			s.t.Fatalf("got a close frame %q, want a message", payload)
		}
		var m wsMessage
		if op != 0x1 || json.Unmarshal(payload, &m) != nil {
			s.t.Fatalf("got frame %d %.60q, want a JSON message", op, payload)
		}
		if m.Type != "ping" && m.Type != "pong" {
			return m
		}
	}
}

// A graphql-transport-ws stream that results keep busy still gets its keep-alives, each with a
// result rather than in a write of its own; and a busy peer that stops answering the WebSocket
// pings is closed as a quiet one is, before the stream would have ended.
func TestABusyStreamKeepsItsKeepAlivesAndItsPeerCheck(t *testing.T) {
	for _, answer := range []bool{true, false} {
		t.Run(fmt.Sprintf("answering pings %v", answer), func(t *testing.T) {
			srv := probeServer(t, Config{KeepAlive: 100 * time.Millisecond})
			s := dialRaw(t, srv, protocolTransportWS)
			defer s.conn.Close()
			s.sendJSON(wsMessage{Type: "connection_init"})
			s.receiveType("connection_ack")
			// A tick every 10 ms for 2 s: busier than the keep-alive throughout.
			s.sendJSON(map[string]any{"id": "t", "type": "subscribe", "payload": map[string]any{
				"query": `subscription { ticks(n: 200, size: 10, every: 10) }`}})
			var pings, messages, ticks int
			for {
				op, payload, ok := s.tryReceive()
				if !ok || op == 0x8 {
					break // closed, with a close frame or without
				}
				if op == 0x9 {
					pings++
					if answer {
						s.send(0xA, payload)
					}
					continue
				}
				var m wsMessage
				_ = json.Unmarshal(payload, &m)
				if m.Type == "ping" {
					messages++
				}
				if m.Type == "next" {
					ticks++
				}
				if m.Type == "complete" {
					break
				}
			}
			if answer && (ticks != 200 || pings < 5 || messages < 5) {
				t.Errorf("got %d ticks, %d WebSocket pings and %d ping messages over 2 s; want 200 ticks and a keep-alive about every 100 ms", ticks, pings, messages)
			}
			if !answer && ticks >= 200 {
				t.Errorf("a peer that answered no ping got all %d ticks: it was never found gone", ticks)
			}
		})
	}
}

// tryReceive reads one unfragmented server frame; ok is false once the connection has ended.
func (s *rawSocket) tryReceive() (opcode byte, payload []byte, ok bool) {
	var hdr [2]byte
	if _, err := io.ReadFull(s.br, hdr[:]); err != nil {
		return 0, nil, false
	}
	n := uint64(hdr[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(s.br, b[:]); err != nil {
			return 0, nil, false
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(s.br, b[:]); err != nil {
			return 0, nil, false
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(s.br, payload); err != nil {
		return 0, nil, false
	}
	return hdr[0] & 0x0f, payload, true
}

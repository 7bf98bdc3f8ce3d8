package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// shareAll lets every subscription share its execution.
func shareAll(context.Context, *graphql.OperationContext) (string, bool) { return "", true }

// A subscriber that stops reading falls behind by the buffer and is ended with SLOW_CONSUMER;
// the subscriber sharing its execution gets every response and nobody waits.
func TestASubscriberThatFallsBehindIsEndedAndTheOthersGoOn(t *testing.T) {
	// Paced so that a reader keeps up even under the race detector beside the other packages'
	// tests on two cores (at 3 ms apart it once fell 16 behind there); sized so that the
	// kernel's socket buffers fill within a few hundred.
	const n, size, every, buffer = 400, 32 << 10, 8, 16
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

// Members of one execution whose messages begin alike share one frame of each result; every
// member still gets its own operation's id and message type, in order, however many different
// ids there are (more than a result keeps frames for), on either protocol, compressed or not.
func TestASharedFrameCarriesEachMembersOwnIDAndType(t *testing.T) {
	type member struct {
		proto   string
		id      string
		deflate bool
	}
	m := func(id string) member { return member{protocolTransportWS, id, false} }
	tests := []struct {
		name    string
		members []member
	}{
		{"one id", []member{m("1"), m("1"), m("1")}},
		{"more ids than a result keeps", []member{m("1"), m("2"), m("3"), m("4"), m("5"), m("6"), m("1")}},
		{"both protocols, the same id", []member{m("1"), {protocolLegacy, "1", false}, m("1")}},
		{"compressed and not", []member{m("1"), {protocolTransportWS, "1", true}, m("1")}},
	}
	const n = 20
	query := fmt.Sprintf(`subscription { ticks(n: %d, size: 100, every: 10) }`, n)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := probeServer(t, Config{Share: shareAll})
			socks := make([]*rawSocket, len(tt.members))
			for i, mb := range tt.members {
				var s *rawSocket
				if mb.deflate {
					s, _ = dialDeflate(t, srv, "permessage-deflate")
				} else {
					s = dialRaw(t, srv, mb.proto)
				}
				s.sendJSON(wsMessage{Type: "connection_init"})
				s.receiveType("connection_ack")
				typ := "subscribe"
				if mb.proto == protocolLegacy {
					typ = "start"
				}
				s.sendJSON(map[string]any{"id": mb.id, "type": typ, "payload": map[string]any{"query": query}})
				socks[i] = s
			}
			for i, mb := range tt.members {
				want := "next"
				if mb.proto == protocolLegacy {
					want = "data"
				}
				got, last := 0, -1
				for {
					msg := socks[i].message()
					if msg.Type == "ka" {
						continue
					}
					if msg.Type == "complete" {
						break
					}
					var payload struct{ Data struct{ Ticks string } }
					_ = json.Unmarshal(msg.Payload, &payload)
					var tick int
					fmt.Sscanf(payload.Data.Ticks, "%d:", &tick)
					if msg.ID != mb.id || msg.Type != want || (last >= 0 && tick != last+1) {
						t.Fatalf("member %d (%s %q): got %s %q tick %d after %d, want %s %q, the next tick", i, mb.proto, mb.id, msg.Type, msg.ID, tick, last, want, mb.id)
					}
					last = tick
					got++
				}
				if got == 0 || last != n-1 {
					t.Fatalf("member %d: got %d ticks, the last %d; want every tick from its first to %d", i, got, last, n-1)
				}
			}
		})
	}
}

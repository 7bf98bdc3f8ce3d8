package transport

import (
	"encoding/binary"
	"net"
	"runtime"
	"testing"
	"time"
)

// frame builds a client frame: first byte (FIN, RSV, opcode), mask bit, payload (masked with a
// zero key, which leaves it as it is).
func frame(first byte, masked bool, payload []byte) []byte {
	b := []byte{first}
	maskBit := byte(0)
	if masked {
		maskBit = 0x80
	}
	switch n := len(payload); {
	case n < 126:
		b = append(b, maskBit|byte(n))
	case n < 1<<16:
		b = binary.BigEndian.AppendUint16(append(b, maskBit|126), uint16(n))
	default:
		b = binary.BigEndian.AppendUint64(append(b, maskBit|127), uint64(n))
	}
	if masked {
		b = append(b, 0, 0, 0, 0)
	}
	return append(b, payload...)
}

// The frame reader refuses what RFC 6455 forbids a client, with the code it names, and answers
// what it allows; every connection it refused lets go of its descriptor and its goroutines.
func TestTheWebSocketReaderRefusesWhatTheProtocolForbids(t *testing.T) {
	init := []byte(`{"type":"connection_init"}`)
	tests := []struct {
		name string
		send []byte
		// close is the close code expected; 0 expects the frame to be answered instead.
		close  uint16
		answer byte // the opcode of the answer expected when close is 0
	}{
		{"an unmasked frame", frame(0x81, false, init), 1002, 0},
		{"a reserved bit", frame(0x80|0x40|0x1, true, init), 1002, 0},
		{"an unknown opcode", frame(0x83, true, init), 1002, 0},
		{"a long control frame", frame(0x89, true, make([]byte, 126)), 1002, 0},
		{"a fragmented control frame", frame(0x09, true, nil), 1002, 0},
		{"a continuation out of place", frame(0x80, true, init), 1002, 0},
		{"a binary message", frame(0x82, true, init), 4400, 0},
		{"a header claiming a terabyte", frame(0x81, true, nil)[:1], 1009, 0},
		{"a message split in two", append(frame(0x01, true, init[:10]), frame(0x80, true, init[10:])...), 0, 0x1},
		{"a ping", frame(0x89, true, []byte("are you there")), 0, 0xA},
	}
	// The terabyte: the 64-bit length form, masked, with no payload behind it.
	tests[7].send = binary.BigEndian.AppendUint64([]byte{0x81, 0x80 | 127}, 1<<40)
	tests[7].send = append(tests[7].send, 0, 0, 0, 0)
	srv := probeServer(t, Config{MaxMessageBytes: 1024, MessageTimeout: 300 * time.Millisecond})
	fds, goroutines := openDescriptors(t), runtime.NumGoroutine()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := dialRaw(t, srv, protocolTransportWS)
			defer s.conn.Close()
			if _, err := s.conn.Write(tt.send); err != nil {
				t.Fatal(err)
			}
			op, payload := s.receive()
			if tt.close == 0 {
				if op != tt.answer {
					t.Fatalf("got opcode %#x (%q), want %#x", op, payload, tt.answer)
				}
				return
			}
			if op != 0x8 || len(payload) < 2 || binary.BigEndian.Uint16(payload) != tt.close {
				t.Fatalf("got opcode %#x (%q), want a close frame with %d", op, payload, tt.close)
			}
		})
	}
	// Half a frame, then silence: the server gives up after the message timeout.
	t.Run("half a frame", func(t *testing.T) {
		s := dialRaw(t, srv, protocolTransportWS)
		defer s.conn.Close()
		if _, err := s.conn.Write(frame(0x81, true, init)[:8]); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		op, payload := s.receive()
		if op != 0x8 || len(payload) < 2 || binary.BigEndian.Uint16(payload) != 1008 {
			t.Fatalf("got opcode %#x (%q), want a close frame with 1008", op, payload)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("the stalled message was given up after %v, want about the 300 ms timeout", took)
		}
	})
	if !eventually(func() bool { return openDescriptors(t) <= fds }) {
		t.Errorf("got %d open descriptors after the refused connections, want at most %d as before", openDescriptors(t), fds)
	}
	if !eventually(func() bool { return runtime.NumGoroutine() <= goroutines }) {
		t.Errorf("got %d goroutines after the refused connections, want at most %d as before", runtime.NumGoroutine(), goroutines)
	}
}

// hidingListener accepts connections that hide their socket, as a listener wrapping them
// without NetConn would.
type hidingListener struct{ net.Listener }

func (l hidingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	return struct{ net.Conn }{c}, err
}

// A socket that cannot be waited on for readability (wrapped by a listener that hides it, or
// on a system without the probe) is still served: its reader waits holding its buffer, and
// no message timeout runs while it is idle.
func TestAWebSocketWithoutAReadinessProbeIsStillServed(t *testing.T) {
	srv := probeServerOn(t, Config{MessageTimeout: 200 * time.Millisecond},
		func(ln net.Listener) net.Listener { return hidingListener{ln} })
	s := dialRaw(t, srv, protocolTransportWS)
	defer s.conn.Close()
	s.sendJSON(map[string]any{"type": "connection_init"})
	s.receiveType("connection_ack")
	time.Sleep(500 * time.Millisecond) // idle past the message timeout
	s.sendJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "subscription { hold }"}})
	s.receiveType("next")
}

package transport

import (
	"encoding/binary"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// A client is closed with 4408 ("Connection initialisation timeout", graphql-transport-ws's
// PROTOCOL.md) when no connection_init arrived within the timeout (docs/events.md: "`4408` no
// `connection_init` within 3 s"), and only then: issue 28's reconnect storm had clients
// "closed `4408 Connection initialisation timeout`: their `connection_init` sat in the socket's
// buffer while the gateway was busy accepting the others, and the init timer fired first",
// and its target is "every one is acknowledged (0 closed with 4408 while its `connection_init`
// had arrived)". The reader is held past the timeout, as a busy gateway holds it from its turn;
// a client that really sends nothing is still closed. Every connection lets go of its
// descriptor and its goroutines.
func TestTheInitTimeoutClosesOnlyAClientWhoseConnectionInitHasNotArrived(t *testing.T) {
	const timeout = 100 * time.Millisecond
	init := []byte(`{"type":"connection_init"}`)
	tests := []struct {
		name     string
		protocol string
		// hold is how long the reader is held from its turn, its init timer running.
		hold time.Duration
		send [][]byte // client frames, sent right after the upgrade
		// wantClose is the close code expected; 0 expects connection_ack. Pongs are skipped.
		wantClose uint16
	}{
		{"connection_init arrived while the gateway was busy", protocolTransportWS, 5 * timeout, [][]byte{frame(0x81, true, init)}, 0},
		{"connection_init arrived while the gateway was busy, legacy protocol", protocolLegacy, 5 * timeout, [][]byte{frame(0x81, true, init)}, 0},
		{"connection_init arrived in two frames while the gateway was busy", protocolTransportWS, 5 * timeout,
			[][]byte{frame(0x01, true, init[:10]), frame(0x80, true, init[10:])}, 0},
		{"nothing sent", protocolTransportWS, 0, nil, 4408},
		{"nothing sent while the gateway was busy", protocolTransportWS, 5 * timeout, nil, 4408},
		{"nothing sent, legacy protocol", protocolLegacy, 0, nil, 4408},
		{"a ping and nothing else", protocolTransportWS, 0, [][]byte{frame(0x89, true, []byte("hi"))}, 4408},
		{"a ping and nothing else while the gateway was busy", protocolTransportWS, 5 * timeout, [][]byte{frame(0x89, true, []byte("hi"))}, 4408},
	}
	fds, goroutines := openDescriptors(t), runtime.NumGoroutine()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := probeServer(t, Config{InitTimeout: timeout, beforeRead: func() { time.Sleep(tt.hold) }})
			s := dialRaw(t, srv, tt.protocol)
			defer s.conn.Close()
			for _, f := range tt.send {
				if _, err := s.conn.Write(f); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			for {
				op, payload := s.receive()
				switch {
				case op == 0xA: // the pong
					continue
				case op == 0x8:
					code := uint16(0)
					if len(payload) >= 2 {
						code = binary.BigEndian.Uint16(payload)
					}
					if code != tt.wantClose || tt.wantClose == 0 {
						t.Fatalf("got a close frame %d %q, want %s", code, payload[min(2, len(payload)):], want(tt.wantClose))
					}
					// Within the timeout once the reader waits: the hold, then a look a quarter
					// of the timeout apart.
					if took := time.Since(start); took > tt.hold+timeout+time.Second {
						t.Fatalf("closed after %v, want within %v", took, tt.hold+timeout)
					}
				case tt.wantClose != 0:
					t.Fatalf("got opcode %#x %q, want %s", op, payload, want(tt.wantClose))
				default:
					if string(payload) != `{"type":"connection_ack"}` {
						t.Fatalf("got %q, want connection_ack", payload)
					}
				}
				return
			}
		})
	}
	if !eventually(func() bool { return openDescriptors(t) <= fds }) {
		t.Errorf("got %d open descriptors after the connections, want at most %d as before", openDescriptors(t), fds)
	}
	if !eventually(func() bool { return runtime.NumGoroutine() <= goroutines }) {
		t.Errorf("got %d goroutines after the connections, want at most %d as before", runtime.NumGoroutine(), goroutines)
	}
}

// want names what a case expects: a close code, or connection_ack for 0.
func want(code uint16) string {
	if code == 0 {
		return "connection_ack"
	}
	return "close " + strconv.Itoa(int(code))
}

package transport

import (
	"encoding/json"
	"strings"
	"testing"
)

// A compressed message that does not inflate is a protocol error (1002), not a crash or a
// message of garbage.
func TestACompressedMessageThatDoesNotInflateIs1002(t *testing.T) {
	srv := probeServer(t, Config{})
	s, _ := dialDeflate(t, srv, "permessage-deflate")
	s.sendRsv1([]byte{0xff, 0xff, 0xff, 0xff, 0x00})
	s.wantClose(1002)
}

// An id longer than a stored deflate block holds (the client chooses it) still gets a
// compressed next that inflates to its own id: the member's message is compressed whole.
func TestACompressedNextCarriesAnIdOfAnyLength(t *testing.T) {
	srv := probeServer(t, Config{})
	s, _ := dialDeflate(t, srv, "permessage-deflate")
	s.sendJSON(map[string]any{"type": "connection_init"})
	s.receiveType("connection_ack")
	id := strings.Repeat("i", 70000)
	s.sendJSON(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": "subscription { ticks(n: 1, size: 600, every: 1) }"}})
	op, rsv1, payload := s.receiveFrame()
	if op != 0x1 || !rsv1 {
		t.Fatalf("opcode %#x, compressed %v; want a compressed next", op, rsv1)
	}
	var next wsMessage
	if err := json.Unmarshal(inflateForTest(t, payload), &next); err != nil || next.ID != id || next.Type != "next" {
		t.Fatalf("the next inflates to an id of %d bytes (%v), want the %d sent", len(next.ID), err, len(id))
	}
}

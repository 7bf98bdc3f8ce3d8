//go:build !unix

package transport

// canProbe says whether a socket can be waited on for readability here without a read buffer:
// not here, where an idle WebSocket's reader waits holding its buffer.
const canProbe = false

func (s *socket) probe(uintptr) bool { return true }

// writeNow writes nothing here: the caller waits for the socket.
func (s *socket) writeNow([]byte) (int, error) { return 0, nil }

func (s *socket) writeSome(uintptr) bool { return true }

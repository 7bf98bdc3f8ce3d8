//go:build !unix

package socket

// canProbe says whether a socket can be waited on for readability here without a read buffer:
// not here, where an idle WebSocket's reader waits holding its buffer.
const canProbe = false

func (c *Conn) probe(uintptr) bool { return true }

func hasBytes(uintptr) bool { return false }

// WriteNow writes nothing here: the caller waits for the socket.
func (c *Conn) WriteNow([]byte) (int, error) { return 0, nil }

package socket

import (
	"syscall"
	"time"
)

// tcpUserTimeout is TCP_USER_TIMEOUT (linux/tcp.h), which the syscall package does not name.
const tcpUserTimeout = 0x12

// SetUserTimeout has the system end the connection when what was written to it has waited
// longer than d for the peer's acknowledgement: a peer that vanished (a sleeping laptop, a
// dropped network) is then found by TCP itself, on a connection kept busy writing to it, within
// d rather than after the minutes of retransmissions TCP tries by default. Without the raw
// socket it does nothing.
func (c *Conn) SetUserTimeout(d time.Duration) error {
	if c.raw == nil || d <= 0 {
		return nil
	}
	var err error
	if cerr := c.raw.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(d.Milliseconds()))
	}); cerr != nil {
		return cerr
	}
	return err
}

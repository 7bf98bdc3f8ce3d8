//go:build unix

package socket

import (
	"errors"
	"net"
	"syscall"
)

// canProbe says whether a socket can be waited on for readability here without a read buffer.
const canProbe = true

// probe peeks at one byte without taking it: false (wait for the socket to be readable) while
// there is none, true once there is data, the end of the stream, or an error for the read that
// follows to report.
func (c *Conn) probe(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
		return false
	}
	c.peeked = true
	return true
}

// hasBytes peeks, without waiting, at whether the socket holds data to read.
func hasBytes(fd uintptr) bool {
	var b [1]byte
	n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err == nil && n > 0
}

// WriteNow writes as much of b as the socket takes without waiting, and reports how much;
// called with the write lock held, which keeps the descriptor open. Without the raw socket it
// writes nothing, and the caller waits.
func (c *Conn) WriteNow(b []byte) (int, error) {
	if c.raw == nil {
		return 0, nil
	}
	if c.fd < 0 {
		return 0, net.ErrClosed
	}
	n := 0
	for n < len(b) {
		m, err := writeFD(c.fd, b[n:])
		if m > 0 {
			n += m
		}
		switch {
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			return n, nil
		case err != nil:
			return n, err
		case m <= 0:
			return n, nil
		}
	}
	return n, nil
}

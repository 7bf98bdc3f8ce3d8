//go:build unix

package transport

import (
	"errors"
	"syscall"
)

// canProbe says whether a socket can be waited on for readability here without a read buffer.
const canProbe = true

// probe peeks at one byte without taking it: false (wait for the socket to be readable) while
// there is none, true once there is data, the end of the stream, or an error for the read that
// follows to report.
func (s *socket) probe(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
		return false
	}
	s.peeked = true
	return true
}

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

// writeNow writes as much of b as the socket takes without waiting, and reports how much;
// called with writeMu held. Without the raw socket it writes nothing, and the caller waits.
func (s *socket) writeNow(b []byte) (int, error) {
	if s.raw == nil {
		return 0, nil
	}
	s.wbuf, s.wn, s.werr = b, 0, nil
	err := s.raw.Write(s.writable)
	n, werr := s.wn, s.werr
	s.wbuf = nil
	if err != nil {
		return n, err
	}
	return n, werr
}

// writeSome is writeNow's system call, given to raw.Write: it never asks to wait.
func (s *socket) writeSome(fd uintptr) bool {
	for s.wn < len(s.wbuf) {
		n, err := syscall.Write(int(fd), s.wbuf[s.wn:])
		if n > 0 {
			s.wn += n
		}
		switch {
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			return true
		case err != nil:
			s.werr = err
			return true
		case n == 0:
			return true
		}
	}
	return true
}

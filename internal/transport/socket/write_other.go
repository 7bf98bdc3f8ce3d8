//go:build unix && !linux

package socket

import "syscall"

// writeFD is one write(2) to a non-blocking socket.
func writeFD(fd int, b []byte) (int, error) { return syscall.Write(fd, b) }

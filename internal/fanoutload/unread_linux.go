package fanoutload

import (
	"net"
	"syscall"
	"unsafe"
)

// unreadBytes is how many bytes wait in c's socket, unread (FIONREAD); -1 where it cannot say.
func unreadBytes(c net.Conn) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	n := int32(-1)
	if err := raw.Control(func(fd uintptr) {
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
			n = -1
		}
	}); err != nil {
		return -1
	}
	return int(n)
}

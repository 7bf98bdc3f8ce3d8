package socket

import (
	"syscall"
	"unsafe"
)

// writeFD is one write(2) to a non-blocking socket, made without telling the scheduler: a
// syscall.Write marks its processor as in a system call, and a loopback write, which delivers
// to the peer inline, often lasts past sysmon's 20 µs tick, which then hands the processor to
// another thread and keeps sysmon waking every 20 µs. At tens of thousands of writes a second
// the handoffs and sysmon's wakeups cost a tenth of the gateway's CPU per delivery. The write
// never waits (the descriptor is non-blocking), so the processor is not held for long.
func writeFD(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

package transport

import (
	"cmp"
	"net"
	"sync"
	"syscall"
	"time"
)

// socket is a hijacked connection that a stream holds open for long, mostly idle: it can be
// waited on for readability without a read buffer (a one-byte MSG_PEEK through
// syscall.RawConn, where the system has it), and it is written to by one writer at a time,
// within writeTimeout.
type socket struct {
	nc net.Conn
	// writeTimeout bounds each write that waits for the peer to read.
	writeTimeout time.Duration
	raw          syscall.RawConn // nil when nc offers none: reads then wait holding their buffer
	// readable is the readiness probe given to raw.Read, made once.
	readable func(fd uintptr) bool
	// peeked is what the probe saw: data (or the end of the stream) to read.
	peeked bool

	writeMu sync.Mutex
	// The write in progress, for writable, made once like readable; guarded by writeMu.
	writable func(fd uintptr) bool
	wbuf     []byte
	wn       int
	werr     error
}

func (s *socket) init(nc net.Conn, writeTimeout time.Duration) {
	s.nc, s.writeTimeout = nc, cmp.Or(writeTimeout, DefaultWriteTimeout)
	// A listener that bounds connections wraps them; the socket is the one it wraps.
	sock := nc
	if u, ok := nc.(interface{ NetConn() net.Conn }); ok {
		sock = u.NetConn()
	}
	if sc, ok := sock.(syscall.Conn); ok && canProbe {
		if raw, err := sc.SyscallConn(); err == nil {
			s.raw = raw
			s.readable = s.probe
			s.writable = s.writeSome
		}
	}
}

// waitReadable waits, holding no buffer, until the socket has something to read, has ended, or
// its read deadline passes. Without the probe it returns at once, and the read that follows
// waits.
func (s *socket) waitReadable() error {
	if s.raw == nil {
		return nil
	}
	s.peeked = false
	for !s.peeked {
		if err := s.raw.Read(s.readable); err != nil {
			return err
		}
	}
	return nil
}

// writeWaiting writes b, waiting for the socket within writeTimeout; called with writeMu held.
// The deadline is cleared after, for writeNow, which a passed deadline would refuse.
func (s *socket) writeWaiting(b []byte) error {
	if err := s.nc.SetWriteDeadline(time.Now().Add(s.writeTimeout)); err != nil {
		return err
	}
	_, err := s.nc.Write(b)
	if derr := s.nc.SetWriteDeadline(time.Time{}); err == nil {
		err = derr
	}
	return err
}

// onFreshStack runs f on a goroutine of its own and waits for it. A connection's reader lives
// as long as the connection and mostly waits; what it does between waits (reading, decoding and
// acting on a message, or setting a stream up) grows a stack to 4 KiB or more, and the runtime
// never shrinks that back to 2 KiB for a parked reader, whose frames, with the guard the runtime
// keeps, take over a quarter of it: 2 KiB more for each of thousands of idle sockets. A
// goroutine that ends gives its stack back.
func onFreshStack(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

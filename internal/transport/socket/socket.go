// Package socket holds a hijacked connection open for long and mostly idle, as a WebSocket or
// an HTTP/1.1 event stream holds one among tens of thousands on a replica: its reader waits for
// the socket to become readable holding no buffer, what the connection has to write is queued
// in an Outbox, and a small pool of Writers writes the queues without ever waiting on a socket.
// The protocols spoken over the connection (WebSocket frames, chunked events) are their users'.
package socket

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Conn is a hijacked connection that a stream holds open for long, mostly idle: it can be
// waited on for readability without a read buffer (a one-byte MSG_PEEK through
// syscall.RawConn, where the system has it), and it is written to by one writer at a time,
// within writeTimeout.
type Conn struct {
	// What a write touches comes first, together: a fan-out writes to tens of thousands of
	// connections, each out of the processor's caches, and every line a write touches is one
	// more to fetch.
	writeMu sync.Mutex
	// fd is the socket's descriptor, which WriteNow writes to with one system call, skipping
	// the poller's bookkeeping that net.Conn's writes pay; -1 once closed, or without the raw
	// socket. Guarded by writeMu, which Close takes before closing: a descriptor the kernel has
	// given to another connection is never written.
	fd  int
	raw syscall.RawConn // nil when nc offers none: reads then wait holding their buffer
	// closing is set once Close has begun: a write that waits gives up.
	closing atomic.Bool

	nc net.Conn
	// writeTimeout bounds each write that waits for the peer to read.
	writeTimeout time.Duration
	// readable is the readiness probe given to raw.Read, made once.
	readable func(fd uintptr) bool
	// peeked is what the probe saw: data (or the end of the stream) to read.
	peeked bool
	// waiting is set while the reader waits in WaitReadable: what arrives is then unread
	// only while it is in the socket (Unread).
	waiting atomic.Bool

	// sysfd is the socket's descriptor while it is open, for the Watcher; set once, by Init.
	sysfd int
	// watch is c's part in the Watcher that waits on it while idle, if any (ReadLoop).
	watch watch
	// wakeful is set once Wake was called: the reader waits itself from then on. Guarded by
	// writeMu.
	wakeful bool
}

// Init makes c the connection nc, whose writes wait at most writeTimeout (positive) for the
// peer. It is a method, not a constructor, so that a connection type can embed Conn by value.
func (c *Conn) Init(nc net.Conn, writeTimeout time.Duration) {
	c.nc, c.writeTimeout, c.fd = nc, writeTimeout, -1
	// A listener that bounds connections wraps them; the socket is the one it wraps. A TLS
	// connection wraps one too, but its bytes on the socket are records: writing frames to the
	// socket would send them in the clear, so it keeps to its own reads and writes.
	sock := nc
	if _, isTLS := nc.(*tls.Conn); isTLS {
		sock = nil
	} else if u, ok := nc.(interface{ NetConn() net.Conn }); ok {
		sock = u.NetConn()
	}
	if sc, ok := sock.(syscall.Conn); ok && canProbe {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = raw
			c.readable = c.probe
			_ = raw.Control(func(fd uintptr) { c.fd = int(fd) })
			c.sysfd = c.fd
		}
	}
}

// NetConn is the connection c holds.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Probes reports whether c can be waited on without a buffer: when it cannot, WaitReadable
// returns at once and the read that follows waits.
func (c *Conn) Probes() bool { return c.raw != nil }

// WaitReadable waits, holding no buffer, until the socket has something to read, has ended, or
// its read deadline passes. Without the probe it returns at once, and the read that follows
// waits.
func (c *Conn) WaitReadable() error {
	if c.raw == nil {
		return nil
	}
	c.peeked = false
	c.waiting.Store(true)
	var err error
	for !c.peeked && err == nil {
		err = c.raw.Read(c.readable)
	}
	c.waiting.Store(false)
	return err
}

// Unread reports, from any goroutine, whether something may have arrived that the reader has
// not read yet: bytes wait in the socket, or the reader is not waiting for the socket (it has
// not begun to, or it is reading). A reader that waits on a busy process's run queue for its
// turn looks so too, however long it has been woken. Without the readiness probe it reports
// false: the reader's wait and its read are one, and nothing tells them apart.
func (c *Conn) Unread() bool {
	if c.raw == nil {
		return false
	}
	if !c.waiting.Load() {
		return true
	}
	has := false
	if err := c.raw.Control(func(fd uintptr) { has = hasBytes(fd) }); err != nil {
		return false // closed: nothing more will be read
	}
	return has
}

// LockWrite takes the write lock, which every write holds: nothing may come between the parts
// of one batch, nor after a last word its protocol sent.
func (c *Conn) LockWrite() { c.writeMu.Lock() }

// UnlockWrite gives the write lock back.
func (c *Conn) UnlockWrite() { c.writeMu.Unlock() }

// WriteWaiting writes b, waiting for the socket within writeTimeout; called with the write lock
// held. The deadline is cleared after.
func (c *Conn) WriteWaiting(b []byte) error {
	if err := c.nc.SetWriteDeadline(time.Now().Add(c.writeTimeout)); err != nil {
		return err
	}
	// After the deadline is set: a Close from now on moves it to the past, and the write gives
	// up at once rather than holding the lock Close waits for.
	if c.closing.Load() {
		return net.ErrClosed
	}
	_, err := c.nc.Write(b)
	if derr := c.nc.SetWriteDeadline(time.Time{}); err == nil {
		err = derr
	}
	return err
}

// Close closes the connection once no write is under way, so that WriteNow never reaches a
// descriptor the kernel has given to another connection; a write waiting for the peer is made to
// give up first. Every close of the connection goes through it.
func (c *Conn) Close() error {
	c.closing.Store(true)
	_ = c.nc.SetWriteDeadline(aLongTimeAgo)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.fd = -1
	if c.watch.w != nil {
		// Before the descriptor is closed: its number may go to another connection at once.
		c.watch.w.wake(c, true)
	}
	return c.nc.Close()
}

// aLongTimeAgo is a deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

// OnFreshStack runs f on a goroutine of its own and waits for it. A connection's reader lives
// as long as the connection and mostly waits; what it does between waits (reading, decoding and
// acting on a message, or setting a stream up) grows a stack to 4 KiB or more, and the runtime
// never shrinks that back to 2 KiB for a parked reader, whose frames, with the guard the runtime
// keeps, take over a quarter of it: 2 KiB more for each of thousands of idle sockets. A
// goroutine that ends gives its stack back.
func OnFreshStack(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

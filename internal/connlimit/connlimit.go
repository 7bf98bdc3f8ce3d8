// Package connlimit bounds the connections a listener holds open at once, as
// golang.org/x/net/netutil.LimitListener does, with one difference that matters to the
// WebSocket transport: its connections give access to the connection they wrap (NetConn), so
// that a socket can be waited on for readability without a read buffer.
package connlimit

import (
	"net"
	"sync"
)

// Listen returns a listener that accepts at most n connections open at once from ln: Accept
// waits while n are open.
func Listen(ln net.Listener, n int) net.Listener {
	return &listener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type listener struct {
	net.Listener
	slots     chan struct{}
	closeOnce sync.Once
	done      chan struct{}
}

func (l *listener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &conn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *listener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// conn frees its slot when it is closed, once however often it is closed.
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// NetConn is the connection accepted, for what needs more of it than net.Conn offers; it is to
// be closed through c, which frees the slot.
func (c *conn) NetConn() net.Conn { return c.Conn }

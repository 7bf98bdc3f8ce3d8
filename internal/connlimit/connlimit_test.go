package connlimit_test

import (
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/connlimit"
)

// Accept waits while the limit's worth of connections is open, and a connection closed (twice,
// even) frees exactly one slot; each connection still offers the socket it wraps.
func TestAcceptWaitsAtTheLimitAndACloseFreesOneSlot(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := connlimit.Listen(inner, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted with two open and a limit of two")
	case <-time.After(100 * time.Millisecond):
	}
	if u, ok := first.(interface{ NetConn() net.Conn }); !ok {
		t.Fatal("the connection does not offer the one it wraps")
	} else if _, ok := u.NetConn().(syscall.Conn); !ok {
		t.Fatal("the wrapped connection is not a socket")
	}
	first.Close()
	first.Close()
	select {
	case third := <-accepted:
		defer third.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("closing a connection did not free its slot")
	}
	c, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-accepted:
		t.Fatal("closing one connection twice freed two slots")
	case <-time.After(100 * time.Millisecond):
	}
	second.Close()
}

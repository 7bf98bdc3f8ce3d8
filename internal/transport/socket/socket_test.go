package socket

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"
)

// loopback returns the two ends of a TCP connection on the loopback interface, the first held
// by a Conn whose writes wait at most writeTimeout.
func loopback(t *testing.T, writeTimeout time.Duration) (*Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	var c Conn
	c.Init(nc, writeTimeout)
	t.Cleanup(func() { _ = c.Close() })
	return &c, peer
}

// WriteNow writes straight to the socket's descriptor, which stays the connection's until Close:
// after it, nothing is written, so a descriptor the kernel gives to another connection is never
// reached.
func TestWriteNowWritesUntilTheConnIsClosed(t *testing.T) {
	c, peer := loopback(t, time.Minute)
	if !c.Probes() {
		t.Skip("no raw socket here")
	}
	c.LockWrite()
	n, err := c.WriteNow([]byte("hello"))
	c.UnlockWrite()
	if n != 5 || err != nil {
		t.Fatalf("WriteNow: got %d, %v; want 5, nil", n, err)
	}
	buf := make([]byte, 5)
	if _, err := peer.Read(buf); err != nil || string(buf) != "hello" {
		t.Fatalf("the peer read %q, %v", buf, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c.LockWrite()
	n, err = c.WriteNow([]byte("late"))
	c.UnlockWrite()
	if n != 0 || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("WriteNow after Close: got %d, %v; want 0, net.ErrClosed", n, err)
	}
}

// A write waiting for a peer that does not read holds the write lock, which Close takes: Close
// makes it give up rather than wait for its timeout (an hour here).
func TestCloseEndsAWriteThatWaits(t *testing.T) {
	c, _ := loopback(t, time.Hour)
	if !c.Probes() {
		t.Skip("no raw socket here")
	}
	big := make([]byte, 1<<20)
	c.LockWrite()
	for {
		n, err := c.WriteNow(big)
		if err != nil {
			t.Fatal(err)
		}
		if n < len(big) {
			break // the socket is full
		}
	}
	waited := make(chan error)
	go func() {
		err := c.WriteWaiting(big)
		c.UnlockWrite()
		waited <- err
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err == nil {
		t.Fatal("the waiting write succeeded; want it ended by Close")
	}
}

// A TLS connection is never written or probed through the socket it wraps: the bytes there are
// its records, and a frame written to it would go out in the clear.
func TestATLSConnectionKeepsToItsOwnWrites(t *testing.T) {
	c, _ := loopback(t, time.Minute)
	if !c.Probes() {
		t.Skip("no raw socket here")
	}
	var tc Conn
	tc.Init(tls.Server(c.NetConn(), &tls.Config{}), time.Minute)
	if tc.Probes() {
		t.Error("a TLS connection is probed through its socket")
	}
	tc.LockWrite()
	n, err := tc.WriteNow([]byte("hello"))
	tc.UnlockWrite()
	if n != 0 || err != nil {
		t.Errorf("WriteNow on a TLS connection wrote %d bytes, %v; want none, for the caller to write through TLS", n, err)
	}
}

package fanoutload

import (
	"net"
	"testing"
	"time"
)

// A 4408 is placed by where the client's connection_init was when the close reached it: a
// close already waiting in the socket, or already read, when the client wrote means it was not
// written yet; one that arrived during the write crossed it; one read later, with nothing
// waiting after the write, came after the gateway had it.
func TestA4408IsPlacedByWhereTheClientsInitWas(t *testing.T) {
	const ms = int64(time.Millisecond)
	cases := []struct {
		name                      string
		written, read             int64
		unreadBefore, unreadAfter int
		noConn                    bool
		want                      int
		wantMS                    float64
	}{
		{name: "the close was waiting before the write", written: 10 * ms, read: 20 * ms, unreadBefore: 8, unreadAfter: 8 + 32, want: initNotSent},
		{name: "the close was read with the upgrade's answer", written: 10 * ms, read: 5 * ms, want: initNotSent},
		{name: "connection_init never written", want: initNotSent},
		{name: "the close arrived during the write", written: 10 * ms, read: 11 * ms, unreadAfter: 8, want: initCrossed},
		{name: "the close arrived after the write", written: 10 * ms, read: 35 * ms, want: initSent, wantMS: 25},
		{name: "no socket to look at", noConn: true, want: initUnknown},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &initProbe{written: c.written, unreadBefore: c.unreadBefore, unreadAfter: c.unreadAfter}
			if !c.noConn {
				p.conn = &probedConn{}
				p.conn.lastRead.Store(c.read)
			}
			got, gotMS := p.placement()
			if got != c.want || gotMS != c.wantMS {
				t.Errorf("got placement %d, %v ms; want %d, %v ms", got, gotMS, c.want, c.wantMS)
			}
		})
	}
}

// The unread bytes of a socket are what its peer wrote and it has not read.
func TestUnreadBytesAreWhatThePeerWroteAndNobodyRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := unreadBytes(c); n != 0 {
		t.Fatalf("before the peer wrote: got %d unread, want 0", n)
	}
	if _, err := s.Write([]byte("close")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for unreadBytes(c) != 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := unreadBytes(c); n != 5 {
		t.Fatalf("after the peer wrote 5 bytes: got %d unread", n)
	}
}

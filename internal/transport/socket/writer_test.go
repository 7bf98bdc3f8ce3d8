package socket

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Issue 28: "what the gateway does per delivery besides the write system call (queueing,
// framing, bookkeeping, the scheduler) is the 3.7 µs to remove". A result that finds its
// connection idle is written by its producer before PushResult returns, not handed to the
// pool; here the pool never runs, so only that write can reach the client. What queues behind
// a write goes to the pool still.
func TestAResultFindingItsConnectionIdleIsWrittenByItsProducer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	var c Conn
	c.Init(server, time.Second)
	if !c.Probes() {
		t.Skip("no raw socket here: every write waits on a goroutine")
	}
	var out Outbox[string]
	idle := &Writers{max: 0} // schedules, and never writes
	var wg sync.WaitGroup
	defer wg.Wait()
	frame := func(buf []byte, batch []Item[string]) ([]byte, []func()) {
		for _, it := range batch {
			buf = append(buf, it.Res...)
		}
		return buf, nil
	}
	WriterFor(&c, &out, idle, frame, func() bool { return false }, &wg, func() { t.Error("the write failed") })
	var q Quota
	for _, r := range []string{"first.", "second."} {
		if !out.PushResult(&q, r, 4) {
			t.Fatalf("PushResult(%q) refused", r)
		}
	}
	_ = client.SetReadDeadline(time.Now().Add(2 * time.Second))
	got := make([]byte, len("first.second."))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != "first.second." {
		t.Fatalf("read %q, %v; want both results written by their producer", got, err)
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if q.pending != 0 || out.busy || len(idle.ready) != 0 {
		t.Fatalf("got %d pending, busy %v, %d scheduled; want the results written and the connection idle", q.pending, out.busy, len(idle.ready))
	}
}

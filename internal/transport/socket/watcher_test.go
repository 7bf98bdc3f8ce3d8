package socket

import (
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// watched is a connection a test's watcher reads: each read takes what arrived, and reports
// false once the connection has ended.
type watched struct {
	c     *Conn
	peer  net.Conn
	reads atomic.Int32
	// got receives what each read took; ended is closed when the loop ends.
	got   chan string
	ended chan struct{}
	ends  atomic.Int32
	// onRead, when set, runs after each read.
	onRead func()
}

// watchLoopback starts reading a loopback connection's server end through w.
func watchLoopback(t *testing.T, w *Watcher) *watched {
	t.Helper()
	c, peer := loopback(t, time.Second)
	x := &watched{c: c, peer: peer, got: make(chan string, 16), ended: make(chan struct{})}
	read := func() bool {
		x.reads.Add(1)
		b := make([]byte, 64)
		n, err := c.NetConn().Read(b)
		if err != nil {
			return false
		}
		x.got <- string(b[:n])
		if x.onRead != nil {
			x.onRead()
		}
		return true
	}
	returned := make(chan struct{})
	go func() {
		c.ReadLoop(w, func() bool { return true }, read, func() {
			x.ends.Add(1)
			close(x.ended)
		})
		close(returned)
	}()
	<-returned // it returns once it waits: the watcher holds the connection
	return x
}

func (x *watched) wantRead(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-x.got:
		if got != want {
			t.Fatalf("read %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("nothing read, want %q", want)
	}
}

func (x *watched) wantEnded(t *testing.T) {
	t.Helper()
	select {
	case <-x.ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the loop did not end")
	}
	if n := x.ends.Load(); n != 1 {
		t.Fatalf("ended %d times, want once", n)
	}
}

// newTestWatcher is a watcher closed when the test ends, after which none of the goroutines
// the test started is left.
func newTestWatcher(t *testing.T) *Watcher {
	t.Helper()
	if !canWatch {
		t.Skip("connections are not watched here")
	}
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	w := NewWatcher()
	t.Cleanup(w.Close)
	return w
}

// wantLetGo fails unless w has let c go.
func wantLetGo(t *testing.T, w *Watcher, c *Conn) {
	t.Helper()
	w.mu.Lock()
	_, held := w.watched[c.watch.id]
	w.mu.Unlock()
	if held {
		t.Fatal("the watcher still holds the closed connection")
	}
}

// What arrives starts the reader once; the connection is watched again after it, and what
// arrives next starts it again.
func TestTheWatcherStartsTheReaderOnceForEachArrivalAndWatchesAgain(t *testing.T) {
	w := newTestWatcher(t)
	x := watchLoopback(t, w)
	for _, msg := range []string{"one", "two", "three"} {
		before := x.reads.Load()
		if _, err := x.peer.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		x.wantRead(t, msg)
		time.Sleep(20 * time.Millisecond) // a second start would read now
		if n := x.reads.Load() - before; n != 1 {
			t.Fatalf("%d reads for one arrival, want 1", n)
		}
	}
	x.peer.Close()
	x.wantEnded(t)
	_ = x.c.Close()
}

// A peer that closes its end (EPOLLRDHUP) wakes the reader, which reads the end of the stream:
// the connection's ordinary end.
func TestAPeerThatHangsUpEndsTheWatchedConnection(t *testing.T) {
	w := newTestWatcher(t)
	x := watchLoopback(t, w)
	x.peer.Close()
	x.wantEnded(t)
}

// Closing a connection the watcher waits on ends its loop, without a read; the descriptor's
// number, which the next connection is likely to get, starts only that connection's reader.
func TestClosingAWatchedConnectionEndsItAndItsDescriptorIsForgotten(t *testing.T) {
	w := newTestWatcher(t)
	a := watchLoopback(t, w)
	fd := a.c.sysfd
	_ = a.c.Close()
	a.wantEnded(t)
	// Readiness under its id, taken from the epoll set before the close, is ignored.
	w.mu.Lock()
	stale := w.ready(a.c.watch.id)
	w.mu.Unlock()
	if stale != nil {
		t.Fatal("readiness of a closed connection would start its reader")
	}
	b := watchLoopback(t, w)
	if b.c.sysfd != fd {
		t.Logf("the descriptor %d was not reused (%d)", fd, b.c.sysfd)
	}
	_, _ = a.peer.Write([]byte("stale"))
	_, _ = b.peer.Write([]byte("fresh"))
	b.wantRead(t, "fresh")
	if n := a.reads.Load(); n != 0 {
		t.Fatalf("the closed connection was read %d times", n)
	}
	wantLetGo(t, w, a.c)
}

// A connection closed as something arrives on it ends once, whichever comes first: its reader
// starts at most once, and the watcher lets it go.
func TestAConnectionClosedAsItBecomesReadableEndsOnce(t *testing.T) {
	w := newTestWatcher(t)
	for range 200 {
		x := watchLoopback(t, w)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); _, _ = x.peer.Write([]byte("x")) }()
		go func() { defer wg.Done(); _ = x.c.Close() }()
		wg.Wait()
		x.wantEnded(t)
		if n := x.reads.Load(); n > 1 {
			t.Fatalf("read %d times, want once at most", n)
		}
		wantLetGo(t, w, x.c)
		x.peer.Close()
	}
}

// Closing the watcher with many connections waiting starts all their readers, which wait on
// their own from then on; once the connections end, no goroutine is left.
func TestClosingTheWatcherHandsEveryConnectionBackToItsReader(t *testing.T) {
	w := newTestWatcher(t)
	const n = 500
	before := runtime.NumGoroutine()
	xs := make([]*watched, n)
	for i := range xs {
		xs[i] = watchLoopback(t, w)
	}
	if grew := runtime.NumGoroutine() - before; grew > 2 {
		t.Fatalf("%d idle connections hold %d goroutines, want the watcher's alone", n, grew)
	}
	w.Close()
	for _, x := range xs {
		if _, err := x.peer.Write([]byte("after")); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range xs {
		x.wantRead(t, "after")
		x.peer.Close()
	}
	for _, x := range xs {
		x.wantEnded(t)
		_ = x.c.Close()
	}
}

// The watcher's goroutine and descriptors last only while it watches connections.
func TestTheWatcherRunsOnlyWhileItWatches(t *testing.T) {
	w := newTestWatcher(t)
	for range 3 {
		x := watchLoopback(t, w)
		_ = x.c.Close()
		x.wantEnded(t)
		deadline := time.Now().Add(5 * time.Second)
		for {
			w.mu.Lock()
			running := w.running
			w.mu.Unlock()
			if !running {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the watcher runs with nothing to watch")
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// A read deadline set while the watcher waits, or while the reader reads, ends the connection
// when it passes (Wake): its reader waits itself from then on.
func TestAReadDeadlineEndsAWatchedConnection(t *testing.T) {
	w := newTestWatcher(t)
	deadline := func(c *Conn) {
		c.LockWrite()
		_ = c.NetConn().SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		c.Wake()
		c.UnlockWrite()
	}
	t.Run("waiting", func(t *testing.T) {
		x := watchLoopback(t, w)
		deadline(x.c)
		x.wantEnded(t)
	})
	t.Run("before the loop", func(t *testing.T) {
		c, _ := loopback(t, time.Second)
		deadline(c)
		ended := make(chan struct{})
		go c.ReadLoop(w, func() bool { return true }, func() bool { return true }, func() { close(ended) })
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatal("the loop did not end")
		}
	})
	t.Run("reading", func(t *testing.T) {
		x := watchLoopback(t, w)
		x.onRead = func() { deadline(x.c) }
		_, _ = x.peer.Write([]byte("one"))
		x.wantRead(t, "one")
		x.wantEnded(t)
	})
}

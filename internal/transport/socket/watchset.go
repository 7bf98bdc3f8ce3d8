package socket

import "sync"

// Watcher waits, on one goroutine of its own, for idle connections to become readable, so that
// an idle connection holds no goroutine: its reader starts when something arrives, reads until
// it would wait again, hands the connection back and ends. Where the system offers no way to
// do so (see canWatch), or once the watcher is closed, each connection's reader waits on a
// goroutine of its own, as it always may. The goroutine, and what the system holds for it, run
// only while connections are watched.
type Watcher struct {
	mu      sync.Mutex
	stopped bool
	// watched are the connections the system's poller holds, by the id their readiness comes
	// under: a descriptor's number is reused once it is closed, an id never.
	watched map[uint64]*Conn
	lastID  uint64
	poller  // the system's part, guarded by mu
}

// NewWatcher returns a watcher with no connections; it starts its goroutine when it is given
// the first, and must be closed.
func NewWatcher() *Watcher { return &Watcher{watched: map[uint64]*Conn{}} }

// watch is a connection's part of its watcher's state, guarded by the watcher's mu.
type watch struct {
	w *Watcher // set once, under the write lock, before the first wait
	// resume reads on from where the connection went idle, on a goroutine of its own; woken
	// says that it is readable, so the first read does not wait.
	resume func(woken bool)
	id     uint64
	// registered is set while the poller holds the descriptor; armed while it waits on it for
	// the reader.
	registered, armed bool
	// released is set once the connection closes, or its reader is woken to wait itself (a
	// read deadline that only a waiting reader notices applies): it is never watched again.
	released bool
}

// arm waits on c for its reader, and reports whether it does.
func (w *Watcher) arm(c *Conn) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || c.watch.released || !w.start() {
		return false
	}
	c.waiting.Store(true)
	var err error
	if c.watch.registered {
		err = w.rearm(c.sysfd, c.watch.id)
	} else {
		w.lastID++
		c.watch.id = w.lastID
		if err = w.add(c.sysfd, c.watch.id); err == nil {
			c.watch.registered = true
			w.watched[c.watch.id] = c
		}
	}
	if err != nil {
		c.waiting.Store(false)
		return false
	}
	c.watch.armed = true
	return true
}

// ready takes the connection whose readiness came under id, when it waits for its reader;
// called with mu held. A connection closed since, or woken already, is not.
func (w *Watcher) ready(id uint64) *Conn {
	c := w.watched[id]
	if c == nil || !c.watch.armed {
		return nil
	}
	c.watch.armed = false
	return c
}

// wake starts c's reader if w waits on c for it, and lets its reader wait itself from now on;
// forget also lets c go: called by Close, with c's write lock held and before the descriptor
// is closed, so that the poller never holds a number the kernel may give to another
// connection.
func (w *Watcher) wake(c *Conn, forget bool) {
	w.mu.Lock()
	armed := c.watch.armed
	c.watch.armed = false
	c.watch.released = true
	if forget && c.watch.registered {
		c.watch.registered = false
		delete(w.watched, c.watch.id)
		if !w.stopped {
			w.remove(c.sysfd)
			if len(w.watched) == 0 {
				w.nudge() // nothing left to watch: the goroutine ends
			}
		}
	}
	w.mu.Unlock()
	if armed {
		startReader(c, false)
	}
}

// startReader starts c's reader, which the watcher waited for: to read, when woken says c is
// readable, or else to wait itself.
func startReader(c *Conn, woken bool) {
	c.waiting.Store(false)
	go c.watch.resume(woken)
}

// Close stops watching: the readers of the connections watched start, and wait on goroutines
// of their own from now on. It returns once the watcher's goroutine has ended.
func (w *Watcher) Close() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.stopped = true
	var woken []*Conn
	for _, c := range w.watched {
		if c.watch.armed {
			c.watch.armed = false
			woken = append(woken, c)
		}
	}
	ended := w.nudge()
	w.mu.Unlock()
	for _, c := range woken {
		startReader(c, false)
	}
	if ended != nil {
		<-ended
	}
}

// start makes sure the goroutine runs; called with mu held.
func (w *Watcher) start() bool {
	if w.running {
		return true
	}
	p, err := openPoller()
	if err != nil {
		return false // each connection's reader waits on its own
	}
	w.poller = p
	go w.run(p)
	return true
}

// run waits on p and starts the readers of the connections that became readable, until the
// watcher is closed or watches nothing.
func (w *Watcher) run(p poller) {
	var events pollEvents
	var ids [len(events)]uint64
	var ready [len(events)]*Conn
	for {
		n, err := p.wait(events[:], ids[:])
		w.mu.Lock()
		k := 0
		for _, id := range ids[:n] {
			if c := w.ready(id); c != nil {
				ready[k] = c
				k++
			}
		}
		var failed []*Conn
		if err != nil {
			// The poller failed (it never should): the connections wait on goroutines of
			// their own from now on.
			w.stopped = true
			for _, c := range w.watched {
				if c.watch.armed {
					c.watch.armed = false
					failed = append(failed, c)
				}
			}
		}
		done := w.stopped || len(w.watched) == 0
		if done {
			w.poller = poller{}
			p.close()
		}
		w.mu.Unlock()
		for i, c := range ready[:k] {
			startReader(c, true)
			ready[i] = nil
		}
		for _, c := range failed {
			startReader(c, false)
		}
		if done {
			close(p.ended)
			return
		}
	}
}

package socket

// ReadLoop reads c until it ends: while idle reports that reading would wait, it waits for c
// to become readable; read then reads what arrived, and reports whether to go on; end is
// called once, at the end. With a watcher (w not nil) the waits are w's, and ReadLoop returns
// as soon as c first waits: each read runs on a goroutine of its own, and c holds none while
// idle. Without one, or where the system cannot watch, ReadLoop waits on the caller's
// goroutine, and reads on a fresh stack (OnFreshStack).
func (c *Conn) ReadLoop(w *Watcher, idle, read func() bool, end func()) {
	if w == nil || !canWatch || c.raw == nil {
		for (!idle() || c.WaitReadable() == nil) && readOnFreshStack(read) {
		}
		end()
		return
	}
	c.writeMu.Lock()
	waitsItself := c.wakeful // a read deadline is set already
	if !waitsItself {
		c.watch.w = w
		c.watch.resume = func(woken bool) { c.readOn(woken, idle, read, end) }
	}
	c.writeMu.Unlock()
	if waitsItself {
		c.ReadLoop(nil, idle, read, end)
		return
	}
	c.readOn(false, idle, read, end)
}

// readOnFreshStack calls read on a goroutine of its own (see OnFreshStack).
func readOnFreshStack(read func() bool) (goOn bool) {
	OnFreshStack(func() { goOn = read() })
	return goOn
}

// readOn reads until c would wait, then hands it to the watcher; when the watcher cannot take
// it (c is closing, or the watcher is closed) it waits here. woken says that the watcher saw c
// readable: the first read does not wait.
func (c *Conn) readOn(woken bool, idle, read func() bool, end func()) {
	for ; ; woken = false {
		if !woken && idle() {
			if c.watch.w.arm(c) {
				return
			}
			if c.WaitReadable() != nil {
				break
			}
		}
		if !read() {
			break
		}
	}
	end()
}

// Wake has c's reader wait itself from now on, starting it now if the watcher waits on c for
// it: a read deadline was just set, which only a waiting reader notices. Called with the write
// lock held.
func (c *Conn) Wake() {
	c.wakeful = true
	if c.watch.w != nil {
		c.watch.w.wake(c, false)
	}
}

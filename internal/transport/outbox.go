package transport

import "sync"

// outbox is what one connection has to write, in order. Whoever produces a message queues it
// without waiting; kick has it written, by one writer at a time that runs only while there is
// something to write, so an idle connection holds no writer and no queue. What queues up while
// a write is under way goes out in the writer's next batch.
type outbox struct {
	kick func() // starts, or wakes, the connection's writer

	mu     sync.Mutex
	items  []outItem
	spare  []outItem // the last batch's array, reused while the connection is busy
	busy   bool      // a writer has been kicked and has not found the queue empty since
	closed bool
}

// outItem is one message: bytes made for this connection, or a member's result, which the
// writer frames for it; or a whole frame (a WebSocket control frame).
type outItem struct {
	msg   []byte
	frame []byte
	m     *member
	res   *result
	// then runs once the item is written, such as closing the socket after a last word.
	then func()
}

// push queues it, and reports false when the connection is closed.
func (o *outbox) push(it outItem) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return false
	}
	o.append(it)
	return true
}

// append queues it, and has it written; called with o.mu held, which it releases.
func (o *outbox) append(it outItem) {
	o.items = append(o.items, it)
	kick := !o.busy
	o.busy = true
	o.mu.Unlock()
	if kick {
		o.kick()
	}
}

// pushResult queues one of m's results, unless m already has limit waiting to be written: it
// reports false then, and the caller ends m as a slow consumer. A closed connection takes
// anything, to drop it: its members are leaving.
func (o *outbox) pushResult(m *member, r *result, limit int) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return true
	}
	if m.pending >= limit {
		o.mu.Unlock()
		return false
	}
	m.pending++
	o.append(outItem{m: m, res: r})
	return true
}

// take returns what is waiting to be written, or nil once nothing is, when the writer stops;
// the queue's memory is let go with it.
func (o *outbox) take() []outItem {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.items) == 0 || o.closed {
		o.busy = false
		o.items, o.spare = nil, nil
		return nil
	}
	batch := o.items
	o.items, o.spare = o.spare, nil
	return batch
}

// written returns a batch that take gave, once it is written.
func (o *outbox) written(batch []outItem) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, it := range batch {
		if it.m != nil {
			it.m.pending--
		}
	}
	clear(batch)
	if !o.closed {
		o.spare = batch[:0]
	}
}

// close drops what is waiting and refuses more: the connection is gone.
func (o *outbox) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	o.items, o.spare = nil, nil
}

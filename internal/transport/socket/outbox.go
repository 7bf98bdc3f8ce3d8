package socket

import "sync"

// Outbox is what one connection has to write, in order. Whoever produces a message queues it
// without waiting; kick has it written, by one writer at a time that runs only while there is
// something to write, so an idle connection holds no writer and no queue. What queues up while
// a write is under way goes out in the writer's next batch. R is a result shared among
// connections, which the connection's writer frames for it.
type Outbox[R any] struct {
	// kick starts, or wakes, the connection's writer: a Writer itself (Writer.Init), with no
	// closure between whose memory would be one more cache line to fetch for each delivery to
	// an idle connection, or what SetKick was given.
	kick kicker
	free *ItemArrays[R] // where an idle connection's queue comes from and goes back to; nil for none

	mu     sync.Mutex
	items  []Item[R]
	spare  []Item[R] // the last batch's array, reused while the connection is busy
	busy   bool      // a writer has been kicked and has not found the queue empty since
	closed bool
	// resulted is set when a result is queued, and cleared by HadResults: a keep-alive has
	// nothing to do on a connection that results keep busy.
	resulted bool
}

// Item is one thing to write: bytes made for this connection, a shared result, which the
// writer frames for the connection, or a whole frame (a WebSocket control frame, the chunked
// encoding's last chunk).
type Item[R any] struct {
	Msg []byte
	// Frame is a whole frame; for a result, the result already framed (PushFramed), or nil.
	Frame []byte
	// Res is a result queued with PushResult; IsResult tells whether the item is one.
	Res R
	// Then runs once the item is written, such as closing the socket after a last word.
	Then func()
	// quota is the share of the queue the result counts against; nil for what is not one.
	quota *Quota
}

// IsResult reports whether it is a result queued with PushResult.
func (it *Item[R]) IsResult() bool { return it.quota != nil }

// Quota counts one producer's results queued on a connection and not yet written (one
// subscription's), so that a producer that outpaces its client is stopped alone. It is guarded
// by the outbox it is used with.
type Quota struct{ pending int }

// kicker has an outbox written.
type kicker interface{ kick() }

// kickFunc is a func that has an outbox written.
type kickFunc func()

func (f kickFunc) kick() { f() }

// SetKick sets what has the outbox written, before anything is queued.
func (o *Outbox[R]) SetKick(kick func()) { o.kick = kickFunc(kick) }

// ShareArrays has the outbox take its queue's array from free when the connection becomes busy,
// and give it back when the connection is idle again; set before anything is queued.
func (o *Outbox[R]) ShareArrays(free *ItemArrays[R]) { o.free = free }

// ItemArrays are small queues that idle connections give back and busy ones take: most
// deliveries find their connection idle, and each would otherwise allocate its queue, to let it
// go once written. Its zero value is ready for use, by any number of outboxes.
type ItemArrays[R any] struct{ pool sync.Pool }

// sharedQueueLen is the length of a shared queue: a delivery or two, a keep-alive.
const sharedQueueLen = 4

func (a *ItemArrays[R]) get() []Item[R] {
	if arr, ok := a.pool.Get().(*[sharedQueueLen]Item[R]); ok {
		return arr[:0]
	}
	return make([]Item[R], 0, sharedQueueLen)
}

// put gives back a cleared array of the shared length; others are let go.
func (a *ItemArrays[R]) put(items []Item[R]) {
	if cap(items) == sharedQueueLen {
		a.pool.Put((*[sharedQueueLen]Item[R])(items[:sharedQueueLen]))
	}
}

// Push queues it, and reports false when the connection is closed.
func (o *Outbox[R]) Push(it Item[R]) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return false
	}
	o.append(it)
	return true
}

// append queues it, and has it written; called with o.mu held, which it releases.
func (o *Outbox[R]) append(it Item[R]) {
	if o.items == nil && o.free != nil {
		o.items = o.free.get()
	}
	o.items = append(o.items, it)
	kick := !o.busy
	o.busy = true
	o.mu.Unlock()
	if kick {
		o.kick.kick()
	}
}

// PushResult queues r against q, unless q already has limit waiting to be written: it reports
// false then, and the caller ends q's producer as a slow consumer. A closed connection takes
// anything, to drop it: its producers are leaving.
func (o *Outbox[R]) PushResult(q *Quota, r R, limit int) bool {
	return o.PushFramed(q, r, nil, limit)
}

// PushFramed is PushResult for a result already framed for this connection, as frame (nil: the
// writer frames it): bytes shared with other connections, never to be modified. A batch of it
// alone is written from those bytes (Framer.Whole).
func (o *Outbox[R]) PushFramed(q *Quota, r R, frame []byte, limit int) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return true
	}
	if q.pending >= limit {
		o.mu.Unlock()
		return false
	}
	q.pending++
	o.resulted = true
	o.append(Item[R]{Res: r, Frame: frame, quota: q})
	return true
}

// HadResults reports whether a result was queued since its last call (or since the outbox
// began), and starts over.
func (o *Outbox[R]) HadResults() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	had := o.resulted
	o.resulted = false
	return had
}

// Take returns what is waiting to be written, or nil once nothing is, when the writer stops;
// the queue's memory is let go with it.
func (o *Outbox[R]) Take() []Item[R] {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.take()
}

// take is Take's, with o.mu held.
func (o *Outbox[R]) take() []Item[R] {
	if len(o.items) == 0 || o.closed {
		o.busy = false
		if o.free != nil && !o.closed {
			// Both are empty and cleared (Written clears what it returns).
			o.free.put(o.items)
			o.free.put(o.spare)
		}
		o.items, o.spare = nil, nil
		return nil
	}
	batch := o.items
	o.items, o.spare = o.spare, nil
	return batch
}

// Written returns a batch that Take gave, once it is written.
func (o *Outbox[R]) Written(batch []Item[R]) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.written(batch)
}

// WrittenTake is Written, then Take, under one lock: a writer does both for every batch.
func (o *Outbox[R]) WrittenTake(batch []Item[R]) []Item[R] {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.written(batch)
	return o.take()
}

// written is Written's, with o.mu held.
func (o *Outbox[R]) written(batch []Item[R]) {
	for _, it := range batch {
		if it.quota != nil {
			it.quota.pending--
		}
	}
	clear(batch)
	if !o.closed {
		o.spare = batch[:0]
	}
}

// Close drops what is waiting and refuses more: the connection is gone.
func (o *Outbox[R]) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	o.items, o.spare = nil, nil
}

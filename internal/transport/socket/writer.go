package socket

import (
	"runtime"
	"sync"
)

// Writers write the connections' outboxes. A connection with something queued is scheduled;
// a few pooled goroutines take the scheduled connections in turn and write what each holds
// without ever waiting on a socket, so a delivery costs its system call and no goroutine, timer
// or stack of its own. A socket whose buffer is full is handed to a goroutine of its
// connection's, which may wait (within its write timeout): a slow client holds up nobody else.
// The pooled goroutines exist while there is work and end when there is none.
type Writers struct {
	max int

	mu     sync.Mutex
	ready  []flusher
	next   int // the first ready writer not yet taken
	active int
}

// flusher is one connection's Writer, whatever its results.
type flusher interface{ flush(mayBlock bool) }

// NewWriters returns a pool of as many writers as there are processors, twice over.
func NewWriters() *Writers { return &Writers{max: 2 * runtime.GOMAXPROCS(0)} }

func (w *Writers) schedule(cw flusher) {
	w.mu.Lock()
	w.ready = append(w.ready, cw)
	start := w.active < w.max
	if start {
		w.active++
	}
	w.mu.Unlock()
	if start {
		go w.run()
	}
}

// run writes scheduled connections until none is left, taking a few at a time: the pool's lock
// is shared by every writer and by whoever schedules, once per delivery.
func (w *Writers) run() {
	var mine [takeAtOnce]flusher
	for {
		w.mu.Lock()
		n := copy(mine[:], w.ready[w.next:])
		if n == 0 {
			w.ready, w.next = w.ready[:0], 0
			w.active--
			w.mu.Unlock()
			return
		}
		clear(w.ready[w.next : w.next+n])
		w.next += n
		w.mu.Unlock()
		for i, cw := range mine[:n] {
			cw.flush(false)
			mine[i] = nil
		}
	}
}

// takeAtOnce is how many scheduled connections a writer takes at once.
const takeAtOnce = 8

// Writer writes one connection's outbox to its socket, through the pool.
type Writer[R any] struct {
	conn  *Conn
	out   *Outbox[R]
	pool  *Writers
	proto Framer[R]
	// wg tracks the connection's goroutines, among them one that writes to a full socket.
	wg *sync.WaitGroup
}

// Framer is the protocol spoken on a connection that a Writer writes. (An interface rather
// than three funcs: each func would be an allocation for each of tens of thousands of
// connections.)
type Framer[R any] interface {
	// Frame appends the batch, framed as the protocol has it, to buf; it returns what to run
	// once the batch is written.
	Frame(buf []byte, batch []Item[R]) ([]byte, []func())
	// Whole returns the bytes to write for a batch of one item that needs no framing for this
	// connection (a result it was queued framed, PushFramed), and true; nil and true when that
	// item is not to be written after all; false for any other batch, which Frame frames. The
	// bytes are written as they are, without being copied.
	Whole(batch []Item[R]) ([]byte, bool)
	// WriteClosed reports whether nothing may be written any more; asked with the write lock
	// held.
	WriteClosed() bool
	// WriteFailed ends the connection after a write failed.
	WriteFailed()
}

// Init has pool write out to conn through cw, each batch framed by proto, before anything is
// queued; a write that waits runs on a goroutine that wg tracks. It is a method so
// that a connection can hold its writer by value, beside its outbox: each delivery to an idle
// connection touches both, from two goroutines, and tens of thousands of connections' worth of
// them is more than the processor's caches hold.
func (cw *Writer[R]) Init(conn *Conn, out *Outbox[R], pool *Writers, proto Framer[R], wg *sync.WaitGroup) {
	*cw = Writer[R]{conn: conn, out: out, pool: pool, proto: proto, wg: wg}
	out.kick = cw
}

// kick is the outbox's: it schedules the connection.
func (cw *Writer[R]) kick() { cw.pool.schedule(cw) }

// flush writes batches until the outbox is empty. Without mayBlock it writes only what the
// socket takes at once, and hands the rest to a goroutine of the connection's, which goes on
// with mayBlock.
func (cw *Writer[R]) flush(mayBlock bool) { cw.write(cw.out.Take(), mayBlock) }

// write writes batch, and the batches that follow it, as flush.
func (cw *Writer[R]) write(batch []Item[R], mayBlock bool) {
	for batch != nil {
		// Most deliveries find their connection idle: one result, framed already, is written
		// from the bytes every connection shares, with no buffer to copy it into.
		var bp *[]byte
		var thens []func()
		buf, whole := cw.proto.Whole(batch)
		if !whole {
			bp = writeBuffers.Get().(*[]byte)
			buf, thens = cw.proto.Frame((*bp)[:0], batch)
		}
		cw.conn.LockWrite()
		if cw.proto.WriteClosed() {
			cw.conn.UnlockWrite()
			batch = cw.done(bp, buf, batch, nil, nil)
			continue
		}
		n := 0
		var err error
		if !mayBlock {
			n, err = cw.conn.WriteNow(buf)
		}
		if err == nil && n < len(buf) {
			if !mayBlock {
				// The lock goes with the rest: nothing may come between the two parts. (The
				// batch is copied for the goroutine: captured, the loop's variable would be
				// moved to the heap for every batch.)
				rest := batch
				cw.wg.Go(func() {
					err := cw.conn.WriteWaiting(buf[n:])
					cw.conn.UnlockWrite()
					cw.write(cw.done(bp, buf, rest, thens, err), true)
				})
				return
			}
			err = cw.conn.WriteWaiting(buf[n:])
		}
		cw.conn.UnlockWrite()
		batch = cw.done(bp, buf, batch, thens, err)
	}
}

// done returns a written batch and its buffer (bp, nil for bytes Whole gave), runs what follows
// it, and returns the next batch to write; nil when there is none, or when the connection is
// over.
func (cw *Writer[R]) done(bp *[]byte, buf []byte, batch []Item[R], thens []func(), err error) []Item[R] {
	if bp != nil && cap(buf) <= maxPooledWrite {
		*bp = buf[:0]
		writeBuffers.Put(bp)
	}
	if err != nil {
		cw.out.Written(batch)
		cw.out.Close()
		cw.proto.WriteFailed()
		return nil
	}
	for _, then := range thens {
		then()
	}
	return cw.out.WrittenTake(batch)
}

// writeBuffers hold the frames of one batch.
var writeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledWrite is the largest buffer kept for reuse.
const maxPooledWrite = 64 << 10

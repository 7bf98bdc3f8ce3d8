package transport

import (
	"runtime"
	"sync"
)

// writers write the connections' outboxes. A connection with something queued is scheduled;
// a few pooled goroutines take the scheduled connections in turn and write what each holds
// without ever waiting on a socket, so a delivery costs its system call and no goroutine, timer
// or stack of its own. A socket whose buffer is full is handed to a goroutine of its
// connection's, which may wait (within writeTimeout): a slow client holds up nobody else. The
// pooled goroutines exist while there is work and end when there is none.
type writers struct {
	max int

	mu     sync.Mutex
	ready  []*connWriter
	next   int // the first ready writer not yet taken
	active int
}

func newWriters() *writers { return &writers{max: 2 * runtime.GOMAXPROCS(0)} }

func (w *writers) schedule(cw *connWriter) {
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

// run writes scheduled connections until none is left.
func (w *writers) run() {
	for {
		w.mu.Lock()
		if w.next == len(w.ready) {
			w.ready, w.next = w.ready[:0], 0
			w.active--
			w.mu.Unlock()
			return
		}
		cw := w.ready[w.next]
		w.ready[w.next] = nil
		w.next++
		w.mu.Unlock()
		cw.flush(false)
	}
}

// connWriter writes one connection's outbox to its socket.
type connWriter struct {
	sock *socket
	out  *outbox
	pool *writers
	// frame appends the batch, framed as the connection's protocol has it, to buf; it returns
	// what to run once the batch is written.
	frame func(buf []byte, batch []outItem) ([]byte, []func())
	// closed reports whether nothing may be written any more; asked with the write lock held.
	closed func() bool
	// wg tracks the connection's goroutines, among them one that writes to a full socket.
	wg *sync.WaitGroup
	// fail ends the connection after a write failed.
	fail func()
}

// kick is the outbox's: it schedules the connection.
func (cw *connWriter) kick() { cw.pool.schedule(cw) }

// flush writes batches until the outbox is empty. Without mayBlock it writes only what the
// socket takes at once, and hands the rest to a goroutine of the connection's, which goes on
// with mayBlock.
func (cw *connWriter) flush(mayBlock bool) {
	for {
		batch := cw.out.take()
		if batch == nil {
			return
		}
		bp := writeBuffers.Get().(*[]byte)
		buf, thens := cw.frame((*bp)[:0], batch)
		cw.sock.writeMu.Lock()
		if cw.closed() {
			cw.sock.writeMu.Unlock()
			cw.done(bp, buf, batch, nil, nil)
			continue
		}
		n := 0
		var err error
		if !mayBlock {
			n, err = cw.sock.writeNow(buf)
		}
		if err == nil && n < len(buf) {
			if !mayBlock {
				// The lock goes with the rest: nothing may come between the two parts.
				cw.wg.Go(func() {
					err := cw.sock.writeWaiting(buf[n:])
					cw.sock.writeMu.Unlock()
					if cw.done(bp, buf, batch, thens, err) {
						cw.flush(true)
					}
				})
				return
			}
			err = cw.sock.writeWaiting(buf[n:])
		}
		cw.sock.writeMu.Unlock()
		if !cw.done(bp, buf, batch, thens, err) {
			return
		}
	}
}

// done returns a written batch and its buffer, and runs what follows it; it reports whether the
// connection goes on.
func (cw *connWriter) done(bp *[]byte, buf []byte, batch []outItem, thens []func(), err error) bool {
	if cap(buf) <= maxPooledWrite {
		*bp = buf[:0]
		writeBuffers.Put(bp)
	}
	cw.out.written(batch)
	if err != nil {
		cw.out.close()
		cw.fail()
		return false
	}
	for _, then := range thens {
		then()
	}
	return true
}

// writeBuffers hold the frames of one batch.
var writeBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledWrite is the largest buffer kept for reuse.
const maxPooledWrite = 64 << 10

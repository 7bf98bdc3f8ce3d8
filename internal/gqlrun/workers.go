package gqlrun

import (
	"context"
	"sync"
	"sync/atomic"
)

// Workers run the concurrent fields of objects (FieldSet.Dispatch) on goroutines kept from one
// field to the next. A new goroutine starts with a small stack, and a field that writes a long
// list grows it, copying it each time it doubles: a fiftieth of a 20-contact family query. A
// kept goroutine has grown it already. At most maxIdle wait for work; the others end when
// their field is resolved. The zero value is not usable: use NewWorkers.
type Workers struct {
	tasks   chan func()
	stopped chan struct{}
	stop    sync.Once
	idle    atomic.Int32
}

// maxIdle bounds the goroutines kept waiting: as many as fields resolved at once, at the most.
const maxIdle = 64

// NewWorkers returns workers with none kept yet.
func NewWorkers() *Workers {
	return &Workers{tasks: make(chan func()), stopped: make(chan struct{})}
}

// Go runs f on a waiting goroutine, or on a new one when none waits.
func (w *Workers) Go(f func()) {
	select {
	case w.tasks <- f: // taken by a waiting goroutine
	default:
		go w.work(f)
	}
}

func (w *Workers) work(f func()) {
	for {
		f()
		if w.idle.Add(1) > maxIdle {
			w.idle.Add(-1)
			return
		}
		select {
		case f = <-w.tasks:
			w.idle.Add(-1)
		case <-w.stopped:
			w.idle.Add(-1)
			return
		}
	}
}

// Close ends the waiting goroutines and has the others end once their field is resolved. It
// returns at once; fields given to Go after it still run, each on a goroutine that then ends.
func (w *Workers) Close() {
	w.stop.Do(func() { close(w.stopped) })
}

type workersKey struct{}

// WithWorkers has the concurrent fields of the executions within ctx run by w.
func WithWorkers(ctx context.Context, w *Workers) context.Context {
	return context.WithValue(ctx, workersKey{}, w)
}

func workersOf(ctx context.Context) *Workers {
	w, _ := ctx.Value(workersKey{}).(*Workers)
	return w
}

package gqlrun

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/99designs/gqlgen/graphql"
)

// FieldSet is one object of a response: graphql.FieldSet without what an object costs there
// beyond its fields. gqlgen's allocates its values apart from itself, and a map, two closures
// and a copy of every field each time it is written; a family query writes 3,500 objects.
// Deferred fields keep gqlgen's field set, which its incremental delivery needs.
type FieldSet struct {
	// fields are the object's fields as it writes them (see written).
	fields []graphql.CollectedField
	// Values are the fields' values, in fields' order, as the executor resolves them.
	Values []graphql.Marshaler
	// Invalids counts the fields whose null makes the whole object null.
	Invalids uint32
	// delayed are the fields Dispatch resolves: an object's that does I/O, few of them.
	delayed *[]delayed
}

type delayed struct {
	i int
	f func(context.Context, *Lane) graphql.Marshaler
}

// NewFieldSet is an object with the fields CollectFields gave for it.
func NewFieldSet(fields []graphql.CollectedField) *FieldSet {
	fields = written(fields)
	return &FieldSet{fields: fields, Values: make([]graphql.Marshaler, len(fields))}
}

// Chunks of the responses written, for the next ones: a family query of 200
// contacts allocated 450 KB of objects and their values before they were reused.
var setChunks, valueChunks, listChunks, strChunks sync.Pool

// chunks hands out elements of chunks of T, each of full size and from the pool when it has
// one, and keeps the chunks it handed out, for End to give back. Chunks that grew from 8 to
// full size were never given back by a response too small to reach full size: a 20-contact
// family query allocated a sixth of its bytes in them, every time.
type chunks[T any] struct {
	free []T
	full []*[]T
}

// chunkPool is where chunks go once a response is written: a *sync.Pool.
type chunkPool interface {
	Get() any
	Put(any)
}

// take is n zeroed elements, of a chunk of size elements, from pool when it has one.
func (c *chunks[T]) take(n, size int, pool chunkPool) []T {
	if n == 0 {
		return nil
	}
	if len(c.free) < n {
		if n > size/4 {
			return make([]T, n) // a long list: as long as a chunk would be
		}
		p, _ := pool.Get().(*[]T)
		if p == nil {
			chunk := make([]T, size)
			p = &chunk
		}
		c.free = *p
		c.full = append(c.full, p)
	}
	taken := c.free[:n:n]
	if c.free = c.free[n:]; len(c.free) == 0 {
		c.free = nil
	}
	return taken
}

// reset lets the chunk being taken from go, and gives pool the chunks if keep. Only what was
// handed out is cleared: a small response uses little of its one chunk.
func (c *chunks[T]) reset(keep bool, pool chunkPool) {
	if keep {
		for i, p := range c.full {
			used := *p
			if i == len(c.full)-1 {
				used = used[:len(used)-len(c.free)] // the chunk being taken from
			}
			clear(used) // nothing of this response is kept alive by the pool
			pool.Put(p)
		}
	}
	*c = chunks[T]{}
}

// End says the response is written: the rest of the lanes' chunks is let go, so that an idle
// subscription holds nothing of its last event, and the guard sees the last charges. The
// chunks go to the next responses, unless a field was deferred: its fragment is resolved and
// written after this response, and holds objects of it. It is called on the root lane, once
// the lanes forked for the response have been joined; a deferred fragment's, which may still
// run, keep theirs until the End after they are.
func (l *Lane) End() {
	s := l.s
	l.flush()
	if s.sizes != nil {
		s.sizes.note(l.fields.n, l.io.n)
	}
	// A query's deferred fragments are written after it, each sized by what was charged since.
	s.size.Store(0)
	s.forwarded.Store(0)
	s.mu.Lock()
	keep := !s.deferred
	l.reset(keep)
	for _, f := range s.idle {
		f.reset(keep)
	}
	s.mu.Unlock()
}

// Concurrently has Dispatch resolve field i with f, on the lane Dispatch gives it.
func (m *FieldSet) Concurrently(i int, f func(context.Context, *Lane) graphql.Marshaler) {
	if m.delayed == nil {
		m.delayed = new([]delayed)
	}
	*m.delayed = append(*m.delayed, delayed{i, f})
}

// Dispatch resolves the fields given to Concurrently and returns when all are resolved: the
// first on this goroutine and lane, the others each on one of its own and a forked lane, as
// gqlgen does, or of the Workers of ctx (WithWorkers) when it has them.
func (m *FieldSet) Dispatch(ctx context.Context, l *Lane) {
	if m.delayed == nil {
		return
	}
	ds := *m.delayed
	m.delayed = nil // the closures are of no use once they have run
	switch len(ds) {
	case 0:
		return
	case 1:
		m.Values[ds[0].i] = ds[0].f(ctx, l)
		return
	}
	var wg sync.WaitGroup
	run := func(d delayed) {
		f := l.Fork()
		defer f.Join()
		m.Values[d.i] = d.f(ctx, f)
	}
	if w := workersOf(ctx); w != nil {
		wg.Add(len(ds) - 1)
		for _, d := range ds[1:] {
			w.Go(func() {
				defer wg.Done()
				run(d)
			})
		}
	} else {
		for _, d := range ds[1:] {
			wg.Go(func() { run(d) })
		}
	}
	m.Values[ds[0].i] = ds[0].f(ctx, l)
	wg.Wait()
}

// MarshalGQL writes the object. Field aliases are GraphQL names, which JSON needs no escapes
// for. A field whose alias an earlier field has is left out, as gqlgen leaves it out (see
// written); so is a deferred field: it comes in a later part. The executor writes to a
// bytes.Buffer, which is written to directly: io.WriteString's interface check, five times a
// field, cost more than the copying.
func (m *FieldSet) MarshalGQL(w io.Writer) {
	b, ok := w.(*bytes.Buffer)
	if !ok {
		b = &bytes.Buffer{}
		defer func() { w.Write(b.Bytes()) }()
	}
	b.WriteByte('{')
	first := true
	for i := range m.fields {
		v := m.Values[i]
		if v == Deferred || m.fields[i].Field == nil {
			continue
		}
		// The key in one write: three per field were a tenth of the writing.
		key := b.AvailableBuffer()
		if !first {
			key = append(key, ',')
		}
		first = false
		key = append(append(append(key, '"'), m.fields[i].Alias...), '"', ':')
		b.Write(key)
		if v != nil {
			v.MarshalGQL(b)
		} else {
			b.WriteString("null")
		}
	}
	b.WriteByte('}')
}

// Deferred is the value of a field whose fragment is deferred: the object is written without
// it, and the field arrives in a later part of the response, as incremental delivery has it.
var Deferred graphql.Marshaler = deferredField{}

type deferredField struct{}

func (deferredField) MarshalGQL(w io.Writer) { io.WriteString(w, "null") }

type placeholdersKey struct{}

// WithDeferredPlaceholders has the responses resolved within ctx write a deferred field as null
// in its place, for a transport that merges the later parts into the first: the merged object
// then has its fields in the order the operation selected them.
func WithDeferredPlaceholders(ctx context.Context) context.Context {
	return context.WithValue(ctx, placeholdersKey{}, true)
}

// DeferredField is what the executor puts in place of a deferred field in the response being
// resolved.
func (l *Lane) DeferredField() graphql.Marshaler {
	s := l.s
	s.mu.Lock()
	s.deferred = true
	s.mu.Unlock()
	if s.placeholders {
		return graphql.Null
	}
	return Deferred
}

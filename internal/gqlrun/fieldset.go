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
	f func(context.Context) graphql.Marshaler
}

// NewFieldSet is an object with the fields CollectFields gave for it.
func NewFieldSet(fields []graphql.CollectedField) *FieldSet {
	fields = written(fields)
	return &FieldSet{fields: fields, Values: make([]graphql.Marshaler, len(fields))}
}

// maxChunk is how many field sets State.NewFieldSet allocates at once.
const maxChunk = 256

// NewFieldSet is an object with the fields CollectFields gave for it. The execution's objects
// are allocated in chunks of maxChunk, and so are their values, each object's as many as it has
// fields: a response's objects all live until it is written, so one allocation may as well hold
// many. Once it is written, End gives the chunks to the next responses.
func (s *State) NewFieldSet(fields []graphql.CollectedField) *FieldSet {
	s.mu.Lock()
	fs := &s.sets.take(1, maxChunk, &setChunks)[0]
	values := s.values.take(len(fields), 4*maxChunk, &valueChunks)
	s.mu.Unlock()
	if s.repeats {
		fields = written(fields)
	}
	fs.fields, fs.Values = fields, values
	return fs
}

// Array is a list's values, n of them, zeroed, from the chunk the objects' values come from.
func (s *State) Array(n int) graphql.Array {
	s.mu.Lock()
	values := s.values.take(n, 4*maxChunk, &valueChunks)
	s.mu.Unlock()
	return values
}

// List is a as a graphql.Marshaler, its slice header taken from a chunk: a slice in an
// interface is an allocation of its own.
func (s *State) List(a graphql.Array) graphql.Marshaler {
	s.mu.Lock()
	l := &s.lists.take(1, maxChunk/4, &listChunks)[0]
	s.mu.Unlock()
	*l = a
	return l
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

// End says the response is written: the rest of the chunk of field sets is let go, so that an
// idle subscription holds nothing of its last event, and the guard sees the last charges. The
// chunks go to the next responses, unless a field was deferred: its fragment is
// resolved and written after this response, and holds objects of it.
func (s *State) End() {
	s.forward(s.size.Load())
	if s.sizes != nil {
		s.mu.Lock()
		s.sizes.note(s.fields.n, s.io.n)
		s.mu.Unlock()
	}
	// A query's deferred fragments are written after it, each sized by what was charged since.
	s.size.Store(0)
	s.forwarded.Store(0)
	s.mu.Lock()
	keep := !s.deferred
	s.sets.reset(keep, &setChunks)
	s.values.reset(keep, &valueChunks)
	s.lists.reset(keep, &listChunks)
	s.strs.reset(keep, &strChunks)
	s.mu.Unlock()
}

// Concurrently has Dispatch resolve field i with f.
func (m *FieldSet) Concurrently(i int, f func(context.Context) graphql.Marshaler) {
	if m.delayed == nil {
		m.delayed = new([]delayed)
	}
	*m.delayed = append(*m.delayed, delayed{i, f})
}

// Dispatch resolves the fields given to Concurrently and returns when all are resolved: the
// first on this goroutine, the others each on one of its own, as gqlgen does, or of the
// Workers of ctx (WithWorkers) when it has them.
func (m *FieldSet) Dispatch(ctx context.Context) {
	if m.delayed == nil {
		return
	}
	ds := *m.delayed
	m.delayed = nil // the closures are of no use once they have run
	switch len(ds) {
	case 0:
		return
	case 1:
		m.Values[ds[0].i] = ds[0].f(ctx)
		return
	}
	var wg sync.WaitGroup
	if w := workersOf(ctx); w != nil {
		wg.Add(len(ds) - 1)
		for _, d := range ds[1:] {
			w.Go(func() {
				defer wg.Done()
				m.Values[d.i] = d.f(ctx)
			})
		}
	} else {
		for _, d := range ds[1:] {
			wg.Go(func() { m.Values[d.i] = d.f(ctx) })
		}
	}
	m.Values[ds[0].i] = ds[0].f(ctx)
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
func (s *State) DeferredField() graphql.Marshaler {
	s.mu.Lock()
	s.deferred = true
	s.mu.Unlock()
	if s.placeholders {
		return graphql.Null
	}
	return Deferred
}

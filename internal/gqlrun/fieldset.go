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
	delayed  []delayed
	// small holds the values of objects of few fields, most of them, in the same allocation.
	small [6]graphql.Marshaler
}

type delayed struct {
	i int
	f func(context.Context) graphql.Marshaler
}

// NewFieldSet is an object with the fields CollectFields gave for it.
func NewFieldSet(fields []graphql.CollectedField) *FieldSet {
	fs := &FieldSet{}
	fs.init(written(fields), nil)
	return fs
}

// init gives m its fields, and values (zeroed, as many) for their values when they are more
// than m holds itself; nil allocates them.
func (m *FieldSet) init(fields []graphql.CollectedField, values []graphql.Marshaler) {
	m.fields = fields
	switch {
	case len(fields) <= len(m.small):
		m.Values = m.small[:len(fields)]
	case values != nil:
		m.Values = values
	default:
		m.Values = make([]graphql.Marshaler, len(fields))
	}
}

// maxChunk bounds the field sets State.NewFieldSet allocates at once.
const maxChunk = 256

// NewFieldSet is an object with the fields CollectFields gave for it. The execution's objects
// are allocated in chunks, growing from 8 to maxChunk: a response's objects all live until it
// is written, so one allocation may as well hold many. So are the values of objects with more
// fields than a FieldSet holds itself.
func (s *State) NewFieldSet(fields []graphql.CollectedField) *FieldSet {
	s.mu.Lock()
	if len(s.sets) == 0 {
		s.chunk = min(max(2*s.chunk, 8), maxChunk)
		s.sets = make([]FieldSet, s.chunk)
	}
	fs := &s.sets[0]
	if s.sets = s.sets[1:]; len(s.sets) == 0 {
		s.sets = nil
	}
	var values []graphql.Marshaler
	if n := len(fields); n > len(fs.small) {
		if len(s.values) < n {
			s.values = make([]graphql.Marshaler, max(n, 8*s.chunk))
		}
		values, s.values = s.values[:n:n], s.values[n:]
	}
	s.mu.Unlock()
	if s.repeats {
		fields = written(fields)
	}
	fs.init(fields, values)
	return fs
}

// End says the response is written: the rest of the chunk of field sets is let go, so that an
// idle subscription holds nothing of its last event, and the guard sees the last charges.
func (s *State) End() {
	s.forward(s.size.Load())
	// A query's deferred fragments are written after it, each sized by what was charged since.
	s.size.Store(0)
	s.forwarded.Store(0)
	s.mu.Lock()
	s.sets, s.chunk, s.values = nil, 0, nil
	s.mu.Unlock()
}

// Concurrently has Dispatch resolve field i with f.
func (m *FieldSet) Concurrently(i int, f func(context.Context) graphql.Marshaler) {
	m.delayed = append(m.delayed, delayed{i, f})
}

// Dispatch resolves the fields given to Concurrently and returns when all are resolved: the
// first on this goroutine, the others each on one of its own, as gqlgen does.
func (m *FieldSet) Dispatch(ctx context.Context) {
	switch len(m.delayed) {
	case 0:
		return
	case 1:
		m.Values[m.delayed[0].i] = m.delayed[0].f(ctx)
		return
	}
	var wg sync.WaitGroup
	for _, d := range m.delayed[1:] {
		wg.Go(func() { m.Values[d.i] = d.f(ctx) })
	}
	m.Values[m.delayed[0].i] = m.delayed[0].f(ctx)
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
		if first {
			b.WriteByte('"')
			first = false
		} else {
			b.WriteString(`,"`)
		}
		b.WriteString(m.fields[i].Alias)
		b.WriteString(`":`)
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
	if s.placeholders {
		return graphql.Null
	}
	return Deferred
}

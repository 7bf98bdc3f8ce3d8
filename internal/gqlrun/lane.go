package gqlrun

import "github.com/99designs/gqlgen/graphql"

// Lane is where one goroutine of an execution takes its objects, values and strings from,
// charges its fields to and remembers what it collected, none of it shared: the executor runs
// a field on another goroutine only through Dispatch, and for a list's elements that do I/O,
// and gives each such goroutine a lane of its own (Fork), which it gives back when the field
// is resolved (Join). A lane is used by one goroutine at a time.
type Lane struct {
	s      *State
	fields memo[[]graphql.CollectedField]
	io     memo[bool]
	// The chunks objects, the values of objects and lists, lists' slice headers and strings
	// that are not struct fields are taken from (NewFieldSet, Array, List, StringValue).
	sets   chunks[FieldSet]
	values chunks[graphql.Marshaler]
	lists  chunks[graphql.Array]
	strs   chunks[String]
	// size is what the lane's fields charged and it has not yet passed to the State (flush).
	size int64
}

// Fork is a lane for a goroutine that resolves fields of the execution beside l's: an idle
// one, or a new one. Join gives it back.
func (l *Lane) Fork() *Lane {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.idle); n > 0 {
		f := s.idle[n-1]
		s.idle = s.idle[:n-1]
		return f
	}
	return &Lane{s: s}
}

// Join gives back a lane Fork gave, once its goroutine has resolved its fields: its charges go
// to the State, and the rest of its chunks to the next fork. The guard sees the charges at the
// next step or at End, as it would have seen them charged on the root lane: a deferred
// fragment that the guard stopped now would not be sent, and the response would wait for it.
func (l *Lane) Join() {
	s := l.s
	s.size.Add(l.size)
	l.size = 0
	s.mu.Lock()
	s.idle = append(s.idle, l)
	s.mu.Unlock()
}

// maxChunk is how many field sets NewFieldSet allocates at once.
const maxChunk = 256

// NewFieldSet is an object with the fields CollectFields gave for it. The execution's objects
// are allocated in chunks of maxChunk, and so are their values, each object's as many as it has
// fields: a response's objects all live until it is written, so one allocation may as well hold
// many. Once it is written, End gives the chunks to the next responses.
func (l *Lane) NewFieldSet(fields []graphql.CollectedField) *FieldSet {
	fs := &l.sets.take(1, maxChunk, &setChunks)[0]
	values := l.values.take(len(fields), 4*maxChunk, &valueChunks)
	if l.s.repeats {
		fields = written(fields)
	}
	fs.fields, fs.Values = fields, values
	return fs
}

// Array is a list's values, n of them, zeroed, from the chunk the objects' values come from.
func (l *Lane) Array(n int) graphql.Array {
	return l.values.take(n, 4*maxChunk, &valueChunks)
}

// List is a as a graphql.Marshaler, its slice header taken from a chunk: a slice in an
// interface is an allocation of its own.
func (l *Lane) List(a graphql.Array) graphql.Marshaler {
	p := &l.lists.take(1, maxChunk/4, &listChunks)[0]
	*p = a
	return p
}

// StringValue is v written as graphql.MarshalString writes it. A string a method or resolver
// returns has no place of its own to be written from, and gqlgen's closure is an allocation
// per string: v is kept in the execution's chunk of strings instead, taken as its field sets
// are (NewFieldSet) and given to the next responses by End, since a response's strings all
// live until it is written.
func (l *Lane) StringValue(v string) graphql.Marshaler {
	p := &l.strs.take(1, maxChunk, &strChunks)[0]
	*p = String(v)
	return p
}

// reset lets go of the lane's chunks, and gives their pools those it used if keep.
func (l *Lane) reset(keep bool) {
	l.sets.reset(keep, &setChunks)
	l.values.reset(keep, &valueChunks)
	l.lists.reset(keep, &listChunks)
	l.strs.reset(keep, &strChunks)
}

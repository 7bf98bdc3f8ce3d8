package gqlrun

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

const schema = `
type Query { account: Account }
interface Card { name: String! }
type Person implements Card { name: String! files: [File!]! friends: [Person!]! }
type Trust implements Card { name: String! creators: [Person!]! }
type File { name: String! url: String! }
type Account { cards: [Card!]! people: [Person!]! }
`

// urlDoesIO: File.url is resolved by a resolver.
func urlDoesIO(object, field string) bool { return object == "File" && field == "url" }

func TestReachesIOFindsFieldsThatDoIOAtAnyDepth(t *testing.T) {
	t.Parallel()
	s := gqlparser.MustLoadSchema(&ast.Source{Name: "s.graphqls", Input: schema})
	for _, tc := range []struct {
		name, query, on string
		want            bool
	}{
		{"names only", `{ account { people { name } } }`, "Person", false},
		{"__typename", `{ account { people { __typename name } } }`, "Person", false},
		{"a field that does I/O", `{ account { people { files { url } } } }`, "Person", true},
		{"memory only, deep", `{ account { people { friends { friends { files { name } } } } } }`, "Person", false},
		{"I/O deep", `{ account { people { friends { friends { files { url } } } } } }`, "Person", true},
		{"through an inline fragment", `{ account { cards { ... on Person { files { url } } } } }`, "Card", true},
		{"through a fragment spread", `{ account { cards { ...T } } } fragment T on Trust { creators { files { url } } }`, "Card", true},
		{"a deferred fragment", `{ account { cards { ... @defer { name } } } }`, "Card", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, errs := gqlparser.LoadQuery(s, tc.query)
			if errs != nil {
				t.Fatal(errs)
			}
			// The selection set of the list: query → account → its only field.
			list := doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet[0].(*ast.Field)
			st := New()
			for range 2 { // the second answer comes from the cache
				if got := st.ReachesIO(s, list.SelectionSet, tc.on, urlDoesIO); got != tc.want {
					t.Fatalf("ReachesIO = %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestFieldSetWritesTheObject(t *testing.T) {
	t.Parallel()
	fields := func(aliases ...string) []graphql.CollectedField {
		var out []graphql.CollectedField
		for _, a := range aliases {
			out = append(out, graphql.CollectedField{Field: &ast.Field{Alias: a, Name: a}})
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		fields []graphql.CollectedField
		want   string
	}{
		{"no fields", nil, `{}`},
		{"a null value", fields("a", "b"), `{"a":"x","b":null}`},
		{"more fields than fit beside it", fields("a", "b", "c", "d", "e", "f", "g", "h"), `{"a":"x","b":null,"c":"x","d":null,"e":"x","f":null,"g":"x","h":null}`},
		// CollectFields keeps apart __typename selected on a union and on one of its members.
		{"an alias twice, written once as gqlgen writes it", fields("__typename", "b", "__typename"), `{"__typename":"x","b":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Alone, and twice from an execution's state, which remembers how the fields are written.
			state := New()
			state.Begin(context.Background()) // no operation to tell it that no alias repeats
			for _, fs := range []*FieldSet{NewFieldSet(tc.fields), state.NewFieldSet(tc.fields), state.NewFieldSet(tc.fields)} {
				for i := range fs.Values {
					if i%2 == 0 {
						fs.Values[i] = graphql.MarshalString("x")
					}
				}
				var buf bytes.Buffer
				fs.MarshalGQL(&buf)
				var sb strings.Builder // any other writer
				fs.MarshalGQL(&sb)
				if buf.String() != tc.want || sb.String() != tc.want {
					t.Fatalf("got %s and %s, want %s", buf.String(), sb.String(), tc.want)
				}
			}
		})
	}
}

func TestFieldSetDispatchResolvesEveryDelayedField(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 5} {
		fs := NewFieldSet(make([]graphql.CollectedField, n))
		for i := range n {
			fs.Concurrently(i, func(context.Context, *Lane) graphql.Marshaler { return graphql.MarshalInt(i) })
		}
		fs.Dispatch(context.Background(), New())
		for i, v := range fs.Values {
			if v == nil {
				t.Fatalf("%d fields: field %d was not resolved", n, i)
			}
		}
	}
}

// The first delayed field runs on the caller's lane, each other on one no other field uses
// meanwhile; what they charged counts once they are joined, and their lanes serve again.
func TestFieldsDispatchedAtOnceEachHaveALaneOfTheirOwn(t *testing.T) {
	t.Parallel()
	root := New()
	root.Begin(context.Background())
	const n = 6
	for round := range 2 {
		fs := NewFieldSet(make([]graphql.CollectedField, n))
		lanes := make([]*Lane, n)
		var started sync.WaitGroup
		started.Add(n)
		for i := range n {
			fs.Concurrently(i, func(_ context.Context, l *Lane) graphql.Marshaler {
				lanes[i] = l
				started.Done()
				started.Wait() // every field runs at once
				l.Charge(10)
				return l.StringValue("v")
			})
		}
		fs.Dispatch(context.Background(), root)
		if lanes[0] != root {
			t.Fatalf("round %d: the first field ran on another lane than its caller's", round)
		}
		seen := map[*Lane]bool{}
		for i, l := range lanes {
			if seen[l] {
				t.Fatalf("round %d: field %d shared a lane with another field", round, i)
			}
			seen[l] = true
		}
		if got, want := root.Size(), 10*n*(round+1); got != want {
			t.Fatalf("round %d: the response counts %d bytes, want %d", round, got, want)
		}
	}
	if forked := len(root.s.idle); forked != n-1 {
		t.Errorf("%d lanes forked for two rounds of %d fields at once, want %d: joined lanes serve again", forked, n, n-1)
	}
}

type guard struct {
	charged int64
	stops   int
}

func (g *guard) Charge(n int64) { g.charged += n }
func (g *guard) Stopped(context.Context) error {
	g.stops++
	return errors.New("stopped")
}

func TestStopEndsAResponseWhoseContextEnded(t *testing.T) {
	t.Parallel()
	t.Run("with a guard, which says why", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		g := &guard{}
		ctx = graphql.WithResponseContext(WithGuard(ctx, g), graphql.DefaultErrorPresenter, nil)
		st := New()
		st.Begin(ctx)
		st.Charge(7)
		if st.Stop(ctx) {
			t.Fatal("Stop before the context ended")
		}
		cancel()
		if !st.Stop(ctx) || !st.Stop(ctx) {
			t.Fatal("Stop after the context ended said go on")
		}
		st.End() // passes the guard what it gathered
		if g.charged != 7 || g.stops != 2 || len(graphql.GetErrors(ctx)) != 2 {
			t.Fatalf("charged %d, stops %d, errors %v", g.charged, g.stops, graphql.GetErrors(ctx))
		}
	})
	t.Run("without a guard, one error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		ctx = graphql.WithResponseContext(ctx, graphql.DefaultErrorPresenter, nil)
		st := New()
		st.Begin(ctx)
		st.Charge(7) // nobody to charge: no panic
		cancel()
		if !st.Stop(ctx) || !st.Stop(ctx) {
			t.Fatal("Stop after the context ended said go on")
		}
		if errs := graphql.GetErrors(ctx); len(errs) != 1 {
			t.Fatalf("errors %v, want one", errs)
		}
	})
}

func TestElementContextGivesTheElementsPath(t *testing.T) {
	t.Parallel()
	ctx := graphql.WithFieldContext(context.Background(), &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "people"}}})
	els := make([]Element, 3)
	var last context.Context
	for i := range els {
		last = els[i].Context(ctx, i, &els[i])
	}
	if got := graphql.GetPath(last).String(); got != "people[2]" {
		t.Fatalf("path %s, want people[2]", got)
	}
}

// Charges reach the guard in steps, at the latest when the response ends, and all of them.
func TestChargesReachTheGuardInSteps(t *testing.T) {
	t.Parallel()
	g := &guard{}
	st := New()
	st.Begin(WithGuard(context.Background(), g))
	st.Charge(100)
	if g.charged != 0 {
		t.Fatalf("the guard saw %d bytes of a 100-byte response before its end", g.charged)
	}
	st.Charge(chargeStep)
	if g.charged != chargeStep+100 {
		t.Fatalf("the guard saw %d bytes after a step, want %d", g.charged, chargeStep+100)
	}
	st.Charge(5)
	if st.Size() != chargeStep+105 {
		t.Fatalf("the state counted %d bytes, want %d", st.Size(), chargeStep+105)
	}
	st.End()
	if g.charged != chargeStep+105 || st.Size() != 0 {
		t.Fatalf("the guard saw %d bytes, want %d; the state keeps %d, want 0", g.charged, chargeStep+105, st.Size())
	}
}

// Objects and lists take their values from one chunk, each its own part of it, as many as
// it has fields or elements.
func TestObjectsAndListsKeepTheirValuesApart(t *testing.T) {
	var fields []graphql.CollectedField
	for _, a := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		fields = append(fields, graphql.CollectedField{Field: &ast.Field{Alias: a, Name: a}})
	}
	state := New()
	state.Begin(context.Background())
	sets := []*FieldSet{state.NewFieldSet(fields), state.NewFieldSet(fields[:1]), state.NewFieldSet(fields[:7])}
	list := state.Array(3)
	if len(list) != 3 || cap(list) != 3 {
		t.Fatalf("a list of 3 has %d values, room for %d, want 3 and 3", len(list), cap(list))
	}
	for i := range list {
		list[i] = graphql.MarshalString("list")
	}
	sets = append(sets, state.NewFieldSet(fields[:2]))
	for n, fs := range sets {
		if len(fs.Values) != len(fs.fields) || cap(fs.Values) != len(fs.fields) {
			t.Fatalf("object %d of %d fields has %d values, room for %d", n, len(fs.fields), len(fs.Values), cap(fs.Values))
		}
		for i := range fs.Values {
			fs.Values[i] = graphql.MarshalString(strings.Repeat("x", n+1))
		}
	}
	for n, fs := range sets {
		var buf bytes.Buffer
		fs.MarshalGQL(&buf)
		if want := strings.Repeat("x", n+1); strings.Count(buf.String(), `"`+want+`"`) != len(fs.Values) {
			t.Errorf("object %d: %s, want every value %q", n, buf.String(), want)
		}
	}
	var buf bytes.Buffer
	if state.List(list).MarshalGQL(&buf); buf.String() != `["list","list","list"]` {
		t.Errorf("the list is %s, want its own three values", buf.String())
	}
	if allocs := testing.AllocsPerRun(10, func() { state.List(list) }); allocs > 0.5 {
		t.Errorf("a list made %.1f allocations to be a graphql.Marshaler, want none but a chunk's now and then", allocs)
	}
	if allocs := testing.AllocsPerRun(10, func() { state.NewFieldSet(fields) }); allocs > 0.5 {
		t.Errorf("an object of 8 fields made %.1f allocations, want none but a chunk's now and then", allocs)
	}
}

// Once a response is written its chunks of objects and strings go to the next responses, emptied;
// unless a field was deferred, whose fragment is written after the response and holds them.
func TestChunksOfAWrittenResponseAreReusedEmptyUnlessAFieldWasDeferred(t *testing.T) {
	fields := []graphql.CollectedField{{Field: &ast.Field{Alias: "a", Name: "a"}}}
	for _, deferred := range []bool{false, true} {
		st := New()
		st.Begin(context.Background())
		if deferred {
			st.DeferredField()
		}
		var last *FieldSet
		var lastString graphql.Marshaler
		for range 2000 { // the last in chunks of full size
			last = st.NewFieldSet(fields)
			last.Values[0] = graphql.MarshalString("x")
			lastString = st.StringValue("x")
		}
		st.End()
		if kept := last.Values != nil && last.Values[0] != nil; kept != deferred {
			t.Errorf("with a field deferred %v, the last object was kept as it was %v, want %v", deferred, kept, deferred)
		}
		if kept := *lastString.(*String) == "x"; kept != deferred {
			t.Errorf("with a field deferred %v, the last string was kept as it was %v, want %v", deferred, kept, deferred)
		}
		next := New()
		next.Begin(context.Background())
		for range 2000 {
			if fs := next.NewFieldSet(fields); fs.Values[0] != nil {
				t.Fatal("a new response's object has a value of an earlier one")
			}
		}
		next.End()
	}
}

// A small response takes a chunk of full size from the pool rather than growing its own, and
// gives it back with what it used cleared, and the rest left as the pool gave it: zeroed.
func TestASmallResponseBorrowsAPooledChunkAndGivesItBackEmpty(t *testing.T) {
	for _, n := range []int{1, 3, 16} {
		chunk := make([]int, 64)
		pool := &onePool{p: &chunk}
		var c chunks[int]
		for i := range n {
			c.take(1, 64, pool)[0] = i + 1
		}
		if len(c.full) != 1 || c.full[0] != &chunk {
			t.Fatalf("%d elements: took %d chunks, want the pooled one", n, len(c.full))
		}
		c.reset(true, pool)
		if pool.p != &chunk {
			t.Fatalf("%d elements: the chunk did not go back to the pool", n)
		}
		if i := slices.IndexFunc(chunk, func(v int) bool { return v != 0 }); i >= 0 {
			t.Errorf("%d elements: element %d is %d after reset, want 0", n, i, chunk[i])
		}
	}
}

// onePool holds at most one chunk, and keeps it: a sync.Pool may drop what it is given (under
// the race detector it does, at random).
type onePool struct{ p any }

func (o *onePool) Get() any {
	p := o.p
	o.p = nil
	return p
}

func (o *onePool) Put(p any) { o.p = p }

package gqlrun

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// An object's concurrent fields run on the workers of the context when it has some: each field
// is resolved once, into its own place, and the goroutines that resolved them wait for the next
// fields instead of ending, until the workers are closed.
func TestConcurrentFieldsRunOnKeptWorkersUntilTheyAreClosed(t *testing.T) {
	before := runtime.NumGoroutine()
	w := NewWorkers()
	ctx := WithWorkers(context.Background(), w)
	const fields = 5
	for round := range 3 {
		m := &FieldSet{Values: make([]graphql.Marshaler, fields)}
		var started sync.WaitGroup
		started.Add(fields)
		for i := range fields {
			m.Concurrently(i, func(context.Context, *Lane) graphql.Marshaler {
				started.Done()
				started.Wait() // every field runs at once, or this never returns
				return graphql.MarshalInt(10*round + i)
			})
		}
		m.Dispatch(ctx, New())
		for i, v := range m.Values {
			if got, want := marshalled(v), strconv.Itoa(10*round+i); got != want {
				t.Fatalf("round %d: field %d is %s, want %s", round, i, got, want)
			}
		}
		// The fields but the first ran on workers, which now wait: no more of them than fields.
		if kept := waitForGoroutines(before+fields-1, 5*time.Second); kept > before+fields-1 || kept < before+1 {
			t.Fatalf("round %d: %d goroutines after the fields, %d before; want the workers kept, at most %d", round, kept, before, fields-1)
		}
	}
	w.Close()
	// At most: a goroutine the test began with (the runtime's, or another test's) may end too.
	if left := waitForGoroutines(before, 5*time.Second); left > before {
		t.Errorf("%d goroutines once the workers were closed, want at most the %d before", left, before)
	}
	// Fields given after Close still run, on goroutines that end.
	m := &FieldSet{Values: make([]graphql.Marshaler, 2)}
	for i := range 2 {
		m.Concurrently(i, func(context.Context, *Lane) graphql.Marshaler { return graphql.MarshalInt(i) })
	}
	m.Dispatch(ctx, New())
	if got := marshalled(m.Values[1]); got != "1" {
		t.Errorf("after Close, the second field is %s, want 1", got)
	}
	if left := waitForGoroutines(before, 5*time.Second); left > before {
		t.Errorf("%d goroutines after a field resolved once the workers were closed, want at most %d", left, before)
	}
}

func marshalled(v graphql.Marshaler) string {
	var b bytes.Buffer
	v.MarshalGQL(&b)
	return b.String()
}

// waitForGoroutines waits until at most n goroutines run, or for d; it returns how many run.
func waitForGoroutines(n int, d time.Duration) int {
	deadline := time.Now().Add(d)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return runtime.NumGoroutine()
}

package oplimit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

func TestAResponseOverItsBudgetEndsWithOneError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		bytes int64
		query string
		// over says the response passes the budget.
		over bool
	}{
		// Ten books of a 50-byte title: about 700 bytes.
		{"under the budget", 2000, "{ books(limit: 10) { title } }", false},
		{"a long list over the budget", 2000, "{ books(limit: 1000) { title } }", true},
		// Each book is related to three more, without end: 3^9 books at the deepest level.
		{"recursion in memory over the budget", 10000,
			"{ books(limit: 3) { related { related { related { related { related { related { related { related { title } } } } } } } } } }", true},
		{"scalar lists count their items", 1000, "{ books(limit: 80) { tags } }", true},
		{"enums count their names", 1000, "{ books(limit: 80) { genre } }", true},
		// gqlgen writes __typename without the field middleware.
		{"__typename counts all the same", 1000, "{ books(limit: 50) { a: __typename b: __typename } }", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lib := newLibrary(t)
			resp := run(context.Background(), lib.executor(Limits{ResponseBytes: tc.bytes}), tc.query, nil)
			if !tc.over {
				if len(resp.Errors) > 0 || int64(len(resp.Data)) > tc.bytes {
					t.Errorf("got %d bytes and errors %v, want the response", len(resp.Data), resp.Errors)
				}
				return
			}
			if len(resp.Errors) != 1 || fmt.Sprint(resp.Errors[0].Extensions["code"]) != "OPERATION_LIMIT_EXCEEDED" ||
				!strings.Contains(resp.Errors[0].Message, fmt.Sprintf("at most %d (", tc.bytes)) ||
				!strings.HasSuffix(resp.Errors[0].Message, "(MAX_RESPONSE_BYTES)") {
				t.Fatalf("got errors %v, want one OPERATION_LIMIT_EXCEEDED naming MAX_RESPONSE_BYTES and %d", resp.Errors, tc.bytes)
			}
			if resp.Data != nil {
				t.Errorf("got data %.100s, want none", resp.Data)
			}
			// Each title is about 60 bytes: the work stops soon after the budget is spent.
			if n, most := lib.calls.Load(), 3*tc.bytes/60+20; n > most {
				t.Errorf("got %d resolver calls, want at most %d", n, most)
			}
		})
	}
}

// The estimate must stay close to what is written: far below, the budget would not bound the
// response; far above, it would refuse responses within it.
func TestTheEstimateIsCloseToTheResponse(t *testing.T) {
	t.Parallel()
	for _, query := range []string{
		"{ books(limit: 20) { title genre tags } }",
		"{ books(limit: 5) { title related { genre related { tags } } } }",
		"{ version books(limit: 50) { __typename tags } }",
	} {
		size := int64(len(run(context.Background(), newLibrary(t).executor(Limits{}), query, nil).Data))
		for _, tc := range []struct {
			budget int64
			over   bool
		}{{size * 8 / 10, true}, {size * 3 / 2, false}} {
			resp := run(context.Background(), newLibrary(t).executor(Limits{ResponseBytes: tc.budget}), query, nil)
			if over := len(resp.Errors) > 0; over != tc.over {
				t.Errorf("%s: %d bytes with a budget of %d: got over %v, want %v", query, size, tc.budget, over, tc.over)
			}
		}
	}
}

func TestWorkStopsWhenTheClientGoesAway(t *testing.T) {
	t.Parallel()
	lib := newLibrary(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lib.onCall = func(n int64) {
		if n == 5 {
			cancel()
		}
	}
	done := make(chan *graphql.Response)
	go func() {
		done <- run(ctx, lib.executor(Defaults()), "{ books(limit: 1000) { title related { title } } }", nil)
	}()
	var resp *graphql.Response
	select {
	case resp = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the operation went on after its client went away")
	}
	if n := lib.calls.Load(); n != 5 {
		t.Errorf("got %d resolver calls, want 5: none after the client went away", n)
	}
	// One error says why; the hundreds of fields it did not resolve add none of their own.
	if len(resp.Errors) != 1 || resp.Errors[0].Message != errCancelled.Message {
		t.Errorf("got %d errors %v, want one saying the operation was cancelled", len(resp.Errors), resp.Errors)
	}
}

func TestASubscriptionsBudgetIsPerEvent(t *testing.T) {
	t.Parallel()
	lib := newLibrary(t)
	// One event of this subscription is about 250 bytes: four fit 1000, one at a time.
	exec := lib.executor(Limits{ResponseBytes: 1000})
	ctx := graphql.StartOperationTrace(context.Background())
	oc, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: "subscription { books(size: 1) { title related { title } } }"})
	if errs != nil {
		t.Fatal(errs)
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	for i := range 6 {
		lib.events <- i
		resp := responses(ctx)
		if resp == nil || len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), "ttt") {
			t.Fatalf("event %d: got %+v, want it within its own budget", i, resp)
		}
	}
	lib.width = 30
	lib.events <- 6
	if resp := responses(ctx); resp == nil || len(resp.Errors) != 1 || resp.Data != nil {
		t.Fatalf("got %+v for an event over the budget, want one error", resp)
	}
	lib.width = 3
	lib.events <- 7
	if resp := responses(ctx); resp == nil || len(resp.Errors) > 0 {
		t.Errorf("got %+v after an event over the budget, want the next event", resp)
	}
}

// The interceptor runs for every field of every response: it should cost little more than the
// atomic add.
func BenchmarkInterceptField(b *testing.B) {
	e := New(Defaults())
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ctx = context.WithValue(ctx, responseKey{}, &response{limit: 1 << 62, cancel: cancel})
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "displayName"}}})
	next := func(context.Context) (any, error) { return "Eleanor Rose Hartwell", nil }
	for b.Loop() {
		if _, err := e.InterceptField(ctx, next); err != nil {
			b.Fatal(err)
		}
	}
}

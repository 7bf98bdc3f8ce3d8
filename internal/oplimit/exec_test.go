package oplimit

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/gqlrun"
)

// The tests run the extension in gqlgen's executor over a small library schema whose data is
// made up as it is asked for: every book is related to `width` more, without end, like the
// family graph's relationships through target contacts.
const librarySchema = `
type Query {
  version: String!
  books(limit: Int): [Book!]!
  shelf(id: ID!): Shelf
  shelves(first: Int = 10): ShelfPage!
  shelfPages(page: Int = 1, limit: Int = 10, first: Int, after: String, last: Int, before: String): ShelfPage!
  item(id: ID!): Item
  items(ids: [ID!]!): [Item]
}
type Subscription { books(size: Int!): Book! }
type ShelfPage { total: Int! nodes: [Shelf!]! }
type Shelf { name: String! books: [Book!]! }
type Book { title: String! genre: Genre! tags: [String!]! related: [Book!]! }
enum Genre { FICTION POETRY }
union Item = Book | Shelf
`

type genre string

type book struct{}

// library is a gqlgen executable schema resolved without generated code: every field goes
// through graphql.ResolveField, and so through the field middleware, as generated code does.
type library struct {
	schema *ast.Schema
	width  int
	// calls counts resolver calls; onCall, when set, runs after each.
	calls  atomic.Int64
	onCall func(n int64)
	events chan int
}

func newLibrary(t *testing.T) *library {
	t.Helper()
	s, err := gqlparser.LoadSchema(&ast.Source{Name: "library.graphqls", Input: librarySchema})
	if err != nil {
		t.Fatal(err)
	}
	return &library{schema: s, width: 3, events: make(chan int, 10)}
}

// executor returns gqlgen's executor over the library with the limits installed, and the
// gateway's error presenter.
func (l *library) executor(limits Limits) *executor.Executor {
	exec := executor.New(&graphql.ExecutableSchemaMock{
		ExecFunc:   l.exec,
		SchemaFunc: func() *ast.Schema { return l.schema },
	})
	Install(exec, limits)
	exec.SetErrorPresenter(apperr.Presenter(slog.New(slog.NewTextHandler(io.Discard, nil))))
	return exec
}

func (l *library) exec(ctx context.Context) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation.Operation == ast.Subscription {
		root := graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Subscription"})[0]
		return func(ctx context.Context) *graphql.Response {
			select {
			case _, ok := <-l.events:
				if !ok {
					return nil
				}
				var buf bytes.Buffer
				buf.WriteString(`{"books":`)
				l.object(ctx, root.Selections, "Book").MarshalGQL(&buf)
				buf.WriteString(`}`)
				return &graphql.Response{Data: buf.Bytes()}
			case <-ctx.Done():
				return nil
			}
		}
	}
	done := false
	return func(ctx context.Context) *graphql.Response {
		if done {
			return nil
		}
		done = true
		var buf bytes.Buffer
		l.object(ctx, oc.Operation.SelectionSet, "Query").MarshalGQL(&buf)
		return &graphql.Response{Data: buf.Bytes()}
	}
}

func (l *library) object(ctx context.Context, sel ast.SelectionSet, typ string) graphql.Marshaler {
	oc := graphql.GetOperationContext(ctx)
	fields := graphql.CollectFields(oc, sel, []string{typ})
	out := graphql.NewFieldSet(fields)
	for i, f := range fields {
		if f.Name == "__typename" {
			// As the generated executor does: __typename has no field middleware.
			if m := gqlrun.GuardOf(ctx); m != nil {
				m.Charge(int64(len(f.Alias)) + int64(len(typ)) + 6)
			}
			out.Values[i] = graphql.MarshalString(typ)
			continue
		}
		out.Values[i] = graphql.ResolveField(ctx, oc, f,
			func(ctx context.Context, f graphql.CollectedField) (*graphql.FieldContext, error) {
				return &graphql.FieldContext{Object: typ, Field: f, Args: f.ArgumentMap(oc.Variables), IsResolver: true}, nil
			},
			func(ctx context.Context) (any, error) {
				v := l.resolve(typ, f.Name, graphql.GetFieldContext(ctx).Args)
				if n := l.calls.Add(1); l.onCall != nil {
					l.onCall(n)
				}
				return v, nil
			},
			nil,
			func(ctx context.Context, sel ast.SelectionSet, v any) graphql.Marshaler {
				return l.marshal(ctx, sel, v)
			},
			true, f.Definition.Type.NonNull)
	}
	out.Dispatch(ctx)
	return out
}

func (l *library) resolve(typ, field string, args map[string]any) any {
	switch typ + "." + field {
	case "Query.version":
		return "1"
	case "Query.books":
		if n, ok := jsonInt(args["limit"]); ok {
			return l.books(n)
		}
		return l.books(10)
	case "Book.title":
		return strings.Repeat("t", 50)
	case "Book.genre":
		return genre("FICTION")
	case "Book.tags":
		return []string{"one", "two"}
	case "Book.related":
		return l.books(l.width)
	}
	return nil
}

func (l *library) books(n int) []*book {
	out := make([]*book, n)
	for i := range out {
		out[i] = &book{}
	}
	return out
}

func (l *library) marshal(ctx context.Context, sel ast.SelectionSet, v any) graphql.Marshaler {
	switch v := v.(type) {
	case string:
		return graphql.MarshalString(v)
	case genre:
		return graphql.MarshalString(string(v))
	case []string:
		arr := make(graphql.Array, len(v))
		for i, s := range v {
			arr[i] = graphql.MarshalString(s)
		}
		return arr
	case []*book:
		arr := make(graphql.Array, len(v))
		for i := range v {
			arr[i] = l.object(ctx, sel, "Book")
		}
		return arr
	case *book:
		return l.object(ctx, sel, "Book")
	}
	return graphql.Null
}

// run executes one operation as a transport does and returns its first response.
func run(ctx context.Context, exec *executor.Executor, query string, vars map[string]any) *graphql.Response {
	ctx = graphql.StartOperationTrace(ctx)
	oc, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: query, Variables: vars})
	if errs != nil {
		return exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	return responses(ctx)
}

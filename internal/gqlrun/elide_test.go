package gqlrun

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

func field(alias string) graphql.FieldContext {
	return graphql.FieldContext{Object: "Contact", Field: graphql.CollectedField{Field: &ast.Field{Alias: alias, Name: alias}}}
}

// Below a list that reaches no I/O, whoever asks for a field's context (an error, for its
// path) gets the one it would have had with a context made for every element and field; the
// contexts handed out stay as they were whatever is entered and left afterwards.
func TestAFieldBelowAnElidedListHasThePathItWouldHaveHad(t *testing.T) {
	t.Parallel()
	top := WithField(WithContexts(context.Background()), field("contacts"))
	for _, tc := range []struct {
		name string
		// walk enters fields and elements below contacts (the list) and returns the context
		// the innermost is given.
		walk func(ctx context.Context) context.Context
		want string
	}{
		{
			name: "an element",
			walk: func(ctx context.Context) context.Context {
				e, depth := Elide(ctx, 10)
				e.Element(depth, 0, nil)
				return e.Element(depth, 3, nil)
			},
			want: "contacts[3]",
		},
		{
			name: "a field of an element, after a sibling was left",
			walk: func(ctx context.Context) context.Context {
				e, depth := Elide(ctx, 10)
				ctx = e.Element(depth, 1, nil)
				Leave(Enter(ctx, field("owner")))
				return Enter(ctx, field("source"))
			},
			want: "contacts[1].source",
		},
		{
			name: "an element of a list within an element",
			walk: func(ctx context.Context) context.Context {
				e, depth := Elide(ctx, 10)
				ctx = Enter(e.Element(depth, 2, nil), field("relationships"))
				inner, innerDepth := Elide(ctx, 10)
				if inner != e || innerDepth != depth+2 {
					t.Fatalf("the inner list has its own Elided (%v) or depth %d, want the outer's at %d", inner != e, innerDepth, depth+2)
				}
				inner.Element(innerDepth, 0, nil)
				return Enter(inner.Element(innerDepth, 4, nil), field("target"))
			},
			want: "contacts[2].relationships[4].target",
		},
		{
			name: "a leaf's own context, made under an element",
			walk: func(ctx context.Context) context.Context {
				e, depth := Elide(ctx, 10)
				return WithField(e.Element(depth, 5, nil), field("percentage"))
			},
			want: "contacts[5].percentage",
		},
		{
			name: "a field after a panic left frames behind",
			walk: func(ctx context.Context) context.Context {
				e, depth := Elide(ctx, 10)
				Enter(Enter(e.Element(depth, 6, nil), field("owner")), field("contact"))
				e.Back(depth + 1)
				return Enter(e, field("target"))
			},
			want: "contacts[6].target",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.walk(top)
			fc := graphql.GetFieldContext(ctx)
			if got := fc.Path().String(); got != tc.want {
				t.Fatalf("the path is %s, want %s", got, tc.want)
			}
			// What is asked for is kept, and stays as it was when the frames change.
			if e, ok := ctx.(*Elided); ok {
				e.Back(0)
				Enter(e.Element(0, 9, nil), field("other"))
			}
			if got := fc.Path().String(); got != tc.want {
				t.Fatalf("the path became %s once the list went on, want %s", got, tc.want)
			}
		})
	}
}

// The elements of a list that reaches no I/O, and the object-valued fields below them, make
// no field contexts unless asked for (issue 28: the family query made nearly 3,000).
func TestAnElidedListMakesNoFieldContexts(t *testing.T) {
	top := WithField(WithContexts(context.Background()), field("contacts"))
	source, target := field("source"), field("target")
	allocs := testing.AllocsPerRun(10, func() {
		e, depth := Elide(top, 1000)
		for i := range 1000 {
			ctx := e.Element(depth, i, nil)
			Leave(Enter(ctx, source))
			inner := Enter(ctx, target)
			ie, idepth := Elide(inner, 3)
			for j := range 3 {
				Leave(Enter(ie.Element(idepth, j, nil), source))
			}
			ie.Back(idepth)
			Leave(inner)
		}
		e.Back(depth)
	})
	if allocs > 1 {
		t.Errorf("a list of 1,000 elements of 5 object-valued fields made %.0f allocations, want at most the Elided's own", allocs)
	}
}

// An empty list makes nothing to marshal its elements in.
func TestAnEmptyElidedListMakesNothing(t *testing.T) {
	top := WithField(context.Background(), field("contacts"))
	if allocs := testing.AllocsPerRun(10, func() {
		e, depth := Elide(top, 0)
		e.Back(depth)
	}); allocs > 0 {
		t.Errorf("an empty list made %.0f allocations, want none", allocs)
	}
}

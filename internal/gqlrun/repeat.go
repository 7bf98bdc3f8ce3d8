package gqlrun

import (
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// gqlgen's CollectFields merges the fields of one alias only when the types they were selected
// on are one, or one implements the other: __typename selected on a union and on one of its
// members (or on an interface of it) is two fields of an object. Both are resolved, but
// gqlgen's field set writes the first only, and so must ours: an object with a key twice is
// not what gqlgen answers. Finding such fields costs a comparison of every two fields of
// every object, so it is done only for operations where mayRepeat says it may be needed.

// written is fields as an object writes them: fields itself, unless an alias repeats; then a
// copy in which the fields whose alias an earlier field has have no definition, which
// MarshalGQL leaves out.
func written(fields []graphql.CollectedField) []graphql.CollectedField {
	var out []graphql.CollectedField
	for i := 1; i < len(fields); i++ {
		for j := range i {
			if fields[i].Field != nil && fields[j].Field != nil && fields[j].Alias == fields[i].Alias {
				if out == nil {
					out = slices.Clone(fields)
				}
				out[i].Field = nil
				break
			}
		}
	}
	if out == nil {
		return fields
	}
	return out
}

// mayRepeat reports whether an object of doc's operations may have two fields of one alias
// that CollectFields keeps apart: doc selects an alias on two types it does not merge that
// one object may both be.
func mayRepeat(doc *ast.QueryDocument) bool {
	// The types each alias is selected on: almost always one, so others are kept apart.
	first := map[string]*ast.Definition{}
	var more map[string][]*ast.Definition
	var walk func(ast.SelectionSet) bool
	walk = func(set ast.SelectionSet) bool {
		for _, s := range set {
			switch s := s.(type) {
			case *ast.Field:
				d, seen := first[s.Alias]
				switch {
				case !seen:
					first[s.Alias] = s.ObjectDefinition
				case d != s.ObjectDefinition && !slices.Contains(more[s.Alias], s.ObjectDefinition):
					if apart(d, s.ObjectDefinition) || slices.ContainsFunc(more[s.Alias], func(d *ast.Definition) bool { return apart(d, s.ObjectDefinition) }) {
						return true
					}
					if more == nil {
						more = map[string][]*ast.Definition{}
					}
					more[s.Alias] = append(more[s.Alias], s.ObjectDefinition)
				}
				if walk(s.SelectionSet) {
					return true
				}
			case *ast.InlineFragment:
				if walk(s.SelectionSet) {
					return true
				}
			}
			// A spread's fields are walked with its fragment's.
		}
		return false
	}
	for _, op := range doc.Operations {
		if walk(op.SelectionSet) {
			return true
		}
	}
	for _, f := range doc.Fragments {
		if walk(f.SelectionSet) {
			return true
		}
	}
	return false
}

// apart reports whether fields selected on a and b are kept apart by CollectFields, which
// merges them when a and b are one type or one implements the other, and may yet both apply
// to one object.
func apart(a, b *ast.Definition) bool {
	switch {
	case a == b:
		return false
	case a == nil || b == nil:
		return true
	case a.Name == b.Name || slices.Contains(a.Interfaces, b.Name) || slices.Contains(b.Interfaces, a.Name):
		return false
	case a.Kind == ast.Object && b.Kind == ast.Object:
		return false // no object is of two object types
	case a.Kind == ast.Object && b.Kind == ast.Union:
		return slices.Contains(b.Types, a.Name)
	case a.Kind == ast.Union && b.Kind == ast.Object:
		return slices.Contains(a.Types, b.Name)
	case a.Kind == ast.Object || b.Kind == ast.Object:
		return false // an object and an interface it does not implement
	case a.Kind == ast.Union && b.Kind == ast.Union:
		return slices.ContainsFunc(a.Types, func(t string) bool { return slices.Contains(b.Types, t) })
	}
	return true // two interfaces, or a union and an interface: one object may be both
}

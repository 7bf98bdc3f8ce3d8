// Package enumcase converts between the Advisor specification's spellings of enumeration values
// (IndividualRevocableTrust, estate_planning, Uploaded, 1099) and GraphQL's convention for enum
// values, SCREAMING_SNAKE_CASE (INDIVIDUAL_REVOCABLE_TRUST, ESTATE_PLANNING, UPLOADED,
// FORM_1099). Go code keeps the specification's spelling, so values go to the upstream as they
// are; only the GraphQL boundary converts.
package enumcase

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// Screaming returns the GraphQL spelling of a specification value. Words split at an upper-case
// letter after a lower-case one (RevocableTrust), before the last capital of a run followed by
// a lower-case letter (CCorporation is C_CORPORATION), and at underscores; a value that starts
// with a digit, which GraphQL names cannot, gets the prefix FORM_. Spaces and hyphens separate
// words too (Last Will and Testament is LAST_WILL_AND_TESTAMENT).
func Screaming(spec string) string {
	var b strings.Builder
	runes := []rune(spec)
	for i, r := range runes {
		if r == ' ' || r == '-' {
			r = '_'
		}
		if r == '_' && i > 0 && (runes[i-1] == ' ' || runes[i-1] == '-' || runes[i-1] == '_') {
			continue
		}
		if i > 0 && unicode.IsUpper(r) {
			prev := runes[i-1]
			nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	out := b.String()
	if out != "" && unicode.IsDigit(rune(out[0])) {
		out = "FORM_" + out
	}
	return out
}

// Table maps one enumeration's specification values to their GraphQL names and back.
type Table struct {
	name     string
	toGQL    map[string]string
	fromGQL  map[string]string
	ordered  []string
	gqlNames []string
}

// NewTable returns the table of an enumeration called name with these specification values.
// It panics if two values would get the same GraphQL name: the tables are built from the
// specification's constant lists, so that is a programming error found by any test.
func NewTable(name string, specValues ...string) Table {
	t := Table{name: name, toGQL: map[string]string{}, fromGQL: map[string]string{}}
	for _, v := range specValues {
		g := Screaming(v)
		if _, dup := t.fromGQL[g]; dup {
			panic(fmt.Sprintf("enumcase: %s values collide on %s", name, g))
		}
		t.toGQL[v], t.fromGQL[g] = g, v
		t.ordered = append(t.ordered, v)
		t.gqlNames = append(t.gqlNames, g)
	}
	return t
}

// GraphQLNames lists the GraphQL names in the specification's order.
func (t Table) GraphQLNames() []string { return t.gqlNames }

// Values lists the specification values in order.
func (t Table) Values() []string { return t.ordered }

// Marshal writes the GraphQL name of a specification value. A value the table does not know
// (the service added one) is written in the converted spelling anyway, so a response never
// fails for it; the schema then needs the new value.
func (t Table) Marshal(w io.Writer, spec string) {
	g, ok := t.toGQL[spec]
	if !ok {
		_, _ = io.WriteString(w, strconv.Quote(Screaming(spec)))
		return
	}
	// GraphQL names need no escapes; three writes allocate nothing, where Quote would.
	_, _ = io.WriteString(w, `"`)
	_, _ = io.WriteString(w, g)
	_, _ = io.WriteString(w, `"`)
}

// Unmarshal reads a GraphQL enum value and returns its specification spelling.
func (t Table) Unmarshal(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string enum value", t.name)
	}
	spec, ok := t.fromGQL[s]
	if !ok {
		return "", fmt.Errorf("%s is not a valid %s", s, t.name)
	}
	return spec, nil
}

package apperr

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// GraphQL's own errors, reworded. gqlparser checks a literal in the query and a variable's value
// with different words: a literal's message names the field and the type, a variable's says only
// "must be defined" or "FOO is not a valid DocumentCategory" and leaves the rest to the path. The
// presenter gives a variable's errors the literal's words, as graphql-js does, and, when it has
// the schema, lists the valid values of an enum and the members of a @oneOf input.

var (
	literalEnum  = regexp.MustCompile(`^(?:Value "[^"]*" does not exist in|Enum) "([^"]+)" (?:enum|cannot represent)`)
	variableEnum = regexp.MustCompile(`^(.*) is not a valid (\w+)$`)
	oneOfInput   = regexp.MustCompile(`^OneOf Input Object "(\w+)" must specify exactly one key\.`)
)

// reword returns the message of one of GraphQL's parse or validation errors.
func (p *presenter) reword(ctx context.Context, e *gqlerror.Error) string {
	if len(e.Path) >= 2 && e.Path[0] == ast.PathName("variable") {
		return p.variableMessage(ctx, e)
	}
	msg := e.Message
	if m := literalEnum.FindStringSubmatch(msg); m != nil {
		return msg + p.validValues(m[1])
	}
	if m := oneOfInput.FindStringSubmatch(msg); m != nil {
		return msg + p.members(m[1])
	}
	return msg
}

// variableMessage words an error in a variable's value: which variable, where in it, and what.
func (p *presenter) variableMessage(ctx context.Context, e *gqlerror.Error) string {
	name, _ := e.Path[1].(ast.PathName)
	where := e.Path[1:]
	// What the path leads to, and the input object it is a field of, as far as they are known.
	var typ, parent *ast.Type
	if graphql.HasOperationContext(ctx) {
		if op := graphql.GetOperationContext(ctx).Operation; op != nil {
			if def := op.VariableDefinitions.ForName(string(name)); def != nil {
				typ, parent = p.follow(def, where[1:])
			}
		}
	}
	lead := fmt.Sprintf("Variable \"$%s\"", name)
	if len(where) == 1 {
		switch e.Message {
		case "must be defined":
			return lead + ofType("required", typ) + " was not provided."
		case "cannot be null":
			return lead + ofType("non-null", typ) + " must not be null."
		}
	}
	lead += fmt.Sprintf(" got an invalid value at %q; ", pathString(where))
	last, isField := where[len(where)-1].(ast.PathName)
	field := string(last)
	if isField && parent != nil {
		field = parent.Name() + "." + field
	}
	switch msg := e.Message; {
	case msg == "must be defined" && isField && typ == nil:
		return lead + fmt.Sprintf("Field %q is required but was not provided.", field)
	case msg == "must be defined" && isField:
		return lead + fmt.Sprintf("Field %q", field) + ofType("required", typ) + " was not provided."
	case msg == "cannot be null" && isField:
		return lead + fmt.Sprintf("Field %q", field) + ofType("required", typ) + " must not be null."
	case msg == "cannot be null":
		return lead + "A list item" + ofType("non-null", typ) + " must not be null."
	case msg == "unknown field" && isField && parent != nil:
		return lead + fmt.Sprintf("Field %q is not defined by type %q.", string(last), parent.Name())
	case msg == "unknown field" && isField:
		return lead + fmt.Sprintf("Field %q is not defined by the input type.", string(last))
	case variableEnum.MatchString(msg):
		m := variableEnum.FindStringSubmatch(msg)
		return lead + fmt.Sprintf("Value %q does not exist in %q enum.", m[1], m[2]) + p.validValues(m[2])
	case oneOfInput.MatchString(msg):
		return lead + msg + p.members(oneOfInput.FindStringSubmatch(msg)[1])
	default:
		return lead + msg
	}
}

// follow walks a variable's type along a path into its value and returns the type at the end
// and the type of the input object whose field the end is. Without the schema it knows the
// variable's own type and, through the definition validation attached, the fields of its input
// object; deeper types stay unknown (nil).
func (p *presenter) follow(def *ast.VariableDefinition, path ast.Path) (typ, parent *ast.Type) {
	typ = def.Type
	for i, step := range path {
		if typ == nil {
			return nil, nil
		}
		switch s := step.(type) {
		case ast.PathIndex:
			if typ.Elem == nil {
				return nil, nil
			}
			typ = typ.Elem
		case ast.PathName:
			var obj *ast.Definition
			switch {
			case p.schema != nil:
				obj = p.schema.Types[typ.Name()]
			case i == 0 && def.Definition != nil && def.Definition.Name == typ.Name():
				obj = def.Definition
			}
			if obj == nil {
				return nil, nil
			}
			f := obj.Fields.ForName(string(s))
			if f == nil {
				return nil, ast.NamedType(obj.Name, nil)
			}
			parent, typ = ast.NamedType(obj.Name, nil), f.Type
		}
	}
	return typ, parent
}

// validValues lists an enum's values, when the presenter has the schema.
func (p *presenter) validValues(enum string) string {
	if p.schema == nil {
		return ""
	}
	def := p.schema.Types[strings.Trim(enum, "[]!")]
	if def == nil || def.Kind != ast.Enum {
		return ""
	}
	names := make([]string, len(def.EnumValues))
	for i, v := range def.EnumValues {
		names[i] = v.Name
	}
	return " Valid values: " + strings.Join(names, ", ") + "."
}

// members lists a @oneOf input's fields, when the presenter has the schema.
func (p *presenter) members(input string) string {
	if p.schema == nil {
		return ""
	}
	def := p.schema.Types[input]
	if def == nil || len(def.Fields) == 0 {
		return ""
	}
	names := make([]string, len(def.Fields))
	for i, f := range def.Fields {
		names[i] = f.Name
	}
	return " Give exactly one of: " + strings.Join(names, ", ") + "."
}

// ofType is " of required type "String!"", or "" when the type is not known.
func ofType(kind string, t *ast.Type) string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf(" of %s type %q", kind, t.String())
}

// pathString writes a path into a variable as GraphQL users write it: input.ownership[0].owners.
func pathString(path ast.Path) string {
	var b strings.Builder
	for i, step := range path {
		switch s := step.(type) {
		case ast.PathIndex:
			fmt.Fprintf(&b, "[%d]", int(s))
		case ast.PathName:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(string(s))
		}
	}
	return b.String()
}

// argumentPath is, for an error in coercing a field's argument (an enum value in the wrong case,
// a DateTime that is not one), the path of the value at fault within the arguments:
// input.address.zip. gqlgen reports such an error on the field's path followed by the value's,
// and a resolver's error on the field's path alone.
func argumentPath(ctx context.Context, e *gqlerror.Error) ast.Path {
	fc := graphql.GetFieldContext(ctx)
	if e == nil || fc == nil {
		return nil
	}
	field := fc.Path()
	if len(e.Path) <= len(field) || e.Path[:len(field)].String() != field.String() {
		return nil
	}
	if _, ok := e.Path[len(field)].(ast.PathName); !ok {
		return nil
	}
	return e.Path[len(field):]
}

// gqlgenTime is what gqlgen's DateTime says of a value that is not one.
const gqlgenTime = "time should be RFC3339Nano formatted string"

// coercionError is BAD_USER_INPUT naming the argument value at fault as every input error does
// (extensions.field input.maritalStatus), in the words GraphQL validation uses for a variable's
// value, so that an error found while coercing an argument reads as one found before.
func coercionError(wrapper *gqlerror.Error, arg ast.Path, app *Error) *gqlerror.Error {
	what := wrapper.Message
	if app != nil {
		what = app.Message
	}
	if what == gqlgenTime {
		what = "DateTime must be an ISO 8601 date-time such as 2026-11-22T09:30:00Z."
	}
	field := pathString(arg)
	return &gqlerror.Error{
		Message:    fmt.Sprintf("Argument %q got an invalid value at %q; %s", arg[0], field, what),
		Path:       wrapper.Path,
		Locations:  wrapper.Locations,
		Extensions: map[string]any{"code": BadUserInput, "field": field},
	}
}

// BadEnumValue is the error of a value that is none of an enum's, in the words GraphQL
// validation uses for one. gqlparser lets a variable's enum value through when it matches a
// valid one but for case (estate_planning for ESTATE_PLANNING); GraphQL's enums are
// case-sensitive, so the value is refused here, naming the one it was probably meant to be.
func BadEnumValue(enum string, value any, valid []string) *Error {
	s := fmt.Sprint(value)
	msg := fmt.Sprintf("Value %q does not exist in %q enum.", s, enum)
	for _, v := range valid {
		if strings.EqualFold(v, s) {
			msg += fmt.Sprintf(" Did you mean the enum value %q?", v)
			break
		}
	}
	return New(BadUserInput, msg)
}

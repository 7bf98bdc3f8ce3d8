package main

import (
	"fmt"
	"go/types"
	"strconv"
	"strings"
	"text/template"

	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/vektah/gqlparser/v2/ast"
)

// funcs are the template functions our changes to gqlgen's templates use.
func funcs() template.FuncMap {
	return template.FuncMap{
		"fromMemory":        fromMemory,
		"ioFields":          ioFields,
		"leafAlwaysNeedsFC": leafAlwaysNeedsFC,
		"leafSize":          leafSize,
		"inPlace":           inPlace,
		"inPlaceRefused":    inPlaceRefused,
		"nodeID":            nodeID,
		"writerOf":          writerOf,
		"read":              read,
	}
}

// fromMemory reports whether a field is answered by reading its object's struct field, or
// calling a method that takes no context, cannot fail and takes no arguments, with no
// directive to apply. Such a field does no I/O and cannot fail, so it needs none of what
// gqlgen's ResolveField gives a field: a goroutine, a context of its own before it has a
// child, panic recovery, the field middleware.
func fromMemory(f *codegen.Field) bool {
	if f.Object.Root || f.Object.Stream || f.IsResolver || f.IsBatch() || f.IsMap() ||
		f.MethodHasContext || len(f.Args) > 0 || f.HasDirectives() || f.HasHaser {
		return false
	}
	if f.IsMethod() {
		return f.NoErr && !f.VOkFunc
	}
	return f.IsVariable()
}

// read is the Go expression that reads a field fromMemory answers.
func read(f *codegen.Field) string {
	if f.IsMethod() {
		return f.GoReceiverName + "." + f.GoFieldName + "()"
	}
	return f.GoReceiverName + "." + f.GoFieldName
}

// ioFields lists, quoted for a case clause, the fields of an object that do I/O: those gqlgen
// resolves concurrently, by a resolver or a method that takes a context.
func ioFields(o *codegen.Object) string {
	var names []string
	for _, f := range o.Fields {
		if f.IsConcurrent() {
			names = append(names, strconv.Quote(f.Name))
		}
	}
	return strings.Join(names, ", ")
}

// leafAlwaysNeedsFC reports whether marshalling a scalar or enum value of t may report an
// error whichever value it has: a marshaller that takes a context (it may refuse a value, such
// as a NaN float) or a list whose elements may be null where the schema says they cannot.
// Errors carry the field's path, which the field's context holds.
func leafAlwaysNeedsFC(t *config.TypeReference) bool {
	for ; t != nil; t = t.Elem() {
		if t.IsContext {
			return true
		}
		if !t.IsSlice() {
			return false
		}
		if e := t.Elem(); e != nil && e.IsNilable() && e.GQL.NonNull {
			return true
		}
	}
	return false
}

// leafSize is a Go expression for the bytes the scalar or enum value v of type t takes in a
// response, as the response budget counts them: strings by their length, numbers and times
// by their longest form, anything else by gqlrun.Size.
func leafSize(t *config.TypeReference, v string) string {
	switch u := t.GO.Underlying().(type) {
	case *types.Basic:
		return basicSize(u, v)
	case *types.Pointer:
		if b, ok := u.Elem().Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
			return fmt.Sprintf("gqlrun.StringPtr(%s)", v)
		}
		if b, ok := u.Elem().Underlying().(*types.Basic); ok {
			return basicSize(b, "") // nil is shorter than any of them
		}
	case *types.Slice:
		if b, ok := u.Elem().Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
			return fmt.Sprintf("gqlrun.Strings(%s)", v)
		}
	}
	return fmt.Sprintf("gqlrun.Size(%s)", v)
}

func basicSize(b *types.Basic, v string) string {
	switch info := b.Info(); {
	case info&types.IsString != 0:
		if v == "" {
			return "0"
		}
		return fmt.Sprintf("int64(len(%s))+2", v)
	case info&types.IsBoolean != 0:
		return "5"
	case info&types.IsInteger != 0:
		return "20"
	case info&types.IsFloat != 0:
		return "24"
	}
	return "8"
}

// inPlace is a Go expression for the marshaller of a field's scalar or enum value written
// where it lies in its object, through a pointer, which costs no allocation; or "" when the
// field's value is not a struct field of that kind, or is one that may be null although the
// schema says it cannot (its error needs the field's context).
func inPlace(f *codegen.Field) string {
	if !f.IsVariable() {
		return ""
	}
	if _, ok := f.Object.Reference().(*types.Pointer); !ok {
		return "" // the field of a copy: taking its address would allocate the copy
	}
	t := f.TypeReference
	if t.IsSlice() {
		return ""
	}
	field := f.GoReceiverName + "." + f.GoFieldName
	_, isPtr := t.GO.(*types.Pointer)
	if isPtr && t.GQL.NonNull {
		return ""
	}
	if t.Definition.Kind == ast.Enum && t.IsMarshaler && !t.IsContext && t.Marshaler == nil {
		if isPtr {
			return fmt.Sprintf("gqlrun.Nullable(%s)", field)
		}
		return "&" + field
	}
	if t.Marshaler == nil {
		return ""
	}
	writer := inPlaceWriters[marshalerKey(t)]
	switch {
	case writer == "":
		return ""
	case isPtr:
		return fmt.Sprintf("gqlrun.Nullable((*gqlrun.%s)(%s))", writer, field)
	default:
		return fmt.Sprintf("(*gqlrun.%s)(&%s)", writer, field)
	}
}

// nodeIDType is the type of an id gqlrun.NodeID writes: nodeid.ID.
const nodeIDType = "github.com/advisorhq/gateway/internal/nodeid.ID"

// nodeID reports whether a field is an object's global id that gqlrun.NodeID writes, encoded
// straight into the response: a field answered from memory by an ID method returning a
// string, of an object that also has NodeID, which gives the same id unencoded (the objects
// make ID of NodeID). The object must be a pointer, so the writer is one too and costs no
// allocation in an interface.
func nodeID(f *codegen.Field) bool {
	if !fromMemory(f) || !f.IsMethod() || f.GoFieldName != "ID" || f.TypeReference.Definition.Name != "ID" {
		return false
	}
	if b, ok := f.TypeReference.GO.(*types.Basic); !ok || b.Kind() != types.String {
		return false
	}
	ptr, ok := f.Object.Reference().(*types.Pointer)
	if !ok {
		return false
	}
	m := types.NewMethodSet(ptr).Lookup(nil, "NodeID")
	if m == nil {
		return false
	}
	sig, ok := m.Type().(*types.Signature)
	return ok && sig.Params().Len() == 0 && sig.Results().Len() == 1 &&
		types.TypeString(sig.Results().At(0).Type(), nil) == nodeIDType
}

// writerOf is the gqlrun writer (see inPlaceWriters) of the values of scalar type t, which
// its marshaller refuses none of, for values that are not a struct's fields: "" when t has
// none. A pointer is written where it points; a string is kept by Lane.StringValue, and a
// Boolean is one of gqlrun.BooleanOf's two.
func writerOf(t *config.TypeReference) string {
	if t.Marshaler == nil || t.IsSlice() || t.IsContext || t.IsTargetNilable() || t.HasEnumValues() || t.CastType != nil {
		return ""
	}
	key := marshalerKey(t)
	if inPlaceChecks[key] != "" {
		return ""
	}
	return inPlaceWriters[key]
}

// marshalerKey names t's marshaller and the basic Go type it writes (through a pointer), as
// inPlaceWriters and inPlaceChecks are keyed; "" when t's Go type is not a basic one.
func marshalerKey(t *config.TypeReference) string {
	value := t.GO
	if ptr, ok := value.(*types.Pointer); ok {
		value = ptr.Elem()
	}
	b, ok := value.(*types.Basic)
	if !ok {
		return ""
	}
	return t.Marshaler.FullName() + " " + b.Name()
}

// inPlaceWriters are gqlrun's in-place writers by the gqlgen marshaller they stand for and
// the Go type they write.
var inPlaceWriters = map[string]string{
	"github.com/99designs/gqlgen/graphql.MarshalString string":        "String",
	"github.com/99designs/gqlgen/graphql.MarshalID string":            "String",
	"github.com/99designs/gqlgen/graphql.MarshalFloatContext float64": "Float",
	"github.com/99designs/gqlgen/graphql.MarshalInt int":              "Int",
	"github.com/99designs/gqlgen/graphql.MarshalInt64 int64":          "Int64",
	"github.com/99designs/gqlgen/graphql.MarshalBoolean bool":         "Boolean",
	// Written in place only within 32 bits: see inPlaceRefused.
	"github.com/advisorhq/gateway/internal/gqlscalar.MarshalInt int":      "Int",
	"github.com/advisorhq/gateway/internal/gqlscalar.MarshalBigInt int64": "BigInt",
}

// inPlaceChecks are, by marshaller, gqlrun's tests of a value the marshaller refuses, which
// the in-place writer cannot refuse (it has no context to report an error in).
var inPlaceChecks = map[string]string{
	"github.com/advisorhq/gateway/internal/gqlscalar.MarshalInt int": "Beyond32",
}

// inPlaceRefused is a Go condition, true when the value of a field inPlace writes is one its
// marshaller refuses, so that the field is marshalled instead and the refusal reported; or ""
// when the marshaller refuses nothing.
func inPlaceRefused(f *codegen.Field) string {
	t := f.TypeReference
	if inPlace(f) == "" || t.Marshaler == nil {
		return ""
	}
	_, isPtr := t.GO.(*types.Pointer)
	check := inPlaceChecks[marshalerKey(t)]
	field := f.GoReceiverName + "." + f.GoFieldName
	switch {
	case check == "":
		return ""
	case isPtr:
		return fmt.Sprintf("gqlrun.%sPtr(%s)", check, field)
	default:
		return fmt.Sprintf("gqlrun.%s(%s)", check, field)
	}
}

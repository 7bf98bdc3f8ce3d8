// Package gqlscalar marshals the gateway's integer scalars: GraphQL's Int, held to the 32 bits
// the GraphQL specification gives it, and BigInt, for the upstream's integers that may be wider.
//
// gqlgen's own Int marshallers write and accept any int64, which strict clients and proxies
// (graphql-js among them) refuse in an Int. Binding Int here (gqlgen.yml) makes a value outside
// 32 bits an error, in either direction, instead of an answer a client cannot read.
package gqlscalar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/apperr"
)

// MaxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER, 2^53−1: the widest integer a JSON
// number carries to every client without rounding.
const MaxSafeInteger = 1<<53 - 1

// Fits32 reports whether v is a GraphQL Int: "A signed 32-bit integer".
func Fits32[T ~int | ~int64](v T) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

// MarshalInt writes an Int, or refuses a value outside 32 bits with a field error, in
// graphql-js's words, rather than write a number clients cannot take as an Int.
func MarshalInt(v int) graphql.ContextMarshaler {
	if !Fits32(v) {
		// The gateway's mistake (a bound the schema states did not hold), so INTERNAL, and
		// logged; the value is no secret, so the message says what went wrong.
		msg := fmt.Sprintf("Int cannot represent non 32-bit signed integer value: %d", v)
		return refused{apperr.Wrap(apperr.Internal, msg, errors.New(msg))}
	}
	return writer(v)
}

// UnmarshalInt reads an Int argument or input field: a whole number within 32 bits. GraphQL
// validation holds a literal to that already; this holds a variable to it. A string of digits
// is taken as gqlgen takes it, as validation lets it through.
func UnmarshalInt(_ context.Context, v any) (int, error) {
	n, ok := integer(v)
	if !ok && !wide(v) {
		return 0, apperr.New(apperr.BadUserInput, fmt.Sprintf("Int cannot represent non-integer value: %s", show(v)))
	}
	if !ok || !Fits32(n) {
		return 0, apperr.New(apperr.BadUserInput, fmt.Sprintf("Int cannot represent non 32-bit signed integer value: %s", show(v)))
	}
	return int(n), nil
}

// MarshalBigInt writes a BigInt as graphql-scalars' BigInt does: a JSON number within
// ±(2^53−1), which every client reads exactly, and a string of its decimal digits beyond,
// which a JavaScript client would otherwise round without a word.
func MarshalBigInt(v int64) graphql.Marshaler {
	return bigWriter(v)
}

// UnmarshalBigInt reads a BigInt: a JSON or GraphQL integer, or a string of decimal digits (how
// a client sends a value beyond 2^53−1 without rounding it), within 64 bits.
func UnmarshalBigInt(v any) (int64, error) {
	n, ok := integer(v)
	if !ok {
		return 0, apperr.New(apperr.BadUserInput,
			fmt.Sprintf("BigInt cannot represent %s: it must be a whole number from %d to %d, as a number or a string of digits",
				show(v), int64(math.MinInt64), int64(math.MaxInt64)))
	}
	return n, nil
}

// integer is v as a whole number within int64: a Go integer or a whole float (as JSON decodes
// a number without UseNumber), a json.Number, or a string of decimal digits.
func integer(v any) (int64, bool) {
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case float64:
		if v != math.Trunc(v) || v < math.MinInt64 || v >= math.MaxInt64 {
			return 0, false
		}
		return int64(v), true
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 64)
		return n, err == nil
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	return 0, false
}

// wide reports whether v is a JSON number of digits too many for int64.
func wide(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	_, err := strconv.ParseInt(string(n), 10, 64)
	return errors.Is(err, strconv.ErrRange)
}

// show is a refused value as the client wrote it.
func show(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case nil:
		return "null"
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// writer writes an Int already known to fit.
type writer int64

func (v writer) MarshalGQLContext(_ context.Context, w io.Writer) error {
	_, err := io.WriteString(w, strconv.FormatInt(int64(v), 10))
	return err
}

// bigWriter writes a BigInt.
type bigWriter int64

func (v bigWriter) MarshalGQL(w io.Writer) { WriteBigInt(w, int64(v)) }

// WriteBigInt writes v in BigInt's wire form.
func WriteBigInt(w io.Writer, v int64) {
	s := strconv.FormatInt(v, 10)
	if v > MaxSafeInteger || v < -MaxSafeInteger {
		io.WriteString(w, `"`+s+`"`)
		return
	}
	io.WriteString(w, s)
}

// refused is an Int the gateway will not write. It writes null, with its error, where gqlgen's
// executor writes it; the gateway's executor asks Refusal first, so a non-null field's null
// reaches its parent as GraphQL's null propagation requires (gqlrun.Refusal).
type refused struct{ err error }

func (r refused) MarshalGQLContext(context.Context, io.Writer) error { return r.err }

// Refusal is the error of a marshaller that refuses its value, or nil.
func (r refused) Refusal() error { return r.err }

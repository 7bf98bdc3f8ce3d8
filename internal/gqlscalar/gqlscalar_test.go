package gqlscalar_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/gqlscalar"
)

// The GraphQL specification: "Int: A signed 32-bit integer". A value beyond is refused both
// ways, in graphql-js's words.
func TestIntHoldsThirtyTwoBits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		in      any
		want    int
		message string
	}{
		{"the largest Int", json.Number("2147483647"), math.MaxInt32, ""},
		{"the smallest Int", json.Number("-2147483648"), math.MinInt32, ""},
		{"a Go int from a literal", int64(20), 20, ""},
		{"a whole float, as JSON decodes it", float64(50), 50, ""},
		{"one beyond", json.Number("2147483648"), 0, "Int cannot represent non 32-bit signed integer value: 2147483648"},
		{"one below", int64(math.MinInt32 - 1), 0, "Int cannot represent non 32-bit signed integer value: -2147483649"},
		{"beyond 64 bits", json.Number("99999999999999999999"), 0, "Int cannot represent non 32-bit signed integer value: 99999999999999999999"},
		{"a fraction", json.Number("1.5"), 0, "Int cannot represent non-integer value: 1.5"},
		{"a boolean", true, 0, "Int cannot represent non-integer value: true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := gqlscalar.UnmarshalInt(context.Background(), tc.in)
			if tc.message == "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %d, %v; want %d", got, err, tc.want)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.BadUserInput || e.Message != tc.message {
				t.Fatalf("got %v, want BAD_USER_INPUT %q", err, tc.message)
			}
		})
	}
}

func TestIntRefusesToWriteAValueBeyondThirtyTwoBits(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := gqlscalar.MarshalInt(math.MaxInt32).MarshalGQLContext(context.Background(), &b); err != nil || b.String() != "2147483647" {
		t.Fatalf("wrote %q, %v; want 2147483647", b.String(), err)
	}
	b.Reset()
	err := gqlscalar.MarshalInt(math.MaxInt32+1).MarshalGQLContext(context.Background(), &b)
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.Internal || e.Message != "Int cannot represent non 32-bit signed integer value: 2147483648" || b.Len() != 0 {
		t.Fatalf("wrote %q, %v; want nothing and an INTERNAL error in graphql-js's words", b.String(), err)
	}
}

// graphql-scalars' BigInt (its @specifiedBy): a number within JavaScript's safe integers, the
// digits as a string beyond, so that no client rounds it.
func TestBigIntIsANumberWithinSafeIntegersAndAStringBeyond(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    int64
		want string
	}{
		{0, "0"},
		{3_000_000_000, "3000000000"},
		{gqlscalar.MaxSafeInteger, "9007199254740991"},
		{-gqlscalar.MaxSafeInteger, "-9007199254740991"},
		{gqlscalar.MaxSafeInteger + 1, `"9007199254740992"`},
		{-gqlscalar.MaxSafeInteger - 1, `"-9007199254740992"`},
		{math.MaxInt64, `"9223372036854775807"`},
		{math.MinInt64, `"-9223372036854775808"`},
	} {
		var b bytes.Buffer
		gqlscalar.MarshalBigInt(tc.v).MarshalGQL(&b)
		if b.String() != tc.want {
			t.Errorf("%d: wrote %s, want %s", tc.v, b.String(), tc.want)
		}
	}
}

func TestBigIntTakesANumberOrAStringOfDigits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   any
		want int64
		ok   bool
	}{
		{"a literal", int64(5_000_000_000), 5_000_000_000, true},
		{"a JSON number", json.Number("9007199254740993"), 9_007_199_254_740_993, true},
		{"a string of digits", "9007199254740993", 9_007_199_254_740_993, true},
		{"a negative string", "-42", -42, true},
		{"the largest int64", "9223372036854775807", math.MaxInt64, true},
		{"beyond 64 bits", "9223372036854775808", 0, false},
		{"a fraction", json.Number("1.5"), 0, false},
		{"a word", "many", 0, false},
		{"a boolean", false, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := gqlscalar.UnmarshalBigInt(tc.in)
			if tc.ok {
				if err != nil || got != tc.want {
					t.Fatalf("got %d, %v; want %d", got, err, tc.want)
				}
				return
			}
			if e, ok := apperr.As(err); !ok || e.Code != apperr.BadUserInput {
				t.Fatalf("got %d, %v; want BAD_USER_INPUT", got, err)
			}
		})
	}
}

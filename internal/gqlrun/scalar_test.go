package gqlrun

import (
	"bytes"
	"context"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/gqlscalar"
	"github.com/advisorhq/gateway/internal/nodeid"
)

// The in-place writers stand in for gqlgen's marshallers, so a response's bytes must not
// depend on which wrote them: to a bytes.Buffer, as the executor writes, and to any writer.
func TestInPlaceWritersWriteWhatGqlgenWrites(t *testing.T) {
	t.Parallel()
	str := func(s string) graphql.Marshaler { v := String(s); return &v }
	flt := func(f float64) graphql.Marshaler { v := Float(f); return &v }
	big := func(i int64) graphql.Marshaler { v := BigInt(i); return &v }
	for _, tc := range []struct {
		name       string
		ours, want graphql.Marshaler
	}{
		{"a plain string", str("Eleanor Hartwell"), graphql.MarshalString("Eleanor Hartwell")},
		{"escapes", str("a\"b\\c\nd\re\tf\x01g\x1f"), graphql.MarshalString("a\"b\\c\nd\re\tf\x01g\x1f")},
		{"unicode", str("Zoë — 信託 \u2028"), graphql.MarshalString("Zoë — 信託 \u2028")},
		{"empty", str(""), graphql.MarshalString("")},
		{"invalid UTF-8", str("a\xffb\xc3"), graphql.MarshalString("a\xffb\xc3")},
		{"only a quote", str(`"`), graphql.MarshalString(`"`)},
		{"DEL, which JSON does not escape", str("a\x7fb"), graphql.MarshalString("a\x7fb")},
		{"a whole float", flt(50), contextual(graphql.MarshalFloatContext(50))},
		{"a fraction", flt(33.333333333333336), contextual(graphql.MarshalFloatContext(33.333333333333336))},
		{"a tiny float", flt(1e-7), contextual(graphql.MarshalFloatContext(1e-7))},
		{"a huge float", flt(1e21), contextual(graphql.MarshalFloatContext(1e21))},
		{"a negative int", func() graphql.Marshaler { v := Int(-42); return &v }(), graphql.MarshalInt(-42)},
		{"a big int64", func() graphql.Marshaler { v := Int64(math.MaxInt64); return &v }(), graphql.MarshalInt64(math.MaxInt64)},
		{"a BigInt within safe integers", big(-(1<<53 - 1)), gqlscalar.MarshalBigInt(-(1<<53 - 1))},
		{"a BigInt beyond safe integers", big(1 << 53), gqlscalar.MarshalBigInt(1 << 53)},
		{"the largest BigInt", big(math.MaxInt64), gqlscalar.MarshalBigInt(math.MaxInt64)},
		{"the smallest BigInt", big(math.MinInt64), gqlscalar.MarshalBigInt(math.MinInt64)},
		{"an Int within 32 bits", func() graphql.Marshaler { v := Int(math.MinInt32); return &v }(), contextual(gqlscalar.MarshalInt(math.MinInt32))},
		{"true", func() graphql.Marshaler { v := Boolean(true); return &v }(), graphql.MarshalBoolean(true)},
		{"false", func() graphql.Marshaler { v := Boolean(false); return &v }(), graphql.MarshalBoolean(false)},
		{"null", Nullable((*String)(nil)), graphql.Null},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want bytes.Buffer
			tc.want.MarshalGQL(&want)
			var buf bytes.Buffer
			tc.ours.MarshalGQL(&buf)
			var sb strings.Builder
			tc.ours.MarshalGQL(&sb)
			if buf.String() != want.String() || sb.String() != want.String() {
				t.Fatalf("wrote %q and %q, gqlgen writes %q", buf.String(), sb.String(), want.String())
			}
		})
	}
}

// node is an object with a global id, as the executor's objects have them.
type node struct{ wid string }

func (n *node) ID() string        { return n.NodeID().String() }
func (n *node) NodeID() nodeid.ID { return nodeid.New("TopAccount", n.wid) }

// A selected global id is written as gqlgen's MarshalID writes the object's ID, and costs no
// allocation: the family query selects one per card.
func TestANodeIDIsWrittenAsGqlgenWritesTheIdAndAllocatesNothing(t *testing.T) {
	for _, n := range []*node{{"3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f"}, {"w-1"}, {strings.Repeat("w", 300)}} {
		var want bytes.Buffer
		graphql.MarshalID(n.ID()).MarshalGQL(&want)
		var buf bytes.Buffer
		IDOf(n).MarshalGQL(&buf)
		var sb strings.Builder
		IDOf(n).MarshalGQL(&sb)
		if buf.String() != want.String() || sb.String() != want.String() {
			t.Errorf("wrote %q and %q, gqlgen writes %q", buf.String(), sb.String(), want.String())
		}
	}
	n := &node{"3f2b6c1e-8a4d-4c2b-9e7f-0a1b2c3d4e5f"}
	buf := bytes.NewBuffer(make([]byte, 0, 1024))
	allocs := testing.AllocsPerRun(100, func() {
		buf.Reset()
		var m graphql.Marshaler = IDOf(n)
		m.MarshalGQL(buf)
	})
	if allocs != 0 {
		t.Errorf("writing an id allocated %v times, want none", allocs)
	}
}

// A string a method returns (a card's displayName) is kept with the execution's strings, a
// chunk at a time, and written as gqlgen writes it.
func TestStringValuesAreWrittenAsGqlgenWritesThemAndAllocatedTogether(t *testing.T) {
	s := New()
	values := []string{"Eleanor Hartwell", "a\"b\\c\nd", ""}
	var ms []graphql.Marshaler
	for _, v := range values {
		ms = append(ms, s.StringValue(v))
	}
	for i, v := range values {
		var want, buf bytes.Buffer
		graphql.MarshalString(v).MarshalGQL(&want)
		ms[i].MarshalGQL(&buf)
		if buf.String() != want.String() {
			t.Errorf("wrote %q, gqlgen writes %q", buf.String(), want.String())
		}
	}
	const n = 1000
	allocs := testing.AllocsPerRun(10, func() {
		for range n {
			s.StringValue("Eleanor Hartwell")
		}
	})
	// A chunk of full size is two allocations: itself, and its place among those End gives back.
	if want := 2 * (n/maxChunk + 1); allocs > float64(want) {
		t.Errorf("%d strings allocated %v times, want at most %d", n, allocs, want)
	}
}

// A Boolean a method returns (an ownership's joint) is written as gqlgen writes it, from one of
// two values, and costs no allocation.
func TestBooleanOfWritesWhatGqlgenWritesAndAllocatesNothing(t *testing.T) {
	for _, b := range []bool{false, true, false} {
		var want, buf bytes.Buffer
		graphql.MarshalBoolean(b).MarshalGQL(&want)
		BooleanOf(b).MarshalGQL(&buf)
		if buf.String() != want.String() {
			t.Errorf("BooleanOf(%v) wrote %q, gqlgen writes %q", b, buf.String(), want.String())
		}
	}
	buf := bytes.NewBuffer(make([]byte, 0, 64))
	allocs := testing.AllocsPerRun(100, func() {
		buf.Reset()
		BooleanOf(true).MarshalGQL(buf)
		BooleanOf(false).MarshalGQL(buf)
	})
	if allocs != 0 {
		t.Errorf("writing Booleans allocated %v times, want none", allocs)
	}
}

func TestFloatWritesNullForWhatJSONCannotHold(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		v := Float(f)
		var buf bytes.Buffer
		v.MarshalGQL(&buf)
		if buf.String() != "null" {
			t.Errorf("%v: wrote %q, want null", f, buf.String())
		}
	}
}

// contextual is a context marshaller as gqlgen writes it when it succeeds.
func contextual(m graphql.ContextMarshaler) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_ = m.MarshalGQLContext(context.Background(), w)
	})
}

// The executor writes an Int in place only within 32 bits; beyond, its marshaller refuses it,
// and Refusal says so before anything is written.
func TestBeyond32SendsAnIntToItsMarshallerWhichRefusesIt(t *testing.T) {
	t.Parallel()
	big, small := math.MaxInt32+1, math.MinInt32
	if !Beyond32(big) || Beyond32(small) || !Beyond32Ptr(&big) || Beyond32Ptr(nil) {
		t.Fatal("Beyond32 does not draw the line at 32 bits")
	}
	if Refusal(gqlscalar.MarshalInt(big)) == nil || Refusal(gqlscalar.MarshalInt(small)) != nil {
		t.Fatal("Refusal does not report gqlscalar's refusal")
	}
	if Refusal(graphql.MarshalFloatContext(1.5)) != nil {
		t.Fatal("Refusal reports a marshaller that writes its value")
	}
}

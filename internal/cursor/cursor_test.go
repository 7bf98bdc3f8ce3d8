package cursor

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/apperr"
)

func TestACursorDecodesToItsKeyOnlyInItsOwnList(t *testing.T) {
	good := Encode(Documents, "firm\x00wid-1", "0b6f1c3e-8f2a-4d7b-9c1e-2a3b4c5d6e7f")
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	for _, tc := range []struct {
		name, kind, scope, cursor string
		k                         Kind
		want                      string // the message; empty, the key decodes
	}{
		{"its own list", "", "firm\x00wid-1", good, Documents, ""},
		// "Cursors are opaque ... a tampered cursor is a clear BAD_USER_INPUT."
		{"tampered: a byte of its key changed", "", "firm\x00wid-1", flip(len(raw) - 6), Documents,
			"after is not a cursor the gateway made, or it was changed: pass a cursor of TopAccount.documents's edges or pageInfo as it was given"},
		{"tampered: its version changed", "", "firm\x00wid-1", flip(0), Documents, "after is not a cursor the gateway made"},
		{"forged: not base64url", "", "firm\x00wid-1", "not a cursor!", Documents, "after is not a cursor the gateway made"},
		{"forged: padded base64", "", "firm\x00wid-1", good + "=", Documents, "after is not a cursor the gateway made"},
		{"forged: too short", "", "firm\x00wid-1", "AQI", Documents, "after is not a cursor the gateway made"},
		{"foreign: another connection's", "", "firm\x00wid-1", good, TopAccounts,
			"after is a cursor of TopAccount.documents, not of Query.topAccounts: pass a cursor of the list being paged"},
		{"foreign: another top account's list", "", "firm\x00wid-2", good, Documents,
			"after is a cursor of another list of TopAccount.documents (another firm's, or another top account's): pass a cursor of the list being paged"},
		{"foreign: another firm's list", "", "other\x00wid-1", good, Documents, "after is a cursor of another list"},
		{"oversized", "", "firm\x00wid-1", strings.Repeat("A", MaxLen+1), Documents,
			"after is not a cursor: it is 1025 characters long, and a cursor is at most 1024"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := Decode("after", tc.k, tc.scope, tc.cursor)
			if tc.want == "" {
				if err != nil || key != "0b6f1c3e-8f2a-4d7b-9c1e-2a3b4c5d6e7f" {
					t.Fatalf("got %q, %v; want the key", key, err)
				}
				return
			}
			var e *apperr.Error
			if !errors.As(err, &e) || e.Code != apperr.BadUserInput || e.Field != "after" || !strings.HasPrefix(e.Message, tc.want) {
				t.Fatalf("got %q, %v; want BAD_USER_INPUT on after: %q", key, err, tc.want)
			}
		})
	}
}

func TestACursorIsOpaqueAndStable(t *testing.T) {
	a, b := EncodeOffset(TopAccounts, "firm", 41), EncodeOffset(TopAccounts, "firm", 41)
	if a != b {
		t.Errorf("the same position encodes as %q and %q, want one cursor", a, b)
	}
	if strings.Contains(a, "41") || strings.Contains(a, "firm") || strings.ContainsAny(a, "+/=") {
		t.Errorf("cursor %q shows what it holds or is not unpadded base64url", a)
	}
	if n, err := DecodeOffset("after", TopAccounts, "firm", a, 1000); err != nil || n != 41 {
		t.Errorf("got %d, %v; want 41", n, err)
	}
	if _, err := DecodeOffset("after", TopAccounts, "firm", a, 40); err == nil {
		t.Error("an offset beyond the bound decoded, want it refused")
	}
}

// The specification's pagination algorithm: after and before bound the list, then first keeps
// the first of what is left and last the last.
func TestWindowFollowsTheSpecificationsPaginationAlgorithm(t *testing.T) {
	for _, tc := range []struct {
		name       string
		r          Request
		total      int
		start, end int
	}{
		{"first", Request{After: -1, Before: -1, First: 3}, 10, 0, 3},
		{"first after", Request{After: 2, Before: -1, First: 3}, 10, 3, 6},
		{"first after, at the end", Request{After: 8, Before: -1, First: 3}, 10, 9, 10},
		{"first after the end", Request{After: 12, Before: -1, First: 3}, 10, 10, 10},
		{"last", Request{After: -1, Before: -1, Last: 3}, 10, 7, 10},
		{"last before", Request{After: -1, Before: 5, Last: 3}, 10, 2, 5},
		{"last before, at the start", Request{After: -1, Before: 2, Last: 3}, 10, 0, 2},
		{"after and before", Request{After: 1, Before: 5}, 10, 2, 5},
		{"before beyond the end", Request{After: -1, Before: 50, Last: 3}, 10, 7, 10},
		{"neither first nor last", Request{After: -1, Before: -1}, 4, 0, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s, e := tc.r.Window(tc.total); s != tc.start || e != tc.end {
				t.Errorf("got [%d, %d), want [%d, %d)", s, e, tc.start, tc.end)
			}
		})
	}
}

func TestPageSizesOutOfRangeAreRefusedNamingTheArgument(t *testing.T) {
	o := Offsets{Kind: TopAccounts, Scope: "firm", Max: 100, Default: 20}
	one, zero, big := 1, 0, 101
	for _, tc := range []struct {
		name, field, want string
		a                 Args
	}{
		{"first of zero", "first", "first must be from 1 to 100, got 0", Args{First: &zero}},
		{"first over the upstream's page size", "first", "first must be from 1 to 100, got 101", Args{First: &big}},
		{"last over the upstream's page size", "last", "last must be from 1 to 100, got 101", Args{Last: &big}},
		{"first and last together", "last", "first and last can't be given together", Args{First: &one, Last: &one}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := o.Parse(tc.a)
			var e *apperr.Error
			if !errors.As(err, &e) || e.Field != tc.field || !strings.HasPrefix(e.Message, tc.want) {
				t.Errorf("got %v, want BAD_USER_INPUT on %s: %q", err, tc.field, tc.want)
			}
		})
	}
}

// Edges made in one piece are still one edge each, filled in order.
func TestEdgesAreFilledInOrderEachItsOwn(t *testing.T) {
	type edge struct{ i int }
	got := Edges(3, func(i int, e *edge) { e.i = i * 10 })
	if len(got) != 3 || got[0].i != 0 || got[1].i != 10 || got[2].i != 20 || got[0] == got[1] {
		t.Errorf("Edges(3) = %v %v %v, want three edges 0, 10, 20", got[0], got[1], got[2])
	}
	if got := Edges(0, func(int, *edge) { t.Error("filled an edge of an empty page") }); len(got) != 0 {
		t.Errorf("Edges(0) = %d edges", len(got))
	}
}

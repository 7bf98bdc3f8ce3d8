package family_test

import (
	"testing"

	"github.com/advisorhq/gateway/internal/family"
)

// A person is named by the names the card has, trimmed and joined by spaces, blank ones left
// out; by the external id when there are none.
func TestAnIndividualsDisplayNameIsItsNames(t *testing.T) {
	t.Parallel()
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		name          string
		first, middle *string
		last, ext     *string
		want          string
	}{
		{"all three", s("Ann"), s("B."), s("Lee"), s("e"), "Ann B. Lee"},
		{"first only", s("Ann"), nil, nil, s("e"), "Ann"},
		{"last only, padded", nil, s("  "), s(" Lee\t"), nil, "Lee"},
		{"first and last around a blank", s(" Ann "), s(""), s("Lee"), nil, "Ann Lee"},
		{"none: the external id", nil, s(" "), nil, s("ext-1"), "ext-1"},
		{"none and no external id", nil, nil, nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := &family.Individual{Card: family.Card{ExternalID: tc.ext}, FirstName: tc.first, MiddleName: tc.middle, LastName: tc.last}
			if got := i.DisplayName(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

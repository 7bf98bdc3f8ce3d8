package advisorspec_test

import (
	"slices"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// The gateway checks bodies before calling the upstream, without the contacts at hand: it
// passes no lookup, and must still get the upstream's message for every rule that needs none.
func TestContactChecksWithoutALookup(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		kind       advisorspec.Kind
		message    string
	}{
		{"references are not looked up", `{"type":"Trust","external_id":"t","legal_name":"T","trust_creator":["anyone"]}`, 0, ""},
		{"a self reference is still refused", `{"type":"Trust","external_id":"t","legal_name":"T","trust_creator":["t"]}`,
			advisorspec.Reference, "trust_creator must not reference the contact itself"},
		{"shape comes before references", `{"type":"Trust","external_id":"t","trust_creator":["t"]}`,
			advisorspec.Invalid, "legal_name is required"},
		{"a body that is not an object", `[1]`, advisorspec.Malformed, "Request body must be a JSON object"},
		{"two JSON values", `{"type":"Individual","external_id":"a"} {}`, advisorspec.Malformed, "Request body must be a single JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := advisorspec.CheckNewContact([]byte(tc.body), advisorspec.TopAccountScope, nil)
			switch {
			case tc.message == "" && err != nil:
				t.Errorf("got %q, want no error", err.Message)
			case tc.message != "" && (err == nil || err.Message != tc.message || err.Kind != tc.kind):
				t.Errorf("got %+v, want kind %d %q", err, tc.kind, tc.message)
			}
		})
	}
}

func TestContactFieldsFollowTheSpecificationTables(t *testing.T) {
	for _, tc := range []struct {
		typ   advisorspec.ContactType
		scope advisorspec.Scope
		want  []string
	}{
		{advisorspec.Individual, advisorspec.TopAccountScope, []string{"first_name", "middle_name", "last_name"}},
		{advisorspec.Individual, advisorspec.ClientScope, []string{"first_name", "middle_name", "last_name", "dob"}},
		{advisorspec.Trust, advisorspec.TopAccountScope, []string{"legal_name", "trust_type", "trust_creator", "initial_trustee", "governing_state", "trust_creation_date"}},
		{advisorspec.Entity, advisorspec.TopAccountScope, []string{"legal_name", "incorporation_state", "incorporation_form", "ownership"}},
		{advisorspec.Charity, advisorspec.TopAccountScope, []string{"legal_name", "ein", "city", "state", "address_formatted", "notes"}},
		{advisorspec.Will, advisorspec.TopAccountScope, []string{"legal_name", "will_type", "governing_state", "will_creation_date", "testator", "executor"}},
		{advisorspec.Class, advisorspec.TopAccountScope, []string{"legal_name", "notes", "current_parties"}},
	} {
		got := advisorspec.ContactFields(tc.typ, tc.scope)
		slices.Sort(got)
		slices.Sort(tc.want)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s fields: got %v, want %v", tc.typ, got, tc.want)
		}
	}
}

func TestIsDateAcceptsOnlyRealDatesWrittenYYYYMMDD(t *testing.T) {
	for s, want := range map[string]bool{
		"2024-02-29": true, "2023-02-29": false, "2023-04-31": false, "2023-13-01": false,
		"2023-1-05": false, "05/01/2023": false, "2023-01-05T00:00:00Z": false, "": false, " 2023-01-05": false,
	} {
		if got := advisorspec.IsDate(s); got != want {
			t.Errorf("IsDate(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestStateCodesAreSortedForBinarySearch(t *testing.T) {
	if !slices.IsSorted(advisorspec.StateCodes) {
		t.Fatal("StateCodes must stay sorted: IsStateCode searches it")
	}
	for _, s := range []string{"AK", "WY", "DC", "PR"} {
		if !advisorspec.IsStateCode(s) {
			t.Errorf("IsStateCode(%q) = false", s)
		}
	}
	if advisorspec.IsStateCode("ca") || advisorspec.IsStateCode("XX") {
		t.Error("lower case or unknown codes must not be state codes")
	}
}

func TestTagsMatchCaseInsensitivelyAndKeepTheirSpelling(t *testing.T) {
	tags := advisorspec.NewTags("Q3-Review")
	for in, want := range map[string]string{"reviewed": "reviewed", " REVIEWED ": "reviewed", "q3-review": "Q3-Review"} {
		if got, ok := tags.Canonical(in); !ok || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if got := tags.Unknown([]string{"current", "nope", "Nope2"}); !slices.Equal(got, []string{"nope", "Nope2"}) {
		t.Errorf("Unknown = %v", got)
	}
}

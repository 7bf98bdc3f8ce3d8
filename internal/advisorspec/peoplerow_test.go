package advisorspec_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// fieldErr is one expected error: the field at fault and the message.
type fieldErr struct{ field, message string }

func errorsOf(errs []*advisorspec.Error) []fieldErr {
	var out []fieldErr
	for _, e := range errs {
		out = append(out, fieldErr{e.Field, e.Message})
	}
	return out
}

var long256 = strings.Repeat("x", 256)

// Every rule of the People/Trusts/Entities file's tables, each quoting the specification
// ("bulk-referral-session-sdk.md", "People/Trusts/Entities file" and "Limits").
func TestPeopleRowRules(t *testing.T) {
	const (
		person = `"id":"p1","client_id":"c1","type":"Individual","first_name":"Ada","last_name":"Lovelace"`
		trust  = `"id":"t1","client_id":"c1","type":"Trust","legal_name":"Lovelace Family Trust","trust_type":"JointRevocableTrust"`
		entity = `"id":"e1","client_id":"c1","type":"Entity","legal_name":"Lovelace LLC"`
	)
	for _, tc := range []struct {
		name  string
		spec  string // what the specification says
		model advisorspec.BulkModel
		line  string
		want  []fieldErr
	}{
		// Person
		{"a person with the required fields is valid", "Person: id, client_id, type, first_name (required), last_name (required)",
			advisorspec.ClientModel, `{` + person + `}`, nil},
		{"a person may have a middle name", "middle_name (max 255, optional)",
			advisorspec.ClientModel, `{` + person + `,"middle_name":"King"}`, nil},
		{"a person needs a first name", "first_name (max 255, required)",
			advisorspec.ClientModel, `{"id":"p1","client_id":"c1","type":"Individual","last_name":"L"}`,
			[]fieldErr{{"first_name", "first_name is required"}}},
		{"a person needs a last name, and null is missing", "last_name (max 255, required)",
			advisorspec.ClientModel, `{"id":"p1","client_id":"c1","type":"Individual","first_name":"A","last_name":null}`,
			[]fieldErr{{"last_name", "last_name is required"}}},
		{"a first name of 256 characters is too long", "first_name (max 255, required)",
			advisorspec.ClientModel, `{"id":"p1","client_id":"c1","type":"Individual","first_name":"` + long256 + `","last_name":"L"}`,
			[]fieldErr{{"first_name", "first_name must be at most 255 characters"}}},
		{"a middle name of 256 characters is too long", "middle_name (max 255, optional)",
			advisorspec.ClientModel, `{` + person + `,"middle_name":"` + long256 + `"}`,
			[]fieldErr{{"middle_name", "middle_name must be at most 255 characters"}}},
		{"255 characters counted as characters, not bytes, fit", "max 255 characters",
			advisorspec.ClientModel, `{"id":"p1","client_id":"c1","type":"Individual","first_name":"` + strings.Repeat("é", 255) + `","last_name":"L"}`, nil},
		{"a blank name is refused", "first_name (required)",
			advisorspec.ClientModel, `{"id":"p1","client_id":"c1","type":"Individual","first_name":"  ","last_name":"L"}`,
			[]fieldErr{{"first_name", "first_name must not be blank"}}},
		{"a name of the wrong JSON type is refused", "first_name (max 255): a string",
			advisorspec.ClientModel, `{"id":"p1","client_id":"c1","type":"Individual","first_name":7,"last_name":["L"]}`,
			[]fieldErr{{"first_name", "first_name must be a string, not a number"}, {"last_name", "last_name must be a string, not an array"}}},
		{"a trust field on a person is refused", "The type field of each row selects how it is processed",
			advisorspec.ClientModel, `{` + person + `,"legal_name":"X"}`,
			[]fieldErr{{"legal_name", "legal_name is not a field of Individual rows"}}},

		// id, type, client_id
		{"a row needs an id", "id (string max 255, required)",
			advisorspec.ClientModel, `{"client_id":"c1","type":"Individual","first_name":"A","last_name":"L"}`,
			[]fieldErr{{"id", "id is required"}}},
		{"an id of 256 characters is too long", "Client id, person/trust/entity ids, client_id: max 255 characters",
			advisorspec.ClientModel, `{"id":"` + long256 + `","client_id":"c1","type":"Individual","first_name":"A","last_name":"L"}`,
			[]fieldErr{{"id", "id must be at most 255 characters"}}},
		{"a row needs a type", "The type field of each row selects how it is processed",
			advisorspec.ClientModel, `{"id":"p1","client_id":"c1","first_name":"A","last_name":"L"}`,
			[]fieldErr{{"type", "type is required"}}},
		{"an unknown type is refused", "type constant Individual, Trust or Entity",
			advisorspec.ClientModel, `{"id":"p1","client_id":"c1","type":"Charity"}`,
			[]fieldErr{{"type", "type must be one of Individual, Trust, Entity"}}},
		{"a type is spelled exactly", "type constant Individual",
			advisorspec.ClientModel, `{"id":"p1","client_id":"c1","type":"individual","first_name":"A","last_name":"L"}`,
			[]fieldErr{{"type", "type must be one of Individual, Trust, Entity"}}},
		{"a row needs its client", "In every row, client_id (string, max 255) must name an existing client or a client in the Clients file",
			advisorspec.ClientModel, `{"id":"p1","type":"Individual","first_name":"A","last_name":"L"}`,
			[]fieldErr{{"client_id", "client_id is required"}}},
		{"a client_id of 256 characters is too long", "client_id (string, max 255)",
			advisorspec.ClientModel, `{"id":"p1","client_id":"` + long256 + `","type":"Individual","first_name":"A","last_name":"L"}`,
			[]fieldErr{{"client_id", "client_id must be at most 255 characters"}}},
		{"an unknown field is refused", "Person: id, client_id, type, first_name, middle_name, last_name",
			advisorspec.ClientModel, `{` + person + `,"dob":"1815-12-10"}`,
			[]fieldErr{{"dob", "dob is not a field of a People/Trusts/Entities row"}}},
		{"a field given twice is refused", "one JSON object per line",
			advisorspec.ClientModel, `{` + person + `,"first_name":"B"}`,
			[]fieldErr{{"first_name", "first_name is given more than once"}}},
		{"a line that is not an object is refused", "JSONL files (one JSON object per line)",
			advisorspec.ClientModel, `["p1"]`, []fieldErr{{"", "row must be a JSON object"}}},
		{"malformed JSON is refused with where", "JSONL files (one JSON object per line)",
			advisorspec.ClientModel, `{"id":"p1",}`,
			[]fieldErr{{"", "row is not valid JSON: invalid character '}' looking for beginning of object key string at byte 12"}}},
		{"escapes in keys and values are read", "one JSON object per line",
			advisorspec.ClientModel, `{"\u0069d":"p\u00e91","client_id":"c1","type":"Individual","first_name":"A\"da","last_name":"L"}`, nil},

		// Trust
		{"a trust with the required fields is valid", "Trust: id, client_id, legal_name, trust_type required",
			advisorspec.ClientModel, `{` + trust + `}`, nil},
		{"a trust needs a legal name and a trust type", "legal_name: yes; trust_type: yes",
			advisorspec.ClientModel, `{"id":"t1","client_id":"c1","type":"Trust"}`,
			[]fieldErr{{"legal_name", "legal_name is required"}, {"trust_type", "trust_type is required"}}},
		{"a trust's legal name may have 500 characters", "Trust legal_name: max 500 characters",
			advisorspec.ClientModel, `{"id":"t1","client_id":"c1","type":"Trust","legal_name":"` + strings.Repeat("x", 500) + `","trust_type":"DynastyTrust"}`, nil},
		{"a trust's legal name of 501 characters is too long", "legal_name: string, max 500",
			advisorspec.ClientModel, `{"id":"t1","client_id":"c1","type":"Trust","legal_name":"` + strings.Repeat("x", 501) + `","trust_type":"DynastyTrust"}`,
			[]fieldErr{{"legal_name", "legal_name must be at most 500 characters"}}},
		{"a trust type is spelled exactly", "trust_type: enum: IndividualRevocableTrust, JointRevocableTrust, ...",
			advisorspec.ClientModel, `{"id":"t1","client_id":"c1","type":"Trust","legal_name":"T","trust_type":"jointRevocableTrust"}`,
			[]fieldErr{{"trust_type", "trust_type must be one of " + strings.Join(advisorspec.TrustTypes, ", ")}}},
		{"creators and trustees may be one string", "trust_creator: string or array of strings",
			advisorspec.ClientModel, `{` + trust + `,"trust_creator":"p1","initial_trustee":["p1","p2"]}`, nil},
		{"a creator id of 256 characters is too long", "trust_creator: string or array of strings (max 255 each)",
			advisorspec.ClientModel, `{` + trust + `,"trust_creator":["p1","` + long256 + `"]}`,
			[]fieldErr{{"trust_creator[1]", "trust_creator[1] must be at most 255 characters"}}},
		{"a trustee must be a string", "initial_trustee: string or array of strings",
			advisorspec.ClientModel, `{` + trust + `,"initial_trustee":{"id":"p1"}}`,
			[]fieldErr{{"initial_trustee", "initial_trustee must be a string or an array of strings, not an object"}}},
		{"a trustee array holds strings only", "initial_trustee: string or array of strings",
			advisorspec.ClientModel, `{` + trust + `,"initial_trustee":["p1",2]}`,
			[]fieldErr{{"initial_trustee[1]", "initial_trustee[1] must be a string, not a number"}}},
		{"a creator named twice is refused", "trust_creator: ids of creators",
			advisorspec.ClientModel, `{` + trust + `,"trust_creator":["p1","p1"]}`,
			[]fieldErr{{"trust_creator[1]", `trust_creator names "p1" more than once`}}},
		{"a trust may not create itself", "trust_creator: ids of creators",
			advisorspec.ClientModel, `{` + trust + `,"trust_creator":["t1"]}`,
			[]fieldErr{{"trust_creator", "trust_creator must not name the row itself"}}},
		{"a governing state is a two-letter US state abbreviation", "governing_state: two-letter US state abbreviation",
			advisorspec.ClientModel, `{` + trust + `,"governing_state":"NY"}`, nil},
		{"a governing state in lower case is refused", "governing_state: two-letter US state abbreviation",
			advisorspec.ClientModel, `{` + trust + `,"governing_state":"ny"}`,
			[]fieldErr{{"governing_state", "governing_state must be a valid two-letter US state abbreviation"}}},
		{"a governing state spelled out is refused", "governing_state: two-letter US state abbreviation",
			advisorspec.ClientModel, `{` + trust + `,"governing_state":"New York"}`,
			[]fieldErr{{"governing_state", "governing_state must be a valid two-letter US state abbreviation"}}},
		{"a creation date is YYYY-MM-DD", "creation_date: date YYYY-MM-DD",
			advisorspec.ClientModel, `{` + trust + `,"creation_date":"2020-02-29"}`, nil},
		{"a creation date must be a real date", "creation_date: date YYYY-MM-DD",
			advisorspec.ClientModel, `{` + trust + `,"creation_date":"2021-02-29"}`,
			[]fieldErr{{"creation_date", "creation_date must be a valid date in YYYY-MM-DD format"}}},
		{"a creation date with a time is refused", "creation_date: date YYYY-MM-DD",
			advisorspec.ClientModel, `{` + trust + `,"creation_date":"2020-01-01T00:00:00Z"}`,
			[]fieldErr{{"creation_date", "creation_date must be a valid date in YYYY-MM-DD format"}}},
		{"an entity field on a trust is refused", "The type field of each row selects how it is processed",
			advisorspec.ClientModel, `{` + trust + `,"ownership":[]}`,
			[]fieldErr{{"ownership", "ownership is not a field of Trust rows"}}},

		// Entity
		{"an entity with the required fields is valid", "Entity: id, client_id, legal_name required",
			advisorspec.ClientModel, `{` + entity + `}`, nil},
		{"an entity's legal name of 256 characters is too long", "Entity legal_name: max 255 characters",
			advisorspec.ClientModel, `{"id":"e1","client_id":"c1","type":"Entity","legal_name":"` + long256 + `"}`,
			[]fieldErr{{"legal_name", "legal_name must be at most 255 characters"}}},
		{"an incorporation state is a two-letter US state abbreviation", "incorporation_state: two-letter US state abbreviation",
			advisorspec.ClientModel, `{` + entity + `,"incorporation_state":"XX"}`,
			[]fieldErr{{"incorporation_state", "incorporation_state must be a valid two-letter US state abbreviation"}}},
		{"an incorporation form of the list is valid", "incorporation_form: enum: CCorporation, ..., Other",
			advisorspec.ClientModel, `{` + entity + `,"incorporation_form":"LimitedLiabilityCompany","incorporation_state":"DE"}`, nil},
		{"LimitedPartnership is not a bulk incorporation form", "incorporation_form: enum: CCorporation, SCorporation, DonorAdvisorFund, LimitedLiabilityCompany, PrivateFoundation, SoleProprietorship, Other",
			advisorspec.ClientModel, `{` + entity + `,"incorporation_form":"LimitedPartnership"}`,
			[]fieldErr{{"incorporation_form", "incorporation_form must be one of " + strings.Join(advisorspec.BulkIncorporationForms, ", ")}}},
		{"ownership entries with a percentage and an owner are valid", "ownership[].percentage: float, 0 to 100; ownership[].owner_id: string or array of strings",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":60,"owner_id":"p1"},{"percentage":40.5,"owner_id":["p2","p3"]}]}`, nil},
		{"a percentage of 0 and of 100 are within bounds", "Ownership percentage: 0 to 100",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":0,"owner_id":"p1"},{"percentage":100,"owner_id":"p2"}]}`, nil},
		{"a percentage over 100 is refused", "Ownership percentage: 0 to 100",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":100.5,"owner_id":"p1"}]}`,
			[]fieldErr{{"ownership[0].percentage", "ownership[0].percentage must be a number from 0 to 100"}}},
		{"a negative percentage is refused", "Ownership percentage: 0 to 100",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":-1,"owner_id":"p1"}]}`,
			[]fieldErr{{"ownership[0].percentage", "ownership[0].percentage must be a number from 0 to 100"}}},
		{"a percentage in a string is refused", "ownership[].percentage: float",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":"50","owner_id":"p1"}]}`,
			[]fieldErr{{"ownership[0].percentage", "ownership[0].percentage must be a number from 0 to 100"}}},
		{"an entry needs a percentage and an owner", "ownership[].percentage: yes, per entry; ownership[].owner_id: yes, per entry",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":10,"owner_id":"p1"},{}]}`,
			[]fieldErr{{"ownership[1].percentage", "ownership[1].percentage is required"}, {"ownership[1].owner_id", "ownership[1].owner_id is required"}}},
		{"an empty owner array names no owner", "ownership[].owner_id: yes, per entry",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":10,"owner_id":[]}]}`,
			[]fieldErr{{"ownership[0].owner_id", "ownership[0].owner_id must name at least one owner"}}},
		{"an unknown member of an entry is refused", "ownership: array of objects (percentage, owner_id)",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":10,"owner_id":"p1","subowners":["p2"]}]}`,
			[]fieldErr{{"ownership[0].subowners", "ownership[0].subowners is not a field of an ownership entry"}}},
		{"ownership must be an array of objects", "ownership: array of objects",
			advisorspec.ClientModel, `{` + entity + `,"ownership":{"percentage":10,"owner_id":"p1"}}`,
			[]fieldErr{{"ownership", "ownership must be an array of ownership entries, not an object"}}},
		{"an entry must be an object", "ownership: array of objects",
			advisorspec.ClientModel, `{` + entity + `,"ownership":["p1"]}`,
			[]fieldErr{{"ownership[0]", "ownership[0] must be an object with percentage and owner_id, not a string"}}},
		{"an owner in two entries is refused: joint owners share one array", "several ids in one owner_id array mean joint ownership with right of survivorship only. Other shared ownership is expressed as several entries",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":50,"owner_id":["p1","p2"]},{"percentage":50,"owner_id":"p2"}]}`,
			[]fieldErr{{"ownership[1].owner_id", `ownership[1].owner_id names "p2", already an owner in ownership[0]; joint owners share one owner_id array`}}},
		{"a joint owner named twice in one array is refused", "several ids in one owner_id array mean joint ownership",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":50,"owner_id":["p1","p1"]}]}`,
			[]fieldErr{{"ownership[0].owner_id[1]", `ownership[0].owner_id names "p1" more than once`}}},
		{"an entity may not own itself", "owner is a person, trust or entity",
			advisorspec.ClientModel, `{` + entity + `,"ownership":[{"percentage":50,"owner_id":"e1"}]}`,
			[]fieldErr{{"ownership[0].owner_id", "ownership[0].owner_id must not name the row itself"}}},

		// The deprecated container model
		{"a container-model row carries top_account_id", "Rows carry top_account_id (string max 255) in place of client_id",
			advisorspec.TopAccountModel, `{"id":"p1","top_account_id":"w1","type":"Individual","first_name":"A","last_name":"L"}`, nil},
		{"a container-model row needs top_account_id", "Rows carry top_account_id in place of client_id",
			advisorspec.TopAccountModel, `{"id":"p1","client_id":"c1","type":"Individual","first_name":"A","last_name":"L"}`,
			[]fieldErr{{"client_id", "client_id belongs to the Clients-based model; this file's rows carry top_account_id"}, {"top_account_id", "top_account_id is required"}}},
		{"a current-model row does not carry top_account_id", "the current Clients-based model (records reference client_id)",
			advisorspec.ClientModel, `{` + person + `,"top_account_id":"w1"}`,
			[]fieldErr{{"top_account_id", "top_account_id belongs to the deprecated top-account model; this file's rows carry client_id"}}},
		{"container-model creators are arrays only", "In that variant trust_creator, initial_trustee and owner_id are arrays of strings only",
			advisorspec.TopAccountModel, `{"id":"t1","top_account_id":"w1","type":"Trust","legal_name":"T","trust_type":"DynastyTrust","trust_creator":"p1","initial_trustee":["p1"]}`,
			[]fieldErr{{"trust_creator", "trust_creator must be an array of strings in the deprecated top-account model, not a string"}}},
		{"container-model owners are arrays only", "owner_id are arrays of strings only",
			advisorspec.TopAccountModel, `{"id":"e1","top_account_id":"w1","type":"Entity","legal_name":"E","ownership":[{"percentage":1,"owner_id":"p1"},{"percentage":1,"owner_id":["p2"]}]}`,
			[]fieldErr{{"ownership[0].owner_id", "ownership[0].owner_id must be an array of strings in the deprecated top-account model, not a string"}}},
		{"the container model uses the same incorporation forms", "the entity incorporation_form list is the one above",
			advisorspec.TopAccountModel, `{"id":"e1","top_account_id":"w1","type":"Entity","legal_name":"E","incorporation_form":"LimitedPartnership"}`,
			[]fieldErr{{"incorporation_form", "incorporation_form must be one of " + strings.Join(advisorspec.BulkIncorporationForms, ", ")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := advisorspec.DecodePeopleRow([]byte(tc.line), tc.model)
			if got := errorsOf(errs); !slices.Equal(got, tc.want) {
				t.Errorf("spec: %s\ngot  %q\nwant %q", tc.spec, got, tc.want)
			}
		})
	}
}

// A file-level checker resolves a row's references without knowing its kind, and names the
// row in its errors even when the row is invalid.
func TestPeopleRowExposesItsReferences(t *testing.T) {
	line := `{"id":"e1","client_id":"c1","type":"Entity","legal_name":"E","ownership":[{"percentage":50,"owner_id":"p1"},{"percentage":50,"owner_id":["p2","t1"]}]}`
	row, errs := advisorspec.DecodePeopleRow([]byte(line), advisorspec.ClientModel)
	if errs != nil {
		t.Fatalf("got errors %q", errorsOf(errs))
	}
	var got []advisorspec.RowRef
	for ref := range row.References() {
		got = append(got, ref)
	}
	want := []advisorspec.RowRef{
		{Kind: advisorspec.RefClient, Field: "client_id", ID: "c1"},
		{Kind: advisorspec.RefCard, Field: "ownership[0].owner_id", ID: "p1"},
		{Kind: advisorspec.RefCard, Field: "ownership[1].owner_id", ID: "p2"},
		{Kind: advisorspec.RefCard, Field: "ownership[1].owner_id", ID: "t1"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if row.Ownership[0].Joint() || !row.Ownership[1].Joint() {
		t.Errorf("got joint %v, %v; want false, true", row.Ownership[0].Joint(), row.Ownership[1].Joint())
	}

	row, _ = advisorspec.DecodePeopleRow([]byte(`{"id":"w-t","top_account_id":"w1","type":"Trust","trust_creator":["p1"]}`), advisorspec.TopAccountModel)
	got = nil
	for ref := range row.References() {
		got = append(got, ref)
	}
	want = []advisorspec.RowRef{
		{Kind: advisorspec.RefTopAccount, Field: "top_account_id", ID: "w1"},
		{Kind: advisorspec.RefCard, Field: "trust_creator", ID: "p1"},
	}
	if row.ID != "w-t" || !slices.Equal(got, want) {
		t.Errorf("invalid row: got id %q refs %v, want w-t %v", row.ID, got, want)
	}
}

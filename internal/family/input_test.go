package family_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/family"
)

// fakeAPI records the bodies it is sent and answers writes with refuse, when set; reads give a
// card of the written id.
type fakeAPI struct {
	family.API
	bodies []string
	refuse error
}

func (f *fakeAPI) CreateContact(_ context.Context, _ string, body []byte) (string, error) {
	f.bodies = append(f.bodies, string(body))
	return "c1", f.refuse
}

func (f *fakeAPI) Contact(_ context.Context, _, id string) (advisorspec.Contact, error) {
	return advisorspec.Contact{ID: id, Type: "Individual", ExternalID: "x"}, nil
}

func (f *fakeAPI) LendContacts(_ context.Context, _ string, use func([]advisorspec.Contact) error) error {
	return use(nil)
}

func strs(s ...string) []string { return s }

func ptr[T any](v T) *T { return &v }

func TestInputsAreSentInTheServicesNames(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	for _, tc := range []struct {
		name string
		in   family.ContactInput
		want string
	}{
		{"a trust's references", family.ContactInput{Trust: &family.TrustInput{ExternalID: "t", LegalName: "T",
			TrustCreators: strs("a", "b"), InitialTrustees: []string{}}},
			`{"type":"Trust","external_id":"t","legal_name":"T","trust_creator":["a","b"],"initial_trustee":[]}`},
		{"a will's references", family.ContactInput{Will: &family.WillInput{ExternalID: "w", LegalName: "W", WillType: "PourOverWill",
			Testators: strs("a"), Executors: strs("b")}},
			`{"type":"Will","external_id":"w","legal_name":"W","will_type":"PourOverWill","testator":["a"],"executor":["b"]}`},
		{"a single owner, joint left out", family.ContactInput{Entity: &family.EntityInput{ExternalID: "e", LegalName: "E",
			Ownership: []*family.OwnershipInput{{Percentage: 60, Owners: strs("a")}}}},
			`{"type":"Entity","external_id":"e","legal_name":"E","ownership":[{"percentage":60,"owner_id":"a"}]}`},
		{"several owners, joint left out", family.ContactInput{Entity: &family.EntityInput{ExternalID: "e", LegalName: "E",
			Ownership: []*family.OwnershipInput{{Percentage: 40, Owners: strs("a", "b")}}}},
			`{"type":"Entity","external_id":"e","legal_name":"E","ownership":[{"percentage":40,"subowners":["a","b"]}]}`},
		{"a joint share of one owner", family.ContactInput{Entity: &family.EntityInput{ExternalID: "e", LegalName: "E",
			Ownership: []*family.OwnershipInput{{Percentage: 40, Owners: strs("a"), Joint: &yes}}}},
			`{"type":"Entity","external_id":"e","legal_name":"E","ownership":[{"percentage":40,"subowners":["a"]}]}`},
		{"a single owner, said so", family.ContactInput{Entity: &family.EntityInput{ExternalID: "e", LegalName: "E",
			Ownership: []*family.OwnershipInput{{Percentage: 40, Owners: strs("a"), Joint: &no}}}},
			`{"type":"Entity","external_id":"e","legal_name":"E","ownership":[{"percentage":40,"owner_id":"a"}]}`},
		{"a class party", family.ContactInput{Class: &family.ClassInput{ExternalID: "c", LegalName: "C",
			CurrentParties: &family.ClassPartiesInput{Parties: []*family.ClassPartyInput{{Party: "a"}}}}},
			`{"type":"Class","external_id":"c","legal_name":"C","current_parties":{"parties":[{"contact_id":"a"}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAPI{}
			svc := family.NewService(api)
			if _, err := svc.CreateContact(advisor.WithCache(context.Background()), family.OfTopAccount("w"), tc.in, false); err != nil {
				t.Fatal(err)
			}
			if len(api.bodies) != 1 || !sameJSON(api.bodies[0], tc.want) {
				t.Errorf("sent %v, want %s", api.bodies, tc.want)
			}
		})
	}
}

func TestInputErrorsSpeakTheSchemasNames(t *testing.T) {
	t.Parallel()
	no := false
	date := "2001-02-30"
	blank := " "
	for _, tc := range []struct {
		name            string
		in              family.ContactInput
		refuse          error
		code            apperr.Code
		field, message  string
		upstreamMessage string
	}{
		{"a date that does not exist", family.ContactInput{Trust: &family.TrustInput{ExternalID: "t", LegalName: "T", TrustCreationDate: &date}}, nil,
			apperr.BadUserInput, "input.trust.trustCreationDate", "input.trust.trustCreationDate must be a date (YYYY-MM-DD)", ""},
		{"a blank name", family.ContactInput{Individual: &family.IndividualInput{ExternalID: "i", LastName: &blank}}, nil,
			apperr.BadUserInput, "input.individual.lastName", "input.individual.lastName must not be blank", ""},
		{"a joint share with no owners", family.ContactInput{Entity: &family.EntityInput{ExternalID: "e", LegalName: "E",
			Ownership: []*family.OwnershipInput{{Percentage: 40}}}}, nil,
			apperr.BadUserInput, "input.entity.ownership[0].owners", "input.entity.ownership[0].owners must name at least one contact", ""},
		{"a share said not to be joint with two owners", family.ContactInput{Entity: &family.EntityInput{ExternalID: "e", LegalName: "E",
			Ownership: []*family.OwnershipInput{{Percentage: 40, Owners: strs("a", "b"), Joint: &no}}}}, nil,
			apperr.BadUserInput, "input.entity.ownership[0].owners", "input.entity.ownership[0].owners must name exactly one contact card when joint is false", ""},
		{"a reference the service refuses", family.ContactInput{Trust: &family.TrustInput{ExternalID: "t", LegalName: "T", TrustCreators: strs("ghost")}},
			&apperr.Error{Code: apperr.BadUserInput, Message: advisor.SchemaMessage("", `trust_creator references contact "ghost", which does not exist in this top account`),
				Upstream: &apperr.Upstream{Status: 400, Message: `trust_creator references contact "ghost", which does not exist in this top account`}},
			apperr.BadUserInput, "input.trust.trustCreators", `input.trust.trustCreators references contact "ghost", which does not exist in this top account`,
			`trust_creator references contact "ghost", which does not exist in this top account`},
		// The specification gives "ein | integer"; the schema's String takes it as written or as one.
		{"an ein that is neither an integer nor written 12-3456789", family.ContactInput{Charity: &family.CharityInput{ExternalID: "h",
			LegalName: "H", City: "Austin", State: "TX", Ein: ptr("12-345")}}, nil,
			apperr.BadUserInput, "input.charity.ein", "ein must be an integer or an EIN written 12-3456789", ""},
		{"an ein beyond what the service's integer holds", family.ContactInput{Charity: &family.CharityInput{ExternalID: "h",
			LegalName: "H", City: "Austin", State: "TX", Ein: ptr("99999999999999999999")}}, nil,
			apperr.BadUserInput, "input.charity.ein", "ein must be an integer or an EIN written 12-3456789", ""},
		{"no member reached the service: a bug, not the caller's mistake", family.ContactInput{}, nil, apperr.Internal, "", "Internal error", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &fakeAPI{refuse: tc.refuse}
			svc := family.NewService(api)
			_, err := svc.CreateContact(advisor.WithCache(context.Background()), family.OfTopAccount("w"), tc.in, false)
			e, ok := apperr.As(err)
			if !ok {
				t.Fatalf("got %v, want an apperr.Error", err)
			}
			if e.Code != tc.code || e.Field != tc.field || e.Message != tc.message {
				t.Errorf("got %s %q %q, want %s %q %q", e.Code, e.Field, e.Message, tc.code, tc.field, tc.message)
			}
			if tc.upstreamMessage != "" && (e.Upstream == nil || e.Upstream.Message != tc.upstreamMessage) {
				t.Errorf("got upstream %+v, want the service's words %q", e.Upstream, tc.upstreamMessage)
			}
			if tc.refuse == nil && len(api.bodies) > 0 {
				t.Errorf("a refused input reached the service: %v", api.bodies)
			}
		})
	}
}

func TestTopAccountInputErrorsSpeakTheSchemasNames(t *testing.T) {
	t.Parallel()
	svc := family.NewService(&fakeAPI{})
	for _, tc := range []struct {
		in             family.CreateTopAccountInput
		field, message string
	}{
		{family.CreateTopAccountInput{ExternalID: " ", Name: "N"}, "input.externalId", "input.externalId must not be blank"},
		{family.CreateTopAccountInput{ExternalID: "E", Name: ""}, "input.name", "input.name must not be blank"},
		{family.CreateTopAccountInput{}, "input", "input.externalId and input.name must not be blank"},
		{family.CreateTopAccountInput{ExternalID: string(make([]byte, 51)), Name: "N"}, "input.externalId", "input.externalId must be at most 50 characters"},
	} {
		_, err := svc.CreateTopAccount(context.Background(), tc.in)
		if e, _ := apperr.As(err); e == nil || e.Code != apperr.BadUserInput || e.Field != tc.field || e.Message != tc.message {
			t.Errorf("CreateTopAccount(%+v): got %v, want BAD_USER_INPUT %q %q", tc.in, err, tc.field, tc.message)
		}
	}
}

func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(ax) == string(by)
}

// The specification's ein is an integer with no bound; an Employer Identification Number is
// nine digits written 12-3456789, which may begin with 0. The schema writes it so, and any
// other integer the service holds as its digits, so none is lost.
func TestEINsAreWrittenAsEINsAndOtherIntegersAsTheirDigits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ein  *int64
		want *string
	}{
		{"none", nil, nil},
		{"nine digits", ptr(int64(123456789)), ptr("12-3456789")},
		{"a leading zero", ptr(int64(12345678)), ptr("01-2345678")},
		{"zero", ptr(int64(0)), ptr("00-0000000")},
		{"the largest EIN", ptr(int64(999999999)), ptr("99-9999999")},
		{"ten digits, beyond 32 bits", ptr(int64(12345678901)), ptr("12345678901")},
		{"negative", ptr(int64(-5)), ptr("-5")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := family.FormatEIN(tc.ein)
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("got %v, want %v", deref(got), deref(tc.want))
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

package sandbox_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The v2 contact endpoints (contacts by top account: list, add, get, update), walked rule by rule
// through the specification's Contact section, its "Shared validation rules", the contact
// response paragraph, the v2 Contacts endpoint table and the Errors table. Every case is named
// for the rule it checks.
//
// Where the specification gives a message (the Update contact (v2) row of the Errors table,
// 404 `Container not found` / `Contact card not found`, 409 `Contact card with this external id
// already exists`), the case quotes it. Where it gives only the status ("missing required
// fields, invalid enum value, invalid state or date format, invalid nested object, or
// relationship reference that does not exist", "another field-level message"), the status is
// the specification's and the text is the sandbox's, built by the cr* message helpers below so
// that one place changes if the wording does.
//
// Every rejected add or update is followed by reading the stored state again (Get of the
// contact, and List of the top account) and comparing it with the state before the request:
// a rejected request changes nothing.

// Messages the specification gives verbatim.
const (
	crMsgTypeImmutable       = "type cannot be updated"
	crMsgExternalIDImmutable = "external_id cannot be updated"
	crMsgTrustDateOnTrust    = "trust_creation_date is only supported for Trust contact cards"
	crMsgWillDateOnWill      = "will_creation_date is only supported for Will contact cards"
	crMsgEmptyUpdate         = "At least one mutable field must be provided"
	crMsgContainerNotFound   = "Container not found"
	crMsgContactNotFound     = "Contact card not found"
	crMsgDuplicate           = "Contact card with this external id already exists"
)

// The specification's enumerations, copied from its field tables (not from the code, so that a
// value the code loses or gains is noticed).
var (
	crContactTypes = []string{"Individual", "Trust", "Entity", "Charity", "Will", "Class"}
	crTrustTypes   = []string{
		"IndividualRevocableTrust", "JointRevocableTrust", "IrrevocableLifeInsuranceTrust",
		"GrantorRetainedAnnuityTrust", "CharitableRemainderUnitTrust", "CharitableRemainderAnnuityTrust",
		"SpousalLifetimeAccessTrust", "DynastyTrust", "QualifiedPersonalResidenceTrust", "OtherIrrevocableTrust",
	}
	crIncorporationForms = []string{
		"CCorporation", "SCorporation", "DonorAdvisorFund", "LimitedLiabilityCompany",
		"LimitedPartnership", "PrivateFoundation", "SoleProprietorship", "Other",
	}
	crWillTypes = []string{"LastWillAndTestament", "PourOverWill"}
)

// Field-level messages: the specification gives the status (400) but not the text.
func crRequired(field string) string { return field + " is required" }
func crBlank(field string) string    { return field + " must not be blank" }
func crNotString(field string) string {
	return field + " must be a string"
}
func crTooLong(field string, max int) string {
	return fmt.Sprintf("%s must be at most %d characters", field, max)
}
func crEnum(field string, values []string) string {
	return field + " must be one of " + strings.Join(values, ", ")
}
func crBadDate(field string) string { return field + " must be a valid date in YYYY-MM-DD format" }
func crBadState(field string) string {
	return field + " must be a valid two-letter US state abbreviation"
}
func crPercent(field string) string { return field + " must be a number from 0 to 100" }
func crOnlyFor(field, types string) string {
	return field + " is only supported for " + types + " contact cards"
}
func crRefList(field string) string { return field + " must be an array of contact external_ids" }
func crUnknownRef(field, externalID string) string {
	return fmt.Sprintf("%s references contact %q, which does not exist in this top account", field, externalID)
}
func crSelfRef(field string) string { return field + " must not reference the contact itself" }

const (
	crMsgMalformed = "Request body must be a JSON object"
	crMsgDobV1Only = "dob is only supported on the client-scoped (v1) contact endpoints"
	crMsgIDSet     = "id is assigned by the service and cannot be set"
	crOrgTypes     = "Trust, Entity, Charity, Will, Class"
)

func crContacts(wid string) string    { return "/v2/top-accounts/" + wid + "/contacts/" }
func crContact(wid, id string) string { return "/v2/top-accounts/" + wid + "/contacts/" + id }

// crOn is f reporting to t, so that a failing subtest does not stop its parent.
func crOn(f *fixture, t *testing.T) *fixture {
	g := *f
	g.t = t
	return &g
}

// crRemove, as a value given to crWith, removes the key.
type crRemove struct{}

// crWith returns a copy of body with changes applied.
func crWith(body map[string]any, changes map[string]any) map[string]any {
	out := make(map[string]any, len(body)+len(changes))
	for k, v := range body {
		out[k] = v
	}
	for k, v := range changes {
		if _, remove := v.(crRemove); remove {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// crJSON passes v through JSON, so that it compares with a decoded response.
func crJSON(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return out
}

func crShow(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// crMinimal is the smallest valid Add Contact body of a type: external_id, type and the
// fields the type's table marks required.
func crMinimal(typ, externalID string) map[string]any {
	b := map[string]any{"type": typ, "external_id": externalID}
	switch typ {
	case "Trust", "Entity", "Class":
		b["legal_name"] = externalID + " legal name"
	case "Charity":
		b["legal_name"] = externalID + " legal name"
		b["city"] = "Boston"
		b["state"] = "MA"
	case "Will":
		b["legal_name"] = externalID + " legal name"
		b["will_type"] = "LastWillAndTestament"
	}
	return b
}

// crFull is an Add Contact body that sets every field a v2 contact of the type can have. Its
// references name the people crSetup adds.
func crFull(typ, externalID string) map[string]any {
	b := map[string]any{"type": typ, "external_id": externalID}
	switch typ {
	case "Individual":
		b["first_name"], b["middle_name"], b["last_name"] = "Ada", "King", "Lovelace"
	case "Trust":
		b["legal_name"] = "Lovelace Family Trust"
		b["trust_type"] = "DynastyTrust"
		b["trust_creator"] = []string{"P-1"}
		b["initial_trustee"] = []string{"P-2", "P-3"}
		b["governing_state"] = "NY"
		b["trust_creation_date"] = "2020-02-29"
	case "Entity":
		b["legal_name"] = "Lovelace Holdings LLC"
		b["incorporation_state"] = "DE"
		b["incorporation_form"] = "LimitedLiabilityCompany"
		b["ownership"] = []any{
			map[string]any{"percentage": 62.5, "owner_id": "P-1"},
			map[string]any{"percentage": 37.5, "subowners": []string{"P-2", "P-3"}},
		}
	case "Charity":
		b["legal_name"] = "Analytical Engine Foundation"
		b["ein"] = 123456789
		b["city"] = "Boston"
		b["state"] = "MA"
		b["address_formatted"] = "1 Main St, Boston, MA 02108"
		b["notes"] = "Annual gift in December."
	case "Will":
		b["legal_name"] = "Last Will of Ada Lovelace"
		b["will_type"] = "PourOverWill"
		b["governing_state"] = "CA"
		b["will_creation_date"] = "2019-12-31"
		b["testator"] = []string{"P-1"}
		b["executor"] = []string{"P-2", "P-3"}
	case "Class":
		b["legal_name"] = "Grandchildren"
		b["notes"] = "Per stirpes."
		b["current_parties"] = map[string]any{
			"is_distributed_evenly": false,
			"share_amount":          "one third each",
			"parties": []any{
				map[string]any{"contact_id": "P-1", "distribution_percentage": 50},
				map[string]any{"contact_id": "P-2", "fraction": map[string]any{"numerator": 1, "denominator": 4}},
				map[string]any{"contact_id": "P-3"},
			},
		}
	}
	return b
}

// crWorld is a sandbox with two top accounts: A holds the people P-1, P-2 and P-3, B holds B-1.
type crWorld struct {
	f    *fixture
	a, b string
	ids  map[string]string // contact id by external_id, both top accounts
}

func crSetup(t *testing.T) *crWorld {
	t.Helper()
	f := emptySandbox(t)
	w := &crWorld{f: f, ids: map[string]string{}}
	w.a = f.addTopAccount("CR-A", "Lovelace family")
	w.b = f.addTopAccount("CR-B", "Babbage family")
	for _, p := range []string{"P-1", "P-2", "P-3"} {
		w.ids[p] = f.addContact(w.a, person(p))
	}
	w.ids["B-1"] = f.addContact(w.b, person("B-1"))
	return w
}

// crAdd adds a contact, checks that the answer is exactly {"id": ...}, and returns the id.
func crAdd(t *testing.T, f *fixture, wid string, body map[string]any) string {
	t.Helper()
	r := crOn(f, t).v2("POST", crContacts(wid), body).wantOK(t).object(t)
	id, ok := r["id"].(string)
	if !ok || id == "" || len(r) != 1 {
		t.Fatalf("Add Contact answered %s, want exactly a non-empty id", crShow(r))
	}
	return id
}

func crGet(t *testing.T, f *fixture, wid, id string) map[string]any {
	t.Helper()
	return crOn(f, t).v2("GET", crContact(wid, id), nil).wantOK(t).object(t)
}

// crList returns the contacts array of List Contacts.
func crList(t *testing.T, f *fixture, wid string) []any {
	t.Helper()
	m := crOn(f, t).v2("GET", crContacts(wid), nil).wantOK(t).object(t)
	list, ok := m["contacts"].([]any)
	if !ok || len(m) != 1 {
		t.Fatalf("List Contacts answered %s, want exactly a contacts array", crShow(m))
	}
	return list
}

// crListed returns the list item with the id.
func crListed(t *testing.T, list []any, id string) map[string]any {
	t.Helper()
	for _, item := range list {
		if m, ok := item.(map[string]any); ok && m["id"] == id {
			return m
		}
	}
	t.Fatalf("contact %s is not in the list %s", id, crShow(list))
	return nil
}

// crWantContact checks a contact response against the body it should reflect: exactly the
// fields sent (absent optional fields are omitted) plus the id.
func crWantContact(t *testing.T, what string, got map[string]any, id string, sent map[string]any) {
	t.Helper()
	want := crJSON(t, sent).(map[string]any)
	want["id"] = id
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s is\n  %s\nwant\n  %s", what, crShow(got), crShow(want))
	}
}

// crApplied is the contact a successful update should leave: each field sent replaces the
// stored one, and an empty array clears its role.
func crApplied(t *testing.T, before map[string]any, update map[string]any) map[string]any {
	t.Helper()
	out := crJSON(t, before).(map[string]any)
	for k, v := range crJSON(t, update).(map[string]any) {
		if a, ok := v.([]any); ok && len(a) == 0 {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// crUnchanged checks that the stored state still is what it was.
func crUnchanged(t *testing.T, what string, before, after any) {
	t.Helper()
	if !reflect.DeepEqual(before, after) {
		t.Errorf("%s changed after a rejected request:\n  before %s\n  after  %s", what, crShow(before), crShow(after))
	}
}

func TestContactRulesListIsAnArrayEvenWhenEmpty(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("EMPTY", "Empty family")
	r := f.v2("GET", crContacts(wid), nil).wantOK(t)
	if got := strings.TrimSpace(string(r.body)); got != `{"contacts":[]}` {
		t.Errorf("List Contacts of an empty top account is %s, want {\"contacts\":[]}", got)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
}

func TestContactRulesEveryTypeAddGetListUpdate(t *testing.T) {
	t.Parallel()
	w := crSetup(t)
	for _, tc := range []struct {
		typ    string
		update map[string]any
	}{
		{"Individual", map[string]any{"middle_name": "Byron", "last_name": "King"}},
		{"Trust", map[string]any{
			"trust_type": "IrrevocableLifeInsuranceTrust", "governing_state": "TX",
			"trust_creation_date": "2021-06-30", "initial_trustee": []string{"P-1"}, "legal_name": "Lovelace ILIT",
		}},
		{"Entity", map[string]any{
			"incorporation_state": "NV", "incorporation_form": "SCorporation",
			"ownership": []any{map[string]any{"percentage": 100, "subowners": []string{"P-1", "P-2"}}},
		}},
		{"Charity", map[string]any{"ein": 987654321, "city": "Cambridge", "state": "RI", "notes": "Quarterly gift."}},
		{"Will", map[string]any{"will_type": "LastWillAndTestament", "will_creation_date": "2024-02-29", "executor": []string{"P-3"}}},
		{"Class", map[string]any{
			"legal_name": "Great-grandchildren",
			"current_parties": map[string]any{
				"is_distributed_evenly": true,
				"parties":               []any{map[string]any{"contact_id": "P-3", "fraction": map[string]any{"numerator": 2, "denominator": 3}}},
			},
		}},
	} {
		t.Run(tc.typ+" with only its required fields returns only id, external_id, type and those", func(t *testing.T) {
			t.Parallel()
			body := crMinimal(tc.typ, "MIN-"+tc.typ)
			id := crAdd(t, w.f, w.a, body)
			crWantContact(t, "Get Contact", crGet(t, w.f, w.a, id), id, body)
			crWantContact(t, "List Contacts item", crListed(t, crList(t, w.f, w.a), id), id, body)
		})
		t.Run(tc.typ+" with every field is returned as sent, then updated field by field", func(t *testing.T) {
			t.Parallel()
			body := crFull(tc.typ, "FULL-"+tc.typ)
			id := crAdd(t, w.f, w.a, body)
			got := crGet(t, w.f, w.a, id)
			crWantContact(t, "Get Contact", got, id, body)
			crWantContact(t, "List Contacts item", crListed(t, crList(t, w.f, w.a), id), id, body)

			r := crOn(w.f, t).v2("PUT", crContact(w.a, id), tc.update).wantOK(t).object(t)
			if !reflect.DeepEqual(r, map[string]any{"id": id}) {
				t.Errorf("Update Contact answered %s, want {\"id\":%q}", crShow(r), id)
			}
			want := crApplied(t, got, tc.update)
			after := crGet(t, w.f, w.a, id)
			if !reflect.DeepEqual(after, want) {
				t.Errorf("after update Get Contact is\n  %s\nwant\n  %s", crShow(after), crShow(want))
			}
			if listed := crListed(t, crList(t, w.f, w.a), id); !reflect.DeepEqual(listed, want) {
				t.Errorf("after update List Contacts item is\n  %s\nwant\n  %s", crShow(listed), crShow(want))
			}
		})
	}
}

func TestContactRulesExternalIDIsUniqueWithinItsTopAccountOnly(t *testing.T) {
	t.Parallel()
	w := crSetup(t)
	g := w.f

	before := crList(t, g, w.a)
	g.v2("POST", crContacts(w.a), person("P-1")).wantError(t, http.StatusConflict, crMsgDuplicate)
	g.v2("POST", crContacts(w.a), crMinimal("Trust", "P-2")).wantError(t, http.StatusConflict, crMsgDuplicate)
	crUnchanged(t, "List Contacts", before, crList(t, g, w.a))
	crUnchanged(t, "Get Contact P-1", crJSON(t, before[0]), crGet(t, g, w.a, w.ids["P-1"]))

	// The same external_id in another top account is another contact.
	id := crAdd(t, g, w.b, person("P-1"))
	if id == w.ids["P-1"] {
		t.Errorf("P-1 of top account B got the id of P-1 of top account A")
	}
	crWantContact(t, "Get Contact of B", crGet(t, g, w.b, id), id, person("P-1"))
	crUnchanged(t, "List Contacts of A", before, crList(t, g, w.a))

	// A reference in B to P-1 now resolves to B's own P-1, and B-1 is still unknown in A.
	trust := crWith(crMinimal("Trust", "B-TRUST"), map[string]any{"trust_creator": []string{"P-1", "B-1"}})
	tid := crAdd(t, g, w.b, trust)
	crWantContact(t, "Get Contact of B's trust", crGet(t, g, w.b, tid), tid, trust)
	g.v2("POST", crContacts(w.a), crWith(trust, map[string]any{"external_id": "A-TRUST"})).
		wantError(t, http.StatusBadRequest, crUnknownRef("trust_creator", "B-1"))
	crUnchanged(t, "List Contacts of A", before, crList(t, g, w.a))
}

// crCase is one Add or Update Contact request and its answer by the specification.
type crCase struct {
	name    string
	target  string // update: external_id of the contact to update
	path    string // default: the collection of A (add) or the target's item (update)
	body    any
	status  int    // default 400
	message string // empty: the request succeeds
}

func TestContactRulesAdd(t *testing.T) {
	t.Parallel()
	w := crSetup(t)
	minimal := map[string]map[string]any{}
	for _, typ := range crContactTypes {
		minimal[typ] = crMinimal(typ, "NEW")
	}
	// ok returns a body that should be accepted, under an external_id of its own.
	n := 0
	ok := func(typ string, changes map[string]any) map[string]any {
		n++
		return crWith(crMinimal(typ, fmt.Sprintf("OK-%d", n)), changes)
	}
	bad := func(typ string, changes map[string]any) map[string]any { return crWith(minimal[typ], changes) }
	long := func(n int) string { return strings.Repeat("x", n) }
	// Lengths are counted in characters: é is two bytes.
	longRunes := func(n int) string { return strings.Repeat("é", n) }

	cases := []crCase{
		// Common fields: external_id and type are required on create for every type.
		{name: "type is required on create", body: map[string]any{"external_id": "NEW"}, message: crRequired("type")},
		{name: "type sent as null is missing", body: map[string]any{"external_id": "NEW", "type": nil}, message: crRequired("type")},
		{name: "type outside the enum is refused", body: bad("Individual", map[string]any{"type": "Person"}), message: crEnum("type", crContactTypes)},
		{name: "type is matched exactly", body: bad("Individual", map[string]any{"type": "individual"}), message: crEnum("type", crContactTypes)},
		{name: "type that is not a string is refused", body: bad("Individual", map[string]any{"type": 1}), message: crEnum("type", crContactTypes)},
		{name: "external_id of 50 characters is accepted", body: crMinimal("Individual", long(50))},
		{name: "external_id limit counts characters", body: crMinimal("Individual", longRunes(50))},
		{name: "external_id of 51 characters is refused", body: crMinimal("Individual", long(51)), message: crTooLong("external_id", 50)},
		{name: "blank external_id is refused", body: crMinimal("Individual", " \t "), message: crBlank("external_id")},
		{name: "external_id that is not a string is refused", body: bad("Individual", map[string]any{"external_id": 12}), message: crNotString("external_id")},
		{name: "Individual requires only external_id and type", body: ok("Individual", nil)},
		{name: "external_id already in the top account is a conflict", body: person("P-3"), status: http.StatusConflict, message: crMsgDuplicate},
		{name: "external_id conflict does not depend on the type", body: crMinimal("Will", "P-3"), status: http.StatusConflict, message: crMsgDuplicate},

		// Body.
		{name: "body that is not JSON is refused", body: `{"type": "Individual", "external_id": `, message: crMsgMalformed},
		{name: "body that is not an object is refused", body: `["Individual"]`, message: crMsgMalformed},
		{name: "empty body misses type", body: nil, message: crRequired("type")},
		{name: "id is set by the service", body: bad("Individual", map[string]any{"id": "mine"}), message: crMsgIDSet},
		{name: "unknown field is refused", body: bad("Individual", map[string]any{"nickname": "Ada"}), message: "nickname is not a contact card field"},

		// Fields belong to their types; dob only to the v1 endpoints.
		{name: "legal_name is not an Individual field", body: bad("Individual", map[string]any{"legal_name": "Ada"}), message: crOnlyFor("legal_name", crOrgTypes)},
		{name: "trust_creation_date only on Trust (Individual)", body: bad("Individual", map[string]any{"trust_creation_date": "2020-01-01"}), message: crMsgTrustDateOnTrust},
		{name: "trust_creation_date only on Trust (Will)", body: bad("Will", map[string]any{"trust_creation_date": "2020-01-01"}), message: crMsgTrustDateOnTrust},
		{name: "will_creation_date only on Will (Trust)", body: bad("Trust", map[string]any{"will_creation_date": "2020-01-01"}), message: crMsgWillDateOnWill},
		{name: "will_creation_date only on Will (Entity)", body: bad("Entity", map[string]any{"will_creation_date": "2020-01-01"}), message: crMsgWillDateOnWill},
		{name: "ownership only on Entity", body: bad("Trust", map[string]any{"ownership": []any{}}), message: crOnlyFor("ownership", "Entity")},
		{name: "testator only on Will", body: bad("Trust", map[string]any{"testator": []string{"P-1"}}), message: crOnlyFor("testator", "Will")},
		{name: "current_parties only on Class", body: bad("Charity", map[string]any{"current_parties": map[string]any{"parties": []any{}}}), message: crOnlyFor("current_parties", "Class")},
		{name: "dob is present only on the v1 endpoints", body: bad("Individual", map[string]any{"dob": "1990-01-01"}), message: crMsgDobV1Only},

		// Enums.
		{name: "trust_type outside the enum is refused", body: bad("Trust", map[string]any{"trust_type": "RevocableTrust"}), message: crEnum("trust_type", crTrustTypes)},
		{name: "trust_type is matched exactly", body: bad("Trust", map[string]any{"trust_type": "dynastytrust"}), message: crEnum("trust_type", crTrustTypes)},
		{name: "blank trust_type is refused", body: bad("Trust", map[string]any{"trust_type": " "}), message: crEnum("trust_type", crTrustTypes)},
		{name: "incorporation_form outside the enum is refused", body: bad("Entity", map[string]any{"incorporation_form": "LLC"}), message: crEnum("incorporation_form", crIncorporationForms)},
		{name: "incorporation_form is matched exactly", body: bad("Entity", map[string]any{"incorporation_form": "ccorporation"}), message: crEnum("incorporation_form", crIncorporationForms)},
		{name: "will_type outside the enum is refused", body: bad("Will", map[string]any{"will_type": "LivingWill"}), message: crEnum("will_type", crWillTypes)},
		{name: "will_type that is not a string is refused", body: bad("Will", map[string]any{"will_type": 1}), message: crEnum("will_type", crWillTypes)},

		// Charity's ein is an integer.
		{name: "ein integer is accepted", body: ok("Charity", map[string]any{"ein": 987654321})},
		{name: "ein as a string is refused", body: bad("Charity", map[string]any{"ein": "987654321"}), message: "ein must be an integer"},
		{name: "ein with a fraction is refused", body: bad("Charity", map[string]any{"ein": 12.5}), message: "ein must be an integer"},

		// Blank or whitespace-only optional strings.
		{name: "empty first_name is refused", body: bad("Individual", map[string]any{"first_name": ""}), message: crBlank("first_name")},
		{name: "whitespace-only first_name is refused", body: bad("Individual", map[string]any{"first_name": " \t\n"}), message: crBlank("first_name")},
		{name: "whitespace-only middle_name is refused", body: bad("Individual", map[string]any{"middle_name": "   "}), message: crBlank("middle_name")},
		{name: "whitespace-only last_name is refused", body: bad("Individual", map[string]any{"last_name": "\t"}), message: crBlank("last_name")},
		{name: "whitespace-only address_formatted is refused", body: bad("Charity", map[string]any{"address_formatted": "  "}), message: crBlank("address_formatted")},
		{name: "whitespace-only Charity notes are refused", body: bad("Charity", map[string]any{"notes": "\n"}), message: crBlank("notes")},
		{name: "empty Class notes are refused", body: bad("Class", map[string]any{"notes": ""}), message: crBlank("notes")},
		{name: "whitespace-only share_amount is refused", body: bad("Class", map[string]any{"current_parties": map[string]any{"share_amount": " ", "parties": []any{}}}),
			message: crBlank("current_parties.share_amount")},
		{name: "whitespace-only legal_name is refused", body: bad("Trust", map[string]any{"legal_name": "  "}), message: crBlank("legal_name")},
		{name: "whitespace-only city is refused", body: bad("Charity", map[string]any{"city": " "}), message: crBlank("city")},
		{name: "whitespace-only reference is refused", body: bad("Trust", map[string]any{"trust_creator": []string{" "}}), message: crRefList("trust_creator")},
		{name: "first_name that is not a string is refused", body: bad("Individual", map[string]any{"first_name": 7}), message: crNotString("first_name")},

		// Dates.
		{name: "trust_creation_date on a leap day is accepted", body: ok("Trust", map[string]any{"trust_creation_date": "2024-02-29"})},
		{name: "will_creation_date YYYY-MM-DD is accepted", body: ok("Will", map[string]any{"will_creation_date": "1999-12-31"})},

		// States.
		{name: "governing_state NY is accepted on Trust", body: ok("Trust", map[string]any{"governing_state": "NY"})},
		{name: "governing_state WY is accepted on Will", body: ok("Will", map[string]any{"governing_state": "WY"})},
		{name: "incorporation_state AK is accepted", body: ok("Entity", map[string]any{"incorporation_state": "AK"})},
		{name: "Charity state TX is accepted", body: ok("Charity", map[string]any{"state": "TX"})},

		// Ownership entries.
		{name: "ownership single owner with percentage 0 is accepted", body: ok("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": 0, "owner_id": "P-1"}}})},
		{name: "ownership single owner with percentage 100 is accepted", body: ok("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": 100, "owner_id": "P-1"}}})},
		{name: "ownership joint owners with subowners are accepted", body: ok("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": 33.33, "subowners": []string{"P-1", "P-2"}}}})},
		{name: "ownership entry with both owner_id and subowners is refused",
			body:    bad("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": 50, "owner_id": "P-1", "subowners": []string{"P-2"}}}}),
			message: "ownership[0] must have either owner_id or subowners, not both"},
		{name: "ownership entry with neither owner_id nor subowners is refused",
			body:    bad("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": 50}}}),
			message: "ownership[0] must have owner_id (single owner) or subowners (joint owners)"},
		{name: "ownership entry without percentage is refused",
			body:    bad("Entity", map[string]any{"ownership": []any{map[string]any{"owner_id": "P-1"}}}),
			message: "ownership[0].percentage is required"},
		{name: "ownership percentage below 0 is refused",
			body:    bad("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": -0.01, "owner_id": "P-1"}}}),
			message: crPercent("ownership[0].percentage")},
		{name: "ownership percentage above 100 is refused",
			body:    bad("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": 50, "owner_id": "P-1"}, map[string]any{"percentage": 100.5, "owner_id": "P-2"}}}),
			message: crPercent("ownership[1].percentage")},
		{name: "ownership percentage that is not a number is refused",
			body:    bad("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": "50", "owner_id": "P-1"}}}),
			message: crPercent("ownership[0].percentage")},
		{name: "ownership joint entry needs at least one subowner",
			body:    bad("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": 50, "subowners": []string{}}}}),
			message: "ownership[0].subowners must name at least one contact"},
		{name: "ownership subowners must be an array",
			body:    bad("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": 50, "subowners": "P-1"}}}),
			message: crRefList("ownership[0].subowners")},
		{name: "ownership owner_id must be one external_id",
			body:    bad("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": 50, "owner_id": []string{"P-1"}}}}),
			message: "ownership[0].owner_id must be a contact external_id"},
		{name: "ownership must be an array",
			body:    bad("Entity", map[string]any{"ownership": map[string]any{"percentage": 50, "owner_id": "P-1"}}),
			message: "ownership must be an array of ownership entries"},
		{name: "ownership entry carries only its own fields",
			body:    bad("Entity", map[string]any{"ownership": []any{map[string]any{"percentage": 50, "owner_id": "P-1", "share": 1}}}),
			message: "ownership[0].share is not a field of an ownership entry"},

		// Class parties.
		{name: "party with distribution_percentage 0 is accepted",
			body: ok("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "distribution_percentage": 0}}}})},
		{name: "party with distribution_percentage 100 is accepted",
			body: ok("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "distribution_percentage": 100}}}})},
		{name: "party with a fraction is accepted",
			body: ok("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "fraction": map[string]any{"numerator": 1, "denominator": 3}}}}})},
		{name: "a negative denominator is a non-zero integer",
			body: ok("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "fraction": map[string]any{"numerator": 1, "denominator": -3}}}}})},
		{name: "distribution_percentage and fraction are each optional and may be combined",
			body: ok("Class", map[string]any{"current_parties": map[string]any{"parties": []any{
				map[string]any{"contact_id": "P-1", "distribution_percentage": 25, "fraction": map[string]any{"numerator": 1, "denominator": 4}},
				map[string]any{"contact_id": "P-2"},
			}}})},
		{name: "current_parties with an empty parties array is accepted",
			body: ok("Class", map[string]any{"current_parties": map[string]any{"is_distributed_evenly": true, "parties": []any{}}})},
		{name: "current_parties requires parties",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"is_distributed_evenly": true}}),
			message: "current_parties.parties is required"},
		{name: "current_parties must be an object",
			body:    bad("Class", map[string]any{"current_parties": []any{}}),
			message: "current_parties must be an object"},
		{name: "parties must be an array",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": map[string]any{"contact_id": "P-1"}}}),
			message: "current_parties.parties must be an array of parties"},
		{name: "party requires contact_id",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"distribution_percentage": 10}}}}),
			message: "current_parties.parties[0].contact_id is required"},
		{name: "distribution_percentage above 100 is refused",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "distribution_percentage": 100.01}}}}),
			message: crPercent("current_parties.parties[0].distribution_percentage")},
		{name: "distribution_percentage below 0 is refused",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1"}, map[string]any{"contact_id": "P-2", "distribution_percentage": -1}}}}),
			message: crPercent("current_parties.parties[1].distribution_percentage")},
		{name: "fraction with zero denominator is refused",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "fraction": map[string]any{"numerator": 1, "denominator": 0}}}}}),
			message: "current_parties.parties[0].fraction.denominator must be a non-zero integer"},
		{name: "fraction with a non-integer denominator is refused",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "fraction": map[string]any{"numerator": 1, "denominator": 2.5}}}}}),
			message: "current_parties.parties[0].fraction.denominator must be a non-zero integer"},
		{name: "distribution_percentage that is not a number is refused",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "distribution_percentage": "50"}}}}),
			message: crPercent("current_parties.parties[0].distribution_percentage")},
		{name: "fraction numerator written as a string is not an integer",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "fraction": map[string]any{"numerator": "1", "denominator": 2}}}}}),
			message: "current_parties.parties[0].fraction.numerator must be an integer"},
		{name: "fraction denominator written as a string is not an integer",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "fraction": map[string]any{"numerator": 1, "denominator": "2"}}}}}),
			message: "current_parties.parties[0].fraction.denominator must be a non-zero integer"},
		{name: "fraction requires denominator",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "fraction": map[string]any{"numerator": 1}}}}}),
			message: "current_parties.parties[0].fraction.denominator is required"},
		{name: "fraction requires numerator",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "fraction": map[string]any{"denominator": 2}}}}}),
			message: "current_parties.parties[0].fraction.numerator is required"},
		{name: "fraction numerator is an integer",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "fraction": map[string]any{"numerator": 0.5, "denominator": 2}}}}}),
			message: "current_parties.parties[0].fraction.numerator must be an integer"},
		{name: "is_distributed_evenly is a boolean",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"is_distributed_evenly": "yes", "parties": []any{}}}),
			message: "current_parties.is_distributed_evenly must be a boolean"},
		{name: "share_amount of 50 characters is accepted",
			body: ok("Class", map[string]any{"current_parties": map[string]any{"share_amount": long(50), "parties": []any{}}})},
		{name: "share_amount of 51 characters is refused",
			body:    bad("Class", map[string]any{"current_parties": map[string]any{"share_amount": long(51), "parties": []any{}}}),
			message: crTooLong("current_parties.share_amount", 50)},

		// The top account must exist.
		{name: "unknown top account is Container not found", path: crContacts("no-such-top-account"), body: person("NEW"), status: http.StatusNotFound, message: crMsgContainerNotFound},
		{name: "blank wid is a missing path parameter", path: crContacts("%20"), body: person("NEW"), message: "Missing wid parameter"},
	}

	// Required fields per type: legal_name for every type but Individual, city and state for
	// Charity, will_type for Will. Null is as missing as absent.
	for _, typ := range crContactTypes[1:] {
		cases = append(cases,
			crCase{name: typ + " requires legal_name", body: bad(typ, map[string]any{"legal_name": crRemove{}}), message: crRequired("legal_name")},
			crCase{name: typ + " legal_name sent as null is missing", body: bad(typ, map[string]any{"legal_name": nil}), message: crRequired("legal_name")},
			crCase{name: typ + " external_id is required", body: bad(typ, map[string]any{"external_id": crRemove{}}), message: crRequired("external_id")},
		)
	}
	cases = append(cases,
		crCase{name: "Charity requires city", body: bad("Charity", map[string]any{"city": crRemove{}}), message: crRequired("city")},
		crCase{name: "Charity requires state", body: bad("Charity", map[string]any{"state": crRemove{}}), message: crRequired("state")},
		crCase{name: "Charity state sent as null is missing", body: bad("Charity", map[string]any{"state": nil}), message: crRequired("state")},
		crCase{name: "Will requires will_type", body: bad("Will", map[string]any{"will_type": crRemove{}}), message: crRequired("will_type")},
	)

	// Maximum lengths, counted in characters.
	for _, l := range []struct {
		field, typ string
		max        int
	}{
		{"first_name", "Individual", 200}, {"middle_name", "Individual", 200}, {"last_name", "Individual", 200},
		{"legal_name", "Trust", 200}, {"legal_name", "Entity", 200}, {"legal_name", "Charity", 200},
		{"legal_name", "Will", 200}, {"legal_name", "Class", 200},
		{"city", "Charity", 100}, {"address_formatted", "Charity", 200},
		{"notes", "Charity", 5000}, {"notes", "Class", 5000},
	} {
		cases = append(cases,
			crCase{name: fmt.Sprintf("%s %s of %d characters is accepted", l.typ, l.field, l.max), body: ok(l.typ, map[string]any{l.field: longRunes(l.max)})},
			crCase{name: fmt.Sprintf("%s %s of %d characters is refused", l.typ, l.field, l.max+1), body: bad(l.typ, map[string]any{l.field: long(l.max + 1)}), message: crTooLong(l.field, l.max)},
		)
	}

	// Every enum value the specification lists is accepted.
	for _, v := range crTrustTypes {
		cases = append(cases, crCase{name: "trust_type " + v + " is accepted", body: ok("Trust", map[string]any{"trust_type": v})})
	}
	for _, v := range crIncorporationForms {
		cases = append(cases, crCase{name: "incorporation_form " + v + " is accepted", body: ok("Entity", map[string]any{"incorporation_form": v})})
	}
	for _, v := range crWillTypes {
		cases = append(cases, crCase{name: "will_type " + v + " is accepted", body: ok("Will", map[string]any{"will_type": v})})
	}

	// Dates must be real dates written YYYY-MM-DD.
	for _, d := range []struct{ field, typ string }{{"trust_creation_date", "Trust"}, {"will_creation_date", "Will"}} {
		for _, v := range []any{
			"2023-02-30", "2023-02-29", "2023-04-31", "2023-13-01", "2023-00-10", "2023-01-00",
			"2023-1-05", "23-01-05", "2023/01/05", "01/05/2023", "2023-01-05T00:00:00Z", " 2023-01-05", "", 20230105,
		} {
			cases = append(cases, crCase{name: fmt.Sprintf("%s %v is refused", d.field, crShow(v)), body: bad(d.typ, map[string]any{d.field: v}), message: crBadDate(d.field)})
		}
	}

	// States must be two-letter US state abbreviations.
	for _, s := range []struct{ field, typ string }{{"governing_state", "Trust"}, {"governing_state", "Will"}, {"incorporation_state", "Entity"}, {"state", "Charity"}} {
		for _, v := range []any{"XX", "New York", "N", "NYC", "ny", "", 36} {
			cases = append(cases, crCase{name: fmt.Sprintf("%s %s %v is refused", s.typ, s.field, crShow(v)), body: bad(s.typ, map[string]any{s.field: v}), message: crBadState(s.field)})
		}
	}

	// Relationship references: existing contacts of the same top account, never the contact
	// itself, named by external_id (not by the service id).
	for _, ref := range []struct {
		field string
		typ   string
		with  func(externalID string) map[string]any
	}{
		{"trust_creator", "Trust", func(x string) map[string]any { return map[string]any{"trust_creator": []string{"P-1", x}} }},
		{"initial_trustee", "Trust", func(x string) map[string]any { return map[string]any{"initial_trustee": []string{x}} }},
		{"testator", "Will", func(x string) map[string]any { return map[string]any{"testator": []string{x}} }},
		{"executor", "Will", func(x string) map[string]any { return map[string]any{"executor": []string{"P-2", x}} }},
		{"ownership[0].owner_id", "Entity", func(x string) map[string]any {
			return map[string]any{"ownership": []any{map[string]any{"percentage": 50, "owner_id": x}}}
		}},
		{"ownership[1].subowners", "Entity", func(x string) map[string]any {
			return map[string]any{"ownership": []any{
				map[string]any{"percentage": 50, "owner_id": "P-1"},
				map[string]any{"percentage": 50, "subowners": []string{"P-2", x}},
			}}
		}},
		{"current_parties.parties[0].contact_id", "Class", func(x string) map[string]any {
			return map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": x}}}}
		}},
	} {
		cases = append(cases,
			crCase{name: ref.field + " naming an existing contact of the top account is accepted", body: ok(ref.typ, ref.with("P-3"))},
			crCase{name: ref.field + " naming no contact is refused", body: bad(ref.typ, ref.with("NOBODY")), message: crUnknownRef(ref.field, "NOBODY")},
			crCase{name: ref.field + " naming a contact of another top account is refused", body: bad(ref.typ, ref.with("B-1")), message: crUnknownRef(ref.field, "B-1")},
			crCase{name: ref.field + " naming a contact by its service id is refused", body: bad(ref.typ, ref.with(w.ids["P-3"])), message: crUnknownRef(ref.field, w.ids["P-3"])},
			crCase{name: ref.field + " naming the contact being created is refused", body: bad(ref.typ, ref.with("NEW")), message: crSelfRef(ref.field)},
		)
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := crOn(w.f, t)
			path := tc.path
			if path == "" {
				path = crContacts(w.a)
			}
			before := crList(t, w.f, w.a)
			r := g.v2("POST", path, tc.body)
			if tc.message == "" {
				r.wantOK(t)
				m := r.object(t)
				id, _ := m["id"].(string)
				if id == "" || len(m) != 1 {
					t.Fatalf("Add Contact answered %s, want exactly a non-empty id", r.body)
				}
				sent := tc.body.(map[string]any)
				crWantContact(t, "Get Contact", crGet(t, w.f, w.a, id), id, sent)
				if after := crList(t, w.f, w.a); len(after) != len(before)+1 {
					t.Errorf("List Contacts has %d contacts after an add, want %d", len(after), len(before)+1)
				}
				return
			}
			status := tc.status
			if status == 0 {
				status = http.StatusBadRequest
			}
			r.wantError(t, status, tc.message)
			crUnchanged(t, "List Contacts", before, crList(t, w.f, w.a))
			crUnchanged(t, "Get Contact P-3", crJSON(t, crListed(t, before, w.ids["P-3"])), crGet(t, w.f, w.a, w.ids["P-3"]))
		})
	}
}

func TestContactRulesUpdate(t *testing.T) {
	t.Parallel()
	w := crSetup(t)
	targets := map[string]string{"Individual": "IND", "Trust": "TRU", "Entity": "ENT", "Charity": "CHA", "Will": "WIL", "Class": "CLA"}
	for _, typ := range crContactTypes {
		ext := targets[typ]
		w.ids[ext] = w.f.addContact(w.a, crFull(typ, ext))
	}
	long := func(n int) string { return strings.Repeat("x", n) }

	cases := []crCase{
		// type and external_id never change, whatever value is sent.
		{name: "external_id cannot be updated, even to its own value", target: "IND", body: map[string]any{"external_id": "IND"}, message: crMsgExternalIDImmutable},
		{name: "external_id cannot be updated to a new value", target: "TRU", body: map[string]any{"external_id": "TRU-2", "legal_name": "Renamed"}, message: crMsgExternalIDImmutable},
		// The v2 Update row of the Errors table has no 409: naming another contact's external_id
		// is the immutable-field error.
		{name: "external_id of another contact is still an immutable-field error", target: "CHA", body: map[string]any{"external_id": "P-1"}, message: crMsgExternalIDImmutable},
		{name: "external_id sent as null is still an update of it", target: "ENT", body: map[string]any{"external_id": nil}, message: crMsgExternalIDImmutable},

		// An update must carry at least one mutable field of the contact's existing type.
		{name: "field of another type is refused on Individual", target: "IND", body: map[string]any{"legal_name": "Ada Ltd"}, message: crOnlyFor("legal_name", crOrgTypes)},
		{name: "field of another type is refused on Trust", target: "TRU", body: map[string]any{"first_name": "Ada"}, message: crOnlyFor("first_name", "Individual")},
		{name: "field of another type is refused with a field of the type", target: "WIL", body: map[string]any{"legal_name": "Will", "ownership": []any{}}, message: crOnlyFor("ownership", "Entity")},
		{name: "empty role array of another type is refused", target: "IND", body: map[string]any{"testator": []string{}}, message: crOnlyFor("testator", "Will")},
		{name: "dob is present only on the v1 endpoints", target: "IND", body: map[string]any{"dob": "1990-01-01"}, message: crMsgDobV1Only},
		{name: "id is set by the service", target: "IND", body: map[string]any{"id": "mine", "first_name": "Ada"}, message: crMsgIDSet},
		{name: "unknown field is refused", target: "CLA", body: map[string]any{"nickname": "kids"}, message: "nickname is not a contact card field"},

		// Creation dates are accepted only on their own types, and must be real dates.
		{name: "trust_creation_date is accepted on Trust", target: "TRU", body: map[string]any{"trust_creation_date": "2024-02-29"}},
		{name: "will_creation_date is accepted on Will", target: "WIL", body: map[string]any{"will_creation_date": "2000-02-29"}},
		{name: "trust_creation_date must be a real date", target: "TRU", body: map[string]any{"trust_creation_date": "2023-02-30"}, message: crBadDate("trust_creation_date")},
		{name: "will_creation_date must be a real date", target: "WIL", body: map[string]any{"will_creation_date": "2023-02-30"}, message: crBadDate("will_creation_date")},
		{name: "will_creation_date must be YYYY-MM-DD", target: "WIL", body: map[string]any{"will_creation_date": "12/31/2023"}, message: crBadDate("will_creation_date")},

		// Values are checked as on create.
		{name: "trust_type outside the enum is refused", target: "TRU", body: map[string]any{"trust_type": "Dynasty"}, message: crEnum("trust_type", crTrustTypes)},
		{name: "incorporation_form outside the enum is refused", target: "ENT", body: map[string]any{"incorporation_form": "LLC"}, message: crEnum("incorporation_form", crIncorporationForms)},
		{name: "will_type outside the enum is refused", target: "WIL", body: map[string]any{"will_type": "Codicil"}, message: crEnum("will_type", crWillTypes)},
		{name: "governing_state must be a state abbreviation", target: "TRU", body: map[string]any{"governing_state": "XX"}, message: crBadState("governing_state")},
		{name: "incorporation_state must be a state abbreviation", target: "ENT", body: map[string]any{"incorporation_state": "Delaware"}, message: crBadState("incorporation_state")},
		{name: "Charity state must be a state abbreviation", target: "CHA", body: map[string]any{"state": "M"}, message: crBadState("state")},
		{name: "blank first_name is refused", target: "IND", body: map[string]any{"first_name": "  "}, message: crBlank("first_name")},
		{name: "blank legal_name is refused", target: "CLA", body: map[string]any{"legal_name": "\t"}, message: crBlank("legal_name")},
		{name: "blank Charity city is refused", target: "CHA", body: map[string]any{"city": " "}, message: crBlank("city")},
		{name: "blank Class notes are refused", target: "CLA", body: map[string]any{"notes": " "}, message: crBlank("notes")},
		{name: "required legal_name cannot be removed with null", target: "WIL", body: map[string]any{"legal_name": nil}, message: crNotString("legal_name")},
		{name: "legal_name of 201 characters is refused", target: "ENT", body: map[string]any{"legal_name": long(201)}, message: crTooLong("legal_name", 200)},
		{name: "notes of 5001 characters are refused", target: "CHA", body: map[string]any{"notes": long(5001)}, message: crTooLong("notes", 5000)},
		{name: "last_name of 201 characters is refused", target: "IND", body: map[string]any{"last_name": long(201)}, message: crTooLong("last_name", 200)},
		{name: "ein must be an integer", target: "CHA", body: map[string]any{"ein": "12"}, message: "ein must be an integer"},

		// Ownership entries and class parties.
		{name: "ownership entry with both owner_id and subowners is refused", target: "ENT",
			body:    map[string]any{"ownership": []any{map[string]any{"percentage": 10, "owner_id": "P-1", "subowners": []string{"P-2"}}}},
			message: "ownership[0] must have either owner_id or subowners, not both"},
		{name: "ownership entry with neither owner_id nor subowners is refused", target: "ENT",
			body:    map[string]any{"ownership": []any{map[string]any{"percentage": 10}}},
			message: "ownership[0] must have owner_id (single owner) or subowners (joint owners)"},
		{name: "ownership percentage above 100 is refused", target: "ENT",
			body:    map[string]any{"ownership": []any{map[string]any{"percentage": 101, "owner_id": "P-1"}}},
			message: crPercent("ownership[0].percentage")},
		{name: "ownership percentage that is not a number is refused", target: "ENT",
			body:    map[string]any{"ownership": []any{map[string]any{"percentage": "100", "owner_id": "P-1"}}},
			message: crPercent("ownership[0].percentage")},
		{name: "ownership percentage 0 is accepted", target: "ENT",
			body: map[string]any{"ownership": []any{map[string]any{"percentage": 0, "owner_id": "P-2"}, map[string]any{"percentage": 100, "subowners": []string{"P-1", "P-3"}}}}},
		{name: "fraction with zero denominator is refused", target: "CLA",
			body:    map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "fraction": map[string]any{"numerator": 0, "denominator": 0}}}}},
			message: "current_parties.parties[0].fraction.denominator must be a non-zero integer"},
		{name: "distribution_percentage above 100 is refused", target: "CLA",
			body:    map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "P-1", "distribution_percentage": 150}}}},
			message: crPercent("current_parties.parties[0].distribution_percentage")},
		{name: "current_parties requires parties", target: "CLA",
			body:    map[string]any{"current_parties": map[string]any{"share_amount": "all"}},
			message: "current_parties.parties is required"},

		// Relationship references on update: never the contact itself, never a contact of
		// another top account, always an existing contact.
		{name: "trust_creator must not name the trust itself", target: "TRU", body: map[string]any{"trust_creator": []string{"TRU"}}, message: crSelfRef("trust_creator")},
		{name: "initial_trustee must not name the trust itself", target: "TRU", body: map[string]any{"initial_trustee": []string{"P-1", "TRU"}}, message: crSelfRef("initial_trustee")},
		{name: "testator must not name the will itself", target: "WIL", body: map[string]any{"testator": []string{"WIL"}}, message: crSelfRef("testator")},
		{name: "executor must not name the will itself", target: "WIL", body: map[string]any{"executor": []string{"WIL"}}, message: crSelfRef("executor")},
		{name: "owner_id must not name the entity itself", target: "ENT",
			body: map[string]any{"ownership": []any{map[string]any{"percentage": 100, "owner_id": "ENT"}}}, message: crSelfRef("ownership[0].owner_id")},
		{name: "subowners must not name the entity itself", target: "ENT",
			body: map[string]any{"ownership": []any{map[string]any{"percentage": 100, "subowners": []string{"P-1", "ENT"}}}}, message: crSelfRef("ownership[0].subowners")},
		{name: "contact_id must not name the class itself", target: "CLA",
			body:    map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "CLA"}}}},
			message: crSelfRef("current_parties.parties[0].contact_id")},
		{name: "trust_creator naming a contact of another top account is refused", target: "TRU", body: map[string]any{"trust_creator": []string{"B-1"}}, message: crUnknownRef("trust_creator", "B-1")},
		{name: "executor naming no contact is refused", target: "WIL", body: map[string]any{"executor": []string{"P-1", "NOBODY"}}, message: crUnknownRef("executor", "NOBODY")},
		{name: "owner_id naming a contact of another top account is refused", target: "ENT",
			body: map[string]any{"ownership": []any{map[string]any{"percentage": 100, "owner_id": "B-1"}}}, message: crUnknownRef("ownership[0].owner_id", "B-1")},
		{name: "contact_id naming a contact of another top account is refused", target: "CLA",
			body:    map[string]any{"current_parties": map[string]any{"parties": []any{map[string]any{"contact_id": "B-1"}}}},
			message: crUnknownRef("current_parties.parties[0].contact_id", "B-1")},
		{name: "testator naming a contact by its service id is refused", target: "WIL", body: map[string]any{"testator": []string{w.ids["P-1"]}}, message: crUnknownRef("testator", w.ids["P-1"])},
		{name: "a reference to another existing contact is accepted", target: "TRU", body: map[string]any{"trust_creator": []string{"P-3", "WIL"}}},

		// Body.
		{name: "body that is not JSON is refused", target: "IND", body: `{"first_name": `, message: crMsgMalformed},
		{name: "body that is not an object is refused", target: "IND", body: `"Ada"`, message: crMsgMalformed},

		// Not found.
		{name: "unknown contact is Contact card not found", target: "IND", path: crContact(w.a, "no-such-contact"), body: map[string]any{"first_name": "Ada"},
			status: http.StatusNotFound, message: crMsgContactNotFound},
		{name: "contact of another top account is Contact card not found", target: "IND", path: crContact(w.a, w.ids["B-1"]), body: map[string]any{"first_name": "Ada"},
			status: http.StatusNotFound, message: crMsgContactNotFound},
		{name: "unknown top account is Container not found", target: "IND", path: crContact("no-such-top-account", w.ids["IND"]), body: map[string]any{"first_name": "Ada"},
			status: http.StatusNotFound, message: crMsgContainerNotFound},
		{name: "blank id is a missing path parameter", target: "IND", path: crContact(w.a, "%20"), body: map[string]any{"first_name": "Ada"}, message: "Missing id parameter"},
		{name: "update without an id is a missing path parameter", target: "IND", path: crContacts(w.a), body: map[string]any{"first_name": "Ada"}, message: "Missing id parameter"},
	}
	for _, typ := range crContactTypes {
		ext, other := targets[typ], "Individual"
		if typ == "Individual" {
			other = "Trust"
		}
		cases = append(cases,
			crCase{name: "type cannot be updated on " + typ + ", even to its own value", target: ext, body: map[string]any{"type": typ}, message: crMsgTypeImmutable},
			crCase{name: "type cannot be updated on " + typ + " to another type", target: ext, body: map[string]any{"type": other}, message: crMsgTypeImmutable},
			crCase{name: "empty object is an empty update on " + typ, target: ext, body: map[string]any{}, message: crMsgEmptyUpdate},
			crCase{name: "no body is an empty update on " + typ, target: ext, body: nil, message: crMsgEmptyUpdate},
		)
		if typ != "Trust" {
			cases = append(cases, crCase{name: "trust_creation_date is refused on " + typ, target: ext, body: map[string]any{"trust_creation_date": "2020-01-01"}, message: crMsgTrustDateOnTrust})
		}
		if typ != "Will" {
			cases = append(cases, crCase{name: "will_creation_date is refused on " + typ, target: ext, body: map[string]any{"will_creation_date": "2020-01-01"}, message: crMsgWillDateOnWill})
		}
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := crOn(w.f, t)
			id := w.ids[tc.target]
			path := tc.path
			if path == "" {
				path = crContact(w.a, id)
			}
			beforeList := crList(t, w.f, w.a)
			before := crGet(t, w.f, w.a, id)
			r := g.v2("PUT", path, tc.body)
			if tc.message == "" {
				m := r.wantOK(t).object(t)
				if !reflect.DeepEqual(m, map[string]any{"id": id}) {
					t.Errorf("Update Contact answered %s, want {\"id\":%q}", r.body, id)
				}
				want := crApplied(t, before, tc.body.(map[string]any))
				if got := crGet(t, w.f, w.a, id); !reflect.DeepEqual(got, want) {
					t.Errorf("after update Get Contact is\n  %s\nwant\n  %s", crShow(got), crShow(want))
				}
				return
			}
			status := tc.status
			if status == 0 {
				status = http.StatusBadRequest
			}
			r.wantError(t, status, tc.message)
			crUnchanged(t, "Get Contact "+tc.target, before, crGet(t, w.f, w.a, id))
			crUnchanged(t, "List Contacts", beforeList, crList(t, w.f, w.a))
		})
	}
}

func TestContactRulesUpdateEmptyArraysClearRoles(t *testing.T) {
	t.Parallel()
	w := crSetup(t)
	g := w.f
	trust := crFull("Trust", "TRU")
	will := crFull("Will", "WIL")
	tid := crAdd(t, g, w.a, trust)
	wid := crAdd(t, g, w.a, will)

	for _, step := range []struct {
		name   string
		id     string
		body   map[string]any
		absent []string // role fields Get must no longer return
	}{
		{"trust_creator [] clears the creators and keeps the trustees", tid, map[string]any{"trust_creator": []string{}}, []string{"trust_creator"}},
		{"initial_trustee [] clears the trustees", tid, map[string]any{"initial_trustee": []string{}}, []string{"trust_creator", "initial_trustee"}},
		{"a cleared role can be set again", tid, map[string]any{"trust_creator": []string{"P-2"}}, []string{"initial_trustee"}},
		{"testator and executor [] clear both roles of a will at once", wid, map[string]any{"testator": []string{}, "executor": []string{}}, []string{"testator", "executor"}},
		{"clearing a role that is already empty is accepted", wid, map[string]any{"executor": []string{}}, []string{"testator", "executor"}},
	} {
		t.Run(step.name, func(t *testing.T) {
			before := crGet(t, g, w.a, step.id)
			r := crOn(g, t).v2("PUT", crContact(w.a, step.id), step.body).wantOK(t).object(t)
			if !reflect.DeepEqual(r, map[string]any{"id": step.id}) {
				t.Errorf("Update Contact answered %s, want {\"id\":%q}", crShow(r), step.id)
			}
			got := crGet(t, g, w.a, step.id)
			for _, f := range step.absent {
				if v, present := got[f]; present {
					t.Errorf("%s is %s after it was cleared, want it omitted", f, crShow(v))
				}
			}
			if want := crApplied(t, before, step.body); !reflect.DeepEqual(got, want) {
				t.Errorf("Get Contact is\n  %s\nwant\n  %s", crShow(got), crShow(want))
			}
			if listed := crListed(t, crList(t, g, w.a), step.id); !reflect.DeepEqual(listed, got) {
				t.Errorf("List Contacts item %s differs from Get Contact %s", crShow(listed), crShow(got))
			}
		})
	}
	// The other fields of both contacts survived every step.
	for _, c := range []struct {
		id   string
		body map[string]any
	}{{tid, trust}, {wid, will}} {
		got := crGet(t, g, w.a, c.id)
		for k, v := range crJSON(t, c.body).(map[string]any) {
			switch k {
			case "trust_creator", "initial_trustee", "testator", "executor":
				continue
			}
			if !reflect.DeepEqual(got[k], v) {
				t.Errorf("%s of %s is %s, want %s (untouched by the updates)", k, c.body["external_id"], crShow(got[k]), crShow(v))
			}
		}
	}
}

func TestContactRulesGetAndListNotFound(t *testing.T) {
	t.Parallel()
	w := crSetup(t)
	for _, tc := range []struct {
		name    string
		path    string
		status  int
		message string
	}{
		{"List of an unknown top account is Container not found", crContacts("no-such-top-account"), http.StatusNotFound, crMsgContainerNotFound},
		{"Get in an unknown top account is Container not found", crContact("no-such-top-account", w.ids["P-1"]), http.StatusNotFound, crMsgContainerNotFound},
		{"Get of an unknown contact is Contact card not found", crContact(w.a, "no-such-contact"), http.StatusNotFound, crMsgContactNotFound},
		{"Get of a contact of another top account is Contact card not found", crContact(w.a, w.ids["B-1"]), http.StatusNotFound, crMsgContactNotFound},
		{"Get by external_id instead of id is Contact card not found", crContact(w.a, "P-1"), http.StatusNotFound, crMsgContactNotFound},
		{"Get with a blank id is a missing path parameter", crContact(w.a, "%20"), http.StatusBadRequest, "Missing id parameter"},
		{"List with a blank wid is a missing path parameter", crContacts("%20"), http.StatusBadRequest, "Missing wid parameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crOn(w.f, t).v2("GET", tc.path, nil).wantError(t, tc.status, tc.message)
		})
	}
	// Each top account lists only its own contacts (the specification gives no order).
	ids := func(list []any) []string {
		out := make([]string, len(list))
		for i, c := range list {
			out[i], _ = c.(map[string]any)["id"].(string)
		}
		slices.Sort(out)
		return out
	}
	if got, want := ids(crList(t, w.f, w.a)), slices.Sorted(slices.Values([]string{w.ids["P-1"], w.ids["P-2"], w.ids["P-3"]})); !slices.Equal(got, want) {
		t.Errorf("List Contacts of A has ids %v, want %v", got, want)
	}
	if got, want := ids(crList(t, w.f, w.b)), []string{w.ids["B-1"]}; !slices.Equal(got, want) {
		t.Errorf("List Contacts of B has ids %v, want %v", got, want)
	}
}

package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// The client-scoped (v1) contact endpoints, walked through the specification's "Contacts, client
// scoped (v1)" section: "Same operations, bodies and success shapes as v2 contacts (including
// `dob` for Individual)", the client "addressed by its wid or by the caller's external_id", the
// advisor_id and team_id query parameters, Authentication rules 2 to 4, and the Errors row
// "Contacts (v1) | 400 missing path parameters (update also: immutable field, empty update,
// invalid payload); 404 client or contact not found; 405 unsupported method for the path; 409 on
// add: external_id exists ...; 422 request could not be processed (add and update)".
//
// The specification does not show the message texts of the v1 endpoints; the field-level ones
// are v2's (same bodies, same rules), the others are the sandbox's own and are named as such.

// ccPath is the contacts collection of a client addressed by wid or external_id.
func ccPath(ref string) string { return "/v1/clients/" + ref + "/contacts" }

func ccItem(ref, id string) string { return ccPath(ref) + "/" + id }

// ccOn is f reporting to t, so that a failing subtest does not stop its parent.
func ccOn(f *fixture, t *testing.T) *fixture {
	g := *f
	g.t = t
	return &g
}

// ccClient registers a client of the v1 endpoints and returns its wid.
func ccClient(t *testing.T, f *fixture, externalID, advisorID, teamID string) string {
	t.Helper()
	wid, err := f.sb.AddClient(sandbox.Client{ExternalID: externalID, AdvisorID: advisorID, TeamID: teamID})
	if err != nil {
		t.Fatalf("AddClient %s: %v", externalID, err)
	}
	if wid == "" {
		t.Fatalf("AddClient %s returned an empty wid", externalID)
	}
	return wid
}

// ccAdd adds a contact over v1 (path may carry a query) and returns its id.
func ccAdd(t *testing.T, f *fixture, path string, body any) string {
	t.Helper()
	r := ccOn(f, t).v1("POST", path, body).wantOK(t).object(t)
	ccWantKeys(t, "Add Contact (v1) response", r, "id")
	return str(t, r, "id")
}

func ccGet(t *testing.T, f *fixture, path string) map[string]any {
	t.Helper()
	return ccOn(f, t).v1("GET", path, nil).wantOK(t).object(t)
}

// ccList returns the contacts of a List Contacts (v1) answer.
func ccList(t *testing.T, f *fixture, path string) []map[string]any {
	t.Helper()
	r := ccOn(f, t).v1("GET", path, nil).wantOK(t)
	ccWantKeys(t, "List Contacts (v1) response", r.object(t), "contacts")
	var page struct {
		Contacts []map[string]any `json:"contacts"`
	}
	r.decode(t, &page)
	if page.Contacts == nil {
		t.Fatalf("contacts is %s, want an array", r.body)
	}
	return page.Contacts
}

// ccState is the whole of a client's contacts as List Contacts (v1) serves them, for comparing
// before and after a refused request.
func ccState(t *testing.T, f *fixture, path string) string {
	t.Helper()
	data, err := json.Marshal(ccList(t, f, path))
	if err != nil {
		t.Fatalf("marshal contacts: %v", err)
	}
	return string(data)
}

// ccWantKeys checks that an object has exactly the keys want.
func ccWantKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	got := make([]string, 0, len(m))
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s has keys %v, want %v", what, got, want)
	}
}

// ccJSON is v as a decoded JSON value, so that a request body compares with a response.
func ccJSON(t *testing.T, v any) any {
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

// ccWantContact checks a contact response: its id, and exactly the fields the body sent.
func ccWantContact(t *testing.T, got map[string]any, id string, body map[string]any) {
	t.Helper()
	want := ccJSON(t, body).(map[string]any)
	want["id"] = id
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("contact is\n  %s\nwant\n  %s", g, w)
	}
}

// ccWith returns a copy of body with changes applied; a nil value removes the key.
func ccWith(body map[string]any, changes map[string]any) map[string]any {
	out := make(map[string]any, len(body)+len(changes))
	for k, v := range body {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

// ccNull is a JSON null in a body built with ccWith.
var ccNull = json.RawMessage("null")

// ccAllow returns the methods of a response's Allow header.
func ccAllow(r *response) []string {
	var out []string
	for _, m := range strings.Split(r.header.Get("Allow"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// ccV2Message is the message v2 gives for the same broken rule: the rules are shared, and only
// the place a reference is looked up in is named differently.
func ccV2Message(v1 string) string {
	return strings.ReplaceAll(v1, "which does not exist in this client", "which does not exist in this top account")
}

// Every type with every field it may carry, references naming the contacts "p1" and "p2".
func ccFullBodies() []map[string]any {
	return []map[string]any{
		{"type": "Individual", "external_id": "ind", "first_name": "Marcus", "middle_name": "J", "last_name": "Bell", "dob": "1968-04-22"},
		{
			"type": "Trust", "external_id": "trust", "legal_name": "Bell Family Trust", "trust_type": "JointRevocableTrust",
			"trust_creator": []string{"p1", "p2"}, "initial_trustee": []string{"p2"}, "governing_state": "CA", "trust_creation_date": "2004-06-30",
		},
		{
			"type": "Entity", "external_id": "llc", "legal_name": "Bell Holdings LLC", "incorporation_state": "DE",
			"incorporation_form": "LimitedLiabilityCompany",
			"ownership":          []map[string]any{{"percentage": 60, "owner_id": "p1"}, {"percentage": 40, "subowners": []string{"p1", "p2"}}},
		},
		{
			"type": "Charity", "external_id": "charity", "legal_name": "Bell Foundation", "ein": 123456789, "city": "Oakland",
			"state": "CA", "address_formatted": "1 Main St, Oakland, CA", "notes": "Annual gift in December.",
		},
		{
			"type": "Will", "external_id": "will", "legal_name": "Last Will of Marcus Bell", "will_type": "PourOverWill",
			"governing_state": "NY", "will_creation_date": "2010-01-15", "testator": []string{"p1"}, "executor": []string{"p2"},
		},
		{
			"type": "Class", "external_id": "class", "legal_name": "Grandchildren", "notes": "Per stirpes.",
			"current_parties": map[string]any{
				"is_distributed_evenly": false, "share_amount": "one half",
				"parties": []map[string]any{
					{"contact_id": "p1", "distribution_percentage": 50, "fraction": map[string]any{"numerator": 1, "denominator": 2}},
					{"contact_id": "p2"},
				},
			},
		},
	}
}

func TestClientContactIndividualWithDob(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := ccClient(t, f, "CL-DOB", "adv-1", "team-1")

	if got := ccList(t, f, ccPath(wid)); len(got) != 0 {
		t.Fatalf("a new client has %d contacts, want none", len(got))
	}

	// Add answers with the new contact's id only, as v2 does.
	body := map[string]any{"type": "Individual", "external_id": "marcus", "first_name": "Marcus", "middle_name": "J", "last_name": "Bell", "dob": "1968-04-22"}
	id := ccAdd(t, f, ccPath(wid), body)
	if id == "" {
		t.Fatal("Add Contact (v1) answered an empty id")
	}

	// Get returns id, external_id, type and the Individual's fields, dob included.
	ccWantContact(t, ccGet(t, f, ccItem(wid, id)), id, body)

	// List returns the same contact response in a contacts array.
	list := ccList(t, f, ccPath(wid))
	if len(list) != 1 {
		t.Fatalf("list has %d contacts, want 1", len(list))
	}
	ccWantContact(t, list[0], id, body)

	// The collection path written with a trailing slash is the same endpoint.
	second := ccAdd(t, f, ccPath(wid)+"/", person("dana"))
	if second == id {
		t.Errorf("two adds answered the same id %s", id)
	}
	if got := ccList(t, f, ccPath(wid)+"/"); len(got) != 2 || got[0]["id"] != id || got[1]["id"] != second {
		t.Errorf("list is %v, want %s then %s in creation order", got, id, second)
	}
	// An Individual created with type and external_id only returns no other field.
	ccWantContact(t, ccGet(t, f, ccItem(wid, second)), second, person("dana"))

	// Update answers with the id; the fields it sends change, the others stay.
	r := f.v1("PUT", ccItem(wid, id), map[string]any{"dob": "1968-04-23"}).wantOK(t).object(t)
	ccWantKeys(t, "Update Contact (v1) response", r, "id")
	if r["id"] != id {
		t.Errorf("update answered id %v, want %s", r["id"], id)
	}
	ccWantContact(t, ccGet(t, f, ccItem(wid, id)), id, ccWith(body, map[string]any{"dob": "1968-04-23"}))

	// dob may be added to an Individual that had none.
	f.v1("PUT", ccItem(wid, second), map[string]any{"dob": "2000-02-29", "last_name": "Bell"}).wantOK(t)
	ccWantContact(t, ccGet(t, f, ccItem(wid, second)), second,
		ccWith(person("dana"), map[string]any{"dob": "2000-02-29", "last_name": "Bell"}))
}

func TestClientContactEveryTypeHasTheV2Bodies(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := ccClient(t, f, "CL-TYPES", "adv-1", "team-1")
	p1 := ccAdd(t, f, ccPath(wid), person("p1"))
	p2 := ccAdd(t, f, ccPath(wid), person("p2"))
	ids := []string{p1, p2}
	bodies := []map[string]any{person("p1"), person("p2")}
	for _, body := range ccFullBodies() {
		t.Run(body["type"].(string), func(t *testing.T) {
			id := ccAdd(t, f, ccPath(wid), body)
			ccWantContact(t, ccGet(t, f, ccItem(wid, id)), id, body)
			ids = append(ids, id)
			bodies = append(bodies, body)
		})
	}
	list := ccList(t, f, ccPath(wid))
	if len(list) != len(ids) {
		t.Fatalf("list has %d contacts, want %d", len(list), len(ids))
	}
	for i := range ids {
		ccWantContact(t, list[i], ids[i], bodies[i])
	}
}

func TestClientContactClientAddressedByWidOrExternalID(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := ccClient(t, f, "CL-1001", "adv-1", "team-1")
	if wid == "CL-1001" {
		t.Fatal("the client's wid is its external_id; the test cannot tell the two apart")
	}

	// Added by wid, seen by external_id; added by external_id, seen by wid.
	byWID := ccAdd(t, f, ccPath(wid), map[string]any{"type": "Individual", "external_id": "a", "dob": "1970-09-13"})
	byExt := ccAdd(t, f, ccPath("CL-1001"), map[string]any{"type": "Individual", "external_id": "b", "first_name": "Dana"})
	ccWantContact(t, ccGet(t, f, ccItem("CL-1001", byWID)), byWID, map[string]any{"type": "Individual", "external_id": "a", "dob": "1970-09-13"})
	ccWantContact(t, ccGet(t, f, ccItem(wid, byExt)), byExt, map[string]any{"type": "Individual", "external_id": "b", "first_name": "Dana"})
	if a, b := ccState(t, f, ccPath(wid)), ccState(t, f, ccPath("CL-1001")); a != b {
		t.Errorf("list by wid is %s, by external_id %s; want the same client", a, b)
	}

	// Updated by external_id, seen by wid.
	f.v1("PUT", ccItem("CL-1001", byWID), map[string]any{"last_name": "Bell"}).wantOK(t)
	if got := ccGet(t, f, ccItem(wid, byWID))["last_name"]; got != "Bell" {
		t.Errorf("last_name is %v after an update by external_id, want Bell", got)
	}

	// An external_id that is unique per client may repeat in another client, and each client
	// keeps its own contacts.
	other := ccClient(t, f, "CL-2002", "adv-1", "team-1")
	id := ccAdd(t, f, ccPath("CL-2002"), person("a"))
	if got := ccList(t, f, ccPath(other)); len(got) != 1 || got[0]["id"] != id {
		t.Errorf("the second client lists %v, want only its own contact %s", got, id)
	}
	if got := ccList(t, f, ccPath(wid)); len(got) != 2 {
		t.Errorf("the first client lists %d contacts, want its 2", len(got))
	}
}

func TestClientContactAddRules(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := ccClient(t, f, "CL-ADD", "adv-1", "team-1")
	ccAdd(t, f, ccPath(wid), person("p1"))
	ccAdd(t, f, ccPath(wid), person("p2"))
	otherClient := ccClient(t, f, "CL-OTHER", "adv-1", "team-1")
	ccAdd(t, f, ccPath(otherClient), person("b1"))
	ccAdd(t, f, ccPath(otherClient), person("b2"))
	// A top account with the same contacts, so that every refusal can be compared with v2's.
	ta := f.addTopAccount("TA-MIRROR", "Mirror family")
	f.addContact(ta, person("p1"))
	f.addContact(ta, person("p2"))

	full := map[string]map[string]any{}
	for _, b := range ccFullBodies() {
		full[b["type"].(string)] = b
	}
	ind := func(changes map[string]any) map[string]any {
		return ccWith(map[string]any{"type": "Individual", "external_id": "new-ind"}, changes)
	}
	of := func(typ string, changes map[string]any) map[string]any {
		return ccWith(ccWith(full[typ], map[string]any{"external_id": "new-" + strings.ToLower(typ)}), changes)
	}
	long := func(n int) string { return strings.Repeat("x", n) }
	partyWith := func(party map[string]any) map[string]any {
		return map[string]any{"parties": []map[string]any{party}}
	}

	for _, tc := range []struct {
		name    string
		body    any
		status  int    // default 422
		message string // empty: the add succeeds
		v1Only  bool   // the rule is about dob, which v2 does not know
	}{
		// Bodies v1 accepts, as v2 does.
		{name: "Individual needs only type and external_id", body: ind(nil)},
		{name: "dob on a leap day is a valid date", body: ind(map[string]any{"external_id": "leap", "dob": "2000-02-29"})},
		{name: "external_id of 50 characters is accepted", body: ind(map[string]any{"external_id": long(50)})},
		{name: "first_name of 200 characters is accepted, counted in characters", body: ind(map[string]any{"external_id": "long-name", "first_name": strings.Repeat("é", 200)})},
		{name: "external_id of a contact of another client is free in this one", body: ind(map[string]any{"external_id": "b2"})},
		{name: "percentages 0 and 100 are in range", body: of("Entity", map[string]any{"external_id": "pct",
			"ownership": []map[string]any{{"percentage": 0, "owner_id": "p1"}, {"percentage": 100, "subowners": []string{"p2"}}}})},

		// The body's shape. The v1 row lists no invalid payload among add's 400s: 422.
		{name: "empty body is refused for its missing type", body: nil, message: "type is required"},
		{name: "empty object is refused for its missing type", body: map[string]any{}, message: "type is required"},
		{name: "body that is not JSON is refused", body: `{"type":`, message: "Request body must be a JSON object"},
		{name: "body that is not an object is refused", body: `["Individual"]`, message: "Request body must be a JSON object"},
		{name: "unknown field is refused", body: ind(map[string]any{"nickname": "Mo"}), message: "nickname is not a contact card field"},
		{name: "id is set by the service", body: ind(map[string]any{"id": "mine"}), message: "id is assigned by the service and cannot be set"},

		// type and external_id: "Required on create for every type".
		{name: "type missing is refused", body: ind(map[string]any{"type": nil}), message: "type is required"},
		{name: "type null is missing", body: ind(map[string]any{"type": ccNull}), message: "type is required"},
		{name: "unknown type is refused", body: ind(map[string]any{"type": "Person"}), message: "type must be one of Individual, Trust, Entity, Charity, Will, Class"},
		{name: "type is matched exactly", body: ind(map[string]any{"type": "individual"}), message: "type must be one of Individual, Trust, Entity, Charity, Will, Class"},
		{name: "external_id missing is refused", body: ind(map[string]any{"external_id": nil}), message: "external_id is required"},
		{name: "external_id blank is refused", body: ind(map[string]any{"external_id": "  "}), message: "external_id must not be blank"},
		{name: "external_id of 51 characters is refused", body: ind(map[string]any{"external_id": long(51)}), message: "external_id must be at most 50 characters"},
		{name: "external_id that is not a string is refused", body: ind(map[string]any{"external_id": 7}), message: "external_id must be a string"},
		{name: "external_id already in the client is a conflict", body: ind(map[string]any{"external_id": "p1"}),
			status: http.StatusConflict, message: "Contact card with this external id already exists"},
		{name: "external_id already in the client is a conflict for a body with dob", body: ind(map[string]any{"external_id": "p2", "dob": "1980-01-01"}),
			status: http.StatusConflict, message: "Contact card with this external id already exists", v1Only: true},
		{name: "external_id already in the client is a conflict for another type", body: of("Charity", map[string]any{"external_id": "p1"}),
			status: http.StatusConflict, message: "Contact card with this external id already exists"},

		// dob: "present only on the client-scoped v1 contact endpoints", a valid ISO date (rule 3).
		{name: "dob with one-digit month is refused", body: ind(map[string]any{"dob": "1968-4-22"}), message: "dob must be a valid date in YYYY-MM-DD format", v1Only: true},
		{name: "dob in another order is refused", body: ind(map[string]any{"dob": "22/04/1968"}), message: "dob must be a valid date in YYYY-MM-DD format", v1Only: true},
		{name: "dob that is no calendar day is refused", body: ind(map[string]any{"dob": "1969-02-29"}), message: "dob must be a valid date in YYYY-MM-DD format", v1Only: true},
		{name: "dob with a time is refused", body: ind(map[string]any{"dob": "1968-04-22T00:00:00Z"}), message: "dob must be a valid date in YYYY-MM-DD format", v1Only: true},
		{name: "dob that is not a string is refused", body: ind(map[string]any{"dob": 19680422}), message: "dob must be a valid date in YYYY-MM-DD format", v1Only: true},
		{name: "dob on a Trust is refused", body: of("Trust", map[string]any{"dob": "1968-04-22"}), message: "dob is only supported for Individual contact cards", v1Only: true},

		// Required fields per type.
		{name: "Trust needs legal_name", body: of("Trust", map[string]any{"legal_name": nil}), message: "legal_name is required"},
		{name: "Entity needs legal_name", body: of("Entity", map[string]any{"legal_name": nil}), message: "legal_name is required"},
		{name: "Charity needs legal_name", body: of("Charity", map[string]any{"legal_name": nil}), message: "legal_name is required"},
		{name: "Charity needs city", body: of("Charity", map[string]any{"city": nil}), message: "city is required"},
		{name: "Charity needs state", body: of("Charity", map[string]any{"state": nil}), message: "state is required"},
		{name: "Will needs legal_name", body: of("Will", map[string]any{"legal_name": nil}), message: "legal_name is required"},
		{name: "Will needs will_type", body: of("Will", map[string]any{"will_type": nil}), message: "will_type is required"},
		{name: "Class needs legal_name", body: of("Class", map[string]any{"legal_name": nil}), message: "legal_name is required"},
		{name: "legal_name null is missing", body: of("Trust", map[string]any{"legal_name": ccNull}), message: "legal_name is required"},

		// Fields of another type.
		{name: "legal_name on an Individual is refused", body: ind(map[string]any{"legal_name": "Bell"}),
			message: "legal_name is only supported for Trust, Entity, Charity, Will, Class contact cards"},
		{name: "trust_creation_date on an Individual is refused", body: ind(map[string]any{"trust_creation_date": "2004-06-30"}),
			message: "trust_creation_date is only supported for Trust contact cards"},
		{name: "will_creation_date on a Trust is refused", body: of("Trust", map[string]any{"will_creation_date": "2004-06-30"}),
			message: "will_creation_date is only supported for Will contact cards"},

		// Lengths, blanks (rule 5), enums, states (rule 4), dates (rule 3), integers.
		{name: "legal_name of 201 characters is refused", body: of("Trust", map[string]any{"legal_name": long(201)}), message: "legal_name must be at most 200 characters"},
		{name: "first_name of 201 characters is refused", body: ind(map[string]any{"first_name": long(201)}), message: "first_name must be at most 200 characters"},
		{name: "city of 101 characters is refused", body: of("Charity", map[string]any{"city": long(101)}), message: "city must be at most 100 characters"},
		{name: "address_formatted of 201 characters is refused", body: of("Charity", map[string]any{"address_formatted": long(201)}), message: "address_formatted must be at most 200 characters"},
		{name: "notes of 5001 characters is refused", body: of("Class", map[string]any{"notes": long(5001)}), message: "notes must be at most 5000 characters"},
		{name: "blank first_name is refused", body: ind(map[string]any{"first_name": " \t"}), message: "first_name must not be blank"},
		{name: "empty middle_name is refused", body: ind(map[string]any{"middle_name": ""}), message: "middle_name must not be blank"},
		{name: "blank legal_name is refused", body: of("Will", map[string]any{"legal_name": "   "}), message: "legal_name must not be blank"},
		{name: "first_name that is not a string is refused", body: ind(map[string]any{"first_name": 3}), message: "first_name must be a string"},
		{name: "unknown trust_type is refused", body: of("Trust", map[string]any{"trust_type": "LivingTrust"}),
			message: "trust_type must be one of " + strings.Join(advisorspec.TrustTypes, ", ")},
		{name: "unknown incorporation_form is refused", body: of("Entity", map[string]any{"incorporation_form": "LLC"}),
			message: "incorporation_form must be one of " + strings.Join(advisorspec.IncorporationForms, ", ")},
		{name: "unknown will_type is refused", body: of("Will", map[string]any{"will_type": "LivingWill"}),
			message: "will_type must be one of LastWillAndTestament, PourOverWill"},
		{name: "governing_state written out is refused", body: of("Trust", map[string]any{"governing_state": "California"}),
			message: "governing_state must be a valid two-letter US state abbreviation"},
		{name: "lower-case state is refused", body: of("Charity", map[string]any{"state": "ca"}), message: "state must be a valid two-letter US state abbreviation"},
		{name: "unknown incorporation_state is refused", body: of("Entity", map[string]any{"incorporation_state": "XX"}),
			message: "incorporation_state must be a valid two-letter US state abbreviation"},
		{name: "trust_creation_date that is no date is refused", body: of("Trust", map[string]any{"trust_creation_date": "2004-13-01"}),
			message: "trust_creation_date must be a valid date in YYYY-MM-DD format"},
		{name: "will_creation_date that is no date is refused", body: of("Will", map[string]any{"will_creation_date": "15.01.2010"}),
			message: "will_creation_date must be a valid date in YYYY-MM-DD format"},
		{name: "ein that is not an integer is refused", body: of("Charity", map[string]any{"ein": "12-3456789"}), message: "ein must be an integer"},
		{name: "ein with a fraction is refused", body: of("Charity", map[string]any{"ein": 1.5}), message: "ein must be an integer"},

		// References (rules 1 and 2) must name other contacts of the same client.
		{name: "trust_creator naming no contact is refused", body: of("Trust", map[string]any{"trust_creator": []string{"p1", "ghost"}}),
			message: `trust_creator references contact "ghost", which does not exist in this client`},
		{name: "initial_trustee naming a contact of another client is refused", body: of("Trust", map[string]any{"initial_trustee": []string{"b1"}}),
			message: `initial_trustee references contact "b1", which does not exist in this client`},
		{name: "testator naming no contact is refused", body: of("Will", map[string]any{"testator": []string{"ghost"}}),
			message: `testator references contact "ghost", which does not exist in this client`},
		{name: "executor naming the new contact itself is refused", body: of("Will", map[string]any{"executor": []string{"new-will"}}),
			message: "executor must not reference the contact itself"},
		{name: "owner_id naming no contact is refused", body: of("Entity", map[string]any{"ownership": []map[string]any{{"percentage": 10, "owner_id": "ghost"}}}),
			message: `ownership[0].owner_id references contact "ghost", which does not exist in this client`},
		{name: "subowners naming the new contact itself are refused", body: of("Entity", map[string]any{"ownership": []map[string]any{{"percentage": 10, "subowners": []string{"p1", "new-entity"}}}}),
			message: "ownership[0].subowners must not reference the contact itself"},
		{name: "party naming no contact is refused", body: of("Class", map[string]any{"current_parties": partyWith(map[string]any{"contact_id": "b1"})}),
			message: `current_parties.parties[0].contact_id references contact "b1", which does not exist in this client`},
		{name: "trust_creator that is not an array is refused", body: of("Trust", map[string]any{"trust_creator": "p1"}),
			message: "trust_creator must be an array of contact external_ids"},

		// Ownership entries (rule 9) and percentages.
		{name: "ownership entry with neither owner_id nor subowners is refused", body: of("Entity", map[string]any{"ownership": []map[string]any{{"percentage": 10}}}),
			message: "ownership[0] must have owner_id (single owner) or subowners (joint owners)"},
		{name: "ownership entry with both owner_id and subowners is refused", body: of("Entity", map[string]any{"ownership": []map[string]any{{"percentage": 10, "owner_id": "p1", "subowners": []string{"p2"}}}}),
			message: "ownership[0] must have either owner_id or subowners, not both"},
		{name: "ownership entry without percentage is refused", body: of("Entity", map[string]any{"ownership": []map[string]any{{"owner_id": "p1"}}}),
			message: "ownership[0].percentage is required"},
		{name: "ownership percentage over 100 is refused", body: of("Entity", map[string]any{"ownership": []map[string]any{{"percentage": 100.5, "owner_id": "p1"}}}),
			message: "ownership[0].percentage must be a number from 0 to 100"},
		{name: "ownership percentage under 0 is refused", body: of("Entity", map[string]any{"ownership": []map[string]any{{"percentage": -1, "owner_id": "p1"}}}),
			message: "ownership[0].percentage must be a number from 0 to 100"},
		{name: "joint ownership with no subowners is refused", body: of("Entity", map[string]any{"ownership": []map[string]any{{"percentage": 10, "subowners": []string{}}}}),
			message: "ownership[0].subowners must name at least one contact"},

		// current_parties.
		{name: "current_parties without parties is refused", body: of("Class", map[string]any{"current_parties": map[string]any{"is_distributed_evenly": true}}),
			message: "current_parties.parties is required"},
		{name: "party without contact_id is refused", body: of("Class", map[string]any{"current_parties": partyWith(map[string]any{"distribution_percentage": 10})}),
			message: "current_parties.parties[0].contact_id is required"},
		{name: "distribution_percentage over 100 is refused", body: of("Class", map[string]any{"current_parties": partyWith(map[string]any{"contact_id": "p1", "distribution_percentage": 150})}),
			message: "current_parties.parties[0].distribution_percentage must be a number from 0 to 100"},
		{name: "fraction with a zero denominator is refused", body: of("Class", map[string]any{"current_parties": partyWith(map[string]any{"contact_id": "p1", "fraction": map[string]any{"numerator": 1, "denominator": 0}})}),
			message: "current_parties.parties[0].fraction.denominator must be a non-zero integer"},
		{name: "fraction without numerator is refused", body: of("Class", map[string]any{"current_parties": partyWith(map[string]any{"contact_id": "p1", "fraction": map[string]any{"denominator": 3}})}),
			message: "current_parties.parties[0].fraction.numerator is required"},
		{name: "share_amount of 51 characters is refused", body: of("Class", map[string]any{"current_parties": map[string]any{"share_amount": long(51), "parties": []any{}}}),
			message: "current_parties.share_amount must be at most 50 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ccState(t, f, ccPath(wid))
			r := ccOn(f, t).v1("POST", ccPath(wid), tc.body)
			if tc.message == "" {
				r.wantOK(t)
				m := r.object(t)
				ccWantKeys(t, "Add Contact (v1) response", m, "id")
				id := str(t, m, "id")
				ccWantContact(t, ccGet(t, f, ccItem(wid, id)), id, tc.body.(map[string]any))
				return
			}
			status := tc.status
			if status == 0 {
				status = http.StatusUnprocessableEntity
			}
			r.wantError(t, status, tc.message)
			if after := ccState(t, f, ccPath(wid)); after != before {
				t.Errorf("a refused add changed the client's contacts:\n  before %s\n  after  %s", before, after)
			}
			if tc.v1Only {
				return
			}
			// The same rule, with the same message, on v2, where a refused body is a 400.
			v2status := http.StatusBadRequest
			if status == http.StatusConflict {
				v2status = http.StatusConflict
			}
			ccOn(f, t).v2("POST", "/v2/top-accounts/"+ta+"/contacts/", tc.body).wantError(t, v2status, ccV2Message(tc.message))
		})
	}

	// The v2 endpoints do not know dob.
	f.v2("POST", "/v2/top-accounts/"+ta+"/contacts/", ind(map[string]any{"dob": "1968-04-22"})).
		wantError(t, http.StatusBadRequest, "dob is only supported on the client-scoped (v1) contact endpoints")
}

func TestClientContactUpdateRules(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := ccClient(t, f, "CL-UPD", "adv-1", "team-1")
	otherClient := ccClient(t, f, "CL-OTHER", "adv-1", "team-1")
	ccAdd(t, f, ccPath(otherClient), person("b1"))
	ta := f.addTopAccount("TA-MIRROR", "Mirror family")

	// The same contacts in the client and in a top account, so that refusals compare with v2's.
	seed := []map[string]any{
		person("p1"),
		person("p2"),
		{"type": "Individual", "external_id": "ind", "first_name": "Marcus", "dob": "1968-04-22"},
		{"type": "Trust", "external_id": "trust", "legal_name": "Bell Family Trust", "trust_creator": []string{"p1"}, "initial_trustee": []string{"p2"}},
		{"type": "Will", "external_id": "will", "legal_name": "Last Will", "will_type": "LastWillAndTestament", "testator": []string{"p1"}, "executor": []string{"p2"}},
		{"type": "Entity", "external_id": "llc", "legal_name": "Bell Holdings LLC", "ownership": []map[string]any{{"percentage": 100, "owner_id": "p1"}}},
		{"type": "Class", "external_id": "class", "legal_name": "Grandchildren", "current_parties": map[string]any{"parties": []map[string]any{{"contact_id": "p1"}}}},
	}
	v1IDs, v2IDs := map[string]string{}, map[string]string{}
	for _, b := range seed {
		key := b["external_id"].(string)
		v1IDs[key] = ccAdd(t, f, ccPath(wid), b)
		if _, hasDob := b["dob"]; hasDob {
			b = ccWith(b, map[string]any{"dob": nil})
		}
		v2IDs[key] = f.addContact(ta, b)
	}

	for _, tc := range []struct {
		name    string
		target  string // external_id of the contact updated
		body    any
		status  int    // default 400
		message string // empty: the update succeeds
		want    map[string]any
		v1Only  bool   // the rule is about dob, which v2 does not know
		v2      string // v2's message when it refuses the body otherwise
	}{
		// "update also: immutable field, empty update, invalid payload" are 400s.
		{name: "type cannot be updated", target: "ind", body: map[string]any{"type": "Trust"}, message: "type cannot be updated"},
		{name: "type cannot be sent even unchanged", target: "ind", body: map[string]any{"type": "Individual", "first_name": "Mark"}, message: "type cannot be updated"},
		{name: "external_id cannot be updated", target: "ind", body: map[string]any{"external_id": "ind-2"}, message: "external_id cannot be updated"},
		{name: "external_id cannot be updated even to its own value", target: "ind", body: map[string]any{"external_id": "ind"}, message: "external_id cannot be updated"},
		{name: "external_id of a contact of another client is no conflict", target: "ind", body: map[string]any{"external_id": "b1"}, message: "external_id cannot be updated"},

		// "409 on add: external_id exists, on update: conflicts with an existing contact", in
		// the v2 409's words; v2 knows no 409 on update and refuses the immutable field.
		{name: "external_id of another contact of the client conflicts with it", target: "ind", body: map[string]any{"external_id": "p1"},
			status: http.StatusConflict, message: "Contact card with this external id already exists", v2: "external_id cannot be updated"},
		{name: "external_id of another contact conflicts whatever else the body carries", target: "trust", body: map[string]any{"external_id": "will", "legal_name": "Renamed"},
			status: http.StatusConflict, message: "Contact card with this external id already exists", v2: "external_id cannot be updated"},
		{name: "empty object is an empty update", target: "ind", body: map[string]any{}, message: "At least one mutable field must be provided"},
		{name: "no body is an empty update", target: "trust", body: nil, message: "At least one mutable field must be provided"},
		{name: "body that is not JSON is an invalid payload", target: "ind", body: `{"dob":`, message: "Request body must be a JSON object"},
		{name: "body that is not an object is an invalid payload", target: "ind", body: `"1968-04-22"`, message: "Request body must be a JSON object"},
		{name: "id cannot be set", target: "ind", body: map[string]any{"id": "mine"}, message: "id is assigned by the service and cannot be set"},
		{name: "unknown field is refused", target: "ind", body: map[string]any{"nickname": "Mo"}, message: "nickname is not a contact card field"},
		{name: "invalid dob is refused", target: "ind", body: map[string]any{"dob": "1968-02-30"}, message: "dob must be a valid date in YYYY-MM-DD format", v1Only: true},
		{name: "dob on a Trust is refused", target: "trust", body: map[string]any{"dob": "1968-04-22"}, message: "dob is only supported for Individual contact cards", v1Only: true},
		{name: "trust_creation_date on an Individual is refused", target: "ind", body: map[string]any{"trust_creation_date": "2004-06-30"},
			message: "trust_creation_date is only supported for Trust contact cards"},
		{name: "will_creation_date on a Trust is refused", target: "trust", body: map[string]any{"will_creation_date": "2004-06-30"},
			message: "will_creation_date is only supported for Will contact cards"},
		{name: "a field of another type is refused", target: "ind", body: map[string]any{"legal_name": "Bell"},
			message: "legal_name is only supported for Trust, Entity, Charity, Will, Class contact cards"},
		{name: "blank first_name is refused", target: "ind", body: map[string]any{"first_name": "  "}, message: "first_name must not be blank"},
		{name: "legal_name of 201 characters is refused", target: "trust", body: map[string]any{"legal_name": strings.Repeat("x", 201)}, message: "legal_name must be at most 200 characters"},
		{name: "governing_state written out is refused", target: "trust", body: map[string]any{"governing_state": "Texas"},
			message: "governing_state must be a valid two-letter US state abbreviation"},
		{name: "unknown will_type is refused", target: "will", body: map[string]any{"will_type": "Codicil"}, message: "will_type must be one of LastWillAndTestament, PourOverWill"},
		{name: "ownership percentage over 100 is refused", target: "llc", body: map[string]any{"ownership": []map[string]any{{"percentage": 101, "owner_id": "p2"}}},
			message: "ownership[0].percentage must be a number from 0 to 100"},
		{name: "one bad field refuses the whole update", target: "ind", body: map[string]any{"first_name": "Mark", "dob": "tomorrow"},
			message: "dob must be a valid date in YYYY-MM-DD format", v1Only: true},

		// A reference that cannot be resolved: the request "could not be processed", 422.
		{name: "trust_creator naming no contact cannot be processed", target: "trust", body: map[string]any{"trust_creator": []string{"ghost"}},
			status: http.StatusUnprocessableEntity, message: `trust_creator references contact "ghost", which does not exist in this client`},
		{name: "initial_trustee naming a contact of another client cannot be processed", target: "trust", body: map[string]any{"initial_trustee": []string{"b1"}},
			status: http.StatusUnprocessableEntity, message: `initial_trustee references contact "b1", which does not exist in this client`},
		{name: "trust_creator naming the contact itself cannot be processed", target: "trust", body: map[string]any{"trust_creator": []string{"p1", "trust"}},
			status: http.StatusUnprocessableEntity, message: "trust_creator must not reference the contact itself"},
		{name: "executor naming no contact cannot be processed", target: "will", body: map[string]any{"executor": []string{"ghost"}},
			status: http.StatusUnprocessableEntity, message: `executor references contact "ghost", which does not exist in this client`},
		{name: "owner_id naming the contact itself cannot be processed", target: "llc", body: map[string]any{"ownership": []map[string]any{{"percentage": 100, "owner_id": "llc"}}},
			status: http.StatusUnprocessableEntity, message: "ownership[0].owner_id must not reference the contact itself"},
		{name: "party naming no contact cannot be processed", target: "class", body: map[string]any{"current_parties": map[string]any{"parties": []map[string]any{{"contact_id": "ghost"}}}},
			status: http.StatusUnprocessableEntity, message: `current_parties.parties[0].contact_id references contact "ghost", which does not exist in this client`},

		// Updates v1 accepts. They run after the refusals, which expect the seeded contacts.
		{name: "dob changes and the other fields stay", target: "ind", body: map[string]any{"dob": "1968-04-23"}, v1Only: true,
			want: map[string]any{"type": "Individual", "external_id": "ind", "first_name": "Marcus", "dob": "1968-04-23"}},
		{name: "fields are added to an Individual", target: "ind", body: map[string]any{"middle_name": "J", "last_name": "Bell"},
			want: map[string]any{"type": "Individual", "external_id": "ind", "first_name": "Marcus", "middle_name": "J", "last_name": "Bell", "dob": "1968-04-23"}},
		{name: "trust_creator sent empty clears the role", target: "trust", body: map[string]any{"trust_creator": []string{}},
			want: map[string]any{"type": "Trust", "external_id": "trust", "legal_name": "Bell Family Trust", "initial_trustee": []string{"p2"}}},
		{name: "testator and executor sent empty clear the roles", target: "will", body: map[string]any{"testator": []string{}, "executor": []string{}},
			want: map[string]any{"type": "Will", "external_id": "will", "legal_name": "Last Will", "will_type": "LastWillAndTestament"}},
		{name: "references to other contacts of the client are accepted", target: "trust", body: map[string]any{"trust_creator": []string{"p1", "ind"}, "trust_creation_date": "2004-06-30"},
			want: map[string]any{"type": "Trust", "external_id": "trust", "legal_name": "Bell Family Trust", "initial_trustee": []string{"p2"},
				"trust_creator": []string{"p1", "ind"}, "trust_creation_date": "2004-06-30"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := v1IDs[tc.target]
			before := ccState(t, f, ccPath(wid))
			r := ccOn(f, t).v1("PUT", ccItem(wid, id), tc.body)
			if tc.message == "" {
				r.wantOK(t)
				m := r.object(t)
				ccWantKeys(t, "Update Contact (v1) response", m, "id")
				if m["id"] != id {
					t.Errorf("update answered id %v, want %s", m["id"], id)
				}
				ccWantContact(t, ccGet(t, f, ccItem(wid, id)), id, tc.want)
				return
			}
			status := tc.status
			if status == 0 {
				status = http.StatusBadRequest
			}
			r.wantError(t, status, tc.message)
			if after := ccState(t, f, ccPath(wid)); after != before {
				t.Errorf("a refused update changed the client's contacts:\n  before %s\n  after  %s", before, after)
			}
			if tc.v1Only {
				return
			}
			// v2 refuses the same body with the same message, always as a 400.
			v2 := tc.v2
			if v2 == "" {
				v2 = tc.message
			}
			ccOn(f, t).v2("PUT", "/v2/top-accounts/"+ta+"/contacts/"+v2IDs[tc.target], tc.body).
				wantError(t, http.StatusBadRequest, ccV2Message(v2))
		})
	}
}

func TestClientContactPathRules(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := ccClient(t, f, "CL-PATH", "adv-1", "team-1")
	id := ccAdd(t, f, ccPath(wid), map[string]any{"type": "Individual", "external_id": "p1", "dob": "1968-04-22"})
	other := ccClient(t, f, "CL-OTHER", "adv-1", "team-1")
	otherID := ccAdd(t, f, ccPath(other), person("b1"))
	// A top account is no client: its wid and external_id do not address the v1 endpoints.
	ta := f.addTopAccount("TA-1", "Top account")
	taContact := f.addContact(ta, person("t1"))

	update := map[string]any{"first_name": "Marcus"}
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		body    any
		status  int
		message string
	}{
		// "404 client or contact not found". The messages are the sandbox's.
		{"list of an unknown client is not found", "GET", ccPath("no-such-client"), nil, 404, "Client not found"},
		{"add to an unknown client is not found", "POST", ccPath("no-such-client"), person("x"), 404, "Client not found"},
		{"get in an unknown client is not found", "GET", ccItem("no-such-client", id), nil, 404, "Client not found"},
		{"update in an unknown client is not found", "PUT", ccItem("no-such-client", id), update, 404, "Client not found"},
		{"a client's external_id is matched exactly", "GET", ccPath("cl-path"), nil, 404, "Client not found"},
		{"a top account's wid is no client", "GET", ccPath(ta), nil, 404, "Client not found"},
		{"a top account's external_id is no client", "GET", ccPath("TA-1"), nil, 404, "Client not found"},
		{"an unknown client is not found even with an invalid body", "POST", ccPath("no-such-client"), map[string]any{}, 404, "Client not found"},
		{"get of an unknown contact is not found", "GET", ccItem(wid, "no-such-contact"), nil, 404, "Contact card not found"},
		{"update of an unknown contact is not found", "PUT", ccItem(wid, "no-such-contact"), update, 404, "Contact card not found"},
		{"a contact of another client is not found", "GET", ccItem(wid, otherID), nil, 404, "Contact card not found"},
		{"a contact of another client is not updated", "PUT", ccItem(wid, otherID), update, 404, "Contact card not found"},
		{"a contact of a top account is not found", "GET", ccItem(wid, taContact), nil, 404, "Contact card not found"},
		{"a contact's external_id is not its id", "GET", ccItem(wid, "p1"), nil, 404, "Contact card not found"},

		// "400 missing path parameters".
		{"blank client in a list is a missing parameter", "GET", ccPath("%20"), nil, 400, "Missing wid parameter"},
		{"empty client in a list is a missing parameter", "GET", "/v1/clients//contacts", nil, 400, "Missing wid parameter"},
		{"blank client in an add is a missing parameter", "POST", ccPath("%20"), person("x"), 400, "Missing wid parameter"},
		{"blank client in a get is a missing parameter", "GET", ccItem("%20", id), nil, 400, "Missing wid parameter"},
		{"blank client in an update is a missing parameter", "PUT", ccItem("%20", id), update, 400, "Missing wid parameter"},
		{"blank contact id in a get is a missing parameter", "GET", ccItem(wid, "%20"), nil, 400, "Missing id parameter"},
		{"blank contact id in an update is a missing parameter", "PUT", ccItem(wid, "%20"), update, 400, "Missing id parameter"},
		{"update without a contact id is a missing parameter", "PUT", ccPath(wid), update, 400, "Missing id parameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, beforeOther := ccState(t, f, ccPath(wid)), ccState(t, f, ccPath(other))
			ccOn(f, t).v1(tc.method, tc.path, tc.body).wantError(t, tc.status, tc.message)
			if after := ccState(t, f, ccPath(wid)); after != before {
				t.Errorf("the request changed the client's contacts:\n  before %s\n  after  %s", before, after)
			}
			if after := ccState(t, f, ccPath(other)); after != beforeOther {
				t.Errorf("the request changed the other client's contacts:\n  before %s\n  after  %s", beforeOther, after)
			}
		})
	}
	// Nothing leaked into the top account either.
	if got := f.getContact(ta, taContact); got["first_name"] != nil {
		t.Errorf("the top account's contact gained first_name %v", got["first_name"])
	}
}

func TestClientContactUnsupportedMethodIs405WithAllow(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := ccClient(t, f, "CL-405", "adv-1", "team-1")
	id := ccAdd(t, f, ccPath(wid), map[string]any{"type": "Individual", "external_id": "p1", "dob": "1968-04-22"})

	for _, tc := range []struct {
		name      string
		method    string
		path      string
		allow     []string // exactly these, when exact
		exact     bool
		mustAllow []string
	}{
		// The item path supports Get and Update only.
		{name: "DELETE of a contact is not allowed", method: "DELETE", path: ccItem(wid, id), allow: []string{"GET", "PUT"}, exact: true},
		{name: "PATCH of a contact is not allowed", method: "PATCH", path: ccItem(wid, id), allow: []string{"GET", "PUT"}, exact: true},
		{name: "POST to a contact is not allowed", method: "POST", path: ccItem(wid, id), allow: []string{"GET", "PUT"}, exact: true},
		{name: "DELETE of a contact of a client addressed by external_id is not allowed", method: "DELETE", path: ccItem("CL-405", id), allow: []string{"GET", "PUT"}, exact: true},
		// The collection supports List and Add.
		{name: "DELETE of the collection is not allowed", method: "DELETE", path: ccPath(wid), mustAllow: []string{"GET", "POST"}},
		{name: "PATCH of the collection is not allowed", method: "PATCH", path: ccPath(wid), mustAllow: []string{"GET", "POST"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ccState(t, f, ccPath(wid))
			r := ccOn(f, t).v1(tc.method, tc.path, map[string]any{"first_name": "Marcus"})
			r.wantError(t, http.StatusMethodNotAllowed, "Method Not Allowed") // the message is the sandbox's
			allow := ccAllow(r)
			if len(allow) == 0 {
				t.Fatalf("405 without an Allow header; headers %v", r.header)
			}
			if slices.Contains(allow, tc.method) {
				t.Errorf("Allow %v lists the refused method %s", allow, tc.method)
			}
			if tc.exact && !slices.Equal(allow, tc.allow) {
				t.Errorf("Allow %v, want %v", allow, tc.allow)
			}
			for _, m := range tc.mustAllow {
				if !slices.Contains(allow, m) {
					t.Errorf("Allow %v does not list %s", allow, m)
				}
			}
			if after := ccState(t, f, ccPath(wid)); after != before {
				t.Errorf("a refused method changed the client's contacts:\n  before %s\n  after  %s", before, after)
			}
		})
	}
	if got := ccGet(t, f, ccItem(wid, id)); got["dob"] != "1968-04-22" || got["first_name"] != nil {
		t.Errorf("contact is %v after the refused methods, want it unchanged", got)
	}
}

func TestClientContactAdvisorAndTeamParameters(t *testing.T) {
	t.Parallel()
	const (
		needAdvisor = "advisor_id is required when the API user can access multiple advisors"
		needTeam    = "team_id is required when the API user can access multiple advisor teams"
	)
	type client struct{ externalID, advisor, team string }
	for _, tc := range []struct {
		name    string
		clients []client // the first is the one addressed
		query   url.Values
		status  int    // 0: 200
		message string // the 400 and 404 texts are the sandbox's
	}{
		// One advisor and one team: both parameters are optional.
		{name: "one advisor and team need neither parameter", clients: []client{{"CL-1", "adv-1", "team-1"}}},
		{name: "one advisor and team accept their own ids", clients: []client{{"CL-1", "adv-1", "team-1"}},
			query: url.Values{"advisor_id": {"adv-1"}, "team_id": {"team-1"}}},
		// Authentication rule 3: "insufficient permission return 403 with message Access Denied".
		{name: "an advisor the user cannot access is Access Denied", clients: []client{{"CL-1", "adv-1", "team-1"}},
			query: url.Values{"advisor_id": {"adv-9"}}, status: 403, message: "Access Denied"},
		{name: "a team the user cannot access is Access Denied", clients: []client{{"CL-1", "adv-1", "team-1"}},
			query: url.Values{"team_id": {"team-9"}}, status: 403, message: "Access Denied"},

		// Several advisors: advisor_id is required; team_id is not while there is one team.
		{name: "several advisors require advisor_id", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-2", "team-1"}},
			status: 400, message: needAdvisor},
		{name: "several advisors accept the client's advisor_id alone", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-2", "team-1"}},
			query: url.Values{"advisor_id": {"adv-1"}}},
		{name: "several advisors refuse an advisor the user cannot access", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-2", "team-1"}},
			query: url.Values{"advisor_id": {"adv-9"}}, status: 403, message: "Access Denied"},
		{name: "a client of another advisor is not found", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-2", "team-1"}},
			query: url.Values{"advisor_id": {"adv-2"}}, status: 404, message: "Client not found"},
		{name: "an empty advisor_id is missing", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-2", "team-1"}},
			query: url.Values{"advisor_id": {""}}, status: 400, message: needAdvisor},

		// Several teams: team_id is required; advisor_id is not while there is one advisor.
		{name: "several teams require team_id", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-1", "team-2"}},
			status: 400, message: needTeam},
		{name: "several teams accept the client's team_id alone", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-1", "team-2"}},
			query: url.Values{"team_id": {"team-1"}}},
		{name: "several teams refuse a team the user cannot access", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-1", "team-2"}},
			query: url.Values{"team_id": {"team-9"}}, status: 403, message: "Access Denied"},
		{name: "a client of another team is not found", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-1", "team-2"}},
			query: url.Values{"team_id": {"team-2"}}, status: 404, message: "Client not found"},

		// Several of both: each is required.
		{name: "several advisors and teams require both, advisor_id first", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-2", "team-2"}},
			status: 400, message: needAdvisor},
		{name: "several advisors and teams require team_id too", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-2", "team-2"}},
			query: url.Values{"advisor_id": {"adv-1"}}, status: 400, message: needTeam},
		{name: "several advisors and teams require advisor_id too", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-2", "team-2"}},
			query: url.Values{"team_id": {"team-1"}}, status: 400, message: needAdvisor},
		{name: "several advisors and teams accept both", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-2", "team-2"}},
			query: url.Values{"advisor_id": {"adv-1"}, "team_id": {"team-1"}}},
		{name: "an advisor with a team not its client's is not found", clients: []client{{"CL-1", "adv-1", "team-1"}, {"CL-2", "adv-2", "team-2"}},
			query: url.Values{"advisor_id": {"adv-1"}, "team_id": {"team-2"}}, status: 404, message: "Client not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := emptySandbox(t)
			wids := make([]string, len(tc.clients))
			for i, c := range tc.clients {
				wids[i] = ccClient(t, f, c.externalID, c.advisor, c.team)
			}
			// A contact to get and update, added with the client's own advisor and team.
			wid := wids[0]
			own := url.Values{"advisor_id": {tc.clients[0].advisor}, "team_id": {tc.clients[0].team}}.Encode()
			id := ccAdd(t, f, ccPath(wid)+"?"+own, map[string]any{"type": "Individual", "external_id": "p1", "dob": "1968-04-22"})
			state := func() string { return ccState(t, f, ccPath(wid)+"?"+own) }
			before := state()

			q := ""
			if tc.query != nil {
				q = "?" + tc.query.Encode()
			}
			for _, ref := range []string{wid, tc.clients[0].externalID} {
				for _, op := range []struct {
					method, path string
					body         any
				}{
					{"GET", ccPath(ref) + q, nil},
					{"POST", ccPath(ref) + q, person("p2-" + ref)},
					{"GET", ccItem(ref, id) + q, nil},
					{"PUT", ccItem(ref, id) + q, map[string]any{"dob": "1968-04-23"}},
				} {
					r := ccOn(f, t).v1(op.method, op.path, op.body)
					if tc.status == 0 {
						if r.status != http.StatusOK {
							t.Errorf("%s %s: status %d, want 200; body %s", op.method, op.path, r.status, r.body)
						}
						continue
					}
					if r.status != tc.status {
						t.Errorf("%s %s: status %d, want %d; body %s", op.method, op.path, r.status, tc.status, r.body)
						continue
					}
					r.wantError(t, tc.status, tc.message)
				}
			}
			if tc.status != 0 {
				if after := state(); after != before {
					t.Errorf("refused requests changed the client's contacts:\n  before %s\n  after  %s", before, after)
				}
			}
		})
	}
}

func TestClientContactAdvisorIDBecomesRequiredWithASecondAdvisor(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := ccClient(t, f, "CL-1", "adv-1", "team-1")
	ccAdd(t, f, ccPath(wid), person("p1"))
	ccClient(t, f, "CL-2", "adv-2", "team-1")
	f.v1("GET", ccPath(wid), nil).wantError(t, http.StatusBadRequest, "advisor_id is required when the API user can access multiple advisors")
	if got := ccList(t, f, ccPath(wid)+"?advisor_id=adv-1"); len(got) != 1 {
		t.Errorf("with advisor_id the client lists %d contacts, want 1", len(got))
	}
}

func TestClientContactNeedsTheBasicCredentials(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := ccClient(t, f, "CL-AUTH", "adv-1", "team-1")
	id := ccAdd(t, f, ccPath(wid), map[string]any{"type": "Individual", "external_id": "p1", "dob": "1968-04-22"})

	for _, auth := range []struct {
		name string
		set  func(*http.Request)
	}{
		{"no Authorization header", func(*http.Request) {}},
		{"the v2 bearer token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testToken) }},
		{"a wrong password", func(r *http.Request) { r.SetBasicAuth(testUser, "wrong") }},
		{"a wrong user", func(r *http.Request) { r.SetBasicAuth("someone", testPass) }},
		{"a malformed Basic header", func(r *http.Request) { r.Header.Set("Authorization", "Basic not-base64!") }},
	} {
		for _, op := range []struct {
			method, path string
			body         any
		}{
			{"GET", ccPath(wid), nil},
			{"POST", ccPath(wid), person("p2")},
			{"GET", ccItem(wid, id), nil},
			{"PUT", ccItem(wid, id), map[string]any{"dob": "1970-01-01"}},
			// Credentials are checked first: an unknown client or a bad path tells nothing.
			{"GET", ccPath("no-such-client"), nil},
			{"DELETE", ccItem(wid, id), nil},
		} {
			t.Run(auth.name+" "+op.method+" "+op.path, func(t *testing.T) {
				g := ccOn(f, t)
				req := g.request(op.method, op.path, op.body)
				auth.set(req)
				// Authentication rule 3: "Invalid credentials ... return 403 with message Access Denied".
				g.do(req).wantError(t, http.StatusForbidden, "Access Denied")
			})
		}
	}
	got := ccList(t, f, ccPath(wid))
	if len(got) != 1 {
		t.Fatalf("client has %d contacts after refused requests, want 1", len(got))
	}
	ccWantContact(t, got[0], id, map[string]any{"type": "Individual", "external_id": "p1", "dob": "1968-04-22"})
}

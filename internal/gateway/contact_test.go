package gateway_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// End-to-end tests of contact cards: reading every type through the union and the ContactCard
// interface, finding one card, the relationships between cards, and the contact mutations with
// their checks and errors.

// ctCardFields selects every field of every contact type. A reference selects the external id
// it holds and the external id of the card it resolves to, so that resolution is checked too.
const ctCardFields = `
  __typename
  ... on ContactCard { id contactId externalId type displayName }
  ... on Individual { firstName middleName lastName dob }
  ... on Trust {
    legalName trustType trustCreator initialTrustee governingState trustCreationDate
    trustCreators { externalId contact { ... on ContactCard { externalId } } }
    initialTrustees { externalId contact { ... on ContactCard { externalId } } }
  }
  ... on Entity {
    legalName incorporationState incorporationForm
    ownership { percentage joint ownerId subowners owners { externalId contact { ... on ContactCard { externalId } } } }
  }
  ... on Charity { legalName ein city state addressFormatted notes }
  ... on Will {
    legalName willType governingState willCreationDate testator executor
    testators { externalId contact { ... on ContactCard { externalId } } }
    executors { externalId contact { ... on ContactCard { externalId } } }
  }
  ... on Class {
    legalName notes
    currentParties { isDistributedEvenly shareAmount parties {
      contactId distributionPercentage fraction { numerator denominator }
      party { externalId contact { ... on ContactCard { externalId } } }
    } }
  }`

// ctRelFields selects a relationship as ctEdge reads it.
const ctRelFields = `role percentage
  source { externalId contact { ... on ContactCard { externalId } } }
  target { externalId contact { ... on ContactCard { externalId } } }`

// ctObj is a JSON object as decoded from a response.
type ctObj = map[string]any

// ctRef is what ctCardFields selects of a reference that resolves.
func ctRef(externalID string) ctObj {
	return ctObj{"externalId": externalID, "contact": ctObj{"externalId": externalID}}
}

func ctRefs(externalIDs ...string) []any {
	out := []any{}
	for _, id := range externalIDs {
		out = append(out, ctRef(id))
	}
	return out
}

func ctStrings(s ...string) []any {
	out := []any{}
	for _, v := range s {
		out = append(out, v)
	}
	return out
}

// ctNorm gives v the shape a decoded JSON response has, so that expected values written with Go
// types compare equal to it.
func ctNorm(t testing.TB, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func ctShow(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// ctMatch checks that got has each key of want with an equal value (keys not in want are not
// looked at).
func ctMatch(t testing.TB, what string, got ctObj, want ctObj) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: got null, want %s", what, ctShow(want))
		return
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: field %s missing from %s", what, k, ctShow(got))
			continue
		}
		if !reflect.DeepEqual(ctNorm(t, g), ctNorm(t, w)) {
			t.Errorf("%s: %s = %s, want %s", what, k, ctShow(g), ctShow(w))
		}
	}
}

// ctWantField fails the test unless the error names the input field.
func ctWantField(t testing.TB, e gqlError, field string) {
	t.Helper()
	if got := e.Extensions["field"]; got != field {
		t.Errorf("extensions.field = %v, want %q (error %q)", got, field, e.Message)
	}
}

// ctWIDOf finds a top account's wid by its external id.
func ctWIDOf(t testing.TB, gw *testGateway, externalID string) string {
	t.Helper()
	var got struct {
		TopAccounts struct{ Nodes []taAccount }
	}
	gw.post(t, `{ topAccounts(limit: 100) { nodes { wid externalId name } } }`, nil).ok(t, &got)
	for _, n := range got.TopAccounts.Nodes {
		if n.ExternalID == externalID {
			return n.WID
		}
	}
	t.Fatalf("no top account %s", externalID)
	return ""
}

// ctCards reads a top account's cards with every field, by external id, in list order.
func ctCards(t testing.TB, gw *testGateway, wid string) (map[string]ctObj, []string) {
	t.Helper()
	var got struct {
		TopAccount struct{ Contacts []ctObj }
	}
	gw.post(t, `query($wid: ID!) { topAccount(wid: $wid) { contacts { `+ctCardFields+` } } }`, map[string]any{"wid": wid}).ok(t, &got)
	byExt := map[string]ctObj{}
	var order []string
	for _, c := range got.TopAccount.Contacts {
		ext, _ := c["externalId"].(string)
		byExt[ext] = c
		order = append(order, ext)
	}
	return byExt, order
}

// ctEdge writes a relationship as "ROLE source->target", with " pct" when it has a
// percentage, after checking that both ends resolved to the cards they name.
func ctEdge(t testing.TB, r ctObj) string {
	t.Helper()
	end := func(name string) string {
		ref, _ := r[name].(ctObj)
		ext, _ := ref["externalId"].(string)
		c, _ := ref["contact"].(ctObj)
		if c == nil || c["externalId"] != ext {
			t.Errorf("relationship %s: %s %q does not resolve to its card", ctShow(r), name, ext)
		}
		return ext
	}
	s := fmt.Sprintf("%v %s->%s", r["role"], end("source"), end("target"))
	if p, ok := r["percentage"].(float64); ok {
		s += fmt.Sprintf(" %g", p)
	}
	return s
}

func ctEdges(t testing.TB, list []ctObj) []string {
	t.Helper()
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = ctEdge(t, r)
	}
	slices.Sort(out)
	return out
}

// ctNewFamily adds a top account with individuals of the given external ids through the
// REST interface and returns its wid.
func ctNewFamily(t testing.TB, up *upstream, name string, people ...string) string {
	t.Helper()
	wid := up.rest(t, "POST", "/v2/top-accounts/", map[string]any{"external_id": name, "name": name})["wid"].(string)
	for _, p := range people {
		up.rest(t, "POST", "/v2/top-accounts/"+wid+"/contacts/", map[string]any{"type": "Individual", "external_id": p, "first_name": strings.ToUpper(p)})
	}
	return wid
}

// ctAdd adds a card through the REST interface and returns its id.
func ctAdd(t testing.TB, up *upstream, wid string, body map[string]any) string {
	t.Helper()
	return up.rest(t, "POST", "/v2/top-accounts/"+wid+"/contacts/", body)["id"].(string)
}

func TestEveryContactTypeReadsThroughTheUnionAndTheInterface(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := ctWIDOf(t, gw, "HARTWELL-001")
	cards, order := ctCards(t, gw, wid)
	wantOrder := []string{"hw-eleanor", "hw-james", "hw-olivia", "hw-henry", "hw-grace", "hw-leo", "hw-family-trust", "hw-ilit",
		"hw-holdings", "hw-foundation", "hw-will-eleanor", "hw-will-james", "hw-grandchildren"}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("contacts %v, want the demo family oldest first %v", order, wantOrder)
	}
	for _, tc := range []struct {
		name string
		ext  string
		want ctObj
	}{
		{"an individual with three names", "hw-eleanor", ctObj{
			"__typename": "Individual", "type": "INDIVIDUAL", "displayName": "Eleanor Rose Hartwell",
			"firstName": "Eleanor", "middleName": "Rose", "lastName": "Hartwell", "dob": nil}},
		{"an individual without a middle name", "hw-olivia", ctObj{
			"__typename": "Individual", "type": "INDIVIDUAL", "displayName": "Olivia Hartwell",
			"firstName": "Olivia", "middleName": nil, "lastName": "Hartwell", "dob": nil}},
		{"a trust", "hw-family-trust", ctObj{
			"__typename": "Trust", "type": "TRUST", "displayName": "Hartwell Family Joint Revocable Trust",
			"legalName": "Hartwell Family Joint Revocable Trust", "trustType": "JOINT_REVOCABLE_TRUST",
			"trustCreator": ctStrings("hw-eleanor", "hw-james"), "initialTrustee": ctStrings("hw-eleanor", "hw-james", "hw-olivia"),
			"trustCreators": ctRefs("hw-eleanor", "hw-james"), "initialTrustees": ctRefs("hw-eleanor", "hw-james", "hw-olivia"),
			"governingState": "CA", "trustCreationDate": "2015-06-12"}},
		{"another trust type", "hw-ilit", ctObj{
			"__typename": "Trust", "type": "TRUST", "trustType": "IRREVOCABLE_LIFE_INSURANCE_TRUST",
			"trustCreators": ctRefs("hw-james"), "initialTrustees": ctRefs("hw-henry"), "governingState": "NV", "trustCreationDate": "2019-11-04"}},
		{"an entity with single and joint ownership", "hw-holdings", ctObj{
			"__typename": "Entity", "type": "ENTITY", "displayName": "Hartwell Holdings LLC",
			"legalName": "Hartwell Holdings LLC", "incorporationState": "DE", "incorporationForm": "LIMITED_LIABILITY_COMPANY",
			"ownership": []any{
				ctObj{"percentage": 60, "joint": false, "ownerId": "hw-family-trust", "subowners": nil, "owners": ctRefs("hw-family-trust")},
				ctObj{"percentage": 40, "joint": true, "ownerId": nil, "subowners": ctStrings("hw-olivia", "hw-henry"), "owners": ctRefs("hw-olivia", "hw-henry")},
			}}},
		{"a charity", "hw-foundation", ctObj{
			"__typename": "Charity", "type": "CHARITY", "displayName": "Hartwell Foundation for the Arts",
			"legalName": "Hartwell Foundation for the Arts", "ein": "87-1234567", "city": "San Francisco", "state": "CA",
			"addressFormatted": "500 Market St, San Francisco, CA 94105", "notes": "Annual gift pledged through the family trust."}},
		{"a last will", "hw-will-eleanor", ctObj{
			"__typename": "Will", "type": "WILL", "displayName": "Last Will and Testament of Eleanor Hartwell",
			"legalName": "Last Will and Testament of Eleanor Hartwell", "willType": "LAST_WILL_AND_TESTAMENT",
			"governingState": "CA", "willCreationDate": "2016-03-01",
			"testator": ctStrings("hw-eleanor"), "executor": ctStrings("hw-james", "hw-olivia"),
			"testators": ctRefs("hw-eleanor"), "executors": ctRefs("hw-james", "hw-olivia")}},
		{"a pour-over will", "hw-will-james", ctObj{
			"__typename": "Will", "type": "WILL", "willType": "POUR_OVER_WILL",
			"testators": ctRefs("hw-james"), "executors": ctRefs("hw-eleanor")}},
		{"a class with percentages and fractions", "hw-grandchildren", ctObj{
			"__typename": "Class", "type": "CLASS", "displayName": "Grandchildren of Eleanor and James Hartwell",
			"legalName": "Grandchildren of Eleanor and James Hartwell",
			"notes":     "Education gifts; Grace receives three fifths until Leo turns 18.",
			"currentParties": ctObj{"isDistributedEvenly": false, "shareAmount": "$250,000", "parties": []any{
				ctObj{"contactId": "hw-grace", "distributionPercentage": 60, "fraction": ctObj{"numerator": 3, "denominator": 5}, "party": ctRef("hw-grace")},
				ctObj{"contactId": "hw-leo", "distributionPercentage": nil, "fraction": ctObj{"numerator": 2, "denominator": 5}, "party": ctRef("hw-leo")},
			}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := cards[tc.ext]
			ctMatch(t, tc.ext, got, tc.want)
			if id, _ := got["id"].(string); id == "" {
				t.Errorf("%s has no id", tc.ext)
			}
			// Read alone through Query.contact, the card is the same.
			var one struct{ Contact ctObj }
			gw.post(t, `query($wid: ID!, $id: ID!) { contact(wid: $wid, id: $id) { `+ctCardFields+` } }`,
				map[string]any{"wid": wid, "id": got["id"]}).ok(t, &one)
			if !reflect.DeepEqual(one.Contact, got) {
				t.Errorf("Query.contact gives %s, want the card as listed %s", ctShow(one.Contact), ctShow(got))
			}
		})
	}

	// The interface alone, without a fragment per type, reaches every card's common fields.
	var common struct {
		TopAccount struct {
			Contacts []struct {
				Typename                          string `json:"__typename"`
				ID, ExternalID, Type, DisplayName string
			}
		}
	}
	gw.post(t, `query($wid: ID!) { topAccount(wid: $wid) { contacts { __typename ... on ContactCard { id externalId type displayName } } } }`,
		map[string]any{"wid": wid}).ok(t, &common)
	for _, c := range common.TopAccount.Contacts {
		if strings.ToUpper(c.Typename) != c.Type || c.ID == "" || c.ExternalID == "" || c.DisplayName == "" {
			t.Errorf("card %+v: want its __typename to match its type, and an id, external id and display name", c)
		}
	}
}

func TestContactsFilterByType(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), nil)
	wid := ctWIDOf(t, gw, "HARTWELL-001")
	for _, tc := range []struct {
		name  string
		types string
		want  []string
	}{
		{"no filter", "null", []string{"hw-eleanor", "hw-james", "hw-olivia", "hw-henry", "hw-grace", "hw-leo", "hw-family-trust", "hw-ilit",
			"hw-holdings", "hw-foundation", "hw-will-eleanor", "hw-will-james", "hw-grandchildren"}},
		{"an empty filter", "[]", []string{"hw-eleanor", "hw-james", "hw-olivia", "hw-henry", "hw-grace", "hw-leo", "hw-family-trust", "hw-ilit",
			"hw-holdings", "hw-foundation", "hw-will-eleanor", "hw-will-james", "hw-grandchildren"}},
		{"trusts", "[TRUST]", []string{"hw-family-trust", "hw-ilit"}},
		{"wills and classes", "[WILL, CLASS]", []string{"hw-will-eleanor", "hw-will-james", "hw-grandchildren"}},
		{"entities and charities", "[CHARITY, ENTITY]", []string{"hw-holdings", "hw-foundation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got struct {
				TopAccount struct{ Contacts []struct{ ExternalID string } }
			}
			gw.post(t, `query($wid: ID!) { topAccount(wid: $wid) { contacts(types: `+tc.types+`) { ... on ContactCard { externalId } } } }`,
				map[string]any{"wid": wid}).ok(t, &got)
			var ids []string
			for _, c := range got.TopAccount.Contacts {
				ids = append(ids, c.ExternalID)
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("contacts(types: %s) = %v, want %v", tc.types, ids, tc.want)
			}
		})
	}
}

func TestTopAccountContactFindsOneCardByIdOrExternalId(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := ctWIDOf(t, gw, "HARTWELL-001")
	cards, _ := ctCards(t, gw, wid)
	okafor, _ := ctCards(t, gw, ctWIDOf(t, gw, "OKAFOR-002"))
	const query = `query($wid: ID!, $id: ID, $ext: String) { topAccount(wid: $wid) { contact(id: $id, externalId: $ext) { ` + ctCardFields + ` } } }`
	for _, tc := range []struct {
		name    string
		vars    map[string]any
		want    string // external id; "" for null
		message string // the error, if any
	}{
		{"by external id", map[string]any{"ext": "hw-holdings"}, "hw-holdings", ""},
		{"by id", map[string]any{"id": cards["hw-will-james"]["id"]}, "hw-will-james", ""},
		{"a class by id", map[string]any{"id": cards["hw-grandchildren"]["id"]}, "hw-grandchildren", ""},
		{"an unknown external id is null", map[string]any{"ext": "hw-nobody"}, "", ""},
		{"an unknown id is null", map[string]any{"id": "no-such-id"}, "", ""},
		{"another family's id is null", map[string]any{"id": okafor["ok-ada"]["id"]}, "", ""},
		{"another family's external id is null", map[string]any{"ext": "ok-ada"}, "", ""},
		{"an id is not an external id", map[string]any{"ext": cards["hw-eleanor"]["id"]}, "", ""},
		{"both", map[string]any{"id": cards["hw-eleanor"]["id"], "ext": "hw-eleanor"}, "", "Give exactly one of id and externalId"},
		{"neither", map[string]any{}, "", "Give exactly one of id and externalId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.vars["wid"] = wid
			r := gw.post(t, query, tc.vars)
			if tc.message != "" {
				e := r.wantError(t, "BAD_USER_INPUT", tc.message)
				if e.Extensions["field"] == nil {
					t.Errorf("the error names no field: %+v", e)
				}
				return
			}
			var got struct {
				TopAccount struct{ Contact ctObj }
			}
			r.ok(t, &got)
			switch c := got.TopAccount.Contact; {
			case tc.want == "" && c != nil:
				t.Errorf("contact %s, want null", ctShow(c))
			case tc.want != "" && !reflect.DeepEqual(c, cards[tc.want]):
				t.Errorf("contact %s, want %s", ctShow(c), ctShow(cards[tc.want]))
			}
		})
	}
}

func TestQueryContactIsTheCardOrNull(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	hartwell, okafor := ctWIDOf(t, gw, "HARTWELL-001"), ctWIDOf(t, gw, "OKAFOR-002")
	hw, _ := ctCards(t, gw, hartwell)
	ok, _ := ctCards(t, gw, okafor)
	for _, tc := range []struct {
		name, wid string
		id        any
		want      ctObj
	}{
		{"a Hartwell charity", hartwell, hw["hw-foundation"]["id"], hw["hw-foundation"]},
		{"an Okafor trust", okafor, ok["ok-trust"]["id"], ok["ok-trust"]},
		{"an unknown id", hartwell, "no-such-id", nil},
		{"an unknown wid", "no-such-wid", hw["hw-foundation"]["id"], nil},
		{"a card of another top account", hartwell, ok["ok-trust"]["id"], nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got struct{ Contact ctObj }
			gw.post(t, `query($wid: ID!, $id: ID!) { contact(wid: $wid, id: $id) { `+ctCardFields+` } }`,
				map[string]any{"wid": tc.wid, "id": tc.id}).ok(t, &got)
			if !reflect.DeepEqual(got.Contact, tc.want) {
				t.Errorf("contact %s, want %s", ctShow(got.Contact), ctShow(tc.want))
			}
		})
	}
}

// The demo family's graph: every edge, each of the seven roles, with percentages where the
// service gives one.
var ctHartwellEdges = []string{
	"TRUST_CREATOR hw-family-trust->hw-eleanor",
	"TRUST_CREATOR hw-family-trust->hw-james",
	"INITIAL_TRUSTEE hw-family-trust->hw-eleanor",
	"INITIAL_TRUSTEE hw-family-trust->hw-james",
	"INITIAL_TRUSTEE hw-family-trust->hw-olivia",
	"TRUST_CREATOR hw-ilit->hw-james",
	"INITIAL_TRUSTEE hw-ilit->hw-henry",
	"OWNER hw-holdings->hw-family-trust 60",
	"JOINT_OWNER hw-holdings->hw-olivia 40",
	"JOINT_OWNER hw-holdings->hw-henry 40",
	"TESTATOR hw-will-eleanor->hw-eleanor",
	"EXECUTOR hw-will-eleanor->hw-james",
	"EXECUTOR hw-will-eleanor->hw-olivia",
	"TESTATOR hw-will-james->hw-james",
	"EXECUTOR hw-will-james->hw-eleanor",
	"CLASS_PARTY hw-grandchildren->hw-grace 60",
	"CLASS_PARTY hw-grandchildren->hw-leo",
}

func TestRelationshipsRunBothWaysWithEveryRole(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := ctWIDOf(t, gw, "HARTWELL-001")
	var got struct {
		TopAccount struct {
			Relationships []ctObj
			Contacts      []struct {
				ExternalID    string
				Relationships []ctObj
			}
		}
	}
	up.ResetRequests()
	gw.post(t, `query($wid: ID!) { topAccount(wid: $wid) {
		relationships { `+ctRelFields+` }
		contacts { ... on ContactCard { externalId relationships { `+ctRelFields+` } } }
	} }`, map[string]any{"wid": wid}).ok(t, &got)

	t.Run("the family graph has every edge", func(t *testing.T) {
		all := ctEdges(t, got.TopAccount.Relationships)
		want := slices.Sorted(slices.Values(ctHartwellEdges))
		if !slices.Equal(all, want) {
			t.Errorf("TopAccount.relationships:\n got %q\nwant %q", all, want)
		}
		roles := map[any]bool{}
		for _, r := range got.TopAccount.Relationships {
			roles[r["role"]] = true
		}
		for _, role := range []string{"TRUST_CREATOR", "INITIAL_TRUSTEE", "OWNER", "JOINT_OWNER", "TESTATOR", "EXECUTOR", "CLASS_PARTY"} {
			if !roles[role] {
				t.Errorf("no %s relationship in the graph", role)
			}
		}
	})
	t.Run("the graph costs two upstream requests", func(t *testing.T) {
		want := []string{"GET /v2/top-accounts/" + wid, "GET /v2/top-accounts/" + wid + "/contacts/"}
		if reqs := up.Requests(); !slices.Equal(reqs, want) {
			t.Errorf("upstream requests %v, want %v", reqs, want)
		}
	})

	byCard := map[string][]string{}
	for _, c := range got.TopAccount.Contacts {
		byCard[c.ExternalID] = ctEdges(t, c.Relationships)
	}
	// touching lists the graph's edges whose source or target is ext.
	touching := func(ext string) []string {
		out := []string{}
		for _, e := range ctHartwellEdges {
			ends := strings.Fields(e)[1]
			if src, dst, _ := strings.Cut(ends, "->"); src == ext || dst == ext {
				out = append(out, e)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name, ext string
		count     int // how many edges touch the card, as a check on the table above
	}{
		{"a creator, trustee, testator and executor", "hw-eleanor", 4},
		{"a creator of two trusts", "hw-james", 5},
		{"a trustee, joint owner and executor", "hw-olivia", 3},
		{"a trustee and joint owner", "hw-henry", 2},
		{"a class party with a percentage", "hw-grace", 1},
		{"a class party with only a fraction", "hw-leo", 1},
		{"a trust that is also an owner", "hw-family-trust", 6},
		{"a trust", "hw-ilit", 2},
		{"an entity", "hw-holdings", 3},
		{"a charity with no relationships", "hw-foundation", 0},
		{"a will", "hw-will-eleanor", 3},
		{"another will", "hw-will-james", 2},
		{"a class", "hw-grandchildren", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := touching(tc.ext)
			if len(want) != tc.count {
				t.Fatalf("the table gives %s %d edges, want %d", tc.ext, len(want), tc.count)
			}
			got, ok := byCard[tc.ext]
			if !ok {
				t.Fatalf("no card %s", tc.ext)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s.relationships:\n got %q\nwant %q", tc.ext, got, want)
			}
		})
	}
}

func TestCreateContactAddsEachTypeAndReturnsIt(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := ctNewFamily(t, up, "CREATE-FAMILY", "a", "b")
	const mutation = `mutation($wid: ID!, $input: ContactInput!) { createContact(wid: $wid, input: $input) { ` + ctCardFields + `
	  ... on ContactCard { relationships { ` + ctRelFields + ` } } } }`
	for _, tc := range []struct {
		name  string
		input map[string]any
		want  ctObj
		edges []string
	}{
		{"an individual", map[string]any{"individual": map[string]any{"externalId": "n-ind", "firstName": "Ada", "middleName": "B.", "lastName": "Cole"}},
			ctObj{"__typename": "Individual", "type": "INDIVIDUAL", "externalId": "n-ind", "displayName": "Ada B. Cole",
				"firstName": "Ada", "middleName": "B.", "lastName": "Cole", "dob": nil}, nil},
		{"an individual with no names", map[string]any{"individual": map[string]any{"externalId": "n-bare"}},
			ctObj{"__typename": "Individual", "type": "INDIVIDUAL", "externalId": "n-bare", "displayName": "n-bare",
				"firstName": nil, "middleName": nil, "lastName": nil}, nil},
		{"a trust", map[string]any{"trust": map[string]any{"externalId": "n-trust", "legalName": "New Dynasty Trust", "trustType": "DYNASTY_TRUST",
			"trustCreators": []string{"a"}, "initialTrustees": []string{"a", "b"}, "governingState": "WA", "trustCreationDate": "2024-02-29"}},
			ctObj{"__typename": "Trust", "type": "TRUST", "externalId": "n-trust", "displayName": "New Dynasty Trust", "legalName": "New Dynasty Trust",
				"trustType": "DYNASTY_TRUST", "trustCreator": ctStrings("a"), "initialTrustee": ctStrings("a", "b"),
				"trustCreators": ctRefs("a"), "initialTrustees": ctRefs("a", "b"), "governingState": "WA", "trustCreationDate": "2024-02-29"},
			[]string{"TRUST_CREATOR n-trust->a", "INITIAL_TRUSTEE n-trust->a", "INITIAL_TRUSTEE n-trust->b"}},
		{"a trust with only its legal name", map[string]any{"trust": map[string]any{"externalId": "n-trust2", "legalName": "Bare Trust"}},
			ctObj{"__typename": "Trust", "legalName": "Bare Trust", "trustType": nil, "trustCreator": []any{}, "initialTrustee": []any{},
				"trustCreators": []any{}, "initialTrustees": []any{}, "governingState": nil, "trustCreationDate": nil}, nil},
		{"an entity", map[string]any{"entity": map[string]any{"externalId": "n-entity", "legalName": "New Co", "incorporationState": "DE",
			"incorporationForm": "S_CORPORATION", "ownership": []any{
				map[string]any{"percentage": 25.5, "owners": []string{"a"}},
				map[string]any{"percentage": 74.5, "owners": []string{"a", "b"}}}}},
			ctObj{"__typename": "Entity", "type": "ENTITY", "externalId": "n-entity", "displayName": "New Co", "legalName": "New Co",
				"incorporationState": "DE", "incorporationForm": "S_CORPORATION", "ownership": []any{
					ctObj{"percentage": 25.5, "joint": false, "ownerId": "a", "subowners": nil, "owners": ctRefs("a")},
					ctObj{"percentage": 74.5, "joint": true, "ownerId": nil, "subowners": ctStrings("a", "b"), "owners": ctRefs("a", "b")}}},
			[]string{"OWNER n-entity->a 25.5", "JOINT_OWNER n-entity->a 74.5", "JOINT_OWNER n-entity->b 74.5"}},
		{"a charity", map[string]any{"charity": map[string]any{"externalId": "n-charity", "legalName": "Good Works", "ein": "12-3456789",
			"city": "Austin", "state": "TX", "addressFormatted": "1 Congress Ave, Austin, TX", "notes": "Matching gifts."}},
			ctObj{"__typename": "Charity", "type": "CHARITY", "externalId": "n-charity", "displayName": "Good Works", "legalName": "Good Works",
				"ein": "12-3456789", "city": "Austin", "state": "TX", "addressFormatted": "1 Congress Ave, Austin, TX", "notes": "Matching gifts."}, nil},
		{"a charity with only what it requires", map[string]any{"charity": map[string]any{"externalId": "n-charity2", "legalName": "Small Gift", "city": "Guam City", "state": "GU"}},
			ctObj{"__typename": "Charity", "legalName": "Small Gift", "ein": nil, "city": "Guam City", "state": "GU", "addressFormatted": nil, "notes": nil}, nil},
		{"a will", map[string]any{"will": map[string]any{"externalId": "n-will", "legalName": "Will of A", "willType": "POUR_OVER_WILL",
			"governingState": "NY", "willCreationDate": "2020-01-31", "testators": []string{"a"}, "executors": []string{"b", "a"}}},
			ctObj{"__typename": "Will", "type": "WILL", "externalId": "n-will", "displayName": "Will of A", "legalName": "Will of A",
				"willType": "POUR_OVER_WILL", "governingState": "NY", "willCreationDate": "2020-01-31",
				"testator": ctStrings("a"), "executor": ctStrings("b", "a"), "testators": ctRefs("a"), "executors": ctRefs("b", "a")},
			[]string{"TESTATOR n-will->a", "EXECUTOR n-will->b", "EXECUTOR n-will->a"}},
		{"a class", map[string]any{"class": map[string]any{"externalId": "n-class", "legalName": "Heirs", "notes": "Split.",
			"currentParties": map[string]any{"isDistributedEvenly": true, "shareAmount": "$10", "parties": []any{
				map[string]any{"party": "a", "distributionPercentage": 50},
				map[string]any{"party": "b", "fraction": map[string]any{"numerator": 1, "denominator": 2}}}}}},
			ctObj{"__typename": "Class", "type": "CLASS", "externalId": "n-class", "displayName": "Heirs", "legalName": "Heirs", "notes": "Split.",
				"currentParties": ctObj{"isDistributedEvenly": true, "shareAmount": "$10", "parties": []any{
					ctObj{"contactId": "a", "distributionPercentage": 50, "fraction": nil, "party": ctRef("a")},
					ctObj{"contactId": "b", "distributionPercentage": nil, "fraction": ctObj{"numerator": 1, "denominator": 2}, "party": ctRef("b")}}}},
			[]string{"CLASS_PARTY n-class->a 50", "CLASS_PARTY n-class->b"}},
		{"a class with no parties given", map[string]any{"class": map[string]any{"externalId": "n-class2", "legalName": "Future Heirs"}},
			ctObj{"__typename": "Class", "legalName": "Future Heirs", "notes": nil, "currentParties": nil}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got struct{ CreateContact ctObj }
			gw.post(t, mutation, map[string]any{"wid": wid, "input": tc.input}).ok(t, &got)
			c := got.CreateContact
			ctMatch(t, "createContact", c, tc.want)
			if id, _ := c["id"].(string); id == "" {
				t.Errorf("the new card has no id: %s", ctShow(c))
			}
			rels, _ := c["relationships"].([]any)
			var edges []ctObj
			for _, r := range rels {
				edges = append(edges, r.(ctObj))
			}
			want := slices.Sorted(slices.Values(tc.edges))
			if got := ctEdges(t, edges); !slices.Equal(got, want) {
				t.Errorf("relationships %q, want %q", got, want)
			}
			// The card is stored: read back, it is what the mutation returned.
			var back struct{ Contact ctObj }
			gw.post(t, `query($wid: ID!, $id: ID!) { contact(wid: $wid, id: $id) { `+ctCardFields+` } }`,
				map[string]any{"wid": wid, "id": c["id"]}).ok(t, &back)
			delete(c, "relationships")
			if !reflect.DeepEqual(back.Contact, c) {
				t.Errorf("read back %s, want %s", ctShow(back.Contact), ctShow(c))
			}
		})
	}

	// With a literal input rather than a variable, the same.
	var lit struct{ CreateContact ctObj }
	gw.post(t, `mutation($wid: ID!) { createContact(wid: $wid, input: {will: {externalId: "lit-will", legalName: "Literal Will",
		willType: LAST_WILL_AND_TESTAMENT, testators: ["b"]}}) { `+ctCardFields+` } }`, map[string]any{"wid": wid}).ok(t, &lit)
	ctMatch(t, "createContact with a literal", lit.CreateContact, ctObj{"__typename": "Will", "externalId": "lit-will",
		"willType": "LAST_WILL_AND_TESTAMENT", "testators": ctRefs("b"), "executors": []any{}})
}

func TestUpdateContactMergesFieldsAndAnEmptyListClearsARole(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := ctNewFamily(t, up, "UPDATE-FAMILY", "a", "b", "c")
	ids := map[string]string{
		"ind": ctAdd(t, up, wid, map[string]any{"type": "Individual", "external_id": "ind", "first_name": "Ann", "middle_name": "M", "last_name": "Old"}),
		"trust": ctAdd(t, up, wid, map[string]any{"type": "Trust", "external_id": "trust", "legal_name": "Old Trust", "trust_type": "DynastyTrust",
			"trust_creator": []string{"a"}, "initial_trustee": []string{"a", "b"}, "governing_state": "CA", "trust_creation_date": "2001-01-01"}),
		"entity": ctAdd(t, up, wid, map[string]any{"type": "Entity", "external_id": "entity", "legal_name": "Old Co", "incorporation_state": "DE",
			"ownership": []any{map[string]any{"percentage": 100, "owner_id": "a"}}}),
		"charity": ctAdd(t, up, wid, map[string]any{"type": "Charity", "external_id": "charity", "legal_name": "Old Charity", "ein": 42,
			"city": "Reno", "state": "NV", "notes": "Kept."}),
		"will": ctAdd(t, up, wid, map[string]any{"type": "Will", "external_id": "will", "legal_name": "Old Will", "will_type": "LastWillAndTestament",
			"governing_state": "TX", "testator": []string{"a"}, "executor": []string{"b", "c"}}),
		"class": ctAdd(t, up, wid, map[string]any{"type": "Class", "external_id": "class", "legal_name": "Old Class", "notes": "Kept.",
			"current_parties": map[string]any{"share_amount": "$1", "parties": []any{map[string]any{"contact_id": "a", "distribution_percentage": 100}}}}),
	}
	const mutation = `mutation($wid: ID!, $id: ID!, $input: ContactPatch!) { updateContact(wid: $wid, id: $id, input: $input) { ` + ctCardFields + `
	  ... on ContactCard { relationships { ` + ctRelFields + ` } } } }`
	for _, tc := range []struct {
		name  string
		card  string
		patch map[string]any
		want  ctObj
		edges []string // the card's relationships after the update
	}{
		{"an individual's last name; the other names stay", "ind", map[string]any{"individual": map[string]any{"lastName": "New"}},
			ctObj{"firstName": "Ann", "middleName": "M", "lastName": "New", "displayName": "Ann M New", "externalId": "ind", "type": "INDIVIDUAL"}, nil},
		{"a null name stays as it is", "ind", map[string]any{"individual": map[string]any{"firstName": "Anna", "middleName": nil}},
			ctObj{"firstName": "Anna", "middleName": "M", "lastName": "New"}, nil},
		{"a trust's legal name; everything else stays", "trust", map[string]any{"trust": map[string]any{"legalName": "Renamed Trust"}},
			ctObj{"legalName": "Renamed Trust", "displayName": "Renamed Trust", "trustType": "DYNASTY_TRUST", "trustCreator": ctStrings("a"),
				"initialTrustee": ctStrings("a", "b"), "governingState": "CA", "trustCreationDate": "2001-01-01"},
			[]string{"TRUST_CREATOR trust->a", "INITIAL_TRUSTEE trust->a", "INITIAL_TRUSTEE trust->b"}},
		{"an empty list clears the trustees and keeps the creators", "trust", map[string]any{"trust": map[string]any{"initialTrustees": []string{}}},
			ctObj{"legalName": "Renamed Trust", "trustCreator": ctStrings("a"), "trustCreators": ctRefs("a"), "initialTrustee": []any{}, "initialTrustees": []any{}},
			[]string{"TRUST_CREATOR trust->a"}},
		{"a list replaces the creators", "trust", map[string]any{"trust": map[string]any{"trustCreators": []string{"b", "c"}, "trustType": "OTHER_IRREVOCABLE_TRUST"}},
			ctObj{"trustCreator": ctStrings("b", "c"), "trustCreators": ctRefs("b", "c"), "initialTrustee": []any{}, "trustType": "OTHER_IRREVOCABLE_TRUST"},
			[]string{"TRUST_CREATOR trust->b", "TRUST_CREATOR trust->c"}},
		{"an empty list clears the creators too", "trust", map[string]any{"trust": map[string]any{"trustCreators": []string{}, "trustCreationDate": "2002-02-02"}},
			ctObj{"trustCreator": []any{}, "initialTrustee": []any{}, "trustCreationDate": "2002-02-02", "governingState": "CA"}, []string{}},
		{"an entity's ownership is replaced; its legal name stays", "entity", map[string]any{"entity": map[string]any{"ownership": []any{
			map[string]any{"percentage": 30, "owners": []string{"c"}}, map[string]any{"percentage": 70, "owners": []string{"a", "b"}}}}},
			ctObj{"legalName": "Old Co", "incorporationState": "DE", "ownership": []any{
				ctObj{"percentage": 30, "joint": false, "ownerId": "c", "subowners": nil, "owners": ctRefs("c")},
				ctObj{"percentage": 70, "joint": true, "ownerId": nil, "subowners": ctStrings("a", "b"), "owners": ctRefs("a", "b")}}},
			[]string{"OWNER entity->c 30", "JOINT_OWNER entity->a 70", "JOINT_OWNER entity->b 70"}},
		{"an entity's form", "entity", map[string]any{"entity": map[string]any{"incorporationForm": "PRIVATE_FOUNDATION", "incorporationState": "PR"}},
			ctObj{"legalName": "Old Co", "incorporationState": "PR", "incorporationForm": "PRIVATE_FOUNDATION"},
			[]string{"OWNER entity->c 30", "JOINT_OWNER entity->a 70", "JOINT_OWNER entity->b 70"}},
		{"an empty list removes every owner", "entity", map[string]any{"entity": map[string]any{"ownership": []any{}}},
			ctObj{"legalName": "Old Co", "incorporationState": "PR", "incorporationForm": "PRIVATE_FOUNDATION", "ownership": []any{}}, []string{}},
		{"a charity's city and state; the rest stays", "charity", map[string]any{"charity": map[string]any{"city": "Boston", "state": "MA"}},
			ctObj{"legalName": "Old Charity", "ein": "00-0000042", "city": "Boston", "state": "MA", "notes": "Kept.", "addressFormatted": nil}, nil},
		{"an empty list clears the executors and keeps the testator", "will", map[string]any{"will": map[string]any{"executors": []string{}}},
			ctObj{"legalName": "Old Will", "willType": "LAST_WILL_AND_TESTAMENT", "governingState": "TX", "testator": ctStrings("a"), "executor": []any{},
				"testators": ctRefs("a"), "executors": []any{}},
			[]string{"TESTATOR will->a"}},
		{"the testator cleared and an executor set at once", "will", map[string]any{"will": map[string]any{"testators": []string{}, "executors": []string{"c"}, "willType": "POUR_OVER_WILL"}},
			ctObj{"testator": []any{}, "executor": ctStrings("c"), "willType": "POUR_OVER_WILL", "governingState": "TX"},
			[]string{"EXECUTOR will->c"}},
		{"a class's notes; its parties stay", "class", map[string]any{"class": map[string]any{"notes": "Changed."}},
			ctObj{"legalName": "Old Class", "notes": "Changed.", "currentParties": ctObj{"isDistributedEvenly": nil, "shareAmount": "$1", "parties": []any{
				ctObj{"contactId": "a", "distributionPercentage": 100, "fraction": nil, "party": ctRef("a")}}}},
			[]string{"CLASS_PARTY class->a 100"}},
		{"a class's parties are replaced", "class", map[string]any{"class": map[string]any{"currentParties": map[string]any{"isDistributedEvenly": true,
			"parties": []any{map[string]any{"party": "b", "fraction": map[string]any{"numerator": 1, "denominator": 3}}, map[string]any{"party": "c"}}}}},
			ctObj{"legalName": "Old Class", "notes": "Changed.", "currentParties": ctObj{"isDistributedEvenly": true, "shareAmount": nil, "parties": []any{
				ctObj{"contactId": "b", "distributionPercentage": nil, "fraction": ctObj{"numerator": 1, "denominator": 3}, "party": ctRef("b")},
				ctObj{"contactId": "c", "distributionPercentage": nil, "fraction": nil, "party": ctRef("c")}}}},
			[]string{"CLASS_PARTY class->b", "CLASS_PARTY class->c"}},
	} {
		// Sequential: the updates of one card build on each other.
		t.Run(tc.name, func(t *testing.T) {
			var got struct{ UpdateContact ctObj }
			gw.post(t, mutation, map[string]any{"wid": wid, "id": ids[tc.card], "input": tc.patch}).ok(t, &got)
			c := got.UpdateContact
			ctMatch(t, "updateContact", c, tc.want)
			if c["contactId"] != ids[tc.card] || c["externalId"] != tc.card {
				t.Errorf("updateContact returned card %v (%v), want %s (%s)", c["contactId"], c["externalId"], ids[tc.card], tc.card)
			}
			rels, _ := c["relationships"].([]any)
			var edges []ctObj
			for _, r := range rels {
				edges = append(edges, r.(ctObj))
			}
			want := slices.Sorted(slices.Values(tc.edges))
			if got := ctEdges(t, edges); !slices.Equal(got, want) {
				t.Errorf("relationships after the update %q, want %q", got, want)
			}
			var back struct{ Contact ctObj }
			gw.post(t, `query($wid: ID!, $id: ID!) { contact(wid: $wid, id: $id) { `+ctCardFields+` } }`,
				map[string]any{"wid": wid, "id": ids[tc.card]}).ok(t, &back)
			ctMatch(t, "read back", back.Contact, tc.want)
		})
	}
}

func TestContactInputOneOfIsEnforcedForLiteralsAndVariables(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := ctWIDOf(t, gw, "HARTWELL-001")
	cards, _ := ctCards(t, gw, wid)
	id := cards["hw-eleanor"]["id"]
	const create = `mutation($wid: ID!, $input: ContactInput!) { createContact(wid: $wid, input: $input) { __typename } }`
	const update = `mutation($wid: ID!, $id: ID!, $input: ContactPatch!) { updateContact(wid: $wid, id: $id, input: $input) { __typename } }`
	// One rule, worded alike for a literal and a variable, with the members to choose from.
	const members = " Give exactly one of: individual, trust, entity, charity, will, class."
	const createLiteral = `OneOf Input Object "ContactInput" must specify exactly one key.` + members
	const patchLiteral = `OneOf Input Object "ContactPatch" must specify exactly one key.` + members
	const createMembers = `Variable "$input" got an invalid value at "input"; ` + createLiteral
	const patchMembers = `Variable "$input" got an invalid value at "input"; ` + patchLiteral
	ind := map[string]any{"externalId": "one-of-x", "firstName": "X"}
	charity := map[string]any{"externalId": "one-of-y", "legalName": "Y", "city": "Reno", "state": "NV"}
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		code, msg   string // msg: "" to check the code only
		contains    string // a part of the message, when msg is ""
	}{
		// Literals are checked by GraphQL validation.
		{"a literal with no member", `mutation($wid: ID!) { createContact(wid: $wid, input: {}) { __typename } }`, nil,
			"GRAPHQL_VALIDATION_FAILED", createLiteral, ""},
		{"a literal with two members", `mutation($wid: ID!) { createContact(wid: $wid, input: {individual: {externalId: "x"}, charity: {externalId: "y", legalName: "Y", city: "Reno", state: "NV"}}) { __typename } }`, nil,
			"GRAPHQL_VALIDATION_FAILED", createLiteral, ""},
		{"a literal whose one member is null", `mutation($wid: ID!) { createContact(wid: $wid, input: {trust: null}) { __typename } }`, nil,
			"GRAPHQL_VALIDATION_FAILED", "", "must be non-null"},
		{"a literal with a null member beside a real one", `mutation($wid: ID!) { createContact(wid: $wid, input: {individual: null, trust: {externalId: "t", legalName: "T"}}) { __typename } }`, nil,
			"GRAPHQL_VALIDATION_FAILED", createLiteral, ""},
		{"a literal member from a nullable variable", `mutation($wid: ID!, $m: IndividualInput) { createContact(wid: $wid, input: {individual: $m}) { __typename } }`,
			map[string]any{"m": ind}, "GRAPHQL_VALIDATION_FAILED", "", "must be non-nullable"},
		{"a patch literal with no member", `mutation($wid: ID!, $id: ID!) { updateContact(wid: $wid, id: $id, input: {}) { __typename } }`, nil,
			"GRAPHQL_VALIDATION_FAILED", patchLiteral, ""},
		{"a patch literal with two members", `mutation($wid: ID!, $id: ID!) { updateContact(wid: $wid, id: $id, input: {individual: {firstName: "A"}, will: {legalName: "W"}}) { __typename } }`, nil,
			"GRAPHQL_VALIDATION_FAILED", patchLiteral, ""},

		// Variables are checked by the gateway as part of their coercion, as validation would.
		{"a variable with no member", create, map[string]any{"input": map[string]any{}}, "GRAPHQL_VALIDATION_FAILED", createMembers, ""},
		{"a variable with two members", create, map[string]any{"input": map[string]any{"individual": ind, "charity": charity}}, "GRAPHQL_VALIDATION_FAILED", createMembers, ""},
		{"a variable with every member null", create, map[string]any{"input": map[string]any{"individual": nil, "trust": nil}}, "GRAPHQL_VALIDATION_FAILED", createMembers, ""},
		{"a variable with a null member beside a real one", create, map[string]any{"input": map[string]any{"trust": nil, "individual": ind}}, "GRAPHQL_VALIDATION_FAILED", createMembers, ""},
		{"a patch variable with no member", update, map[string]any{"input": map[string]any{}}, "GRAPHQL_VALIDATION_FAILED", patchMembers, ""},
		{"a patch variable with two members", update, map[string]any{"input": map[string]any{"individual": map[string]any{"firstName": "A"}, "will": map[string]any{"legalName": "W"}}},
			"GRAPHQL_VALIDATION_FAILED", patchMembers, ""},
		{"a patch variable whose member is null", update, map[string]any{"input": map[string]any{"individual": nil}}, "GRAPHQL_VALIDATION_FAILED", patchMembers, ""},
	} {
		// Sequential: each checks that it alone made no upstream request.
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]any{"wid": wid, "id": id}
			for k, v := range tc.vars {
				vars[k] = v
			}
			up.ResetRequests()
			r := gw.post(t, tc.query, vars)
			e := r.wantError(t, tc.code, tc.msg)
			if tc.contains != "" && !strings.Contains(e.Message, tc.contains) {
				t.Errorf("message %q, want it to contain %q", e.Message, tc.contains)
			}
			if strings.HasPrefix(tc.msg, "Variable") && !reflect.DeepEqual(e.Path, []any{"variable", "input"}) {
				t.Errorf("path %v, want [variable input]", e.Path)
			}
			if reqs := up.Requests(); len(reqs) > 0 {
				t.Errorf("the gateway called the upstream: %v", reqs)
			}
		})
	}
	// Nothing was written.
	after, _ := ctCards(t, gw, wid)
	if len(after) != len(cards) {
		t.Errorf("the family has %d cards after the refused writes, want %d", len(after), len(cards))
	}
}

func TestContactInputIsCheckedLocallyWithTheServiceMessages(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := ctWIDOf(t, gw, "HARTWELL-001")
	cards, _ := ctCards(t, gw, wid)
	const create = `mutation($wid: ID!, $input: ContactInput!) { createContact(wid: $wid, input: $input) { __typename } }`
	const update = `mutation($wid: ID!, $id: ID!, $input: ContactPatch!) { updateContact(wid: $wid, id: $id, input: $input) { __typename } }`
	long := func(n int) string { return strings.Repeat("x", n) }
	trust := func(extra map[string]any) map[string]any {
		m := map[string]any{"externalId": "new-trust", "legalName": "T"}
		for k, v := range extra {
			m[k] = v
		}
		return map[string]any{"trust": m}
	}
	entity := func(ownership ...any) map[string]any {
		return map[string]any{"entity": map[string]any{"externalId": "new-entity", "legalName": "E", "ownership": ownership}}
	}
	class := func(parties ...any) map[string]any {
		return map[string]any{"class": map[string]any{"externalId": "new-class", "legalName": "C", "currentParties": map[string]any{"parties": parties}}}
	}
	for _, tc := range []struct {
		name, query    string
		card           string // the card an update is sent to
		input          map[string]any
		field, message string
	}{
		{"a date that does not exist", create, "", trust(map[string]any{"trustCreationDate": "2021-02-30"}),
			"input.trust.trustCreationDate", "input.trust.trustCreationDate must be a date (YYYY-MM-DD)"},
		{"a date in another format", create, "", map[string]any{"will": map[string]any{"externalId": "w", "legalName": "W", "willType": "POUR_OVER_WILL", "willCreationDate": "31/01/2020"}},
			"input.will.willCreationDate", "input.will.willCreationDate must be a date (YYYY-MM-DD)"},
		{"an unknown state", create, "", trust(map[string]any{"governingState": "XX"}),
			"input.trust.governingState", "input.trust.governingState must be a valid two-letter US state abbreviation"},
		{"a state in lower case", create, "", map[string]any{"charity": map[string]any{"externalId": "c", "legalName": "C", "city": "LA", "state": "ca"}},
			"input.charity.state", "input.charity.state must be a valid two-letter US state abbreviation"},
		{"a state's full name", create, "", map[string]any{"entity": map[string]any{"externalId": "e", "legalName": "E", "incorporationState": "Delaware"}},
			"input.entity.incorporationState", "input.entity.incorporationState must be a valid two-letter US state abbreviation"},
		{"a blank legal name", create, "", trust(map[string]any{"legalName": "   "}),
			"input.trust.legalName", "input.trust.legalName must not be blank"},
		{"a legal name over 200 characters", create, "", trust(map[string]any{"legalName": long(201)}),
			"input.trust.legalName", "input.trust.legalName must be at most 200 characters"},
		{"an external id over 50 characters", create, "", map[string]any{"individual": map[string]any{"externalId": long(51)}},
			"input.individual.externalId", "input.individual.externalId must be at most 50 characters"},
		{"a blank external id", create, "", map[string]any{"individual": map[string]any{"externalId": " "}},
			"input.individual.externalId", "input.individual.externalId must not be blank"},
		{"a blank first name", create, "", map[string]any{"individual": map[string]any{"externalId": "i", "firstName": "  "}},
			"input.individual.firstName", "input.individual.firstName must not be blank"},
		{"a date of birth on a top account's card", create, "", map[string]any{"individual": map[string]any{"externalId": "i", "dob": "1990-01-01"}},
			"input.individual.dob", "input.individual.dob is only for cards of a client (createClientContact, updateClientContact)"},
		{"notes over 5000 characters", create, "", map[string]any{"charity": map[string]any{"externalId": "c", "legalName": "C", "city": "LA", "state": "CA", "notes": long(5001)}},
			"input.charity.notes", "input.charity.notes must be at most 5000 characters"},
		{"a city over 100 characters", create, "", map[string]any{"charity": map[string]any{"externalId": "c", "legalName": "C", "city": long(101), "state": "CA"}},
			"input.charity.city", "input.charity.city must be at most 100 characters"},
		{"a percentage over 100", create, "", entity(map[string]any{"percentage": 60, "owners": []string{"hw-eleanor"}}, map[string]any{"percentage": 100.5, "owners": []string{"hw-james"}}),
			"input.entity.ownership[1].percentage", "input.entity.ownership[1].percentage must be a number from 0 to 100"},
		{"a negative percentage", create, "", entity(map[string]any{"percentage": -1, "owners": []string{"hw-eleanor"}}),
			"input.entity.ownership[0].percentage", "input.entity.ownership[0].percentage must be a number from 0 to 100"},
		{"two owners of a share said not to be joint", create, "", entity(map[string]any{"percentage": 10, "owners": []string{"hw-eleanor", "hw-james"}, "joint": false}),
			"input.entity.ownership[0].owners", "input.entity.ownership[0].owners must name exactly one contact card when joint is false"},
		{"a share with no owners", create, "", entity(map[string]any{"percentage": 10, "owners": []string{}}),
			"input.entity.ownership[0].owners", "input.entity.ownership[0].owners must name at least one contact"},
		{"joint owners that are none", create, "", entity(map[string]any{"percentage": 10, "owners": []string{}, "joint": true}),
			"input.entity.ownership[0].owners", "input.entity.ownership[0].owners must name at least one contact"},
		{"a zero denominator", create, "", class(map[string]any{"party": "hw-grace", "fraction": map[string]any{"numerator": 1, "denominator": 0}}),
			"input.class.currentParties.parties[0].fraction.denominator", "input.class.currentParties.parties[0].fraction.denominator must be a non-zero integer"},
		{"a party percentage over 100", create, "", class(map[string]any{"party": "hw-grace"}, map[string]any{"party": "hw-leo", "distributionPercentage": 101}),
			"input.class.currentParties.parties[1].distributionPercentage", "input.class.currentParties.parties[1].distributionPercentage must be a number from 0 to 100"},
		{"a blank party", create, "", class(map[string]any{"party": " "}),
			"input.class.currentParties.parties[0].party", "input.class.currentParties.parties[0].party must be a contact card's externalId"},
		{"a share amount over 50 characters", create, "", map[string]any{"class": map[string]any{"externalId": "c", "legalName": "C",
			"currentParties": map[string]any{"shareAmount": long(51), "parties": []any{}}}},
			"input.class.currentParties.shareAmount", "input.class.currentParties.shareAmount must be at most 50 characters"},
		{"a blank reference", create, "", map[string]any{"will": map[string]any{"externalId": "w", "legalName": "W", "willType": "POUR_OVER_WILL", "executors": []string{""}}},
			"input.will.executors", "input.will.executors must be a list of contact card externalIds"},
		{"a trust that creates itself", create, "", trust(map[string]any{"trustCreators": []string{"new-trust"}}),
			"input.trust.trustCreators", "input.trust.trustCreators must not reference the contact itself"},
		{"a class that is its own party", create, "", class(map[string]any{"party": "new-class"}),
			"input.class.currentParties.parties[0].party", "input.class.currentParties.parties[0].party must not reference the contact itself"},

		{"an update with nothing to change", update, "hw-family-trust", map[string]any{"trust": map[string]any{}},
			"input.trust", "input.trust: At least one mutable field must be provided"},
		{"an update of only nulls", update, "hw-eleanor", map[string]any{"individual": map[string]any{"firstName": nil, "lastName": nil}},
			"input.individual", "input.individual: At least one mutable field must be provided"},
		{"an update with a bad date", update, "hw-will-james", map[string]any{"will": map[string]any{"willCreationDate": "2020-1-1"}},
			"input.will.willCreationDate", "input.will.willCreationDate must be a date (YYYY-MM-DD)"},
		{"an update with a bad state", update, "hw-foundation", map[string]any{"charity": map[string]any{"state": "ZZ"}},
			"input.charity.state", "input.charity.state must be a valid two-letter US state abbreviation"},
		{"an update with a blank name", update, "hw-foundation", map[string]any{"charity": map[string]any{"city": ""}},
			"input.charity.city", "input.charity.city must not be blank"},
		{"an update with a bad percentage", update, "hw-holdings", map[string]any{"entity": map[string]any{"ownership": []any{map[string]any{"percentage": 101, "owners": []string{"hw-eleanor"}}}}},
			"input.entity.ownership[0].percentage", "input.entity.ownership[0].percentage must be a number from 0 to 100"},
		{"an update of a date of birth on a top account's card", update, "hw-eleanor", map[string]any{"individual": map[string]any{"dob": "1990-01-01"}},
			"input.individual.dob", "input.individual.dob is only for cards of a client (createClientContact, updateClientContact)"},
	} {
		// Sequential: each checks that it alone made no upstream request.
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]any{"wid": wid, "input": tc.input}
			if tc.card != "" {
				vars["id"] = cards[tc.card]["id"]
			}
			up.ResetRequests()
			e := gw.post(t, tc.query, vars).wantError(t, "BAD_USER_INPUT", tc.message)
			ctWantField(t, e, tc.field)
			if reqs := up.Requests(); len(reqs) > 0 {
				t.Errorf("the gateway called the upstream: %v", reqs)
			}
		})
	}
}

// ctRejection is a write only the service can refuse: it needs the family's cards (a
// reference) or the card's type (a field of another type).
type ctRejection struct {
	name, query    string
	card           string // the card an update is sent to
	input          map[string]any
	field, message string
	said           string // the service's own words
}

func ctRejections() []ctRejection {
	const create = `mutation($wid: ID!, $input: ContactInput!) { createContact(wid: $wid, input: $input) { __typename } }`
	const update = `mutation($wid: ID!, $id: ID!, $input: ContactPatch!) { updateContact(wid: $wid, id: $id, input: $input) { __typename } }`
	return []ctRejection{
		{"a creator who does not exist", create, "", map[string]any{"trust": map[string]any{"externalId": "t-ghost", "legalName": "T", "trustCreators": []string{"hw-eleanor", "nobody"}}},
			"input.trust.trustCreators", `input.trust.trustCreators references contact "nobody", which does not exist in this top account`,
			`trust_creator references contact "nobody", which does not exist in this top account`},
		{"an owner from another top account", create, "", map[string]any{"entity": map[string]any{"externalId": "e-ghost", "legalName": "E",
			"ownership": []any{map[string]any{"percentage": 50, "owners": []string{"ok-ada"}}}}},
			"input.entity.ownership[0].owners", `input.entity.ownership[0].owners references contact "ok-ada", which does not exist in this top account`,
			`ownership[0].owner_id references contact "ok-ada", which does not exist in this top account`},
		{"a class party who does not exist", create, "", map[string]any{"class": map[string]any{"externalId": "c-ghost", "legalName": "C",
			"currentParties": map[string]any{"parties": []any{map[string]any{"party": "hw-grace"}, map[string]any{"party": "ghost"}}}}},
			"input.class.currentParties.parties[1].party", `input.class.currentParties.parties[1].party references contact "ghost", which does not exist in this top account`,
			`current_parties.parties[1].contact_id references contact "ghost", which does not exist in this top account`},
		{"an executor who does not exist", update, "hw-will-james", map[string]any{"will": map[string]any{"executors": []string{"ghost"}}},
			"input.will.executors", `input.will.executors references contact "ghost", which does not exist in this top account`,
			`executor references contact "ghost", which does not exist in this top account`},
		{"a will's date sent to a trust", update, "hw-family-trust", map[string]any{"will": map[string]any{"willCreationDate": "2020-01-01"}},
			"input.will.willCreationDate", "input.will.willCreationDate is only supported for Will contact cards",
			"will_creation_date is only supported for Will contact cards"},
		{"a trust's date sent to a will", update, "hw-will-eleanor", map[string]any{"trust": map[string]any{"trustCreationDate": "2020-01-01"}},
			"input.trust.trustCreationDate", "input.trust.trustCreationDate is only supported for Trust contact cards",
			"trust_creation_date is only supported for Trust contact cards"},
		{"a person's name sent to a charity", update, "hw-foundation", map[string]any{"individual": map[string]any{"firstName": "Ann"}},
			"input.individual.firstName", "input.individual.firstName is only supported for Individual contact cards",
			"first_name is only supported for Individual contact cards"},
	}
}

// ctRunRejections sends each rejection to a demo gateway and hands check the error; it then
// checks that none was written.
func ctRunRejections(t *testing.T, check func(t *testing.T, tc ctRejection, e gqlError)) {
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := ctWIDOf(t, gw, "HARTWELL-001")
	cards, _ := ctCards(t, gw, wid)
	t.Run("cases", func(t *testing.T) {
		for _, tc := range ctRejections() {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				vars := map[string]any{"wid": wid, "input": tc.input}
				if tc.card != "" {
					vars["id"] = cards[tc.card]["id"]
				}
				r := gw.post(t, tc.query, vars)
				if string(r.Data) != "null" {
					t.Errorf("data %s, want null", r.Data)
				}
				if len(r.Errors) != 1 {
					t.Fatalf("got errors %+v, want one", r.Errors)
				}
				check(t, tc, r.Errors[0])
			})
		}
	})
	if after, _ := ctCards(t, gw, wid); !reflect.DeepEqual(after, cards) {
		t.Errorf("the family changed after refused writes")
	}
}

// The service's message in the schema's words, and its own words in extensions.upstream.
func TestUpstreamRejectionsOfContactsSpeakTheSchemaAndKeepTheServicesWords(t *testing.T) {
	t.Parallel()
	ctRunRejections(t, func(t *testing.T, tc ctRejection, e gqlError) {
		if e.Extensions["code"] != "BAD_USER_INPUT" || e.Message != tc.message {
			t.Errorf("got %v %q, want BAD_USER_INPUT %q", e.Extensions["code"], e.Message, tc.message)
		}
		wantUpstream(t, e, 400, tc.said)
	})
}

// README: BAD_USER_INPUT, "the upstream's 400/422 or the gateway's own check, worded in the
// schema's names, with extensions.field naming the input field"; the schema: "with
// extensions.field when one input field is at fault".
func TestUpstreamRejectionsOfContactsNameTheInputField(t *testing.T) {
	t.Parallel()
	ctRunRejections(t, func(t *testing.T, tc ctRejection, e gqlError) {
		ctWantField(t, e, tc.field)
	})
}

func TestContactConflictsAndUnknownIds(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	hartwell, nguyen, okafor := ctWIDOf(t, gw, "HARTWELL-001"), ctWIDOf(t, gw, "NGUYEN-003"), ctWIDOf(t, gw, "OKAFOR-002")
	hw, _ := ctCards(t, gw, hartwell)
	ok, _ := ctCards(t, gw, okafor)
	const create = `mutation($wid: ID!, $input: ContactInput!) { createContact(wid: $wid, input: $input) { ... on ContactCard { externalId } } }`
	const update = `mutation($wid: ID!, $id: ID!, $input: ContactPatch!) { updateContact(wid: $wid, id: $id, input: $input) { ... on ContactCard { externalId } } }`
	ind := func(ext string) map[string]any {
		return map[string]any{"individual": map[string]any{"externalId": ext, "firstName": "Dup"}}
	}
	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name, query   string
			vars          map[string]any
			code, message string
		}{
			{"an individual's taken external id", create, map[string]any{"wid": hartwell, "input": ind("hw-eleanor")},
				"CONFLICT", "A contact card with this externalId already exists"},
			{"a trust given a person's external id", create, map[string]any{"wid": hartwell, "input": map[string]any{"trust": map[string]any{"externalId": "hw-james", "legalName": "T"}}},
				"CONFLICT", "A contact card with this externalId already exists"},
			{"a card for an unknown top account", create, map[string]any{"wid": "no-such-wid", "input": ind("x")},
				"NOT_FOUND", "Top account not found"},
			{"an unknown card", update, map[string]any{"wid": hartwell, "id": "no-such-id", "input": map[string]any{"individual": map[string]any{"firstName": "X"}}},
				"NOT_FOUND", "Contact card not found"},
			{"a card of an unknown top account", update, map[string]any{"wid": "no-such-wid", "id": hw["hw-eleanor"]["id"], "input": map[string]any{"individual": map[string]any{"firstName": "X"}}},
				"NOT_FOUND", "Top account not found"},
			{"another top account's card", update, map[string]any{"wid": hartwell, "id": ok["ok-ada"]["id"], "input": map[string]any{"individual": map[string]any{"firstName": "X"}}},
				"NOT_FOUND", "Contact card not found"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				r := gw.post(t, tc.query, tc.vars)
				r.wantError(t, tc.code, tc.message)
				if string(r.Data) != "null" {
					t.Errorf("data %s, want null", r.Data)
				}
			})
		}
	})
	// An external id is unique within its top account only: another family may use it.
	var got struct{ CreateContact struct{ ExternalID string } }
	gw.post(t, create, map[string]any{"wid": nguyen, "input": ind("hw-eleanor")}).ok(t, &got)
	if got.CreateContact.ExternalID != "hw-eleanor" {
		t.Errorf("createContact in another family: %+v", got.CreateContact)
	}
	// The conflict changed nothing.
	after, _ := ctCards(t, gw, hartwell)
	if !reflect.DeepEqual(after, hw) {
		t.Errorf("the Hartwell family changed after a refused write")
	}
}

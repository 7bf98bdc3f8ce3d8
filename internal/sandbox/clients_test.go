package sandbox_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// Add Client and Delete Client, as the project decides them where the specification says "not
// shown" (docs/sandbox.md): "POST
// {base_url}/v1/clients (body as one Clients-file row) and DELETE
// {base_url}/v1/clients/{external_id}", with the meaning bulk-referral-session-sdk.md gives the
// Clients file: "The Clients file is the bulk equivalent of the Add Client endpoint", "Removing
// a client is done through a separate Delete Client call, addressed by the client's
// external_id, which revokes the advisor's access rather than erasing the client."

const clientsPath = "/v1/clients"

// clOn is f reporting to t, so that a failing subtest does not stop its parent.
func clOn(f *fixture, t *testing.T) *fixture {
	g := *f
	g.t = t
	return &g
}

// clRow is a valid Clients-file row with every field, changed by changes (nil removes a key).
func clRow(id string, changes map[string]any) map[string]any {
	row := map[string]any{
		"id": id, "primary_id": id + "-P1", "email": "ana@example.com", "first_name": "Ana", "last_name": "Silva",
		"send_invitation_email": false, "subscription_start_date": "2024-01-15T09:30:00Z", "marital_status": "Married",
		"spouse_first_name": "Rui", "spouse_last_name": "Silva", "spouse_id": id + "-P2",
		"address":      map[string]any{"line1": "1 Main St", "city": "Oakland", "state": "CA", "zip": "94601"},
		"has_children": true, "has_pets": false, "own_property": true,
		"existing_estate_plan": "JointTrust", "selected_primary_document": "One Joint Revocable Trust",
	}
	return ccWith(row, changes)
}

// clMinimal is a row with only the required fields.
func clMinimal(id, first, last string) map[string]any {
	return map[string]any{"id": id, "first_name": first, "last_name": last}
}

// clAdd posts a row and checks the status; it returns the client answered.
func clAdd(t *testing.T, f *fixture, row any, status int) map[string]any {
	t.Helper()
	r := clOn(f, t).v1("POST", clientsPath, row)
	if r.status != status {
		t.Fatalf("POST %s: status %d, want %d; body %s", clientsPath, r.status, status, r.body)
	}
	return r.object(t)
}

// clCards lists a client's cards by id.
func clCards(t *testing.T, f *fixture, ref string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, c := range ccList(t, f, ccPath(ref)) {
		out[str(t, c, "id")] = c
	}
	return out
}

func TestAddClientAnswers201WithTheClientAndMakesItsCards(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	got := clAdd(t, f, clRow("CL-1", nil), http.StatusCreated)

	// The answer: the service's wid, the caller's id as external_id, the row's fields.
	wid := str(t, got, "wid")
	primary, spouse := str(t, got, "primary_contact_id"), str(t, got, "spouse_contact_id")
	want := ccJSON(t, clRow("CL-1", map[string]any{"id": nil})).(map[string]any)
	for k, v := range map[string]any{
		"wid": wid, "external_id": "CL-1", "advisor_id": sandbox.DefaultAdvisorID, "team_id": sandbox.DefaultTeamID,
		"primary_contact_id": primary, "spouse_contact_id": spouse, "invitation_sent": false,
	} {
		want[k] = v
	}
	if !clEqual(t, got, want) {
		t.Errorf("client is\n  %s\nwant\n  %s", mustJSON(t, got), mustJSON(t, want))
	}

	// "Creating a client creates a primary contact" and, with spouse names, the spouse's; each
	// linked by its external_id to the People row named by primary_id / spouse_id.
	wantCards := map[string]map[string]any{
		primary: {"id": primary, "type": "Individual", "external_id": "CL-1-P1", "first_name": "Ana", "last_name": "Silva"},
		spouse:  {"id": spouse, "type": "Individual", "external_id": "CL-1-P2", "first_name": "Rui", "last_name": "Silva"},
	}
	// "The client may be addressed by its wid or by the caller's external_id."
	for _, ref := range []string{"CL-1", wid} {
		cards := clCards(t, f, ref)
		if len(cards) != 2 {
			t.Fatalf("client %s has %d cards, want 2: %v", ref, len(cards), cards)
		}
		for id, c := range wantCards {
			ccWantContact(t, cards[id], id, ccWith(c, map[string]any{"id": nil}))
		}
	}
}

func TestAddClientLinksItsCardsToPeopleRows(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	// "primary_id ... this links that contact to the row so the row updates it in place. If
	// omitted the contact is created unlinked."
	linked := clAdd(t, f, clRow("CL-L", nil), http.StatusCreated)
	unlinked := clAdd(t, f, clRow("CL-U", map[string]any{"primary_id": nil, "spouse_id": nil}), http.StatusCreated)

	for _, tc := range []struct {
		name, client, peopleID, wantCard string
	}{
		{"primary_id finds the primary card", "CL-L", "CL-L-P1", str(t, linked, "primary_contact_id")},
		{"spouse_id finds the spouse card", "CL-L", "CL-L-P2", str(t, linked, "spouse_contact_id")},
		{"another id finds nothing", "CL-L", "CL-L-P3", ""},
		{"an unlinked client's cards answer to no id", "CL-U", "CL-U-P1", ""},
		{"an unknown client has no cards", "NOPE", "CL-L-P1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			card, ok := f.sb.LinkedCard(tc.client, tc.peopleID)
			if ok != (tc.wantCard != "") || card.ID != tc.wantCard {
				t.Errorf("LinkedCard(%q, %q) = %q, %v; want %q", tc.client, tc.peopleID, card.ID, ok, tc.wantCard)
			}
		})
	}
	for id, c := range clCards(t, f, "CL-U") {
		if _, has := c["external_id"]; has {
			t.Errorf("unlinked card %s has external_id %v, want none", id, c["external_id"])
		}
	}

	// Linking the unlinked primary card later makes it answer to the id.
	clAdd(t, f, clMinimal("CL-U", "Ana", "Silva"), http.StatusOK)
	clAdd(t, f, ccWith(clMinimal("CL-U", "Ana", "Silva"), map[string]any{"primary_id": "CL-U-P9"}), http.StatusOK)
	if card, ok := f.sb.LinkedCard("CL-U", "CL-U-P9"); !ok || card.ID != str(t, unlinked, "primary_contact_id") {
		t.Errorf("after linking, LinkedCard = %q, %v; want the primary card", card.ID, ok)
	}

	// A link naming another card of the client would let one People row reach two cards.
	ccAdd(t, f, ccPath("CL-L"), person("CL-L-OTHER"))
	for _, tc := range []struct {
		name    string
		row     map[string]any
		message string
	}{
		{"primary_id naming the spouse's card", ccWith(clMinimal("CL-L", "Ana", "Silva"), map[string]any{"primary_id": "CL-L-P2"}),
			`primary_id "CL-L-P2" already links another contact card of this client`},
		{"primary_id naming a card added over v1", ccWith(clMinimal("CL-L", "Ana", "Silva"), map[string]any{"primary_id": "CL-L-OTHER"}),
			`primary_id "CL-L-OTHER" already links another contact card of this client`},
		{"spouse_id naming the primary card", ccWith(clMinimal("CL-L", "Ana", "Silva"), map[string]any{"spouse_first_name": "Rui", "spouse_id": "CL-L-P1"}),
			`spouse_id "CL-L-P1" already links another contact card of this client`},
	} {
		t.Run(tc.name+" is 409", func(t *testing.T) {
			before := ccState(t, f, ccPath("CL-L"))
			clOn(f, t).v1("POST", clientsPath, tc.row).wantError(t, http.StatusConflict, tc.message)
			if after := ccState(t, f, ccPath("CL-L")); after != before {
				t.Errorf("a refused row changed the cards:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

func TestAddClientWithAnExistingIDUpdatesIt(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	first := clAdd(t, f, clRow("CL-2", map[string]any{"spouse_first_name": nil, "spouse_last_name": nil, "spouse_id": nil}), http.StatusCreated)
	if _, has := first["spouse_contact_id"]; has {
		t.Fatalf("a row without spouse names made a spouse card: %v", first)
	}
	// The Clients file "adds or updates": the same id again is an update, 200.
	second := clAdd(t, f, map[string]any{
		"id": "CL-2", "first_name": "Ana Maria", "last_name": "Souza", "spouse_first_name": "Rui",
		"address": map[string]any{"city": "Berkeley"},
	}, http.StatusOK)

	if str(t, second, "wid") != str(t, first, "wid") || str(t, second, "primary_contact_id") != str(t, first, "primary_contact_id") {
		t.Errorf("the update changed the wid or the primary card: %v then %v", first, second)
	}
	for _, tc := range []struct {
		field string
		want  any
	}{
		{"first_name", "Ana Maria"},
		{"last_name", "Souza"},
		// A record's fields the row leaves out are left unchanged, as records a file leaves out.
		{"email", "ana@example.com"},
		{"marital_status", "Married"},
		{"subscription_start_date", "2024-01-15T09:30:00Z"},
		{"primary_id", "CL-2-P1"},
		// The address is one value: a new one replaces the old whole.
		{"address", map[string]any{"city": "Berkeley"}},
		{"spouse_first_name", "Rui"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			if got := second[tc.field]; !clEqual(t, got, tc.want) {
				t.Errorf("%s is %v, want %v", tc.field, got, tc.want)
			}
		})
	}
	// "an update of the client updates those cards' names"; spouse names arriving later make
	// the spouse card then.
	cards := clCards(t, f, "CL-2")
	primary, spouse := str(t, second, "primary_contact_id"), str(t, second, "spouse_contact_id")
	ccWantContact(t, cards[primary], primary, map[string]any{"type": "Individual", "external_id": "CL-2-P1", "first_name": "Ana Maria", "last_name": "Souza"})
	ccWantContact(t, cards[spouse], spouse, map[string]any{"type": "Individual", "first_name": "Rui"})
	if len(cards) != 2 {
		t.Errorf("client has %d cards, want 2", len(cards))
	}
}

// clEqual compares values as JSON reads them.
func clEqual(t *testing.T, got, want any) bool {
	t.Helper()
	return reflect.DeepEqual(ccJSON(t, got), ccJSON(t, want))
}

func TestSubscriptionStartDateIsThePastDateOrTheCurrentDate(t *testing.T) {
	t.Parallel()
	// "subscription_start_date | ISO 8601 date-time | no | Must be in the past; if absent or in
	// the future the current date is used." The fixture's clock reads 2026-11-22T09:30:00Z.
	for _, tc := range []struct {
		name, sent, want string
	}{
		{"a past date is kept", "2024-01-15T09:30:00+02:00", "2024-01-15T07:30:00Z"},
		{"an absent date is the current date", "", "2026-11-22T09:30:00Z"},
		{"a future date is the current date", "2026-11-22T09:30:01Z", "2026-11-22T09:30:00Z"},
		{"now itself is not in the future", "2026-11-22T09:30:00Z", "2026-11-22T09:30:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := emptySandbox(t)
			row := clMinimal("CL-D", "Ana", "Silva")
			if tc.sent != "" {
				row["subscription_start_date"] = tc.sent
			}
			if got := str(t, clAdd(t, f, row, http.StatusCreated), "subscription_start_date"); got != tc.want {
				t.Errorf("subscription_start_date %q, want %q", got, tc.want)
			}
			// An update without a date keeps the date the client has.
			f.clock.Advance(48 * time.Hour)
			if got := str(t, clAdd(t, f, clMinimal("CL-D", "Ana", "Silva"), http.StatusOK), "subscription_start_date"); got != tc.want {
				t.Errorf("after an update without a date: %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTheInvitationIsSentOnlyOnceAndOnlyWithAnEmail(t *testing.T) {
	t.Parallel()
	// "send_invitation_email | boolean | no | Default false. Takes effect only the first time
	// the client is invited and only when an email is present."
	for _, tc := range []struct {
		name  string
		rows  []map[string]any
		wants []bool
	}{
		{"default false", []map[string]any{{"email": "a@example.com"}}, []bool{false}},
		{"true with an email", []map[string]any{{"email": "a@example.com", "send_invitation_email": true}}, []bool{true}},
		{"true without an email", []map[string]any{{"send_invitation_email": true}}, []bool{false}},
		{"the email arriving later", []map[string]any{{"send_invitation_email": true}, {"email": "a@example.com"}}, []bool{false, true}},
		{"once sent, it stays sent", []map[string]any{{"email": "a@example.com", "send_invitation_email": true}, {"send_invitation_email": false}}, []bool{true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := emptySandbox(t)
			for i, changes := range tc.rows {
				status := http.StatusOK
				if i == 0 {
					status = http.StatusCreated
				}
				got := clAdd(t, f, ccWith(clMinimal("CL-I", "Ana", "Silva"), changes), status)
				if got["invitation_sent"] != tc.wants[i] {
					t.Errorf("row %d: invitation_sent %v, want %v", i+1, got["invitation_sent"], tc.wants[i])
				}
			}
		})
	}
}

func TestAddClientRefusesBadInputAndStoresNothing(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	long := strings.Repeat("x", 256)
	for _, tc := range []struct {
		name, spec  string // what is wrong, and the line of the specification it breaks
		body        any
		contentType string
		status      int
		message     string
	}{
		{"no id", "id | string, max 255 | yes", clRow("CL-X", map[string]any{"id": nil}), "", 400, "id is required"},
		{"no first_name", "first_name | string, max 255 | yes", clRow("CL-X", map[string]any{"first_name": nil}), "", 400, "first_name is required"},
		{"no last_name", "last_name | string, max 255 | yes", clRow("CL-X", map[string]any{"last_name": nil}), "", 400, "last_name is required"},
		{"an id over 255", "Client id ... max 255 characters", clRow(long, nil), "", 400, "id must be at most 255 characters"},
		{"an email over 255", "email | string, max 255", clRow("CL-X", map[string]any{"email": long}), "", 400, "email must be at most 255 characters"},
		{"a number for a name", "first_name | string", clRow("CL-X", map[string]any{"first_name": 7}), "", 400, "first_name must be a string"},
		{"a string for a boolean", "has_pets | boolean", clRow("CL-X", map[string]any{"has_pets": "false"}), "", 400, "has_pets must be a boolean"},
		{"a date without a time", "subscription_start_date | ISO 8601 date-time", clRow("CL-X", map[string]any{"subscription_start_date": "2024-01-15"}), "", 400,
			"subscription_start_date must be an ISO 8601 date-time with a time zone, such as 2024-01-15T09:30:00Z"},
		{"an enum in the wrong case", "marital_status | enum: Single, Married, ...", clRow("CL-X", map[string]any{"marital_status": "single"}), "", 400,
			"marital_status must be one of Single, Married, DomesticPartnership, CivilUnion, Engaged, OtherCommittedRelationship, Widowed"},
		{"an enum without its spaces", "selected_primary_document | enum: One Joint Revocable Trust, ...", clRow("CL-X", map[string]any{"selected_primary_document": "OneJointRevocableTrust"}), "", 400,
			"selected_primary_document must be one of One Joint Revocable Trust, One Individual Revocable Trust, Two Individual Revocable Trusts, One Last Will and Testament, Two Last Will and Testaments"},
		{"an unknown address member", "address | object | line1, line2, city, state, zip", clRow("CL-X", map[string]any{"address": map[string]any{"country": "US"}}), "", 400,
			"address.country is not a field of an address"},
		{"an address member over 255", "address: each string max 255", clRow("CL-X", map[string]any{"address": map[string]any{"zip": long}}), "", 400,
			"address.zip must be at most 255 characters"},
		{"an unknown field", "the Clients table's fields", clRow("CL-X", map[string]any{"nickname": "Annie"}), "", 400, "nickname is not a Clients file field"},
		{"spouse_id without spouse names", "spouse_id: links the automatically created spouse contact", clRow("CL-X", map[string]any{"spouse_first_name": nil, "spouse_last_name": nil}), "", 400,
			"spouse_id requires spouse_first_name or spouse_last_name: it links the spouse contact they create"},
		{"malformed JSON", "body as one Clients-file row", `{"id":"CL-X",`, "", 400, "Request body must be a JSON object"},
		{"a JSON array", "body as one Clients-file row", `[{"id":"CL-X"}]`, "", 400, "Request body must be a JSON object"},
		{"two rows in one body", "body as one Clients-file row", `{"id":"CL-X","first_name":"A","last_name":"B"}` + "\n" + `{"id":"CL-Y","first_name":"A","last_name":"B"}`, "", 400,
			"Request body must be a single JSON object"},
		{"an empty body", "id | yes", "", "", 400, "id is required"},
		{"a text/plain body", "All requests send Content-Type: application/json", `{"id":"CL-X","first_name":"A","last_name":"B"}`, "text/plain", 415, "Content-Type must be application/json"},
		{"a body over 1 MiB", "the sandbox reads at most 1 MiB", authPadded(t, clRow("CL-X", nil), 1<<20+1), "", 413, "Request body too large"},
	} {
		t.Run(tc.name+" ("+tc.spec+")", func(t *testing.T) {
			g := clOn(f, t)
			req := g.request("POST", clientsPath, tc.body)
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.SetBasicAuth(testUser, testPass)
			g.do(req).wantError(t, tc.status, tc.message)
		})
	}
	// Nothing was stored: the client is not reachable, and the id is free.
	clOn(f, t).v1("GET", ccPath("CL-X"), nil).wantError(t, http.StatusNotFound, "Client not found")
	clAdd(t, f, clRow("CL-X", nil), http.StatusCreated)
}

func TestClientPathsRefuseWrongCredentialsAndOtherMethods(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	clAdd(t, f, clRow("CL-M", nil), http.StatusCreated)
	for _, tc := range []struct {
		name, method, path string
		cred               func(*http.Request)
		status             int
		message, allow     string
	}{
		// "v1 client-scoped contact endpoints take Authorization: Basic <CREDENTIALS>";
		// "Invalid credentials or insufficient permission return 403 with message Access Denied."
		{"Add Client with a wrong password", "POST", clientsPath, authBasic(testUser, "wrong"), 403, "Access Denied", ""},
		{"Add Client with the v2 bearer token", "POST", clientsPath, authHeader("Bearer " + testToken), 403, "Access Denied", ""},
		{"Delete Client with no credentials", "DELETE", clientsPath + "/CL-M", func(*http.Request) {}, 403, "Access Denied", ""},
		// "405 unsupported method for the path", with the methods it supports.
		{"GET the client collection", "GET", clientsPath, authBasic(testUser, testPass), 405, "Method Not Allowed", "POST"},
		{"PUT a client", "PUT", clientsPath + "/CL-M", authBasic(testUser, testPass), 405, "Method Not Allowed", "DELETE"},
		{"GET a client", "GET", clientsPath + "/CL-M", authBasic(testUser, testPass), 405, "Method Not Allowed", "DELETE"},
		{"DELETE the client collection", "DELETE", clientsPath, authBasic(testUser, testPass), 405, "Method Not Allowed", "POST"},
		{"DELETE a blank external_id", "DELETE", clientsPath + "/%20", authBasic(testUser, testPass), 400, "Missing external_id parameter", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := clOn(f, t)
			var body any
			if tc.method == "POST" || tc.method == "PUT" {
				body = clRow("CL-M", map[string]any{"first_name": "Hijacked"})
			}
			req := g.request(tc.method, tc.path, body)
			tc.cred(req)
			r := g.do(req)
			r.wantError(t, tc.status, tc.message)
			if got := r.header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
		})
	}
	if got := clCards(t, f, "CL-M"); len(got) != 2 {
		t.Fatalf("client has %d cards, want 2", len(got))
	}
	for _, c := range clCards(t, f, "CL-M") {
		if c["first_name"] == "Hijacked" {
			t.Errorf("a refused request renamed a card: %v", c)
		}
	}
}

func TestDeleteClientRevokesAccessAndAddingItAgainRestoresIt(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	added := clAdd(t, f, clRow("CL-3", nil), http.StatusCreated)
	wid := str(t, added, "wid")
	ccAdd(t, f, ccPath("CL-3"), person("cl3-child"))
	before := ccState(t, f, ccPath("CL-3"))

	r := f.v1("DELETE", clientsPath+"/CL-3", nil).wantOK(t)
	ccWantKeys(t, "Delete Client response", r.object(t))

	// "revokes the advisor's access": every v1 path answers as for an unknown client, by
	// external_id and by wid.
	for _, ref := range []string{"CL-3", wid} {
		for _, p := range []struct{ method, path string }{
			{"GET", ccPath(ref)},
			{"POST", ccPath(ref)},
			{"GET", ccItem(ref, str(t, added, "primary_contact_id"))},
			{"PUT", ccItem(ref, str(t, added, "primary_contact_id"))},
			{"DELETE", clientsPath + "/" + ref},
		} {
			t.Run(p.method+" "+p.path+" after Delete Client", func(t *testing.T) {
				var body any
				if p.method == "POST" {
					body = person("late")
				} else if p.method == "PUT" {
					body = map[string]any{"first_name": "Late"}
				}
				clOn(f, t).v1(p.method, p.path, body).wantError(t, http.StatusNotFound, "Client not found")
			})
		}
	}
	// "rather than erasing the client": adding the same id again restores access, cards intact,
	// and to the caller that is an add.
	again := clAdd(t, f, clMinimal("CL-3", "Ana", "Silva"), http.StatusCreated)
	if str(t, again, "wid") != wid {
		t.Errorf("wid %q after adding again, want %q", str(t, again, "wid"), wid)
	}
	if after := ccState(t, f, ccPath("CL-3")); after != before {
		t.Errorf("cards changed across delete and add:\nbefore %s\nafter  %s", before, after)
	}
	if str(t, again, "email") != "ana@example.com" {
		t.Errorf("the client's record was erased: %v", again)
	}
}

func TestDeleteClientOfAnUnknownOrDeletedClientIsNotFound(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	clAdd(t, f, clRow("CL-4", nil), http.StatusCreated)
	f.v1("DELETE", clientsPath+"/CL-4", nil).wantOK(t)
	for _, ref := range []string{"CL-4", "NO-SUCH-CLIENT"} {
		t.Run(ref, func(t *testing.T) {
			clOn(f, t).v1("DELETE", clientsPath+"/"+ref, nil).wantError(t, http.StatusNotFound, "Client not found")
		})
	}
}

func TestAddClientActsForTheAdvisorAndTeamItNames(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	// With no advisor reachable yet, the default one.
	got := clAdd(t, f, clMinimal("CL-A", "Ana", "Silva"), http.StatusCreated)
	if got["advisor_id"] != sandbox.DefaultAdvisorID || got["team_id"] != sandbox.DefaultTeamID {
		t.Errorf("advisor %v team %v, want the defaults", got["advisor_id"], got["team_id"])
	}
	// Naming a new advisor adds a client for it.
	r := f.v1("POST", clientsPath+"?advisor_id=adv-2&team_id=team-2", clMinimal("CL-B", "Bo", "Lee"))
	if r.status != http.StatusCreated || r.object(t)["advisor_id"] != "adv-2" {
		t.Fatalf("status %d, body %s; want 201 for advisor adv-2", r.status, r.body)
	}
	for _, tc := range []struct {
		name, query string
		status      int
		message     string
	}{
		// "advisor_id string optional, required when the API user can access multiple advisors".
		{"no advisor_id once several are reachable", "", 400, "advisor_id is required when the API user can access multiple advisors"},
		{"no team_id once several are reachable", "?advisor_id=adv-001", 400, "team_id is required when the API user can access multiple advisor teams"},
		{"another advisor's client id", "?advisor_id=adv-2&team_id=team-2", 409, "Client with this id belongs to another advisor or team"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clOn(f, t).v1("POST", clientsPath+tc.query, clMinimal("CL-A", "Ana", "Silva")).wantError(t, tc.status, tc.message)
		})
	}
	if r := f.v1("POST", clientsPath+"?advisor_id=adv-001&team_id=team-west", clMinimal("CL-A", "Ana", "Silva")); r.status != http.StatusOK {
		t.Errorf("update naming the client's own advisor: status %d, want 200; body %s", r.status, r.body)
	}
}

// The demo client, added through AddClient with no row, gets its primary card from the first
// row that names it, and keeps the cards it had.
func TestAddClientOverTheDemoClientAddsItsPrimaryCard(t *testing.T) {
	t.Parallel()
	f := newSandbox(t, sandbox.Options{}, true)
	before := len(clCards(t, f, "CL-1001"))
	got := clAdd(t, f, clMinimal("CL-1001", "Marcus", "Bell"), http.StatusOK)
	cards := clCards(t, f, "CL-1001")
	if len(cards) != before+1 {
		t.Errorf("%d cards, want %d", len(cards), before+1)
	}
	if c := cards[str(t, got, "primary_contact_id")]; c["first_name"] != "Marcus" {
		t.Errorf("primary card %v, want Marcus", c)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(data)
}

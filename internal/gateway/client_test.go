package gateway_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

// End-to-end tests of clients: the client-scoped (v1) contact cards, read by a client's wid or
// external id, with dates of birth, and written through createClientContact and
// updateClientContact.

// clRest calls the sandbox's v1 endpoints directly, with the basic credentials they take.
func clRest(t testing.TB, up *upstream, method, path string, body any) map[string]any {
	t.Helper()
	return sandboxJSON(t, method, up.URL+path, body, func(r *http.Request) {
		user, pass, _ := strings.Cut(upstreamBasic, ":")
		r.SetBasicAuth(user, pass)
	})
}

// clAddClient adds a client to the sandbox with cards given as v1 bodies, and returns its wid.
func clAddClient(t testing.TB, up *upstream, c sandbox.Client, cards ...map[string]any) string {
	t.Helper()
	wid, err := up.Sandbox.AddClient(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, card := range cards {
		clRest(t, up, "POST", "/v1/clients/"+wid+"/contacts?advisor_id="+c.AdvisorID+"&team_id="+c.TeamID, card)
	}
	return wid
}

// clClient is a client as the tests select it.
type clClient struct {
	Ref               string
	AdvisorID, TeamID *string
	Contacts          []ctObj
}

const clClientQuery = `query Client($ref: ID!, $advisorId: String, $teamId: String) {
  client(ref: $ref, advisorId: $advisorId, teamId: $teamId) { ref advisorId teamId contacts { ` + ctCardFields + ` } }
}`

func clExternalIDs(cards []ctObj) []string {
	out := []string{}
	for _, c := range cards {
		ext, _ := c["externalId"].(string)
		out = append(out, ext)
	}
	return out
}

func clStr(s string) *string { return &s }

func TestClientIsFoundByWidOrExternalId(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	// A second client of the demo client's advisor and team, so neither needs naming.
	wid := clAddClient(t, up, sandbox.Client{ExternalID: "CL-2002", AdvisorID: "adv-001", TeamID: "team-west"},
		map[string]any{"type": "Individual", "external_id": "cl2-ruth", "first_name": "Ruth", "last_name": "Ames", "dob": "1955-12-31"},
		map[string]any{"type": "Trust", "external_id": "cl2-trust", "legal_name": "Ames Trust", "trust_creator": []string{"cl2-ruth"}})
	hartwell := ctWIDOf(t, gw, "HARTWELL-001")
	demo := []string{"cl-marcus", "cl-dana", "cl-will-marcus"}
	for _, tc := range []struct {
		name         string
		vars         map[string]any
		wantNil      bool
		wantContacts []string
		advisor      *string
		team         *string
	}{
		{"the demo client by external id", map[string]any{"ref": "CL-1001"}, false, demo, nil, nil},
		{"a client by wid", map[string]any{"ref": wid}, false, []string{"cl2-ruth", "cl2-trust"}, nil, nil},
		{"the same client by external id", map[string]any{"ref": "CL-2002"}, false, []string{"cl2-ruth", "cl2-trust"}, nil, nil},
		{"with its advisor and team", map[string]any{"ref": "CL-1001", "advisorId": "adv-001", "teamId": "team-west"}, false, demo, clStr("adv-001"), clStr("team-west")},
		{"with its advisor only", map[string]any{"ref": wid, "advisorId": "adv-001"}, false, []string{"cl2-ruth", "cl2-trust"}, clStr("adv-001"), nil},
		{"an unknown client is null", map[string]any{"ref": "CL-9999"}, true, nil, nil, nil},
		{"a top account's wid is no client", map[string]any{"ref": hartwell}, true, nil, nil, nil},
		{"a top account's external id is no client", map[string]any{"ref": "HARTWELL-001"}, true, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got struct{ Client *clClient }
			gw.post(t, clClientQuery, tc.vars).ok(t, &got)
			c := got.Client
			if tc.wantNil {
				if c != nil {
					t.Errorf("client %+v, want null", c)
				}
				return
			}
			if c == nil {
				t.Fatal("client is null")
			}
			if c.Ref != tc.vars["ref"] {
				t.Errorf("ref %q, want %q, as asked for", c.Ref, tc.vars["ref"])
			}
			if !reflect.DeepEqual(c.AdvisorID, tc.advisor) || !reflect.DeepEqual(c.TeamID, tc.team) {
				t.Errorf("advisorId %v teamId %v, want %v %v", c.AdvisorID, c.TeamID, tc.advisor, tc.team)
			}
			if ids := clExternalIDs(c.Contacts); !slices.Equal(ids, tc.wantContacts) {
				t.Errorf("contacts %v, want %v", ids, tc.wantContacts)
			}
		})
	}
}

func TestClientCardsCarryDatesOfBirthAndResolveWithinTheClient(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	var got struct{ Client *clClient }
	gw.post(t, clClientQuery, map[string]any{"ref": "CL-1001"}).ok(t, &got)
	if got.Client == nil {
		t.Fatal("client CL-1001 is null")
	}
	cards := map[string]ctObj{}
	for _, c := range got.Client.Contacts {
		cards[c["externalId"].(string)] = c
	}
	for _, tc := range []struct {
		ext  string
		want ctObj
	}{
		{"cl-marcus", ctObj{"__typename": "Individual", "type": "INDIVIDUAL", "displayName": "Marcus Bell",
			"firstName": "Marcus", "middleName": nil, "lastName": "Bell", "dob": "1968-04-22"}},
		{"cl-dana", ctObj{"__typename": "Individual", "displayName": "Dana Bell", "dob": "1970-09-13"}},
		{"cl-will-marcus", ctObj{"__typename": "Will", "type": "WILL", "legalName": "Last Will and Testament of Marcus Bell",
			"willType": "LAST_WILL_AND_TESTAMENT", "testator": ctStrings("cl-marcus"), "executor": ctStrings("cl-dana"),
			"testators": ctRefs("cl-marcus"), "executors": ctRefs("cl-dana")}},
	} {
		t.Run(tc.ext, func(t *testing.T) {
			t.Parallel()
			ctMatch(t, tc.ext, cards[tc.ext], tc.want)
			// Client.contact finds the card by id, the same as listed.
			var one struct {
				Client struct{ Contact ctObj }
			}
			gw.post(t, `query($id: ID!) { client(ref: "CL-1001") { contact(id: $id) { `+ctCardFields+` } } }`,
				map[string]any{"id": cards[tc.ext]["id"]}).ok(t, &one)
			if !reflect.DeepEqual(one.Client.Contact, cards[tc.ext]) {
				t.Errorf("Client.contact %s, want %s", ctShow(one.Client.Contact), ctShow(cards[tc.ext]))
			}
		})
	}

	t.Run("relationships and filters", func(t *testing.T) {
		t.Parallel()
		var rel struct {
			Client struct {
				Wills []struct {
					ExternalID    string
					Relationships []ctObj
				}
				Missing ctObj
			}
		}
		gw.post(t, `{ client(ref: "CL-1001") {
			wills: contacts(types: [WILL]) { ... on ContactCard { externalId relationships { `+ctRelFields+` } } }
			missing: contact(id: "no-such-id") { __typename }
		} }`, nil).ok(t, &rel)
		if len(rel.Client.Wills) != 1 || rel.Client.Wills[0].ExternalID != "cl-will-marcus" {
			t.Fatalf("contacts(types: [WILL]) = %+v, want cl-will-marcus alone", rel.Client.Wills)
		}
		want := []string{"EXECUTOR cl-will-marcus->cl-dana", "TESTATOR cl-will-marcus->cl-marcus"}
		if got := ctEdges(t, rel.Client.Wills[0].Relationships); !slices.Equal(got, want) {
			t.Errorf("the will's relationships %q, want %q", got, want)
		}
		if rel.Client.Missing != nil {
			t.Errorf("Client.contact of an unknown id = %v, want null", rel.Client.Missing)
		}
	})
}

func TestClientAdvisorAndTeamSayWhomTheGatewayActsFor(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	// A client of another advisor and team: now the API user reaches two of each.
	clAddClient(t, up, sandbox.Client{ExternalID: "CL-3003", AdvisorID: "adv-002", TeamID: "team-east"},
		map[string]any{"type": "Individual", "external_id": "cl3-sam", "first_name": "Sam", "dob": "1980-02-29"})
	t.Run("reads", func(t *testing.T) {
		for _, tc := range []struct {
			name          string
			vars          map[string]any
			code, message string   // an error, if any
			contacts      []string // nil: the client is null
		}{
			{"neither named", map[string]any{"ref": "CL-1001"},
				"BAD_USER_INPUT", "advisorId is required when the API user can access multiple advisors", nil},
			{"the team not named", map[string]any{"ref": "CL-1001", "advisorId": "adv-001"},
				"BAD_USER_INPUT", "teamId is required when the API user can access multiple advisor teams", nil},
			{"the advisor not named", map[string]any{"ref": "CL-1001", "teamId": "team-west"},
				"BAD_USER_INPUT", "advisorId is required when the API user can access multiple advisors", nil},
			{"the client's own advisor and team", map[string]any{"ref": "CL-1001", "advisorId": "adv-001", "teamId": "team-west"},
				"", "", []string{"cl-marcus", "cl-dana", "cl-will-marcus"}},
			{"the other client's", map[string]any{"ref": "CL-3003", "advisorId": "adv-002", "teamId": "team-east"},
				"", "", []string{"cl3-sam"}},
			{"another advisor's client is null", map[string]any{"ref": "CL-1001", "advisorId": "adv-002", "teamId": "team-east"},
				"", "", nil},
			{"an advisor the credentials do not reach", map[string]any{"ref": "CL-1001", "advisorId": "adv-999", "teamId": "team-west"},
				"FORBIDDEN", "Access Denied", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				r := gw.post(t, clClientQuery, tc.vars)
				if tc.code != "" {
					r.wantError(t, tc.code, tc.message)
					if !strings.Contains(string(r.Data), `"client":null`) {
						t.Errorf("data %s, want client null", r.Data)
					}
					return
				}
				var got struct{ Client *clClient }
				r.ok(t, &got)
				switch {
				case tc.contacts == nil && got.Client != nil:
					t.Errorf("client %+v, want null", got.Client)
				case tc.contacts != nil && got.Client == nil:
					t.Errorf("client is null, want %v", tc.contacts)
				case tc.contacts != nil && !slices.Equal(clExternalIDs(got.Client.Contacts), tc.contacts):
					t.Errorf("contacts %v, want %v", clExternalIDs(got.Client.Contacts), tc.contacts)
				}
			})
		}

	})
	// Writes name them too.
	const create = `mutation($advisorId: String, $teamId: String, $input: ContactInput!) {
	  createClientContact(ref: "CL-3003", advisorId: $advisorId, teamId: $teamId, input: $input) { ... on Individual { externalId dob } } }`
	input := map[string]any{"individual": map[string]any{"externalId": "cl3-kim", "dob": "2010-10-10"}}
	e := gw.post(t, create, map[string]any{"input": input}).
		wantError(t, "BAD_USER_INPUT", "advisorId is required when the API user can access multiple advisors")
	if e.Extensions["field"] != "advisorId" {
		t.Errorf("extensions.field %v, want the argument advisorId", e.Extensions["field"])
	}
	var made struct {
		CreateClientContact struct{ ExternalID, Dob string }
	}
	gw.post(t, create, map[string]any{"input": input, "advisorId": "adv-002", "teamId": "team-east"}).ok(t, &made)
	if made.CreateClientContact.ExternalID != "cl3-kim" || made.CreateClientContact.Dob != "2010-10-10" {
		t.Errorf("createClientContact naming the advisor and team: %+v", made.CreateClientContact)
	}
}

func TestCreateAndUpdateClientContact(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := clAddClient(t, up, sandbox.Client{ExternalID: "CL-4004", AdvisorID: "adv-001", TeamID: "team-west"},
		map[string]any{"type": "Individual", "external_id": "p1", "first_name": "Pat"})
	const create = `mutation($ref: ID!, $input: ContactInput!) { createClientContact(ref: $ref, input: $input) { ` + ctCardFields + ` } }`
	const update = `mutation($ref: ID!, $id: ID!, $input: ContactPatch!) { updateClientContact(ref: $ref, id: $id, input: $input) { ` + ctCardFields + ` } }`
	const read = `query($ref: ID!, $id: ID!) { client(ref: $ref) { contact(id: $id) { ` + ctCardFields + ` } } }`
	ids := map[string]string{}
	for _, tc := range []struct {
		name, ref string
		input     map[string]any
		want      ctObj
	}{
		{"an individual with a date of birth", "CL-1001", map[string]any{"individual": map[string]any{"externalId": "cl-kim", "firstName": "Kim", "lastName": "Bell", "dob": "2001-05-06"}},
			ctObj{"__typename": "Individual", "type": "INDIVIDUAL", "externalId": "cl-kim", "displayName": "Kim Bell", "firstName": "Kim", "lastName": "Bell", "dob": "2001-05-06"}},
		{"a trust naming the client's people", "CL-1001", map[string]any{"trust": map[string]any{"externalId": "cl-trust", "legalName": "Bell Family Trust",
			"trustType": "JOINT_REVOCABLE_TRUST", "trustCreators": []string{"cl-marcus", "cl-dana"}, "initialTrustees": []string{"cl-kim"}, "governingState": "OR"}},
			ctObj{"__typename": "Trust", "legalName": "Bell Family Trust", "trustType": "JOINT_REVOCABLE_TRUST",
				"trustCreators": ctRefs("cl-marcus", "cl-dana"), "initialTrustees": ctRefs("cl-kim"), "governingState": "OR"}},
		{"a charity", "CL-1001", map[string]any{"charity": map[string]any{"externalId": "cl-charity", "legalName": "Bell Fund", "city": "Portland", "state": "OR"}},
			ctObj{"__typename": "Charity", "legalName": "Bell Fund", "city": "Portland", "state": "OR"}},
		{"an individual of a client named by wid", wid, map[string]any{"individual": map[string]any{"externalId": "p2", "firstName": "Quinn", "dob": "1999-01-01"}},
			ctObj{"__typename": "Individual", "externalId": "p2", "firstName": "Quinn", "dob": "1999-01-01"}},
		{"a will of a client named by wid", wid, map[string]any{"will": map[string]any{"externalId": "p-will", "legalName": "Will of Pat",
			"willType": "LAST_WILL_AND_TESTAMENT", "testators": []string{"p1"}, "executors": []string{"p2"}}},
			ctObj{"__typename": "Will", "testators": ctRefs("p1"), "executors": ctRefs("p2")}},
	} {
		// Sequential: later cards name earlier ones.
		t.Run("create "+tc.name, func(t *testing.T) {
			var got struct{ CreateClientContact ctObj }
			gw.post(t, create, map[string]any{"ref": tc.ref, "input": tc.input}).ok(t, &got)
			c := got.CreateClientContact
			ctMatch(t, "createClientContact", c, tc.want)
			id, _ := c["id"].(string)
			if id == "" {
				t.Fatalf("the new card has no id: %s", ctShow(c))
			}
			ids[c["externalId"].(string)] = id
			var back struct{ Client struct{ Contact ctObj } }
			gw.post(t, read, map[string]any{"ref": tc.ref, "id": id}).ok(t, &back)
			if !reflect.DeepEqual(back.Client.Contact, c) {
				t.Errorf("read back %s, want %s", ctShow(back.Client.Contact), ctShow(c))
			}
		})
	}

	for _, tc := range []struct {
		name, ref, card string
		patch           map[string]any
		want            ctObj
	}{
		{"a date of birth; the names stay", "CL-1001", "cl-kim", map[string]any{"individual": map[string]any{"dob": "2001-05-07"}},
			ctObj{"firstName": "Kim", "lastName": "Bell", "dob": "2001-05-07", "displayName": "Kim Bell"}},
		{"a name; the date of birth stays", "CL-1001", "cl-kim", map[string]any{"individual": map[string]any{"middleName": "Jo"}},
			ctObj{"firstName": "Kim", "middleName": "Jo", "lastName": "Bell", "dob": "2001-05-07", "displayName": "Kim Jo Bell"}},
		{"an empty list clears the trustees", "CL-1001", "cl-trust", map[string]any{"trust": map[string]any{"initialTrustees": []string{}}},
			ctObj{"legalName": "Bell Family Trust", "trustCreator": ctStrings("cl-marcus", "cl-dana"), "initialTrustee": []any{}, "initialTrustees": []any{}}},
		{"a charity's notes", "CL-1001", "cl-charity", map[string]any{"charity": map[string]any{"notes": "Scholarships."}},
			ctObj{"legalName": "Bell Fund", "city": "Portland", "notes": "Scholarships."}},
		{"an empty list clears the executors, by wid", wid, "p-will", map[string]any{"will": map[string]any{"executors": []string{}}},
			ctObj{"testator": ctStrings("p1"), "executor": []any{}, "executors": []any{}}},
		{"the demo client's own card", "CL-1001", "", map[string]any{"individual": map[string]any{"lastName": "Bell-Ortiz"}},
			ctObj{"externalId": "cl-dana", "firstName": "Dana", "lastName": "Bell-Ortiz", "dob": "1970-09-13"}},
	} {
		t.Run("update "+tc.name, func(t *testing.T) {
			id := ids[tc.card]
			if tc.card == "" {
				id = clCardID(t, gw, "CL-1001", "cl-dana")
			}
			var got struct{ UpdateClientContact ctObj }
			gw.post(t, update, map[string]any{"ref": tc.ref, "id": id, "input": tc.patch}).ok(t, &got)
			ctMatch(t, "updateClientContact", got.UpdateClientContact, tc.want)
			var back struct{ Client struct{ Contact ctObj } }
			gw.post(t, read, map[string]any{"ref": tc.ref, "id": id}).ok(t, &back)
			ctMatch(t, "read back", back.Client.Contact, tc.want)
		})
	}
}

// clCardID finds the id of a client's card by its external id.
func clCardID(t testing.TB, gw *testGateway, ref, externalID string) string {
	t.Helper()
	var got struct{ Client *clClient }
	gw.post(t, clClientQuery, map[string]any{"ref": ref}).ok(t, &got)
	if got.Client != nil {
		for _, c := range got.Client.Contacts {
			if c["externalId"] == externalID {
				return c["contactId"].(string)
			}
		}
	}
	t.Fatalf("client %s has no card %s", ref, externalID)
	return ""
}

func TestClientContactInputIsCheckedWithoutCallingTheUpstream(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	marcus := clCardID(t, gw, "CL-1001", "cl-marcus")
	const create = `mutation($input: ContactInput!) { createClientContact(ref: "CL-1001", input: $input) { __typename } }`
	const update = `mutation($id: ID!, $input: ContactPatch!) { updateClientContact(ref: "CL-1001", id: $id, input: $input) { __typename } }`
	for _, tc := range []struct {
		name, query    string
		input          map[string]any
		field, message string
	}{
		{"a date of birth that does not exist", create, map[string]any{"individual": map[string]any{"externalId": "x", "dob": "2001-02-30"}},
			"input.individual.dob", "input.individual.dob must be a date (YYYY-MM-DD)"},
		{"a date of birth with a time", create, map[string]any{"individual": map[string]any{"externalId": "x", "dob": "2001-02-03T00:00:00Z"}},
			"input.individual.dob", "input.individual.dob must be a date (YYYY-MM-DD)"},
		{"a blank last name", create, map[string]any{"individual": map[string]any{"externalId": "x", "lastName": " "}},
			"input.individual.lastName", "input.individual.lastName must not be blank"},
		{"a will naming itself", create, map[string]any{"will": map[string]any{"externalId": "w", "legalName": "W", "willType": "POUR_OVER_WILL", "testators": []string{"w"}}},
			"input.will.testators", "input.will.testators must not reference the contact itself"},
		{"an update with a bad date of birth", update, map[string]any{"individual": map[string]any{"dob": "1968-4-22"}},
			"input.individual.dob", "input.individual.dob must be a date (YYYY-MM-DD)"},
		{"an update with nothing to change", update, map[string]any{"individual": map[string]any{}},
			"input.individual", "input.individual: At least one mutable field must be provided"},
		// @oneOf is GraphQL's rule, the same for every mutation that takes the input: see
		// TestContactInputOneOfIsEnforcedForLiteralsAndVariables.
	} {
		// Sequential: each checks that it alone made no upstream request.
		t.Run(tc.name, func(t *testing.T) {
			up.ResetRequests()
			e := gw.post(t, tc.query, map[string]any{"id": marcus, "input": tc.input}).wantError(t, "BAD_USER_INPUT", tc.message)
			ctWantField(t, e, tc.field)
			if reqs := up.Requests(); len(reqs) > 0 {
				t.Errorf("the gateway called the upstream: %v", reqs)
			}
		})
	}
}

func TestClientContactWritesTheUpstreamRefuses(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	marcus := clCardID(t, gw, "CL-1001", "cl-marcus")
	will := clCardID(t, gw, "CL-1001", "cl-will-marcus")
	const create = `mutation($ref: ID!, $input: ContactInput!) { createClientContact(ref: $ref, input: $input) { __typename } }`
	const update = `mutation($ref: ID!, $id: ID!, $input: ContactPatch!) { updateClientContact(ref: $ref, id: $id, input: $input) { __typename } }`
	for _, tc := range []struct {
		name, query   string
		vars          map[string]any
		code, message string
	}{
		{"a taken external id", create, map[string]any{"ref": "CL-1001", "input": map[string]any{"individual": map[string]any{"externalId": "cl-marcus"}}},
			"CONFLICT", "A contact card with this externalId already exists"},
		{"a testator who does not exist", create, map[string]any{"ref": "CL-1001", "input": map[string]any{"will": map[string]any{"externalId": "cl-w2",
			"legalName": "W", "willType": "POUR_OVER_WILL", "testators": []string{"ghost"}}}},
			"BAD_USER_INPUT", `input.will.testators references contact "ghost", which does not exist in this client`},
		{"a top account's card named from a client", create, map[string]any{"ref": "CL-1001", "input": map[string]any{"trust": map[string]any{"externalId": "cl-t2",
			"legalName": "T", "trustCreators": []string{"hw-eleanor"}}}},
			"BAD_USER_INPUT", `input.trust.trustCreators references contact "hw-eleanor", which does not exist in this client`},
		{"an update naming an executor who does not exist", update, map[string]any{"ref": "CL-1001", "id": will, "input": map[string]any{"will": map[string]any{"executors": []string{"ghost"}}}},
			"BAD_USER_INPUT", `input.will.executors references contact "ghost", which does not exist in this client`},
		{"a will's field sent to a person", update, map[string]any{"ref": "CL-1001", "id": marcus, "input": map[string]any{"will": map[string]any{"willCreationDate": "2020-01-01"}}},
			"BAD_USER_INPUT", "input.will.willCreationDate is only supported for Will contact cards"},
		{"a card of an unknown client", create, map[string]any{"ref": "CL-9999", "input": map[string]any{"individual": map[string]any{"externalId": "x"}}},
			"NOT_FOUND", "Client not found"},
		{"an update of an unknown client", update, map[string]any{"ref": "CL-9999", "id": marcus, "input": map[string]any{"individual": map[string]any{"firstName": "X"}}},
			"NOT_FOUND", "Client not found"},
		{"an update of an unknown card", update, map[string]any{"ref": "CL-1001", "id": "no-such-id", "input": map[string]any{"individual": map[string]any{"firstName": "X"}}},
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
}

// The specification's v1 contacts answer "409 on add: external_id exists, on update: conflicts
// with an existing contact". ContactPatch has no externalId, so the gateway never sends the body
// that the sandbox answers so; the sandbox's own answer to it is replayed to the gateway's
// update instead, which must reach the caller as CONFLICT, in the schema's words, with the
// service's own in extensions.upstream, and not be retried.
func TestUpdateClientContactConflictingWithAnotherCardIsConflict(t *testing.T) {
	t.Parallel()
	sb := newUpstream(t, true)
	gw := newGateway(t, sb, nil)
	marcus := clCardID(t, gw, "CL-1001", "cl-marcus")
	req := jsonRequest(http.MethodPut, sb.URL+"/v1/clients/CL-1001/contacts/"+marcus, map[string]any{"external_id": "cl-will-marcus"})
	user, pass, _ := strings.Cut(upstreamBasic, ":")
	req.SetBasicAuth(user, pass)
	status, said := doJSON(t, req)
	if status != http.StatusConflict || said["message"] != "Contact card with this external id already exists" {
		t.Fatalf("the sandbox answered a v1 update taking cl-will-marcus's external id with %d %v, want 409", status, said)
	}

	body, _ := json.Marshal(said)
	up := &upstream{sandboxtest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPut {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"Not Found"}`))
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))}
	r := newGateway(t, up, nil).post(t, `mutation($id: ID!) { updateClientContact(ref: "CL-1001", id: $id, input: {individual: {firstName: "Marc"}}) { __typename } }`,
		map[string]any{"id": marcus})
	e := r.wantError(t, "CONFLICT", "A contact card with this externalId already exists")
	wantUpstream(t, e, http.StatusConflict, "Contact card with this external id already exists")
	if string(r.Data) != "null" {
		t.Errorf("data %s, want null", r.Data)
	}
	if reqs := up.Requests(); len(reqs) != 1 || !strings.HasPrefix(reqs[0], "PUT /v1/clients/CL-1001/contacts/") {
		t.Errorf("the gateway asked the service %v, want one PUT", reqs)
	}
}

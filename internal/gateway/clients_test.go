package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

const addClientMutation = `mutation($input: ClientInput!) {
  addClient(input: $input) {
    ref added
    details { wid id primaryId primaryContactId spouseContactId firstName lastName maritalStatus selectedPrimaryDocument existingEstatePlan address { city zip } }
    contacts { ... on ContactCard { externalId displayName } }
  }
}`

type addedClient struct {
	AddClient struct {
		Ref     string
		Added   bool
		Details struct {
			Wid, ID, PrimaryID, PrimaryContactID   string
			SpouseContactID                        *string
			FirstName, LastName                    string
			MaritalStatus, SelectedPrimaryDocument *string
			ExistingEstatePlan                     *string
			Address                                *struct{ City, Zip *string }
		}
		Contacts []struct{ ExternalID, DisplayName string }
	}
}

// addClient adds (then updates) a client, whose cards client(ref:) then reads; deleteClient
// revokes access, and adding the id again restores it with the cards.
func TestAddClientAndDeleteClientRoundTrip(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	input := map[string]any{
		"id": "C-77", "primaryId": "P-77", "firstName": "Nadia", "lastName": "Osei", "maritalStatus": "MARRIED",
		"spouseFirstName": "Kwame", "spouseLastName": "Osei", "spouseId": "P-78",
		"address": map[string]any{"city": "Denver", "zip": "80202"}, "existingEstatePlan": "NO_ESTATE_PLAN",
		"selectedPrimaryDocument": "ONE_JOINT_REVOCABLE_TRUST",
	}
	var got addedClient
	gw.post(t, addClientMutation, map[string]any{"input": input}).ok(t, &got)
	c := got.AddClient
	if !c.Added || c.Ref != "C-77" || c.Details.ID != "C-77" || c.Details.PrimaryID != "P-77" || c.Details.PrimaryContactID == "" ||
		c.Details.SpouseContactID == nil || *c.Details.MaritalStatus != "MARRIED" || *c.Details.SelectedPrimaryDocument != "ONE_JOINT_REVOCABLE_TRUST" ||
		c.Details.Address == nil || *c.Details.Address.Zip != "80202" {
		t.Fatalf("addClient answered %+v", c)
	}
	if cards := strings.Join(externalIDs(c.Contacts), ","); cards != "P-77,P-78" {
		t.Fatalf("the new client's cards are %s, want the primary and spouse cards P-77,P-78", cards)
	}

	input["firstName"] = "Nadia Ama"
	gw.post(t, addClientMutation, map[string]any{"input": input}).ok(t, &got)
	if got.AddClient.Added || got.AddClient.Details.FirstName != "Nadia Ama" || got.AddClient.Details.Wid != c.Details.Wid {
		t.Fatalf("the same id again: %+v, want the client updated", got.AddClient)
	}

	var deleted struct {
		DeleteClient struct {
			ExternalID string
			Deleted    bool
		}
	}
	gw.post(t, `mutation { deleteClient(externalId: "C-77") { externalId deleted } }`, nil).ok(t, &deleted)
	if !deleted.DeleteClient.Deleted {
		t.Fatalf("deleteClient answered %+v", deleted)
	}
	var read struct{ Client *struct{ Ref string } }
	gw.post(t, `{ client(ref: "C-77") { ref } }`, nil).ok(t, &read)
	if read.Client != nil {
		t.Fatalf("a deleted client still reads: %+v", read.Client)
	}
	gw.post(t, `mutation { deleteClient(externalId: "C-77") { deleted } }`, nil).wantError(t, "NOT_FOUND", "Client not found")

	gw.post(t, addClientMutation, map[string]any{"input": input}).ok(t, &got)
	if !got.AddClient.Added || got.AddClient.Details.Wid != c.Details.Wid || len(got.AddClient.Contacts) != 2 {
		t.Fatalf("adding the id again: %+v, want it added with its wid and cards", got.AddClient)
	}
}

func externalIDs(cards []struct{ ExternalID, DisplayName string }) []string {
	var out []string
	for _, c := range cards {
		out = append(out, c.ExternalID)
	}
	return out
}

// Each primary document, spelled with spaces by the service, comes back as the enum it went in as.
func TestAddClientRoundTripsEveryPrimaryDocument(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), nil)
	for i, doc := range []string{"ONE_JOINT_REVOCABLE_TRUST", "ONE_INDIVIDUAL_REVOCABLE_TRUST", "TWO_INDIVIDUAL_REVOCABLE_TRUSTS", "ONE_LAST_WILL_AND_TESTAMENT", "TWO_LAST_WILL_AND_TESTAMENTS"} {
		var got addedClient
		gw.post(t, addClientMutation, map[string]any{"input": map[string]any{
			"id": "C-DOC-" + string(rune('A'+i)), "firstName": "A", "lastName": "B", "selectedPrimaryDocument": doc,
		}}).ok(t, &got)
		if d := got.AddClient.Details.SelectedPrimaryDocument; d == nil || *d != doc {
			t.Errorf("%s came back as %v", doc, d)
		}
	}
}

// A bad input is refused by the gateway, naming the field as the caller wrote it, before any
// request to the service.
func TestAddClientRefusesBadInputWithoutAsking(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	long := strings.Repeat("x", 256)
	for _, tc := range []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"a first name over 255 characters", map[string]any{"id": "C-1", "firstName": long, "lastName": "B"}, "input.firstName"},
		{"a zip over 255 characters", map[string]any{"id": "C-1", "firstName": "A", "lastName": "B", "address": map[string]any{"zip": long}}, "input.address.zip"},
		{"an id over 255 characters", map[string]any{"id": long, "firstName": "A", "lastName": "B"}, "input.id"},
		{"a blank last name", map[string]any{"id": "C-1", "firstName": "A", "lastName": ""}, "input.lastName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.ResetRequests()
			r := gw.post(t, addClientMutation, map[string]any{"input": tc.input})
			if len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, tc.want) {
				t.Fatalf("got %+v, want BAD_USER_INPUT naming %s", r.Errors, tc.want)
			}
			if reqs := up.Requests(); len(reqs) > 0 {
				t.Fatalf("the gateway asked the service %v", reqs)
			}
		})
	}
}

// Every marital status and estate plan goes to the service in its spelling and comes back as the
// enum it went in as; a value the enum lacks is refused before any request.
func TestAddClientRoundTripsEveryMaritalStatusAndEstatePlan(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	statuses := []string{"SINGLE", "MARRIED", "DOMESTIC_PARTNERSHIP", "CIVIL_UNION", "ENGAGED", "OTHER_COMMITTED_RELATIONSHIP", "WIDOWED"}
	plans := []string{"INDIVIDUAL_TRUST", "JOINT_TRUST", "LAST_WILL_AND_TESTAMENT", "NO_ESTATE_PLAN", "UNKNOWN"}
	for i, status := range statuses {
		plan := plans[i%len(plans)]
		var got addedClient
		gw.post(t, addClientMutation, map[string]any{"input": map[string]any{
			"id": "C-MS-" + status, "firstName": "A", "lastName": "B", "maritalStatus": status, "existingEstatePlan": plan,
		}}).ok(t, &got)
		d := got.AddClient.Details
		if d.MaritalStatus == nil || *d.MaritalStatus != status || d.ExistingEstatePlan == nil || *d.ExistingEstatePlan != plan {
			t.Errorf("%s and %s came back as %v and %v", status, plan, d.MaritalStatus, d.ExistingEstatePlan)
		}
	}

	up.ResetRequests()
	// The service's own spelling is not a GraphQL enum value.
	r := gw.post(t, addClientMutation, map[string]any{"input": map[string]any{
		"id": "C-X", "firstName": "A", "lastName": "B", "maritalStatus": "Married",
	}})
	if len(r.Errors) != 1 || r.Errors[0].Extensions["code"] != "BAD_USER_INPUT" || !strings.Contains(r.Errors[0].Message, `"MARRIED"`) {
		t.Fatalf("maritalStatus: \"Married\" gave %+v, want BAD_USER_INPUT suggesting MARRIED", r.Errors)
	}
	if reqs := up.Requests(); len(reqs) > 0 {
		t.Fatalf("the gateway asked the service %v", reqs)
	}
}

// Deleting a client the service never had is NOT_FOUND, in the service's words.
func TestDeleteClientOfAnUnknownClientIsNotFound(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), nil)
	gw.post(t, `mutation { deleteClient(externalId: "C-NEVER") { deleted } }`, nil).wantError(t, "NOT_FOUND", "Client not found")
}

// The service's refusals of addClient and deleteClient reach the caller with the code the rest
// of the gateway uses for them, and the service's 4xx message kept.
func TestClientWritesMapTheServiceRefusals(t *testing.T) {
	t.Parallel()
	const add = `mutation { addClient(input: {id: "C-1", firstName: "A", lastName: "B"}) { ref } }`
	const del = `mutation { deleteClient(externalId: "C-1") { deleted } }`
	for _, tc := range []struct {
		name    string
		query   string
		status  int
		body    string
		code    string
		message string
	}{
		{"a 400 is BAD_USER_INPUT with the service's message", add, http.StatusBadRequest, `{"message":"Invalid email address"}`, "BAD_USER_INPUT", "Invalid email address"},
		{"a 403 is FORBIDDEN", add, http.StatusForbidden, `{"message":"Access Denied"}`, "FORBIDDEN", "Access Denied"},
		{"a 409 is CONFLICT", add, http.StatusConflict, `{"message":"Client is being updated"}`, "CONFLICT", "Client is being updated"},
		{"a 404 on delete is NOT_FOUND", del, http.StatusNotFound, `{"message":"Client not found"}`, "NOT_FOUND", "Client not found"},
		{"a 400 on delete is BAD_USER_INPUT", del, http.StatusBadRequest, `{"message":"Invalid external id"}`, "BAD_USER_INPUT", "Invalid external id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := &upstream{sandboxtest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))}
			gw := newGateway(t, up, nil)
			gw.post(t, tc.query, nil).wantError(t, tc.code, tc.message)
			// One request: a refusal is not retried.
			if reqs := up.Requests(); len(reqs) != 1 {
				t.Fatalf("the gateway asked the service %v, want one request", reqs)
			}
		})
	}
}

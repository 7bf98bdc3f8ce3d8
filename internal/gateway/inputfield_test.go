package gateway_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// docs/errors.md, "Naming the field at fault": every mutation names the value at fault by its
// path in the field's arguments (input.firstName, input.individual.firstName, wid), in
// extensions.field and first in the message; a value that cannot be coerced while the operation
// runs is named the same way, in the words validation uses for a variable's value. Each case
// breaks one rule of the specification, quoted in its name.
func TestEveryMutationNamesTheFieldAtFaultByItsArgumentPath(t *testing.T) {
	t.Parallel()
	up := startUpstream(t, sandbox.Options{Seed: 11, ReferralAPIKey: referralKey, ReferralSecret: referralSecret})
	gw := newGateway(t, up, referralEnv(up, referralSecret))
	wid := ctWIDOf(t, gw, "HARTWELL-001")
	cards, _ := ctCards(t, gw, wid)
	eleanor, _ := cards["hw-eleanor"]["id"].(string)
	marcus := clCardID(t, gw, "CL-1001", "cl-marcus")
	_, vaultID, _ := demoDocument(t, gw)
	long := strings.Repeat("x", 256)

	const (
		createTopAccount    = `mutation($input: CreateTopAccountInput!) { createTopAccount(input: $input) { wid } }`
		updateTopAccount    = `mutation($wid: ID!, $input: UpdateTopAccountInput!) { updateTopAccount(wid: $wid, input: $input) { wid } }`
		addClient           = `mutation($input: ClientInput!) { addClient(input: $input) { ref } }`
		deleteClient        = `mutation($id: ID!) { deleteClient(externalId: $id) { deleted } }`
		createContact       = `mutation($wid: ID!, $input: ContactInput!) { createContact(wid: $wid, input: $input) { __typename } }`
		updateContact       = `mutation($wid: ID!, $id: ID!, $input: ContactPatch!) { updateContact(wid: $wid, id: $id, input: $input) { __typename } }`
		createClientContact = `mutation($input: ContactInput!) { createClientContact(ref: "CL-1001", input: $input) { __typename } }`
		updateClientContact = `mutation($id: ID!, $input: ContactPatch!) { updateClientContact(ref: "CL-1001", id: $id, input: $input) { __typename } }`
		createDocument      = `mutation($wid: ID!, $input: CreateDocumentInput!) { createDocument(wid: $wid, input: $input) { uploadUri } }`
		updateDocument      = `mutation($wid: ID!, $id: ID!, $input: UpdateDocumentInput!) { updateDocument(wid: $wid, vaultId: $id, input: $input) { uploadUri } }`
		deleteDocument      = `mutation($wid: ID!, $id: ID!) { deleteDocument(wid: $wid, vaultId: $id) { vaultId } }`
		referClient         = `mutation($input: ReferralInput!) { referClient(partnerId: "demo-partner", input: $input) { url } }`
	)
	client := func(change map[string]any) map[string]any {
		in := map[string]any{"id": "C-FIELD", "firstName": "Ada", "lastName": "Lovelace"}
		for k, v := range change {
			in[k] = v
		}
		return map[string]any{"input": in}
	}
	document := func(change map[string]any) map[string]any {
		in := map[string]any{"name": "Statement", "extension": "pdf", "category": "TAXES", "subCategory": "W2"}
		for k, v := range change {
			in[k] = v
		}
		return map[string]any{"wid": wid, "input": in}
	}
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		field       string
		coerced     bool // refused while the argument was coerced, in validation's words
	}{
		{"createTopAccount: external_id is a string, max 50", createTopAccount,
			map[string]any{"input": map[string]any{"externalId": long, "name": "N"}}, "input.externalId", false},
		{"updateTopAccount: name is a string, max 255", updateTopAccount,
			map[string]any{"wid": wid, "input": map[string]any{"name": long}}, "input.name", false},
		{"updateTopAccount: Missing wid parameter", updateTopAccount,
			map[string]any{"wid": " ", "input": map[string]any{"name": "N"}}, "wid", false},
		{"addClient: first_name is a string, max 255", addClient, client(map[string]any{"firstName": long}), "input.firstName", false},
		{"addClient: address line1, line2, city, state, zip; each string max 255", addClient,
			client(map[string]any{"address": map[string]any{"zip": long}}), "input.address.zip", false},
		{"addClient: subscription_start_date is an ISO 8601 date-time", addClient,
			client(map[string]any{"subscriptionStartDate": "last Tuesday"}), "input.subscriptionStartDate", true},
		{"addClient: marital_status is an enum", addClient, client(map[string]any{"maritalStatus": "married"}), "input.maritalStatus", true},
		{"deleteClient: a blank external id", deleteClient, map[string]any{"id": " "}, "externalId", false},
		{"createContact: optional string fields must not be blank or whitespace-only", createContact,
			map[string]any{"wid": wid, "input": map[string]any{"individual": map[string]any{"externalId": "n1", "firstName": " "}}},
			"input.individual.firstName", false},
		{"createContact: governing_state must be a valid two-letter US state abbreviation", createContact,
			map[string]any{"wid": wid, "input": map[string]any{"trust": map[string]any{"externalId": "n1", "legalName": "T", "governingState": "Texas"}}},
			"input.trust.governingState", false},
		{"createContact: a relationship reference that does not exist in the top account", createContact,
			map[string]any{"wid": wid, "input": map[string]any{"trust": map[string]any{"externalId": "n1", "legalName": "T", "trustCreators": []any{"ghost"}}}},
			"input.trust.trustCreators", false},
		{"updateContact: optional string fields must not be blank or whitespace-only", updateContact,
			map[string]any{"wid": wid, "id": eleanor, "input": map[string]any{"individual": map[string]any{"lastName": " "}}},
			"input.individual.lastName", false},
		{"updateContact: Missing id parameter", updateContact,
			map[string]any{"wid": wid, "id": " ", "input": map[string]any{"individual": map[string]any{"firstName": "X"}}}, "id", false},
		{"createClientContact: dob must be a valid ISO date in YYYY-MM-DD", createClientContact,
			map[string]any{"input": map[string]any{"individual": map[string]any{"externalId": "n1", "dob": "1990-02-30"}}},
			"input.individual.dob", false},
		{"updateClientContact: dob must be a valid ISO date in YYYY-MM-DD", updateClientContact,
			map[string]any{"id": marcus, "input": map[string]any{"individual": map[string]any{"dob": "22/04/1968"}}},
			"input.individual.dob", false},
		{"createDocument: name (required, max 200)", createDocument, document(map[string]any{"name": long}), "input.name", false},
		{"createDocument: sub_category of its category", createDocument, document(map[string]any{"subCategory": "PASSPORT"}), "input.subCategory", false},
		{"createDocument: tags of the top account", createDocument, document(map[string]any{"tags": []any{"no-such-tag"}}), "input.tags", false},
		{"createDocument: category is one of the taxonomy's", createDocument, document(map[string]any{"category": "taxes"}), "input.category", true},
		{"updateDocument: description (optional, max 2000)", updateDocument,
			map[string]any{"wid": wid, "id": vaultID, "input": map[string]any{"description": strings.Repeat("d", 2001)}}, "input.description", false},
		{"deleteDocument: a blank vault_id", deleteDocument, map[string]any{"wid": wid, "id": " "}, "vaultId", false},
		{"referClient: postal_code string max 10", referClient,
			map[string]any{"input": referralInput(map[string]any{"address": map[string]any{"line1": "1 Main St", "city": "Springfield", "state": "IL", "zip": "62701-00000"}})},
			"input.user.address.zip", false},
		{"referClient: user with email, firstName and lastName", referClient,
			map[string]any{"input": referralInput(map[string]any{"firstName": " "})}, "input.user.firstName", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := gw.post(t, tc.query, tc.vars).wantError(t, "BAD_USER_INPUT", "")
			if e.Extensions["field"] != tc.field {
				t.Errorf("extensions.field %v, want %q (message %q)", e.Extensions["field"], tc.field, e.Message)
			}
			arg, _, _ := strings.Cut(tc.field, ".")
			want := []string{tc.field + " ", tc.field + ": "}
			if tc.coerced {
				want = []string{`Argument "` + arg + `" got an invalid value at "` + tc.field + `"; `}
			}
			if !slices.ContainsFunc(want, func(p string) bool { return strings.HasPrefix(e.Message, p) }) {
				t.Errorf("message %q, want it to start with %q", e.Message, want[0])
			}
		})
	}
}

package advisor_test

import (
	"testing"

	"github.com/advisorhq/gateway/internal/advisor"
)

func TestSchemaMessageSpeaksTheSchemasNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ field, in, want string }{
		{"trust_creation_date", "trust_creation_date must be a valid date in YYYY-MM-DD format", "trustCreationDate must be a date (YYYY-MM-DD)"},
		{"", "Container not found", "Top account not found"},
		{"", "Container with this externalId already exists", "A top account with this externalId already exists"},
		{"", "Contact card with this external id already exists", "A contact card with this externalId already exists"},
		{"", "Vault doesn't exist", "Document not found"},
		{"ownership[0].subowners", "ownership[0].subowners must name at least one contact", "ownership[0].owners must name at least one contact"},
		{"current_parties.parties[0].contact_id", "current_parties.parties[0].contact_id must be a contact external_id",
			"currentParties.parties[0].party must be a contact card's externalId"},
		{"executor", "executor must be an array of contact external_ids", "executors must be a list of contact card externalIds"},
		{"trust_creator", `trust_creator references contact "first_name", which does not exist in this top account`,
			`trustCreators references contact "first_name", which does not exist in this top account`},
		{"dob", "dob is only supported on the client-scoped (v1) contact endpoints", "dob is only for cards of a client (createClientContact, updateClientContact)"},
		{"name", "Bad Request", "name must not be blank"},
		{"external_id", "Missing required parameters", "externalId must not be blank"},
		{"", "Missing required parameters", "Missing required parameters"},
		{"", "At least one of name or external_id must be provided", "At least one of name or externalId must be provided"},
		// What follows a colon lists values, which stay as they are.
		{"tags", "Invalid tags: legal_name, x", "Invalid tags: legal_name, x"},
		{"sub_category", "Invalid sub-category", "Invalid subCategory"},
		{"", "Access Denied", "Access Denied"},
		// The v1 paths' query parameters are the operations' arguments.
		{"", "advisor_id is required when the API user can access multiple advisors", "advisorId is required when the API user can access multiple advisors"},
		{"", "team_id is required when the API user can access multiple advisor teams", "teamId is required when the API user can access multiple advisor teams"},
	} {
		if got := advisor.SchemaMessage(tc.field, tc.in); got != tc.want {
			t.Errorf("SchemaMessage(%q, %q) = %q, want %q", tc.field, tc.in, got, tc.want)
		}
	}
}

func TestSchemaPathFollowsTheTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		known    bool
	}{
		{"trust_creation_date", "trustCreationDate", true},
		{"ownership[0].owner_id", "ownership[0].owners", true},
		{"current_parties.parties[12].fraction.denominator", "currentParties.parties[12].fraction.denominator", true},
		{"testator", "testators", true},
		{"some_new_field", "someNewField", false},
		{"Invalid", "Invalid", false},
		{"", "", false},
	} {
		got, known := advisor.SpecField(tc.in)
		if got != tc.want || known != tc.known {
			t.Errorf("SpecField(%q) = %q, %v, want %q, %v", tc.in, got, known, tc.want, tc.known)
		}
	}
}

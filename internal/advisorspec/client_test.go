package advisorspec_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// The Clients file of bulk-referral-session-sdk.md, "Clients file (JSONL, one client per line)",
// row by row. A row is also the body of Add Client, as the project decides where the
// specification says "not shown" (docs/sandbox.md): "POST {base_url}/v1/clients (body as one
// Clients-file row)".

// clientRow is a valid row with every field, changed by changes; a nil value removes the key.
func clientRow(changes map[string]any) string {
	row := map[string]any{
		"id": "CL-1", "primary_id": "P-1", "email": "ana@example.com", "first_name": "Ana", "last_name": "Silva",
		"send_invitation_email": true, "subscription_start_date": "2024-01-15T09:30:00Z", "marital_status": "Married",
		"spouse_first_name": "Rui", "spouse_last_name": "Silva", "spouse_id": "P-2",
		"address":      map[string]any{"line1": "1 Main St", "line2": "Apt 2", "city": "Oakland", "state": "CA", "zip": "94601"},
		"has_children": true, "has_pets": false, "own_property": true,
		"existing_estate_plan": "JointTrust", "selected_primary_document": "One Joint Revocable Trust",
	}
	for k, v := range changes {
		if v == nil {
			delete(row, k)
			continue
		}
		row[k] = v
	}
	data, err := json.Marshal(row)
	if err != nil {
		panic(err)
	}
	return string(data)
}

func TestParseClientRowReadsEveryFieldOfTheClientsTable(t *testing.T) {
	row, err := advisorspec.ParseClientRow([]byte(clientRow(nil)))
	if err != nil {
		t.Fatalf("got %+v, want no error", err)
	}
	s := func(v string) *string { return &v }
	b := func(v bool) *bool { return &v }
	start := time.Date(2024, 1, 15, 9, 30, 0, 0, time.UTC)
	want := advisorspec.ClientRow{ID: "CL-1", ClientFields: advisorspec.ClientFields{
		PrimaryID: s("P-1"), Email: s("ana@example.com"), FirstName: "Ana", LastName: "Silva",
		SendInvitationEmail: b(true), SubscriptionStartDate: &start, MaritalStatus: s("Married"),
		SpouseFirstName: s("Rui"), SpouseLastName: s("Silva"), SpouseID: s("P-2"),
		Address:     &advisorspec.ClientAddress{Line1: s("1 Main St"), Line2: s("Apt 2"), City: s("Oakland"), State: s("CA"), Zip: s("94601")},
		HasChildren: b(true), HasPets: b(false), OwnProperty: b(true),
		ExistingEstatePlan: s("JointTrust"), SelectedPrimaryDocument: s("One Joint Revocable Trust"),
	}}
	if !reflect.DeepEqual(row, want) {
		t.Errorf("got %+v, want %+v", row, want)
	}
	// The row written back is a row again: the gateway forwards what it checked.
	data, jerr := json.Marshal(row)
	if jerr != nil {
		t.Fatal(jerr)
	}
	if again, err := advisorspec.ParseClientRow(data); err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("round trip: got %+v, %v; want %+v", again, err, want)
	}
}

func TestParseClientRowEnforcesTheClientsTable(t *testing.T) {
	long := strings.Repeat("é", 256) // characters, not bytes, are counted
	max := strings.Repeat("é", 255)
	for _, tc := range []struct {
		spec    string // the line of the specification the case checks
		row     string
		field   string // "" with message "": the row is valid
		message string
	}{
		// Required fields.
		{"id | string, max 255 | yes", clientRow(map[string]any{"id": nil}), "id", "id is required"},
		{"id | string, max 255 | yes", clientRow(map[string]any{"id": json.RawMessage("null")}), "id", "id is required"},
		{"id | string, max 255 | yes", clientRow(map[string]any{"id": "  "}), "id", "id must not be blank"},
		{"id | string, max 255 | yes", clientRow(map[string]any{"id": 1001}), "id", "id must be a string"},
		{"id | string, max 255 | yes", clientRow(map[string]any{"id": long}), "id", "id must be at most 255 characters"},
		{"id | string, max 255 | yes", clientRow(map[string]any{"id": max}), "", ""},
		{"first_name | string, max 255 | yes", clientRow(map[string]any{"first_name": nil}), "first_name", "first_name is required"},
		{"first_name | string, max 255 | yes", clientRow(map[string]any{"first_name": long}), "first_name", "first_name must be at most 255 characters"},
		{"last_name | string, max 255 | yes", clientRow(map[string]any{"last_name": nil}), "last_name", "last_name is required"},
		{"last_name | string, max 255 | yes", clientRow(map[string]any{"last_name": []string{"Silva"}}), "last_name", "last_name must be a string"},
		{"only id, first_name and last_name are required", `{"id":"CL-1","first_name":"Ana","last_name":"Silva"}`, "", ""},
		{"an empty body misses the first required field", ``, "id", "id is required"},
		// Optional strings.
		{"primary_id | string, max 255 | no", clientRow(map[string]any{"primary_id": long}), "primary_id", "primary_id must be at most 255 characters"},
		{"email | string, max 255 | no", clientRow(map[string]any{"email": long}), "email", "email must be at most 255 characters"},
		{"email | string, max 255 | no", clientRow(map[string]any{"email": false}), "email", "email must be a string"},
		{"email | string, max 255 | no (null is absent)", clientRow(map[string]any{"email": json.RawMessage("null")}), "", ""},
		{"spouse_first_name | string, max 255 | no", clientRow(map[string]any{"spouse_first_name": long}), "spouse_first_name", "spouse_first_name must be at most 255 characters"},
		{"spouse_last_name | string, max 255 | no", clientRow(map[string]any{"spouse_last_name": 7}), "spouse_last_name", "spouse_last_name must be a string"},
		{"spouse_id | string, max 255 | no", clientRow(map[string]any{"spouse_id": long}), "spouse_id", "spouse_id must be at most 255 characters"},
		// Booleans.
		{"send_invitation_email | boolean | no", clientRow(map[string]any{"send_invitation_email": "true"}), "send_invitation_email", "send_invitation_email must be a boolean"},
		{"has_children | boolean | no", clientRow(map[string]any{"has_children": 1}), "has_children", "has_children must be a boolean"},
		{"has_pets | boolean | no", clientRow(map[string]any{"has_pets": "no"}), "has_pets", "has_pets must be a boolean"},
		{"own_property | boolean | no", clientRow(map[string]any{"own_property": map[string]any{}}), "own_property", "own_property must be a boolean"},
		// The date.
		{"subscription_start_date | ISO 8601 date-time | no", clientRow(map[string]any{"subscription_start_date": "2024-01-15"}), "subscription_start_date",
			"subscription_start_date must be an ISO 8601 date-time with a time zone, such as 2024-01-15T09:30:00Z"},
		{"subscription_start_date | ISO 8601 date-time | no", clientRow(map[string]any{"subscription_start_date": "2024-01-15T09:30:00"}), "subscription_start_date",
			"subscription_start_date must be an ISO 8601 date-time with a time zone, such as 2024-01-15T09:30:00Z"},
		{"subscription_start_date | ISO 8601 date-time | no", clientRow(map[string]any{"subscription_start_date": "2024-02-30T09:30:00Z"}), "subscription_start_date",
			"subscription_start_date must be an ISO 8601 date-time with a time zone, such as 2024-01-15T09:30:00Z"},
		{"subscription_start_date | ISO 8601 date-time | no", clientRow(map[string]any{"subscription_start_date": 1705311000}), "subscription_start_date",
			"subscription_start_date must be an ISO 8601 date-time with a time zone, such as 2024-01-15T09:30:00Z"},
		{"subscription_start_date | ISO 8601 date-time | no (an offset is a zone)", clientRow(map[string]any{"subscription_start_date": "2024-01-15T09:30:00.5+02:00"}), "", ""},
		{"Must be in the past; if absent or in the future the current date is used (so a future date is no error)",
			clientRow(map[string]any{"subscription_start_date": "2999-01-01T00:00:00Z"}), "", ""},
		// Enumerations, spelled exactly.
		{"marital_status | enum: Single, Married, DomesticPartnership, ...", clientRow(map[string]any{"marital_status": "married"}), "marital_status",
			"marital_status must be one of Single, Married, DomesticPartnership, CivilUnion, Engaged, OtherCommittedRelationship, Widowed"},
		{"marital_status | enum", clientRow(map[string]any{"marital_status": 2}), "marital_status",
			"marital_status must be one of Single, Married, DomesticPartnership, CivilUnion, Engaged, OtherCommittedRelationship, Widowed"},
		{"marital_status | enum: ... Widowed", clientRow(map[string]any{"marital_status": "Widowed"}), "", ""},
		{"existing_estate_plan | enum: IndividualTrust, JointTrust, LastWillAndTestament, NoEstatePlan, Unknown", clientRow(map[string]any{"existing_estate_plan": "None"}),
			"existing_estate_plan", "existing_estate_plan must be one of IndividualTrust, JointTrust, LastWillAndTestament, NoEstatePlan, Unknown"},
		{"selected_primary_document | enum: One Joint Revocable Trust, ...", clientRow(map[string]any{"selected_primary_document": "OneJointRevocableTrust"}),
			"selected_primary_document", "selected_primary_document must be one of One Joint Revocable Trust, One Individual Revocable Trust, Two Individual Revocable Trusts, One Last Will and Testament, Two Last Will and Testaments"},
		{"selected_primary_document | enum: ..., Two Last Will and Testaments", clientRow(map[string]any{"selected_primary_document": "Two Last Will and Testaments"}), "", ""},
		// The address.
		{"address | object | no", clientRow(map[string]any{"address": "1 Main St"}), "address", "address must be an object"},
		{"address | object | no", clientRow(map[string]any{"address": []string{"1 Main St"}}), "address", "address must be an object"},
		{"address: line1, line2, city, state, zip", clientRow(map[string]any{"address": map[string]any{"street": "1 Main St"}}), "address.street", "address.street is not a field of an address"},
		{"address: each string max 255", clientRow(map[string]any{"address": map[string]any{"zip": long}}), "address.zip", "address.zip must be at most 255 characters"},
		{"address: each string", clientRow(map[string]any{"address": map[string]any{"zip": 94601}}), "address.zip", "address.zip must be a string"},
		{"address: each string", clientRow(map[string]any{"address": map[string]any{"line2": "   "}}), "address.line2", "address.line2 must not be blank"},
		{"address: each optional", clientRow(map[string]any{"address": map[string]any{}}), "", ""},
		{"address: state is a string max 255, not a state code", clientRow(map[string]any{"address": map[string]any{"state": "Bavaria"}}), "", ""},
		// Fields the table does not have.
		{"the Clients table has no other field", clientRow(map[string]any{"middle_name": "J"}), "middle_name", "middle_name is not a Clients file field"},
		{"the Clients table has no other field", clientRow(map[string]any{"client_id": "CL-1"}), "client_id", "client_id is not a Clients file field"},
		{"the client is named by id", clientRow(map[string]any{"external_id": "CL-1"}), "external_id", "external_id is not a Clients file field: the client is named by id"},
		{"the client is named by id", clientRow(map[string]any{"wid": "w"}), "wid", "wid is not a Clients file field: the client is named by id"},
		// Between fields.
		{"spouse_id: links the automatically created spouse contact", clientRow(map[string]any{"spouse_first_name": nil, "spouse_last_name": nil}),
			"spouse_id", "spouse_id requires spouse_first_name or spouse_last_name: it links the spouse contact they create"},
		{"spouse_id: links the automatically created spouse contact like primary_id", clientRow(map[string]any{"spouse_id": "P-1"}),
			"spouse_id", "spouse_id must differ from primary_id: each links its own contact"},
		{"spouse names without spouse_id: the spouse contact is created unlinked", clientRow(map[string]any{"spouse_id": nil}), "", ""},
		// The body's shape.
		{"JSONL, one JSON object per line", `["CL-1"]`, "", "Request body must be a JSON object"},
		{"JSONL, one JSON object per line", `{"id":"CL-1"`, "", "Request body must be a JSON object"},
		{"JSONL, one JSON object per line", `{"id":"CL-1","first_name":"A","last_name":"B"} {}`, "", "Request body must be a single JSON object"},
	} {
		t.Run(tc.spec+": "+tc.row, func(t *testing.T) {
			_, err := advisorspec.ParseClientRow([]byte(tc.row))
			switch {
			case tc.message == "" && err != nil:
				t.Errorf("got %q (field %q), want no error", err.Message, err.Field)
			case tc.message != "" && err == nil:
				t.Errorf("got no error, want field %q: %q", tc.field, tc.message)
			case tc.message != "" && (err.Field != tc.field || err.Message != tc.message):
				t.Errorf("got field %q: %q, want field %q: %q", err.Field, err.Message, tc.field, tc.message)
			}
		})
	}
}

// A bulk report lists every field at fault on a line, each with its field, in table order, and
// can name the line's id when it could be read.
func TestCheckClientRowReportsEveryFieldAtFaultInTableOrder(t *testing.T) {
	row, errs := advisorspec.CheckClientRow([]byte(`{"id":"CL-9","zzz":1,"has_pets":"yes","first_name":"","marital_status":"single","address":{"zip":1}}`))
	if row.ID != "CL-9" {
		t.Errorf("got id %q, want CL-9", row.ID)
	}
	var got []string
	for _, e := range errs {
		if e.Kind != advisorspec.Invalid {
			t.Errorf("%s: got kind %d, want Invalid", e.Field, e.Kind)
		}
		got = append(got, e.Field)
	}
	want := []string{"zzz", "last_name", "first_name", "marital_status", "address.zip", "has_pets"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got fields %v, want %v", got, want)
	}
}

func TestSubscriptionStartIsTheRowsDateUnlessAbsentOrInTheFuture(t *testing.T) {
	// "Must be in the past; if absent or in the future the current date is used."
	now := time.Date(2026, 11, 22, 9, 30, 0, 0, time.FixedZone("PST", -8*3600))
	past := time.Date(2024, 1, 15, 9, 30, 0, 0, time.UTC)
	future := now.Add(time.Minute).UTC()
	for _, tc := range []struct {
		name string
		date *time.Time
		want time.Time
	}{
		{"a past date is kept", &past, past},
		{"an absent date is now", nil, now.UTC()},
		{"a future date is now", &future, now.UTC()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := advisorspec.ClientRow{ClientFields: advisorspec.ClientFields{SubscriptionStartDate: tc.date}}
			if got := row.SubscriptionStart(now); !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Errorf("got %v, want %v in UTC", got, tc.want)
			}
		})
	}
}

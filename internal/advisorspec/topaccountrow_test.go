package advisorspec_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// The deprecated container model's People rows name "an existing top account or one in the
// Add/Update Top Accounts file"; the specification gives that file no fields, so a row is the
// Add Top Account body ("external_id (string max 50), name (string max 255), both required")
// keyed by id, as a Clients row is keyed by id.
func TestCheckTopAccountRowHoldsARowToAddTopAccountsLimits(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want advisorspec.TopAccountRow
		errs []string // "field: message"
	}{
		{"an id and a name", `{"id":"TA-1","name":"Okafor Family"}`, advisorspec.TopAccountRow{ID: "TA-1", Name: "Okafor Family"}, nil},
		{"an id of 50 characters and a name of 255", fmt.Sprintf(`{"id":%q,"name":%q}`, strings.Repeat("i", 50), strings.Repeat("é", 255)),
			advisorspec.TopAccountRow{ID: strings.Repeat("i", 50), Name: strings.Repeat("é", 255)}, nil},
		{"external_id (string max 50): an id of 51 characters", fmt.Sprintf(`{"id":%q,"name":"N"}`, strings.Repeat("i", 51)),
			advisorspec.TopAccountRow{Name: "N"}, []string{"id: id must be at most 50 characters"}},
		{"name (string max 255): a name of 256", fmt.Sprintf(`{"id":"TA-1","name":%q}`, strings.Repeat("n", 256)),
			advisorspec.TopAccountRow{ID: "TA-1"}, []string{"name: name must be at most 255 characters"}},
		{"both required", `{"name":null}`, advisorspec.TopAccountRow{}, []string{"id: id is required", "name: name is required"}},
		{"blank values and the wrong types", `{"id":" ","name":7}`, advisorspec.TopAccountRow{},
			[]string{"id: id must not be blank", "name: name must be a string"}},
		{"the REST API's names and unknown fields", `{"id":"TA-1","name":"N","external_id":"TA-1","wid":"w","owner":"x"}`,
			advisorspec.TopAccountRow{ID: "TA-1", Name: "N"}, []string{
				"external_id: external_id is not a Top Accounts file field: the top account is named by id",
				"owner: owner is not a Top Accounts file field",
				"wid: wid is not a Top Accounts file field: the top account is named by id",
			}},
		{"not an object", `["TA-1"]`, advisorspec.TopAccountRow{}, []string{": Request body must be a JSON object"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row, errs := advisorspec.CheckTopAccountRow([]byte(tc.line))
			var got []string
			for _, e := range errs {
				got = append(got, e.Field+": "+e.Message)
			}
			if !reflect.DeepEqual(row, tc.want) || !reflect.DeepEqual(got, tc.errs) {
				t.Errorf("got %+v %q, want %+v %q", row, got, tc.want, tc.errs)
			}
		})
	}
}

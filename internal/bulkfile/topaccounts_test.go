package bulkfile_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulkfile"
)

// In the deprecated model a People row's top_account_id names "an existing top account or one
// in the Add/Update Top Accounts file": the Top Accounts file is read first, and its valid rows
// are top accounts the People file may name; an invalid one is not, unless it exists.
func TestPeopleRowsNameTopAccountsOfTheTopAccountsFile(t *testing.T) {
	u := bulkfile.NewUpload(bulkfile.Options{Exists: func(k advisorspec.RefKind, id string) bool {
		return k == advisorspec.RefTopAccount && id == "TA-OLD"
	}})
	accounts := lines(
		`{"id":"TA-NEW","name":"Okafor Family"}`,
		`{"id":"TA-BAD"}`,
		`{"id":"TA-NEW","name":"Again"}`,
		`{"id":"TA-OLD","name":"Renamed"}`)
	rep, err := u.Validate(context.Background(), strings.NewReader(accounts), bulkfile.TopAccounts(), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantAccounts := []bulkfile.LineError{
		{Line: 2, ID: "TA-BAD", Field: "name", Message: "name is required"},
		{Line: 3, ID: "TA-NEW", Field: "id", Message: `id "TA-NEW" is already used on line 1`},
	}
	if rep.ValidRows != 2 || !slices.Equal(rep.Errors, wantAccounts) {
		t.Fatalf("the Top Accounts file: %d valid, errors %+v; want 2 valid, %+v", rep.ValidRows, rep.Errors, wantAccounts)
	}
	people := lines(
		`{"id":"p1","top_account_id":"TA-NEW","type":"Individual","first_name":"A","last_name":"L"}`,
		`{"id":"p2","top_account_id":"TA-OLD","type":"Individual","first_name":"A","last_name":"L"}`,
		`{"id":"p3","top_account_id":"TA-BAD","type":"Individual","first_name":"A","last_name":"L"}`,
		`{"id":"p4","top_account_id":"TA-NONE","type":"Individual","first_name":"A","last_name":"L"}`)
	rep, err = u.Validate(context.Background(), strings.NewReader(people), bulkfile.People(advisorspec.TopAccountModel), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantPeople := []bulkfile.LineError{
		{Line: 3, ID: "p3", Field: "top_account_id", Message: `top_account_id "TA-BAD" names no top account of the Top Accounts file and no existing one`},
		{Line: 4, ID: "p4", Field: "top_account_id", Message: `top_account_id "TA-NONE" names no top account of the Top Accounts file and no existing one`},
	}
	if rep.ValidRows != 2 || !slices.Equal(rep.Errors, wantPeople) {
		t.Errorf("the People file: %d valid, errors %+v; want 2 valid, %+v", rep.ValidRows, rep.Errors, wantPeople)
	}
}

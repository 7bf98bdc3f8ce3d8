package bulkfile_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulkfile"
)

// The Clients file is checked with the same rules as Add Client (advisorspec.CheckClientRow),
// every broken rule of a line reported, and its ids are client ids.
func TestValidateClientsFile(t *testing.T) {
	const (
		c1 = `{"id":"c1","primary_id":"p1","first_name":"Ada","last_name":"Lovelace","marital_status":"Married","spouse_first_name":"William","spouse_id":"p2"}`
		c2 = `{"id":"c2","first_name":"Grace","last_name":"Hopper"}`
	)
	for _, tc := range []struct {
		name, rule string
		file       string
		counts     [3]int // rows, valid, invalid
		errs       []bulkfile.LineError
		wantErr    error
	}{
		{name: "valid rows", rule: "Clients file (JSONL, one client per line)",
			file: lines(c1, c2), counts: [3]int{2, 2, 0}},
		{name: "every field at fault is reported", rule: "first_name | string, max 255 | yes; marital_status | enum",
			file:   lines(c1, `{"id":"c3","last_name":"L","marital_status":"Wed"}`),
			counts: [3]int{2, 1, 1},
			errs: []bulkfile.LineError{
				{Line: 2, ID: "c3", Field: "first_name", Message: "first_name is required"},
				{Line: 2, ID: "c3", Field: "marital_status", Message: "marital_status must be one of Single, Married, DomesticPartnership, CivilUnion, Engaged, OtherCommittedRelationship, Widowed"},
			}},
		{name: "a duplicate id is refused", rule: "id | Caller's client identifier",
			file: lines(c2, c2), counts: [3]int{2, 1, 1},
			errs: []bulkfile.LineError{{Line: 2, ID: "c2", Field: "id", Message: `id "c2" is already used on line 1`}}},
		{name: "an id longer than 255 characters", rule: "id | string, max 255 | yes",
			file:   lines(c2, `{"id":"`+strings.Repeat("x", 256)+`","first_name":"A","last_name":"B"}`),
			counts: [3]int{2, 1, 1},
			errs:   []bulkfile.LineError{{Line: 2, Field: "id", Message: "id must be at most 255 characters"}}},
		{name: "every row invalid", rule: "first_name | yes; last_name | yes",
			file: lines(`{"id":"c1"}`), counts: [3]int{1, 0, 1}, wantErr: bulkfile.ErrNoValidRows,
			errs: []bulkfile.LineError{
				{Line: 1, ID: "c1", Field: "first_name", Message: "first_name is required"},
				{Line: 1, ID: "c1", Field: "last_name", Message: "last_name is required"},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := bulkfile.NewUpload(bulkfile.Options{})
			rep, err := u.Validate(context.Background(), strings.NewReader(tc.file), bulkfile.Clients(), nil)
			if !errors.Is(err, tc.wantErr) && !(err == nil && tc.wantErr == nil) {
				t.Fatalf("%s: got error %v, want %v", tc.rule, err, tc.wantErr)
			}
			if got := [3]int{rep.Rows, rep.ValidRows, rep.InvalidRows}; got != tc.counts {
				t.Errorf("%s: got rows, valid, invalid %v, want %v", tc.rule, got, tc.counts)
			}
			if !slices.Equal(rep.Errors, tc.errs) {
				t.Errorf("%s: got errors %+v, want %+v", tc.rule, rep.Errors, tc.errs)
			}
		})
	}
}

// "In every row, client_id must name an existing client or a client in the Clients file": the
// Clients format defines the ids the People file's client_id is resolved against.
func TestClientsFileDefinesTheClientIDsOfThePeopleFile(t *testing.T) {
	u := bulkfile.NewUpload(bulkfile.Options{})
	ctx := context.Background()
	if _, err := u.Validate(ctx, strings.NewReader(lines(`{"id":"c1","first_name":"A","last_name":"L"}`)), bulkfile.Clients(), nil); err != nil {
		t.Fatal(err)
	}
	rep, err := u.Validate(ctx, strings.NewReader(lines(p1, p2, t1, e1)), bulkfile.People(advisorspec.ClientModel), nil)
	if err != nil || rep.ValidRows != 4 {
		t.Errorf("got %d valid rows, error %v; want 4, nil", rep.ValidRows, err)
	}
}

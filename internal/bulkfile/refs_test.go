package bulkfile_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulkfile"
)

// Rows for the reference tests, all of client c1 unless told.
func person(id string) string {
	return fmt.Sprintf(`{"id":%q,"client_id":"c1","type":"Individual","first_name":"A","last_name":"B"}`, id)
}

func personOf(id, client string) string {
	return fmt.Sprintf(`{"id":%q,"client_id":%q,"type":"Individual","first_name":"A","last_name":"B"}`, id, client)
}

// badPerson breaks a row rule: last_name is required.
func badPerson(id string) string {
	return fmt.Sprintf(`{"id":%q,"client_id":"c1","type":"Individual","first_name":"A"}`, id)
}

// trustBy is a trust whose creators are ids.
func trustBy(id string, ids ...string) string {
	return fmt.Sprintf(`{"id":%q,"client_id":"c1","type":"Trust","legal_name":"T","trust_type":"DynastyTrust","trust_creator":[%s]}`, id, quoted(ids))
}

// badTrustBy is trustBy with a rule broken: legal_name is required.
func badTrustBy(id string, ids ...string) string {
	return fmt.Sprintf(`{"id":%q,"client_id":"c1","type":"Trust","trust_type":"DynastyTrust","trust_creator":[%s]}`, id, quoted(ids))
}

func quoted(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ",")
}

func invalidRef(line int, id, named string, namedLine int) bulkfile.LineError {
	return bulkfile.LineError{Line: line, ID: id, Field: "trust_creator",
		Message: fmt.Sprintf(`trust_creator %q names the row on line %d, which is invalid`, named, namedLine)}
}

func danglingRef(line int, id, named string) bulkfile.LineError {
	return bulkfile.LineError{Line: line, ID: id, Field: "trust_creator",
		Message: fmt.Sprintf(`trust_creator %q names no row of this file and no existing card`, named)}
}

func lastNameRequired(line int, id string) bulkfile.LineError {
	return bulkfile.LineError{Line: line, ID: id, Field: "last_name", Message: "last_name is required"}
}

func legalNameRequired(line int, id string) bulkfile.LineError {
	return bulkfile.LineError{Line: line, ID: id, Field: "legal_name", Message: "legal_name is required"}
}

// A reference is good when it names a card of the row's client, or a row of the file of that
// client that is valid itself, wherever it is in the file; so validity follows chains of
// references, and the answer does not depend on the order of the rows.
func TestReferencesAreGoodOnlyWhenTheyNameACardOrAValidRow(t *testing.T) {
	clients := func(k advisorspec.RefKind, id string) bool {
		return k == advisorspec.RefClient && (id == "c1" || id == "c2")
	}
	for _, tc := range []struct {
		name    string
		file    []string
		card    func(advisorspec.RowRef, string) (advisorspec.ContactType, bool)
		valid   int
		errs    []bulkfile.LineError
		written []string
	}{
		{name: "a row naming a row below that names nothing is invalid, and so is a row naming it",
			file:  []string{trustBy("t1", "t2"), trustBy("t2", "q9"), trustBy("t3", "t1"), person("p1")},
			valid: 1, written: []string{person("p1")},
			errs: []bulkfile.LineError{invalidRef(1, "t1", "t2", 2), danglingRef(2, "t2", "q9"), invalidRef(3, "t3", "t1", 1)}},
		{name: "rows naming each other in a circle are valid, and written in line order once nothing they name is still to come",
			file:    []string{trustBy("t1", "t2"), person("p1"), trustBy("t2", "t1", "p2"), person("p2")},
			valid:   4,
			written: []string{person("p1"), person("p2"), trustBy("t1", "t2"), trustBy("t2", "t1", "p2")}},
		{name: "a circle with a row that names nothing is invalid, and no row is told of the row that is invalid only because of it",
			file:  []string{trustBy("t1", "t2"), trustBy("t2", "t1", "q9"), person("p1")},
			valid: 1, written: []string{person("p1")},
			errs: []bulkfile.LineError{invalidRef(1, "t1", "t2", 2), danglingRef(2, "t2", "q9")}},
		{name: "a card that exists is good whether its invalid row is above or below",
			file: []string{badPerson("x1"), trustBy("t1", "x1", "x2"), badPerson("x2")},
			card: func(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool) {
				return advisorspec.Individual, owner.ID == "c1" && (id == "x1" || id == "x2")
			},
			valid: 1, written: []string{trustBy("t1", "x1", "x2")},
			errs: []bulkfile.LineError{lastNameRequired(1, "x1"), lastNameRequired(3, "x2")}},
		{name: "a row with errors of its own still has its references checked, above and below",
			file:  []string{badPerson("p2"), badTrustBy("t1", "p2", "p3"), badPerson("p3"), person("p1")},
			valid: 1,
			errs: []bulkfile.LineError{lastNameRequired(1, "p2"),
				legalNameRequired(2, "t1"), invalidRef(2, "t1", "p2", 1), invalidRef(2, "t1", "p3", 3),
				lastNameRequired(3, "p3")}},
		{name: "a row invalid only through others names the rows on its shortest chain to a row invalid on its own",
			// t1 names t2 (one step from p2) and p3 (invalid itself); t4 names t1 and t2, both one step away.
			file:  []string{trustBy("t1", "t2", "p3"), trustBy("t2", "p2"), badPerson("p2"), badPerson("p3"), trustBy("t4", "t1", "t2"), person("p1")},
			valid: 1,
			errs: []bulkfile.LineError{invalidRef(1, "t1", "p3", 4), invalidRef(2, "t2", "p2", 3),
				lastNameRequired(3, "p2"), lastNameRequired(4, "p3"),
				invalidRef(5, "t4", "t1", 1), invalidRef(5, "t4", "t2", 2)}},
		{name: "a row of another client is not a card of the row's own",
			file:  []string{personOf("p2", "c2"), trustBy("t1", "p2"), trustBy("t2", "p3"), personOf("p3", "c2"), person("p1")},
			valid: 3, written: []string{personOf("p2", "c2"), personOf("p3", "c2"), person("p1")},
			errs: []bulkfile.LineError{
				{Line: 2, ID: "t1", Field: "trust_creator", Message: `trust_creator "p2" names no person, trust or entity of client_id "c1"`},
				{Line: 3, ID: "t2", Field: "trust_creator", Message: `trust_creator "p3" names no person, trust or entity of client_id "c1"`},
			}},
		{name: "a row of another client whose id is also a card of the row's own names that card",
			file: []string{personOf("x1", "c2"), trustBy("t1", "x1")},
			card: func(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool) {
				return advisorspec.Individual, owner.ID == "c1" && id == "x1"
			},
			valid: 2},
		{name: "a card of another client only is not a card of the row's own",
			file: []string{trustBy("t1", "x1"), person("p1")},
			card: func(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool) {
				return advisorspec.Individual, owner.ID == "c2" && id == "x1"
			},
			valid: 1, errs: []bulkfile.LineError{danglingRef(1, "t1", "x1")}},
		{name: "a row cannot change the type of the card its id names",
			file: []string{trustBy("x1", "p1"), person("p1")},
			card: func(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool) {
				return advisorspec.Individual, owner.ID == "c1" && id == "x1"
			},
			valid: 1, errs: []bulkfile.LineError{{Line: 1, ID: "x1", Field: "type", Message: `id "x1" names a Individual card; a row cannot change a card's type`}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			u := bulkfile.NewUpload(bulkfile.Options{Exists: clients, Card: tc.card})
			rep, err := u.Validate(context.Background(), strings.NewReader(lines(tc.file...)), bulkfile.People(advisorspec.ClientModel), &out)
			if err != nil {
				t.Fatal(err)
			}
			if rep.ValidRows != tc.valid || rep.InvalidRows != len(tc.file)-tc.valid {
				t.Errorf("got %d valid, %d invalid; want %d, %d", rep.ValidRows, rep.InvalidRows, tc.valid, len(tc.file)-tc.valid)
			}
			if !slices.Equal(rep.Errors, tc.errs) {
				t.Errorf("got errors\n%+v\nwant\n%+v", rep.Errors, tc.errs)
			}
			if tc.written != nil && out.String() != lines(tc.written...) {
				t.Errorf("got written\n%s\nwant\n%s", out.String(), lines(tc.written...))
			}
		})
	}
}

// A chain of rows each naming the next, the last naming nothing, waits to the end of the file
// and is then decided in one pass: a long one takes no longer than rows apart would.
func TestALongChainOfForwardReferencesIsDecidedAtTheEnd(t *testing.T) {
	const n = 100_000
	var b strings.Builder
	for i := range n {
		b.WriteString(trustBy(fmt.Sprint("t", i), fmt.Sprint("t", i+1)) + "\n")
	}
	u := bulkfile.NewUpload(bulkfile.Options{Exists: existingClient})
	rep, err := u.Validate(context.Background(), strings.NewReader(b.String()), bulkfile.People(advisorspec.ClientModel), nil)
	if err == nil || rep.InvalidRows != n || rep.ErrorCount != n {
		t.Fatalf("got %v, %d invalid rows, %d errors; want every row invalid with one error each", err, rep.InvalidRows, rep.ErrorCount)
	}
	if last := rep.Errors[len(rep.Errors)-1]; last.Line != bulkfile.DefaultMaxErrors {
		t.Errorf("got the last error kept on line %d, want %d", last.Line, bulkfile.DefaultMaxErrors)
	}
}

package sandbox

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// The service's reading of a bulk file, line by line and reference by reference. The rules of
// one row are advisorspec's and tested there; these are the file's.
func TestCheckBulkFileFindsEachLinesErrors(t *testing.T) {
	person := func(id string) string {
		return fmt.Sprintf(`{"type":"Individual","id":%q,"client_id":"C-1","first_name":"A","last_name":"B"}`, id)
	}
	broken := func(id string) string { // breaks a row rule: last_name is required
		return fmt.Sprintf(`{"type":"Individual","id":%q,"client_id":"C-1","first_name":"A"}`, id)
	}
	trust := func(id, creators string) string {
		return fmt.Sprintf(`{"type":"Trust","id":%q,"client_id":"C-1","legal_name":"T","trust_type":"DynastyTrust","trust_creator":%s}`, id, creators)
	}
	of := func(client, row string) string {
		return strings.Replace(row, `"client_id":"C-1"`, `"client_id":"`+client+`"`, 1)
	}
	lastNameRequired := "last_name: last_name is required"
	// The firm has clients C-1, with the card X-1, and C-2, with the card Y-1.
	look := bulkLookup{
		exists: func(kind advisorspec.RefKind, id string) bool {
			return kind == advisorspec.RefClient && (id == "C-1" || id == "C-2")
		},
		card: func(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool) {
			if owner.Kind == advisorspec.RefClient && (owner.ID == "C-1" && id == "X-1" || owner.ID == "C-2" && id == "Y-1") {
				return advisorspec.Individual, true
			}
			return "", false
		},
	}
	for _, tc := range []struct {
		name, file string
		rows       int
		invalid    map[int][]string // line: "field: message"
		fileError  string
	}{
		{name: "a byte-order mark, CRLF, blank lines of JSON whitespace and no final newline",
			file: "\ufeff" + person("P-1") + "\r\n\r\n \t\r\n" + person("P-2"), rows: 2},
		{name: "a line of other whitespace is a malformed row",
			file: person("P-1") + "\n\u00a0\n", rows: 2,
			invalid: map[int][]string{2: {": row is not valid JSON: invalid character 'Â' looking for beginning of value at byte 1"}}},
		{name: "a line of exactly the limit after a byte-order mark, and one a byte over the limit",
			file: "\ufeff" + pad(person("P-1"), advisorspec.MaxBulkLineBytes) + "\r\n" + pad(person("P-2"), advisorspec.MaxBulkLineBytes+1) + "\n" + person("P-3"),
			rows: 3, invalid: map[int][]string{2: {": line is longer than 1048576 bytes (1 MiB)"}}},
		{name: "a line far over the limit is skipped to its end",
			file: strings.Repeat("x", 3*advisorspec.MaxBulkLineBytes) + "\n" + person("P-1") + "\n", rows: 2,
			invalid: map[int][]string{1: {": line is longer than 1048576 bytes (1 MiB)"}}},
		{name: "a line that is not UTF-8", file: person("P-1") + "\n{\"id\":\"\xff\"}\n", rows: 2,
			invalid: map[int][]string{2: {": line is not valid UTF-8"}}},
		{name: "the first row keeps a repeated id, even when it is invalid",
			file: lines(broken("P-1"), person("P-1"), trust("T-1", `"Q-1"`), trust("T-1", `"Q-1"`)), rows: 4,
			invalid: map[int][]string{
				1: {lastNameRequired},
				2: {`id: id "P-1" is already used on line 1`},
				3: {`trust_creator: trust_creator "Q-1" names no row of this file and no existing card`},
				4: {`id: id "T-1" is already used on line 3`}, // its references go unchecked
			},
			fileError: "People/Trusts/Entities file: every row of the file is invalid"},
		{name: "references backward, forward, to what exists, to itself",
			file: lines(person("P-1"), trust("T-1", `["P-1","P-2","X-1"]`), person("P-2"), trust("T-2", `"T-2"`)), rows: 4,
			invalid: map[int][]string{4: {"trust_creator: trust_creator must not name the row itself"}}},
		{name: "a client that does not exist", file: strings.ReplaceAll(person("P-1"), "C-1", "C-9") + "\n", rows: 1,
			invalid:   map[int][]string{1: {`client_id: client_id "C-9" names no client of the Clients file and no existing one`}},
			fileError: "People/Trusts/Entities file: every row of the file is invalid"},
		{name: "a row naming invalid rows above and below hears of both",
			file: lines(broken("P-1"), trust("T-1", `["P-1","P-2"]`), broken("P-2"), person("P-3")), rows: 4,
			invalid: map[int][]string{
				1: {lastNameRequired},
				2: {`trust_creator: trust_creator "P-1" names the row on line 1, which is invalid`,
					`trust_creator: trust_creator "P-2" names the row on line 3, which is invalid`},
				3: {lastNameRequired},
			}},
		{name: "invalidity follows a chain of references, forward and back",
			file: lines(trust("T-1", `"T-2"`), trust("T-2", `"Q-9"`), trust("T-3", `"T-1"`), person("P-1")), rows: 4,
			invalid: map[int][]string{
				1: {`trust_creator: trust_creator "T-2" names the row on line 2, which is invalid`},
				2: {`trust_creator: trust_creator "Q-9" names no row of this file and no existing card`},
				3: {`trust_creator: trust_creator "T-1" names the row on line 1, which is invalid`},
			}},
		{name: "rows naming each other in a circle are valid, and one fault blames the others once",
			file: lines(trust("T-1", `"T-2"`), trust("T-2", `"T-1"`), trust("T-3", `"T-4"`), trust("T-4", `["T-3","Q-9"]`)), rows: 4,
			invalid: map[int][]string{
				3: {`trust_creator: trust_creator "T-4" names the row on line 4, which is invalid`},
				4: {`trust_creator: trust_creator "Q-9" names no row of this file and no existing card`},
			}},
		{name: "a card that exists is named whatever the file's row for it says",
			file: lines(broken("X-1"), trust("T-1", `"X-1"`)), rows: 2,
			invalid: map[int][]string{1: {lastNameRequired}}},
		{name: "a row naming a row of another client is refused, and so are the rows naming it",
			file: lines(of("C-2", person("P-2")), trust("T-1", `"P-2"`), trust("T-2", `"T-1"`), person("P-3")), rows: 4,
			invalid: map[int][]string{
				2: {`trust_creator: trust_creator "P-2" names no person, trust or entity of client_id "C-1"`},
				3: {`trust_creator: trust_creator "T-1" names the row on line 2, which is invalid`},
			}},
		{name: "a card of another client is no card of the row's own",
			file: lines(trust("T-1", `"Y-1"`), person("P-1")), rows: 2,
			invalid: map[int][]string{1: {`trust_creator: trust_creator "Y-1" names no row of this file and no existing card`}}},
		{name: "a row of another client is no matter when the row's own client has the card",
			file: lines(of("C-2", person("X-1")), trust("T-1", `"X-1"`)), rows: 2},
		{name: "a row that would change a card's type is refused; the rows naming it name the card",
			file: lines(trust("X-1", `"P-1"`), person("P-1"), trust("T-1", `"X-1"`)), rows: 3,
			invalid: map[int][]string{1: {`type: id "X-1" names a Individual card; a row cannot change a card's type`}}},
		{name: "a row one step further than two invalid rows hears of both",
			file: lines(trust("T-1", `["T-2","P-3"]`), trust("T-2", `"P-2"`), broken("P-2"), broken("P-3"), trust("T-4", `["T-1","T-2"]`), person("P-4")), rows: 6,
			invalid: map[int][]string{
				1: {`trust_creator: trust_creator "P-3" names the row on line 4, which is invalid`},
				2: {`trust_creator: trust_creator "P-2" names the row on line 3, which is invalid`},
				3: {lastNameRequired},
				4: {lastNameRequired},
				5: {`trust_creator: trust_creator "T-1" names the row on line 1, which is invalid`,
					`trust_creator: trust_creator "T-2" names the row on line 2, which is invalid`},
			}},
		{name: "the same rows in the opposite order hear the same",
			file: lines(person("P-4"), trust("T-4", `["T-1","T-2"]`), broken("P-3"), broken("P-2"), trust("T-2", `"P-2"`), trust("T-1", `["T-2","P-3"]`)), rows: 6,
			invalid: map[int][]string{
				2: {`trust_creator: trust_creator "T-1" names the row on line 6, which is invalid`,
					`trust_creator: trust_creator "T-2" names the row on line 5, which is invalid`},
				3: {lastNameRequired},
				4: {lastNameRequired},
				5: {`trust_creator: trust_creator "P-2" names the row on line 4, which is invalid`},
				6: {`trust_creator: trust_creator "P-3" names the row on line 3, which is invalid`},
			}},
		{name: "an empty file", file: "\n \n", fileError: "People/Trusts/Entities file: the file has no rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := checkBulkFile(context.Background(), strings.NewReader(tc.file), advisorspec.BulkKindPeople, advisorspec.ClientModel, look)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			got := map[int][]string{}
			for _, e := range c.errs {
				got[e.Line] = append(got[e.Line], e.Field+": "+e.Message)
			}
			for line, msgs := range got {
				slices.Sort(msgs)
				if !c.invalid[line] {
					t.Errorf("line %d has errors %q but is not invalid", line, msgs)
				}
			}
			if c.rows != tc.rows || gotErr != tc.fileError || len(c.invalid) != len(tc.invalid) || fmt.Sprint(got) != fmt.Sprint(orEmpty(tc.invalid)) {
				t.Errorf("got %d rows, file error %q, errors %v; want %d, %q, %v", c.rows, gotErr, got, tc.rows, tc.fileError, tc.invalid)
			}
		})
	}
}

// Only a People row that will be applied tells its client: applying a row finds by it whether
// a reference names a card of the row's own client.
func TestCheckBulkFileKnowsTheClientOfEachValidRow(t *testing.T) {
	file := lines(
		`{"type":"Individual","id":"P-1","client_id":"C-1","first_name":"A","last_name":"B"}`,
		`{"type":"Individual","id":"P-2","client_id":"C-2","first_name":"A"}`,
		`{"type":"Trust","id":"T-1","client_id":"C-2","legal_name":"T","trust_type":"DynastyTrust","trust_creator":"P-2"}`,
	)
	look := bulkLookup{
		exists: func(kind advisorspec.RefKind, _ string) bool { return kind == advisorspec.RefClient },
		card:   func(advisorspec.RowRef, string) (advisorspec.ContactType, bool) { return "", false },
	}
	c, err := checkBulkFile(context.Background(), strings.NewReader(file), advisorspec.BulkKindPeople, advisorspec.ClientModel, look)
	if err != nil || fmt.Sprint(c.owners) != "map[P-1:C-1]" {
		t.Errorf("got owners %v, %v; want P-1's client alone", c.owners, err)
	}
}

func lines(rows ...string) string { return strings.Join(rows, "\n") + "\n" }

// pad pads a JSON object with spaces before its closing brace to n bytes.
func pad(row string, n int) string { return row[:len(row)-1] + strings.Repeat(" ", n-len(row)) + "}" }

func orEmpty(m map[int][]string) map[int][]string {
	if m == nil {
		return map[int][]string{}
	}
	return m
}

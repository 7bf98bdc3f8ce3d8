package bulkfile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulkfile"
)

// Rows of a People file, by id, all for client c1.
const (
	p1 = `{"id":"p1","client_id":"c1","type":"Individual","first_name":"Ada","last_name":"Lovelace"}`
	p2 = `{"id":"p2","client_id":"c1","type":"Individual","first_name":"William","last_name":"King"}`
	// t1 names p1 and p2 as creators and p2 as trustee.
	t1 = `{"id":"t1","client_id":"c1","type":"Trust","legal_name":"Lovelace Trust","trust_type":"JointRevocableTrust","trust_creator":["p1","p2"],"initial_trustee":"p2"}`
	// e1 is owned jointly by p1 and p2, and in part by t1.
	e1  = `{"id":"e1","client_id":"c1","type":"Entity","legal_name":"Lovelace LLC","ownership":[{"percentage":50,"owner_id":["p1","p2"]},{"percentage":50,"owner_id":"t1"}]}`
	bad = `{"id":"x1","client_id":"c1","type":"Individual","first_name":"No last name"}`
)

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func existingClient(kind advisorspec.RefKind, id string) bool {
	return kind == advisorspec.RefClient && id == "c1"
}

// cardOfC1 is a Card answer: client c1 has the card id of type typ, and nothing else exists.
func cardOfC1(id string, typ advisorspec.ContactType) func(advisorspec.RowRef, string) (advisorspec.ContactType, bool) {
	return func(owner advisorspec.RowRef, got string) (advisorspec.ContactType, bool) {
		if owner.ID == "c1" && got == id {
			return typ, true
		}
		return "", false
	}
}

func TestValidatePeopleFile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    string
		exists  func(advisorspec.RefKind, string) bool
		card    func(advisorspec.RowRef, string) (advisorspec.ContactType, bool)
		wantErr error
		// rows, valid, invalid
		counts  [3]int
		errs    []bulkfile.LineError
		written string
	}{
		{name: "a valid file is written out whole", file: lines(p1, p2, t1, e1), exists: existingClient,
			counts: [3]int{4, 4, 0}, written: lines(p1, p2, t1, e1)},
		{name: "a forward reference resolves to a row further down, which is written first",
			file: lines(t1, p1, p2), exists: existingClient,
			counts: [3]int{3, 3, 0}, written: lines(p1, p2, t1)},
		{name: "rows naming each other are both valid",
			file: lines(
				`{"id":"t2","client_id":"c1","type":"Trust","legal_name":"T","trust_type":"DynastyTrust","initial_trustee":"e2"}`,
				`{"id":"e2","client_id":"c1","type":"Entity","legal_name":"E","ownership":[{"percentage":100,"owner_id":"t2"}]}`),
			exists: existingClient, counts: [3]int{2, 2, 0}},
		{name: "a dangling reference is an error on its line", file: lines(p1, t1), exists: existingClient,
			counts: [3]int{2, 1, 1},
			errs: []bulkfile.LineError{
				{Line: 2, ID: "t1", Field: "trust_creator", Message: `trust_creator "p2" names no row of this file and no existing card`},
				{Line: 2, ID: "t1", Field: "initial_trustee", Message: `initial_trustee "p2" names no row of this file and no existing card`},
			},
			written: lines(p1)},
		{name: "a reference to an existing card resolves",
			file: lines(p1, t1), exists: existingClient, card: cardOfC1("p2", advisorspec.Individual),
			counts: [3]int{2, 2, 0}, written: lines(p1, t1)},
		{name: "a client_id naming no client of the upload and no existing one is an error", file: lines(p1, p2),
			exists: func(k advisorspec.RefKind, id string) bool { return false }, wantErr: bulkfile.ErrNoValidRows,
			counts: [3]int{2, 0, 2},
			errs: []bulkfile.LineError{
				{Line: 1, ID: "p1", Field: "client_id", Message: `client_id "c1" names no client of the Clients file and no existing one`},
				{Line: 2, ID: "p2", Field: "client_id", Message: `client_id "c1" names no client of the Clients file and no existing one`},
			}},
		{name: "a reference to an invalid row is an error", file: lines(bad, strings.Replace(t1, `"p1","p2"`, `"x1"`, 1), p2),
			exists: existingClient, counts: [3]int{3, 1, 2},
			errs: []bulkfile.LineError{
				{Line: 1, ID: "x1", Field: "last_name", Message: "last_name is required"},
				{Line: 2, ID: "t1", Field: "trust_creator", Message: `trust_creator "x1" names the row on line 1, which is invalid`},
			},
			written: lines(p2)},
		{name: "a forward reference to an invalid row is an error", file: lines(strings.Replace(t1, `"p1","p2"`, `"x1"`, 1), bad, p2),
			exists: existingClient, counts: [3]int{3, 1, 2},
			errs: []bulkfile.LineError{
				{Line: 1, ID: "t1", Field: "trust_creator", Message: `trust_creator "x1" names the row on line 2, which is invalid`},
				{Line: 2, ID: "x1", Field: "last_name", Message: "last_name is required"},
			},
			written: lines(p2)},
		{name: "a duplicate id names the line of the first", file: lines(p1, p2, p1), exists: existingClient,
			counts:  [3]int{3, 2, 1},
			errs:    []bulkfile.LineError{{Line: 3, ID: "p1", Field: "id", Message: `id "p1" is already used on line 1`}},
			written: lines(p1, p2)},
		{name: "an unknown type is an error on its line", file: lines(p1, `{"id":"w1","client_id":"c1","type":"Will"}`), exists: existingClient,
			counts:  [3]int{2, 1, 1},
			errs:    []bulkfile.LineError{{Line: 2, ID: "w1", Field: "type", Message: "type must be one of Individual, Trust, Entity"}},
			written: lines(p1)},
		{name: "a malformed JSON line is an error and reading goes on", file: lines(`{"id":"p0",`, p1), exists: existingClient,
			counts:  [3]int{2, 1, 1},
			errs:    []bulkfile.LineError{{Line: 1, Message: "row is not valid JSON: unexpected end of JSON input at byte 11"}},
			written: lines(p1)},
		{name: "a line over 1 MiB is an error and reading goes on at the next",
			file:   lines(`{"id":"p0","first_name":"`+strings.Repeat("a", bulkfile.MaxLineBytes)+`"}`, p1),
			exists: existingClient, counts: [3]int{2, 1, 1},
			errs:    []bulkfile.LineError{{Line: 1, Message: "line is longer than 1048576 bytes (1 MiB)"}},
			written: lines(p1)},
		{name: "a line of exactly 1 MiB, CRLF ended, is read",
			file:   p1 + strings.Repeat(" ", bulkfile.MaxLineBytes-len(p1)) + "\r\n" + p2,
			exists: existingClient, counts: [3]int{2, 2, 0}},
		{name: "a non-UTF-8 line is an error", file: lines(p1, "{\"id\":\"p\xff\"}"), exists: existingClient,
			counts:  [3]int{2, 1, 1},
			errs:    []bulkfile.LineError{{Line: 2, Message: "line is not valid UTF-8"}},
			written: lines(p1)},
		{name: "an empty file is refused", file: "", wantErr: bulkfile.ErrEmpty},
		{name: "a file of blank lines is refused as empty", file: "\n  \n\r\n", wantErr: bulkfile.ErrEmpty},
		{name: "a file whose rows are all invalid is refused", file: lines(bad, "{}"), exists: existingClient,
			wantErr: bulkfile.ErrNoValidRows, counts: [3]int{2, 0, 2},
			errs: []bulkfile.LineError{
				{Line: 1, ID: "x1", Field: "last_name", Message: "last_name is required"},
				{Line: 2, Field: "id", Message: "id is required"},
				{Line: 2, Field: "type", Message: "type is required"},
				{Line: 2, Field: "client_id", Message: "client_id is required"},
			}},
		{name: "blank lines are skipped and keep their line numbers", file: lines(p1, "", "   ", bad), exists: existingClient,
			counts:  [3]int{2, 1, 1},
			errs:    []bulkfile.LineError{{Line: 4, ID: "x1", Field: "last_name", Message: "last_name is required"}},
			written: lines(p1)},
		{name: "a line of a no-break space or a form feed is not blank: JSON's whitespace is space, tab, CR and LF",
			file: lines(p1, "\u00a0", "\f"), exists: existingClient, counts: [3]int{3, 1, 2}, written: lines(p1),
			errs: []bulkfile.LineError{
				{Line: 2, Message: "row is not valid JSON: invalid character 'Â' looking for beginning of value at byte 1"},
				{Line: 3, Message: "row is not valid JSON: invalid character '\\f' looking for beginning of value at byte 1"},
			}},
		{name: "a first line of exactly 1 MiB after a byte-order mark is read: the mark is not part of the row",
			file:   "\ufeff" + p1 + strings.Repeat(" ", bulkfile.MaxLineBytes-len(p1)) + "\n" + p2,
			exists: existingClient, counts: [3]int{2, 2, 0}},
		{name: "CRLF line endings, a byte-order mark and a last line without a newline are read",
			file: "\ufeff" + p1 + "\r\n" + p2, exists: existingClient,
			counts: [3]int{2, 2, 0}, written: lines(p1, p2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := bulkfile.NewUpload(bulkfile.Options{Exists: tc.exists, Card: tc.card})
			var out bytes.Buffer
			rep, err := u.Validate(context.Background(), strings.NewReader(tc.file), bulkfile.People(advisorspec.ClientModel), &out)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Errorf("got error %v, want %v", err, tc.wantErr)
			}
			if got := [3]int{rep.Rows, rep.ValidRows, rep.InvalidRows}; got != tc.counts {
				t.Errorf("got rows, valid, invalid %v, want %v", got, tc.counts)
			}
			if !slices.Equal(rep.Errors, tc.errs) {
				t.Errorf("got errors\n%+v\nwant\n%+v", rep.Errors, tc.errs)
			}
			if rep.ErrorCount != len(rep.Errors) {
				t.Errorf("got error count %d, want %d", rep.ErrorCount, len(rep.Errors))
			}
			if tc.written != "" && out.String() != tc.written {
				t.Errorf("got written\n%s\nwant\n%s", out.String(), tc.written)
			}
			if rep.Written != rep.ValidRows {
				t.Errorf("got %d written, want the %d valid rows", rep.Written, rep.ValidRows)
			}
			if rep.Bytes != int64(len(tc.file)) {
				t.Errorf("got %d bytes read, want %d", rep.Bytes, len(tc.file))
			}
		})
	}
}

// A People row's client_id may name a client of the Clients file uploaded with it; a client
// whose row is invalid cannot be named.
func TestPeopleRowsNameClientsOfTheClientsFile(t *testing.T) {
	u := bulkfile.NewUpload(bulkfile.Options{})
	if _, err := u.Validate(context.Background(), strings.NewReader(lines(`{"id":"c1","first_name":"A","last_name":"L"}`, `{"id":"","first_name":"A","last_name":"L"}`, `{"id":"c1","first_name":"A","last_name":"L"}`)), bulkfile.Clients(), nil); err != nil {
		t.Fatal(err)
	}
	p3 := strings.Replace(p2, `"id":"p2","client_id":"c1"`, `"id":"p3","client_id":"c2"`, 1)
	rep, err := u.Validate(context.Background(), strings.NewReader(lines(p1, p3)), bulkfile.People(advisorspec.ClientModel), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []bulkfile.LineError{{Line: 2, ID: "p3", Field: "client_id", Message: `client_id "c2" names no client of the Clients file and no existing one`}}
	if rep.ValidRows != 1 || !slices.Equal(rep.Errors, want) {
		t.Errorf("got %d valid, errors %+v; want 1 valid, %+v", rep.ValidRows, rep.Errors, want)
	}
}

// The deprecated model's rows name top accounts, which the upload looks up as existing ones.
func TestDeprecatedModelRowsNameTopAccounts(t *testing.T) {
	u := bulkfile.NewUpload(bulkfile.Options{Exists: func(k advisorspec.RefKind, id string) bool {
		return k == advisorspec.RefTopAccount && id == "w1"
	}})
	file := lines(
		`{"id":"p1","top_account_id":"w1","type":"Individual","first_name":"A","last_name":"L"}`,
		`{"id":"p2","top_account_id":"w2","type":"Individual","first_name":"A","last_name":"L"}`,
		`{"id":"t1","top_account_id":"w1","type":"Trust","legal_name":"T","trust_type":"DynastyTrust","trust_creator":"p1"}`)
	rep, err := u.Validate(context.Background(), strings.NewReader(file), bulkfile.People(advisorspec.TopAccountModel), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []bulkfile.LineError{
		{Line: 2, ID: "p2", Field: "top_account_id", Message: `top_account_id "w2" names no top account of the Top Accounts file and no existing one`},
		{Line: 3, ID: "t1", Field: "trust_creator", Message: "trust_creator must be an array of strings in the deprecated top-account model, not a string"},
	}
	if !slices.Equal(rep.Errors, want) {
		t.Errorf("got %+v, want %+v", rep.Errors, want)
	}
}

// The report keeps the first 1,000 errors and counts all of them, so that a file of a million
// bad rows gives a report of bounded size.
func TestReportKeepsTheFirstThousandErrorsAndCountsAll(t *testing.T) {
	var b strings.Builder
	b.WriteString(p1 + "\n")
	for i := range 1500 {
		fmt.Fprintf(&b, `{"id":"x%d","client_id":"c1","type":"Individual","first_name":"A"}`+"\n", i)
	}
	u := bulkfile.NewUpload(bulkfile.Options{Exists: existingClient})
	rep, err := u.Validate(context.Background(), strings.NewReader(b.String()), bulkfile.People(advisorspec.ClientModel), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Errors) != bulkfile.DefaultMaxErrors || rep.ErrorCount != 1500 || rep.InvalidRows != 1500 {
		t.Errorf("got %d kept, %d counted, %d invalid rows; want 1000, 1500, 1500", len(rep.Errors), rep.ErrorCount, rep.InvalidRows)
	}
	if last := rep.Errors[len(rep.Errors)-1]; last.Line != 1001 {
		t.Errorf("got last kept error on line %d, want 1001", last.Line)
	}
}

// Progress is reported every ProgressEvery rows and once at the end, for a progress bar.
func TestProgressIsReportedEveryNRows(t *testing.T) {
	var got []bulkfile.Progress
	u := bulkfile.NewUpload(bulkfile.Options{Exists: existingClient, ProgressEvery: 2,
		Progress: func(p bulkfile.Progress) { got = append(got, p) }})
	file := lines(p1, p2, t1, e1, strings.Replace(p1, `"p1"`, `"p5"`, 1))
	if _, err := u.Validate(context.Background(), strings.NewReader(file), bulkfile.People(advisorspec.ClientModel), nil); err != nil {
		t.Fatal(err)
	}
	at := func(n int) int64 { return int64(len(lines(strings.Split(file, "\n")[:n]...))) }
	want := []bulkfile.Progress{{Rows: 2, Bytes: at(2)}, {Rows: 4, Bytes: at(4)}, {Rows: 5, Bytes: at(5)}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// A cancelled context stops a long validation.
func TestValidateStopsWhenTheContextIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	u := bulkfile.NewUpload(bulkfile.Options{Exists: existingClient, ProgressEvery: 1})
	_, err := u.Validate(ctx, newPeopleGen(100), bulkfile.People(advisorspec.ClientModel), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want %v", err, context.Canceled)
	}
}

// Writing valid rows keeps back rows that name rows further down; past MaxHeldBytes the file is
// refused rather than memory growing with it.
func TestTooManyHeldRowsAreRefused(t *testing.T) {
	u := bulkfile.NewUpload(bulkfile.Options{Exists: existingClient, MaxHeldBytes: len(t1) + 10})
	t2 := strings.Replace(t1, `"id":"t1"`, `"id":"t2"`, 1)
	_, err := u.Validate(context.Background(), strings.NewReader(lines(t1, t2, p1, p2)), bulkfile.People(advisorspec.ClientModel), &bytes.Buffer{})
	if !errors.Is(err, bulkfile.ErrTooManyHeld) {
		t.Errorf("got %v, want %v", err, bulkfile.ErrTooManyHeld)
	}
}

// The generated benchmark file is valid through and through, so the benchmark measures the
// path every row takes.
func TestGeneratedFileIsValid(t *testing.T) {
	u := bulkfile.NewUpload(bulkfile.Options{Exists: existing, Card: existingCard})
	rep, err := u.Validate(context.Background(), newPeopleGen(4000), bulkfile.People(advisorspec.ClientModel), nil)
	if err != nil || rep.ValidRows != 4000 {
		t.Fatalf("got %v, %d valid, errors %+v", err, rep.ValidRows, rep.Errors)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A valid-rows writer that fails stops the file: an upload must not go on with rows missing.
func TestAFailingValidRowsWriterStopsTheFile(t *testing.T) {
	u := bulkfile.NewUpload(bulkfile.Options{Exists: existingClient})
	_, err := u.Validate(context.Background(), strings.NewReader(lines(p1, p2)), bulkfile.People(advisorspec.ClientModel), failingWriter{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("got %v, want the writer's error", err)
	}
}

package sandbox_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// bulkFixture is a sandbox with its SFTP server on loopback and a client logged in to it.
type bulkFixture struct {
	*fixture
	bulk *sandboxtest.Bulk
}

func newBulkFixture(t *testing.T) *bulkFixture {
	t.Helper()
	f := emptySandbox(t)
	addr, fp := sandboxtest.ServeSFTP(t, f.sb)
	c, err := sandboxtest.DialSFTP(t, addr, fp, "sandbox", "sandbox")
	if err != nil {
		t.Fatalf("login: got %v, want no error", err)
	}
	return &bulkFixture{fixture: f, bulk: sandboxtest.NewBulk(c)}
}

// load uploads a file, waits for its result and checks the counts.
func (b *bulkFixture) load(t *testing.T, kind sftpd.Kind, data []byte, rows, applied int) advisorspec.BulkResult {
	t.Helper()
	name := b.bulk.Upload(t, kind, data)
	res := b.bulk.Result(t, name)
	if res.File != strings.TrimPrefix(name, "/") || res.Kind != string(kind) || res.ProcessedAt.IsZero() {
		t.Errorf("got file %q, kind %q, processed at %v; want %q, %q and a time", res.File, res.Kind, res.ProcessedAt, name, kind)
	}
	if res.Rows != rows || res.Applied != applied || res.Invalid != rows-applied {
		t.Errorf("%s: got rows %d, applied %d, invalid %d; want %d, %d, %d; errors %+v",
			name, res.Rows, res.Applied, res.Invalid, rows, applied, rows-applied, res.Errors)
	}
	return res
}

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../../docs/examples/bulk/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// cardsByExternalID lists a v1 client's cards by external_id.
func cardsByExternalID(t *testing.T, f *fixture, path string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, c := range ccList(t, f, path) {
		ext, _ := c["external_id"].(string)
		out[ext] = c
	}
	return out
}

func jsonEqual(t *testing.T, got, want any) bool {
	t.Helper()
	g, err1 := json.Marshal(got)
	w, err2 := json.Marshal(want)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	var gv, wv any
	_ = json.Unmarshal(g, &gv)
	_ = json.Unmarshal(w, &wv)
	g, _ = json.Marshal(gv)
	w, _ = json.Marshal(wv)
	return bytes.Equal(g, w)
}

// The repository's sample files, end to end: "Creating a client creates a primary contact;
// [primary_id] links that contact to the row so the row updates it in place", trusts and
// entities reference the people, and "several ids in one owner_id array mean joint ownership".
// Uploading the same files again changes nothing: "Clients, people, trusts and entities are
// added or updated".
func TestBulkSampleFilesEndToEnd(t *testing.T) {
	b := newBulkFixture(t)
	clients, people := readSample(t, "clients.jsonl"), readSample(t, "people.jsonl")
	b.load(t, sftpd.Clients, clients, 2, 2)
	res := b.load(t, sftpd.People, people, 6, 6)
	if res.Model != advisorspec.BulkModelClients || res.ErrorCount != 0 || res.FileError != "" {
		t.Errorf("got model %q, %d errors, file error %q; want clients, none", res.Model, res.ErrorCount, res.FileError)
	}

	cards := cardsByExternalID(t, b.fixture, ccPath("C-1001"))
	if got := slices.Sorted(mapKeys(cards)); !slices.Equal(got, []string{"E-1001", "P-1001", "P-1002", "P-1003", "T-1001"}) {
		t.Fatalf("got cards %q, want the primary and spouse cards updated in place and three new ones", got)
	}
	want := map[string]map[string]any{
		"P-1001": {"type": "Individual", "first_name": "Margaret", "middle_name": "Ann", "last_name": "Okafor"},
		"P-1002": {"type": "Individual", "first_name": "Daniel", "last_name": "Okafor"},
		"T-1001": {"type": "Trust", "legal_name": "Okafor Family Revocable Trust", "trust_type": "JointRevocableTrust",
			"trust_creator": []string{"P-1001", "P-1002"}, "initial_trustee": []string{"P-1001", "P-1002"},
			"governing_state": "OR", "trust_creation_date": "2024-06-01"},
		"E-1001": {"type": "Entity", "legal_name": "Alder Way Holdings LLC", "incorporation_state": "OR",
			"incorporation_form": "LimitedLiabilityCompany", "ownership": []map[string]any{
				{"percentage": 60, "subowners": []string{"P-1001", "P-1002"}},
				{"percentage": 40, "owner_id": "T-1001"},
			}},
	}
	for ext, fields := range want {
		got := map[string]any{}
		for k := range fields {
			got[k] = cards[ext][k]
		}
		if !jsonEqual(t, got, fields) {
			t.Errorf("card %s: got %v, want %v", ext, got, fields)
		}
	}
	// The primary card is the one Add Client made: its id is the client's primary contact.
	answer := clAdd(t, b.fixture, map[string]any{"id": "C-1001", "first_name": "Margaret", "last_name": "Okafor"}, 200)
	if answer["primary_contact_id"] != cards["P-1001"]["id"] {
		t.Errorf("got primary contact %v, want the card P-1001 updated, %v", answer["primary_contact_id"], cards["P-1001"]["id"])
	}
	if got := cardsByExternalID(t, b.fixture, ccPath("C-1002")); len(got) != 1 || got["P-2001"] == nil {
		t.Errorf("got C-1002's cards %v, want its primary card linked to P-2001", got)
	}

	before := [2][]map[string]any{ccList(t, b.fixture, ccPath("C-1001")), ccList(t, b.fixture, ccPath("C-1002"))}
	b.load(t, sftpd.Clients, clients, 2, 2)
	b.load(t, sftpd.People, people, 6, 6)
	after := [2][]map[string]any{ccList(t, b.fixture, ccPath("C-1001")), ccList(t, b.fixture, ccPath("C-1002"))}
	if !jsonEqual(t, after, before) {
		t.Errorf("the same files again: got cards\n%v\nwant them unchanged\n%v", after, before)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// "Deprecated container-model variant of the same file. Rows carry top_account_id ... In that
// variant trust_creator, initial_trustee and owner_id are arrays of strings only."
func TestBulkContainerModelMakesTopAccountCards(t *testing.T) {
	b := newBulkFixture(t)
	wid := b.addTopAccount("TA-1", "Lovelace household")
	file := strings.Join([]string{
		`{"type":"Individual","id":"p1","top_account_id":"TA-1","first_name":"Ada","last_name":"Lovelace"}`,
		`{"type":"Trust","id":"t1","top_account_id":"TA-1","legal_name":"Lovelace Trust","trust_type":"DynastyTrust","trust_creator":["p1"]}`,
		`{"type":"Entity","id":"e1","top_account_id":"TA-1","legal_name":"Lovelace LLC","ownership":[{"percentage":100,"owner_id":["p1"]}]}`,
		`{"type":"Individual","id":"p2","top_account_id":"TA-1","first_name":"Byron","last_name":"L","trust_creator":"p1"}`,
		`{"type":"Trust","id":"t2","top_account_id":"TA-1","legal_name":"T2","trust_type":"DynastyTrust","trust_creator":"p1"}`,
	}, "\n") + "\n"
	res := b.load(t, sftpd.People, []byte(file), 5, 3)
	if res.Model != advisorspec.BulkModelTopAccounts {
		t.Errorf("got model %q, want %q", res.Model, advisorspec.BulkModelTopAccounts)
	}
	wantErrs := []advisorspec.BulkLineError{
		{Line: 4, ID: "p2", Field: "trust_creator", Message: "trust_creator is not a field of Individual rows"},
		{Line: 5, ID: "t2", Field: "trust_creator", Message: "trust_creator must be an array of strings in the deprecated top-account model, not a string"},
	}
	if !slices.Equal(res.Errors, wantErrs) {
		t.Errorf("got errors %+v, want %+v", res.Errors, wantErrs)
	}
	var list struct{ Contacts []map[string]any }
	b.v2("GET", "/v2/top-accounts/"+wid+"/contacts/", nil).wantOK(t).decode(t, &list)
	got := map[string]map[string]any{}
	for _, c := range list.Contacts {
		got[c["external_id"].(string)] = c
	}
	if len(got) != 3 || !jsonEqual(t, got["t1"]["trust_creator"], []string{"p1"}) ||
		!jsonEqual(t, got["e1"]["ownership"], []map[string]any{{"percentage": 100, "owner_id": "p1"}}) {
		t.Errorf("got top account cards %v, want p1, t1 created by p1 and e1 owned by p1", got)
	}
}

// Container-model rows name "an existing top account or one in the Add/Update Top Accounts
// file": the sandbox ingests top-accounts-<UTC timestamp>.jsonl, adding each top account its
// rows name by id (its external_id) or renaming one that exists, never removing one; invalid
// rows are reported by line, and a People file uploaded after it names its top accounts.
func TestBulkTopAccountsFileAddsOrUpdatesTopAccounts(t *testing.T) {
	b := newBulkFixture(t)
	wid := b.addTopAccount("TA-OLD", "Old name")
	b.addTopAccount("TA-KEPT", "Kept")
	accounts := strings.Join([]string{
		`{"id":"TA-NEW","name":"Okafor Family"}`,
		`{"id":"TA-OLD","name":"New name"}`,
		`{"id":"TA-BAD"}`,
		`{"id":"TA-NEW","name":"Again"}`,
		`{"id":"` + strings.Repeat("x", 51) + `","name":"Too long"}`,
	}, "\n") + "\n"
	res := b.load(t, sftpd.TopAccounts, []byte(accounts), 5, 2)
	wantErrs := []advisorspec.BulkLineError{
		{Line: 3, ID: "TA-BAD", Field: "name", Message: "name is required"},
		{Line: 4, ID: "TA-NEW", Field: "id", Message: `id "TA-NEW" is already used on line 1`},
		{Line: 5, Field: "id", Message: "id must be at most 50 characters"},
	}
	if res.Kind != advisorspec.BulkKindTopAccounts || !slices.Equal(res.Errors, wantErrs) {
		t.Errorf("got kind %q, errors %+v; want %q, %+v", res.Kind, res.Errors, advisorspec.BulkKindTopAccounts, wantErrs)
	}
	var page struct {
		TopAccounts []struct {
			WID        string `json:"wid"`
			ExternalID string `json:"external_id"`
			Name       string `json:"name"`
		} `json:"top_accounts"`
	}
	b.v2("GET", "/v2/top-accounts/", nil).wantOK(t).decode(t, &page)
	got := map[string]string{}
	for _, ta := range page.TopAccounts {
		got[ta.ExternalID] = ta.Name
		if ta.ExternalID == "TA-OLD" && ta.WID != wid {
			t.Errorf("TA-OLD has wid %s after its update, want %s", ta.WID, wid)
		}
	}
	if want := map[string]string{"TA-NEW": "Okafor Family", "TA-OLD": "New name", "TA-KEPT": "Kept"}; !maps.Equal(got, want) {
		t.Errorf("got top accounts %v, want %v", got, want)
	}
	people := `{"type":"Individual","id":"p1","top_account_id":"TA-NEW","first_name":"Ada","last_name":"Okafor"}` + "\n" +
		`{"type":"Individual","id":"p2","top_account_id":"TA-BAD","first_name":"A","last_name":"B"}` + "\n"
	res = b.load(t, sftpd.People, []byte(people), 2, 1)
	want := []advisorspec.BulkLineError{{Line: 2, ID: "p2", Field: "top_account_id",
		Message: `top_account_id "TA-BAD" names no top account of the Top Accounts file and no existing one`}}
	if !slices.Equal(res.Errors, want) {
		t.Errorf("the People file: got errors %+v, want %+v", res.Errors, want)
	}
}

// "Ids are the caller's: a row whose id exists updates that card"; "a record missing from a
// file is left unchanged".
func TestBulkPeopleRowUpdatesAnExistingCard(t *testing.T) {
	b := newBulkFixture(t)
	clAdd(t, b.fixture, clMinimal("C-1", "Ada", "Lovelace"), 201)
	created := ccOn(b.fixture, t).v1("POST", ccPath("C-1"), map[string]any{
		"type": "Individual", "external_id": "X-1", "first_name": "Anne", "last_name": "Milbanke", "dob": "1792-05-17"}).wantOK(t)
	id := str(t, created.object(t), "id")
	file := `{"type":"Individual","id":"X-1","client_id":"C-1","first_name":"Anne","last_name":"Byron"}` + "\n" +
		`{"type":"Trust","id":"X-1","client_id":"C-1","legal_name":"T","trust_type":"DynastyTrust"}` + "\n"
	res := b.load(t, sftpd.People, []byte(file), 2, 1)
	if want := []advisorspec.BulkLineError{{Line: 2, ID: "X-1", Field: "id", Message: `id "X-1" is already used on line 1`}}; !slices.Equal(res.Errors, want) {
		t.Errorf("got errors %+v, want %+v", res.Errors, want)
	}
	card := ccOn(b.fixture, t).v1("GET", ccItem("C-1", id), nil).wantOK(t).object(t)
	if card["last_name"] != "Byron" || card["dob"] != "1792-05-17" || card["external_id"] != "X-1" {
		t.Errorf("got card %v, want last_name Byron with dob and external_id kept", card)
	}
	if n := len(ccList(t, b.fixture, ccPath("C-1"))); n != 2 {
		t.Errorf("got %d cards, want 2: the primary card and X-1 updated in place", n)
	}
	// A row cannot turn a card into another kind.
	res = b.load(t, sftpd.People, []byte(`{"type":"Trust","id":"X-1","client_id":"C-1","legal_name":"T","trust_type":"DynastyTrust"}`+"\n"), 1, 0)
	if want := []advisorspec.BulkLineError{{Line: 1, ID: "X-1", Field: "type", Message: `id "X-1" names a Individual card; a row cannot change a card's type`}}; !slices.Equal(res.Errors, want) {
		t.Errorf("got errors %+v, want %+v", res.Errors, want)
	}
}

// Files that are refused in part or whole. The spec README: "bulk row errors: reported per line
// (line number, field, message)"; the sandbox applies the valid rows of a file and reports the
// rest, and a file that fails as a whole applies nothing.
func TestBulkFilesWithErrors(t *testing.T) {
	for _, tc := range []struct {
		name, rule    string
		kind          sftpd.Kind
		file          string
		rows, applied int
		errs          []advisorspec.BulkLineError
		fileError     string
		cards         int // C-1's cards afterwards
	}{
		{name: "valid rows applied, invalid ones listed by line",
			rule: "In every row, client_id ... must name an existing client or a client in the Clients file",
			kind: sftpd.People,
			file: `{"type":"Individual","id":"p1","client_id":"C-1","first_name":"A","last_name":"L"}` + "\n" +
				"\n" +
				`{"type":"Individual","id":"p2","client_id":"C-1","first_name":"No last name"}` + "\n" +
				`{"type":"Trust","id":"t1","client_id":"C-1","legal_name":"T","trust_type":"DynastyTrust","trust_creator":"p2"}` + "\n" +
				`{"type":"Individual","id":"p3","client_id":"C-9","first_name":"A","last_name":"L"}` + "\n" +
				`{"type":"Trust","id":"t2","client_id":"C-1","legal_name":"T","trust_type":"DynastyTrust","trust_creator":["p1","q1"]}` + "\n" +
				`{"type":"Individual","id":"q1","client_id":"C-2","first_name":"A","last_name":"L"}` + "\n",
			rows: 6, applied: 2, cards: 2,
			errs: []advisorspec.BulkLineError{
				{Line: 3, ID: "p2", Field: "last_name", Message: "last_name is required"},
				{Line: 4, ID: "t1", Field: "trust_creator", Message: `trust_creator "p2" names the row on line 3, which is invalid`},
				{Line: 5, ID: "p3", Field: "client_id", Message: `client_id "C-9" names no client of the Clients file and no existing one`},
				{Line: 6, ID: "t2", Field: "trust_creator", Message: `trust_creator "q1" names no person, trust or entity of client_id "C-1"`},
			}},
		{name: "a row naming a row refused for another client's card is not applied either",
			rule: "a reference names a card that exists once the file is applied",
			kind: sftpd.People,
			file: `{"type":"Individual","id":"q1","client_id":"C-2","first_name":"A","last_name":"L"}` + "\n" +
				`{"type":"Trust","id":"t1","client_id":"C-1","legal_name":"T","trust_type":"DynastyTrust","trust_creator":"q1"}` + "\n" +
				`{"type":"Entity","id":"e1","client_id":"C-1","legal_name":"E","ownership":[{"percentage":100,"owner_id":"t1"}]}` + "\n" +
				`{"type":"Individual","id":"p1","client_id":"C-1","first_name":"A","last_name":"L"}` + "\n",
			rows: 4, applied: 2, cards: 2,
			errs: []advisorspec.BulkLineError{
				{Line: 2, ID: "t1", Field: "trust_creator", Message: `trust_creator "q1" names no person, trust or entity of client_id "C-1"`},
				{Line: 3, ID: "e1", Field: "ownership[0].owner_id", Message: `ownership[0].owner_id "t1" names the row on line 2, which is invalid`},
			}},
		{name: "an empty file", rule: "a file that fails as a whole", kind: sftpd.People, file: "\n\n",
			fileError: "People/Trusts/Entities file: the file has no rows", cards: 1},
		{name: "a file that is not UTF-8", rule: "a non-UTF-8 file ... gets a specific error", kind: sftpd.Clients,
			file: "{\"id\":\"C-3\",\"first_name\":\"Ren\xe9e\",\"last_name\":\"L\"}\n",
			rows: 1, fileError: "Clients file: every row of the file is invalid", cards: 1,
			errs: []advisorspec.BulkLineError{{Line: 1, Message: "line is not valid UTF-8"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBulkFixture(t)
			clAdd(t, b.fixture, clMinimal("C-1", "Ada", "Lovelace"), 201)
			clAdd(t, b.fixture, clMinimal("C-2", "Grace", "Hopper"), 201)
			res := b.load(t, tc.kind, []byte(tc.file), tc.rows, tc.applied)
			if !slices.Equal(res.Errors, tc.errs) && !(len(res.Errors) == 0 && len(tc.errs) == 0) {
				t.Errorf("%s: got errors %+v, want %+v", tc.rule, res.Errors, tc.errs)
			}
			if res.ErrorCount != len(tc.errs) || res.FileError != tc.fileError {
				t.Errorf("%s: got error count %d, file error %q; want %d, %q", tc.rule, res.ErrorCount, res.FileError, len(tc.errs), tc.fileError)
			}
			if n := len(ccList(t, b.fixture, ccPath("C-1"))); n != tc.cards {
				t.Errorf("got %d cards of C-1, want %d", n, tc.cards)
			}
		})
	}
}

// "never a partial file (.part names are ignored)": a file left under its .part name is not
// ingested. Files are ingested in the order they arrive, so once a later file has its result
// the .part file would have had one.
func TestBulkPartFileIsNeverIngested(t *testing.T) {
	b := newBulkFixture(t)
	part := "/" + sftpd.Name(sftpd.Clients, b.bulk.Next) + ".part"
	b.bulk.Next = b.bulk.Next.Add(time.Second)
	b.bulk.Write(t, part, []byte(`{"id":"C-PART","first_name":"A","last_name":"L"}`+"\n"))
	b.load(t, sftpd.Clients, []byte(`{"id":"C-1","first_name":"A","last_name":"L"}`+"\n"), 1, 1)
	if _, err := b.bulk.Stat(advisorspec.BulkResultName(strings.TrimSuffix(part, ".part"))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v for the .part file's result, want none", err)
	}
	b.v1("GET", ccPath("C-PART"), nil).wantError(t, 404, "Client not found")
}

// "A People file naming a client in a Clients file" uploaded with it: the gateway uploads the
// Clients file first, and the sandbox ingests files in the order they arrive, so the People
// file's client_id finds the client.
func TestBulkPeopleFileNamesClientsOfTheClientsFileUploadedBefore(t *testing.T) {
	b := newBulkFixture(t)
	clients := b.bulk.Upload(t, sftpd.Clients, []byte(`{"id":"C-7","primary_id":"P-7","first_name":"Ada","last_name":"L"}`+"\n"))
	people := b.bulk.Upload(t, sftpd.People, []byte(`{"type":"Individual","id":"P-7","client_id":"C-7","first_name":"Ada","last_name":"Lovelace"}`+"\n"))
	if res := b.bulk.Result(t, clients); res.Applied != 1 {
		t.Errorf("got %+v for the Clients file, want its row applied", res)
	}
	if res := b.bulk.Result(t, people); res.Applied != 1 || res.ErrorCount != 0 {
		t.Errorf("got %+v for the People file, want its row applied", res)
	}
	cards := cardsByExternalID(t, b.fixture, ccPath("C-7"))
	if len(cards) != 1 || cards["P-7"]["last_name"] != "Lovelace" {
		t.Errorf("got cards %v, want the primary card P-7 renamed Lovelace", cards)
	}
}

// The result's JSON names, as the README documents them and the gateway reads them
// (advisorspec.BulkResult): model only for a People file, file_error only when nothing was
// applied.
func TestBulkResultShape(t *testing.T) {
	b := newBulkFixture(t)
	for _, tc := range []struct {
		kind sftpd.Kind
		file string
		keys []string
	}{
		{sftpd.Clients, `{"id":"C-1","first_name":"A","last_name":"L"}` + "\n",
			[]string{"applied", "error_count", "errors", "file", "invalid", "kind", "processed_at", "rows"}},
		{sftpd.People, "",
			[]string{"applied", "error_count", "errors", "file", "file_error", "invalid", "kind", "model", "processed_at", "rows"}},
	} {
		name := b.bulk.Upload(t, tc.kind, []byte(tc.file))
		b.bulk.Result(t, name) // waits for it
		f, err := b.bulk.Open(advisorspec.BulkResultName(name))
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]json.RawMessage
		err = json.NewDecoder(f).Decode(&raw)
		_ = f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(mapKeys(raw)); !slices.Equal(got, tc.keys) {
			t.Errorf("%s: got keys %q, want %q", name, got, tc.keys)
		}
		if string(raw["errors"]) == "null" {
			t.Errorf("%s: got errors null, want an array", name)
		}
	}
}

// "An API user with access to several advisors or teams supplies advisor_id and team_id", and
// the Clients file has no field for either: once the API user reaches a second advisor, a
// Clients file is refused whole, saying why in its file_error ("file_error" is empty only when
// rows were applied), and nothing of it is applied, an existing client's row included. A
// People file still loads: its rows name clients, each of one advisor.
func TestBulkClientsFileUnderSeveralAdvisorsIsRefusedWhole(t *testing.T) {
	b := newBulkFixture(t)
	clAdd(t, b.fixture, clMinimal("C-1", "Ada", "Lovelace"), 201)
	if r := b.v1("POST", clientsPath+"?advisor_id=adv-2", clMinimal("C-2", "Bo", "Lee")); r.status != 201 {
		t.Fatalf("add a client for a second advisor: status %d, body %s", r.status, r.body)
	}
	file := `{"id":"C-1","first_name":"Ada","last_name":"Byron"}` + "\n" + `{"id":"C-3","first_name":"Cy","last_name":"New"}` + "\n"
	res := b.load(t, sftpd.Clients, []byte(file), 2, 0)
	if want := "advisor_id is required when the API user can access multiple advisors"; !strings.HasPrefix(res.FileError, want) {
		t.Errorf("got file error %q, want it to begin %q", res.FileError, want)
	}
	b.v1("GET", ccPath("C-3"), nil).wantError(t, 400, "advisor_id is required when the API user can access multiple advisors")
	if r := b.v1("GET", ccPath("C-3")+"?advisor_id=adv-001", nil); r.status != 404 {
		t.Errorf("C-3 after the refused file: status %d, want 404", r.status)
	}
	people := `{"type":"Individual","id":"p1","client_id":"C-1","first_name":"A","last_name":"L"}` + "\n"
	if res := b.load(t, sftpd.People, []byte(people), 1, 1); res.FileError != "" {
		t.Errorf("People file: got file error %q, want none", res.FileError)
	}
}

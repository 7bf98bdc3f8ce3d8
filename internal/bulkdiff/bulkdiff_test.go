package bulkdiff_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulkfile"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

const accessToken = "bulkdiff-token"

// file is a bulk file of one kind.
type file struct {
	kind sftpd.Kind
	text string
}

func clients(rows ...string) file { return file{sftpd.Clients, lines(rows...)} }
func people(rows ...string) file  { return file{sftpd.People, lines(rows...)} }
func topAccounts(rows ...string) file {
	return file{sftpd.TopAccounts, lines(rows...)}
}

func lines(rows ...string) string {
	if len(rows) == 0 {
		return ""
	}
	return strings.Join(rows, "\n") + "\n"
}

// world is what the firm has before the files compared arrive: top accounts made over REST, and
// files the sandbox applies whole.
type world struct {
	topAccounts []string // external ids
	files       []file
}

// lookups answers the gateway's checker as the sandbox's store would: the clients of the
// world's Clients files, and the cards their primary_id and spouse_id link (people); the cards of
// its People files, each of its client; its top accounts.
func (w world) lookups() (exists func(advisorspec.RefKind, string) bool, card func(advisorspec.RowRef, string) (advisorspec.ContactType, bool)) {
	known := map[advisorspec.RefKind]map[string]bool{advisorspec.RefClient: {}, advisorspec.RefTopAccount: {}}
	cards := map[[2]string]advisorspec.ContactType{} // by owner and id
	for _, id := range w.topAccounts {
		known[advisorspec.RefTopAccount][id] = true
	}
	for _, f := range w.files {
		for _, line := range strings.Split(strings.TrimSpace(f.text), "\n") {
			if f.kind == sftpd.TopAccounts {
				row, _ := advisorspec.CheckTopAccountRow([]byte(line))
				known[advisorspec.RefTopAccount][row.ID] = true
				continue
			}
			if f.kind == sftpd.Clients {
				row, _ := advisorspec.CheckClientRow([]byte(line))
				known[advisorspec.RefClient][row.ID] = true
				for _, link := range []*string{row.PrimaryID, row.SpouseID} {
					if link != nil {
						cards[[2]string{row.ID, *link}] = advisorspec.Individual
					}
				}
				continue
			}
			var row struct {
				ID           string `json:"id"`
				ClientID     string `json:"client_id"`
				TopAccountID string `json:"top_account_id"`
				Type         string `json:"type"`
			}
			_ = json.Unmarshal([]byte(line), &row)
			cards[[2]string{row.ClientID + row.TopAccountID, row.ID}] = advisorspec.ContactType(row.Type)
		}
	}
	exists = func(kind advisorspec.RefKind, id string) bool { return known[kind][id] }
	card = func(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool) {
		typ, ok := cards[[2]string{owner.ID, id}]
		return typ, ok
	}
	return exists, card
}

// verdict is what one side made of one file: how many rows it counted, why it refused the file
// whole if it did, and each invalid line's errors as "field: message", sorted.
type verdict struct {
	rows      int
	fileError string
	invalid   map[int][]string
}

func verdictOf(rows int, fileError string, errs []advisorspec.BulkLineError) verdict {
	v := verdict{rows: rows, fileError: fileError, invalid: map[int][]string{}}
	for _, e := range errs {
		v.invalid[e.Line] = append(v.invalid[e.Line], e.Field+": "+e.Message)
	}
	for _, msgs := range v.invalid {
		slices.Sort(msgs)
	}
	return v
}

// checkWithBulkfile is the gateway's verdict: the files checked as one upload, in their order
// (the cases put Top Accounts and Clients first, as the gateway sends them).
func checkWithBulkfile(t *testing.T, w world, model advisorspec.BulkModel, files []file) []verdict {
	t.Helper()
	exists, card := w.lookups()
	u := bulkfile.NewUpload(bulkfile.Options{Exists: exists, Card: card, MaxErrors: 100_000})
	var out []verdict
	for _, f := range files {
		format := bulkfile.Clients()
		switch f.kind {
		case sftpd.People:
			format = bulkfile.People(model)
		case sftpd.TopAccounts:
			format = bulkfile.TopAccounts()
		}
		rep, err := u.Validate(context.Background(), strings.NewReader(f.text), format, nil)
		fileError := ""
		if err != nil {
			fileError = err.Error()
		}
		out = append(out, verdictOf(rep.Rows, fileError, rep.Errors))
	}
	return out
}

// loadIntoSandbox is the service's verdict: a sandbox of its own is given the world, then the
// files over SFTP, and each file's result is read back.
func loadIntoSandbox(t *testing.T, w world, files []file) []verdict {
	t.Helper()
	s := sandboxtest.Start(t, sandbox.Options{Empty: true, AccessToken: accessToken})
	for _, id := range w.topAccounts {
		addTopAccount(t, s, id)
	}
	addr, fp := sandboxtest.ServeSFTP(t, s.Sandbox)
	c, err := sandboxtest.DialSFTP(t, addr, fp, "sandbox", "sandbox")
	if err != nil {
		t.Fatalf("log in to the sandbox's SFTP server: %v", err)
	}
	bulk := sandboxtest.NewBulk(c)
	for _, f := range w.files {
		if res := bulk.Result(t, bulk.Upload(t, f.kind, []byte(f.text))); res.Applied != res.Rows || res.Rows == 0 {
			t.Fatalf("the world's %s file: got %+v, want every row applied", f.kind, res)
		}
	}
	var out []verdict
	for _, f := range files {
		res := bulk.Result(t, bulk.Upload(t, f.kind, []byte(f.text)))
		out = append(out, verdictOf(res.Rows, res.FileError, res.Errors))
	}
	return out
}

func addTopAccount(t *testing.T, s *sandboxtest.Server, externalID string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"external_id": externalID, "name": externalID + " household"})
	req, err := http.NewRequest("POST", s.URL+"/v2/top-accounts/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+accessToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("add top account %s: got status %d, want 2xx", externalID, resp.StatusCode)
	}
}

// Rows the cases are made of.
const (
	clientC1 = `{"id":"C-1","primary_id":"P-1","first_name":"Ada","last_name":"Lovelace"}`
	clientC2 = `{"id":"C-2","first_name":"Grace","last_name":"Hopper"}`
)

func individual(id, client string) string {
	return fmt.Sprintf(`{"type":"Individual","id":%q,"client_id":%q,"first_name":"A","last_name":"B"}`, id, client)
}

func trust(id, client, creators string) string {
	return fmt.Sprintf(`{"type":"Trust","id":%q,"client_id":%q,"legal_name":"T","trust_type":"DynastyTrust","trust_creator":%s}`, id, client, creators)
}

func entity(id, client, ownership string) string {
	return fmt.Sprintf(`{"type":"Entity","id":%q,"client_id":%q,"legal_name":"E","ownership":%s}`, id, client, ownership)
}

// invalidIndividual breaks a row rule: last_name is required.
func invalidIndividual(id, client string) string {
	return fmt.Sprintf(`{"type":"Individual","id":%q,"client_id":%q,"first_name":"A"}`, id, client)
}

// padded pads a row with JSON whitespace before its closing brace to n bytes.
func padded(row string, n int) string {
	return row[:len(row)-1] + strings.Repeat(" ", n-len(row)) + "}"
}

// withClients is a world of two clients, C-1 with its primary card linked to P-1.
var withClients = world{files: []file{clients(clientC1, clientC2)}}

// withCards adds, to withClients, cards X-1 (a person) and X-2 of C-1.
var withCards = world{files: []file{clients(clientC1, clientC2), people(individual("X-1", "C-1"), individual("X-2", "C-1"))}}

// The same files, checked by the gateway and loaded into the sandbox, get the same verdict on
// every line: the same rows counted, the same lines invalid for the same reasons, the same
// files refused whole. Where they differ, the case says which is right and why (differ, keyed
// "<kind>:<line>", or "<kind>:file" for the rows counted or the file's refusal); a difference
// not listed fails, and so does a listed one that is gone.
func TestTheGatewaysChecksAgreeWithTheSandboxs(t *testing.T) {
	max := advisorspec.MaxBulkLineBytes
	for _, tc := range []struct {
		name   string
		world  world
		model  advisorspec.BulkModel
		files  []file
		differ map[string]string
	}{
		// Lines: what a row is.
		{name: "a byte-order mark, CRLF endings, blank and whitespace lines, no final newline",
			files: []file{{sftpd.Clients, "\ufeff" + clientC1 + "\r\n\r\n \t \r\n" + clientC2}}},
		{name: "a byte-order mark on a later line is part of that row",
			files: []file{{sftpd.Clients, clientC1 + "\n\ufeff" + clientC2 + "\n"}}},
		{name: "a line of other spaces than JSON's is not blank",
			files: []file{{sftpd.Clients, clientC1 + "\n\u00a0\n\f\n" + clientC2 + "\n"}}},
		{name: "a line of exactly the limit, CRLF ended, and one a byte longer",
			files: []file{{sftpd.Clients, padded(clientC1, max) + "\r\n" + padded(clientC2, max+1) + "\r\n"}}},
		{name: "a first line of exactly the limit after a byte-order mark",
			files: []file{{sftpd.Clients, "\ufeff" + padded(clientC1, max) + "\n" + clientC2 + "\n"}}},
		{name: "a line that is not UTF-8",
			files: []file{clients(clientC1, "{\"id\":\"C-\xff\",\"first_name\":\"A\",\"last_name\":\"B\"}")}},
		{name: "rows that are not objects, and malformed JSON",
			files: []file{clients(clientC1, `[]`, `"C-3"`, `null`, `{}`, `{"id":"C-4",`)}},
		{name: "an empty file", files: []file{{sftpd.Clients, ""}}},
		{name: "a file of blank lines", files: []file{{sftpd.People, "\n  \r\n\t\n"}}},
		{name: "a file whose every row is invalid", files: []file{clients(`{"id":"C-1"}`, `{"first_name":"A"}`)}},

		// The Clients file's rules.
		{name: "ids and names at and over 255 characters, counted in characters",
			files: []file{clients(
				fmt.Sprintf(`{"id":%q,"first_name":%q,"last_name":"B"}`, strings.Repeat("i", 255), strings.Repeat("é", 255)),
				fmt.Sprintf(`{"id":%q,"first_name":"A","last_name":"B"}`, strings.Repeat("i", 256)),
				fmt.Sprintf(`{"id":"C-3","first_name":%q,"last_name":"B"}`, strings.Repeat("é", 256)),
			)}},
		{name: "unknown fields, the REST API's names, enums spelled exactly",
			files: []file{clients(
				`{"id":"C-1","first_name":"A","last_name":"B","nickname":"Al"}`,
				`{"id":"C-2","first_name":"A","last_name":"B","external_id":"C-2"}`,
				`{"id":"C-3","first_name":"A","last_name":"B","marital_status":"single"}`,
				`{"id":"C-4","first_name":"A","last_name":"B","marital_status":"DomesticPartnership","existing_estate_plan":"Will"}`,
				`{"id":"C-5","first_name":"A","last_name":"B","selected_primary_document":"Two Last Will and Testaments"}`,
				`{"id":"C-6","first_name":"A","last_name":"B","selected_primary_document":"two last will and testaments"}`,
				`{"id":"C-7","first_name":null,"last_name":"B","email":null}`,
				`{"id":"C-8","first_name":"A","last_name":"B","spouse_id":"S-8"}`,
			)}},
		{name: "a repeated client id, the first row invalid",
			files: []file{clients(`{"id":"C-1","first_name":"A"}`, clientC1, clientC2, clientC2)}},

		// The People file's rules.
		{name: "the sample files", files: []file{
			{sftpd.Clients, readSample(t, "clients.jsonl")}, {sftpd.People, readSample(t, "people.jsonl")}}},
		{name: "ids and legal names at and over their limits", world: withClients,
			files: []file{people(
				individual(strings.Repeat("p", 255), "C-1"),
				individual(strings.Repeat("p", 256), "C-1"),
				individual("P-3", strings.Repeat("c", 256)),
				`{"type":"Trust","id":"T-1","client_id":"C-1","legal_name":"`+strings.Repeat("t", 500)+`","trust_type":"DynastyTrust"}`,
				`{"type":"Trust","id":"T-2","client_id":"C-1","legal_name":"`+strings.Repeat("t", 501)+`","trust_type":"DynastyTrust"}`,
				`{"type":"Entity","id":"E-1","client_id":"C-1","legal_name":"`+strings.Repeat("e", 255)+`"}`,
				`{"type":"Entity","id":"E-2","client_id":"C-1","legal_name":"`+strings.Repeat("e", 256)+`"}`,
			)}},
		{name: "types and enums spelled exactly, states, dates", world: withClients,
			files: []file{people(
				`{"type":"individual","id":"P-2","client_id":"C-1","first_name":"A","last_name":"B"}`,
				`{"type":"Trust","id":"T-1","client_id":"C-1","legal_name":"T","trust_type":"LivingTrust"}`,
				`{"type":"Trust","id":"T-2","client_id":"C-1","legal_name":"T","trust_type":"DynastyTrust","governing_state":"or","creation_date":"2024-02-30"}`,
				`{"type":"Trust","id":"T-3","client_id":"C-1","legal_name":"T","trust_type":"SpousalLifetimeAccessTrust","governing_state":"OR","creation_date":"2024-02-29"}`,
				`{"type":"Entity","id":"E-1","client_id":"C-1","legal_name":"E","incorporation_form":"LimitedPartnership"}`,
				`{"type":"Entity","id":"E-2","client_id":"C-1","legal_name":"E","incorporation_form":"DonorAdvisorFund","incorporation_state":"XX"}`,
			)}},
		{name: "unknown fields, fields of another type, the other model's field, nulls", world: withClients,
			files: []file{people(
				`{"type":"Individual","id":"P-2","client_id":"C-1","first_name":"A","last_name":"B","dob":"1990-01-01"}`,
				`{"type":"Individual","id":"P-3","client_id":"C-1","first_name":"A","last_name":"B","legal_name":"L"}`,
				`{"type":"Individual","id":"P-4","client_id":"C-1","top_account_id":"TA-1","first_name":"A","last_name":"B"}`,
				`{"type":"Individual","id":"P-5","client_id":"C-1","first_name":"A","last_name":"B","middle_name":null}`,
				`{"type":"Individual","id":"P-6","client_id":"C-1","first_name":"A","last_name":null}`,
				`{"type":"Individual","id":"P-7","client_id":"C-1","first_name":"A","last_name":"B","first_name":"C"}`,
			)}},
		{name: "ownership entries", world: withClients,
			files: []file{people(
				individual("P-2", "C-1"), individual("P-3", "C-1"),
				entity("E-1", "C-1", `[{"percentage":50,"owner_id":["P-2","P-3"]},{"percentage":50,"owner_id":"P-1"}]`),
				entity("E-2", "C-1", `[{"percentage":101,"owner_id":"P-2"},{"percentage":-1,"owner_id":"P-3"}]`),
				entity("E-3", "C-1", `[{"percentage":"50","owner_id":"P-2"},{"percentage":50}]`),
				entity("E-4", "C-1", `[{"percentage":50,"owner_id":"P-2"},{"percentage":50,"owner_id":["P-2","P-3"]}]`),
				entity("E-5", "C-1", `[{"percentage":50,"owner_id":[]},{"percentage":50,"owner_id":"P-3","share":1}]`),
				entity("E-6", "C-1", `{"percentage":100,"owner_id":"P-2"}`),
			)}},

		// Ids and references.
		{name: "a repeated id, the first row invalid, and a reference to it", world: withClients,
			files: []file{people(
				invalidIndividual("P-2", "C-1"), individual("P-2", "C-1"), trust("T-1", "C-1", `"P-2"`),
				individual("P-3", "C-1"), individual("P-3", "C-1"))}},
		{name: "references backward and forward, to a card that exists, to a linked card, dangling, to itself", world: withCards,
			files: []file{people(
				individual("P-2", "C-1"),
				trust("T-1", "C-1", `["P-2","P-3"]`),
				individual("P-3", "C-1"),
				trust("T-2", "C-1", `["X-1","P-1"]`),
				trust("T-3", "C-1", `"Q-9"`),
				trust("T-4", "C-1", `"T-4"`),
			)}},
		{name: "references to invalid rows above and below", world: withClients,
			files: []file{people(
				invalidIndividual("P-2", "C-1"),
				trust("T-1", "C-1", `["P-2","P-3"]`),
				invalidIndividual("P-3", "C-1"),
			)}},
		{name: "a row naming a row below that names a row that is nowhere", world: withClients,
			files: []file{people(
				trust("T-1", "C-1", `"T-2"`),
				trust("T-2", "C-1", `"Q-9"`),
				entity("E-1", "C-1", `[{"percentage":100,"owner_id":"T-1"}]`),
			)}},
		{name: "rows naming each other in a circle", world: withClients,
			files: []file{people(
				trust("T-1", "C-1", `"E-1"`),
				entity("E-1", "C-1", `[{"percentage":100,"owner_id":"T-1"}]`),
				trust("T-2", "C-1", `"E-2"`),
				entity("E-2", "C-1", `[{"percentage":100,"owner_id":"T-2"},{"percentage":0,"owner_id":"Q-9"}]`),
			)}},
		{name: "a reference to a card that exists, whose row in the file is invalid", world: withCards,
			files: []file{people(
				invalidIndividual("X-1", "C-1"),
				trust("T-1", "C-1", `["X-1","X-2"]`),
				invalidIndividual("X-2", "C-1"),
			)}},
		{name: "a client of the Clients file, an invalid one and one nowhere",
			files: []file{
				clients(clientC1, `{"id":"C-2","first_name":"A"}`),
				people(individual("P-2", "C-1"), individual("P-3", "C-2"), individual("P-4", "C-9")),
			}},
		{name: "a reference to a card of another client", world: withClients,
			files: []file{people(individual("P-2", "C-2"), trust("T-1", "C-1", `"P-2"`))}},
		{name: "a row naming a row that names a card of another client", world: withClients,
			files: []file{people(
				individual("P-2", "C-2"),
				trust("T-1", "C-1", `"P-2"`),
				entity("E-1", "C-1", `[{"percentage":100,"owner_id":"T-1"}]`),
				individual("P-3", "C-1"),
			)}},
		{name: "a card of another client, and a row of another client whose id is a card of the row's own", world: withCards,
			files: []file{people(
				individual("X-1", "C-2"),
				trust("T-1", "C-1", `"X-1"`),
				trust("T-2", "C-2", `"X-2"`),
				individual("P-2", "C-1"),
			)}},
		{name: "a row two ways from rows invalid on their own", world: withClients,
			files: []file{people(
				trust("T-1", "C-1", `["T-2","P-3"]`),
				trust("T-2", "C-1", `"P-2"`),
				invalidIndividual("P-2", "C-1"),
				invalidIndividual("P-3", "C-1"),
				trust("T-4", "C-1", `["T-1","T-2"]`),
				individual("P-4", "C-1"),
			)}},
		{name: "the same rows in the opposite order", world: withClients,
			files: []file{people(
				individual("P-4", "C-1"),
				trust("T-4", "C-1", `["T-1","T-2"]`),
				invalidIndividual("P-3", "C-1"),
				invalidIndividual("P-2", "C-1"),
				trust("T-2", "C-1", `"P-2"`),
				trust("T-1", "C-1", `["T-2","P-3"]`),
			)}},
		{name: "a row that would change a card's type", world: withCards,
			// A valid row beside it, as the sandbox refuses the row when applying it, after it has
			// found the file not wholly invalid.
			files: []file{people(trust("X-1", "C-1", `"X-2"`), individual("P-2", "C-1"))}},
		{name: "a row naming a row that would change a card's type names the card", world: withCards,
			files: []file{people(trust("T-1", "C-1", `"X-1"`), trust("X-1", "C-1", `"P-2"`), individual("P-2", "C-1"))}},

		// The deprecated container model.
		{name: "the container model: arrays only, top accounts that exist or not, the other model's field",
			world: world{topAccounts: []string{"TA-1"}}, model: advisorspec.TopAccountModel,
			files: []file{people(
				`{"type":"Individual","id":"p1","top_account_id":"TA-1","first_name":"Ada","last_name":"L"}`,
				`{"type":"Trust","id":"t1","top_account_id":"TA-1","legal_name":"T","trust_type":"DynastyTrust","trust_creator":["p1"]}`,
				`{"type":"Trust","id":"t2","top_account_id":"TA-1","legal_name":"T","trust_type":"DynastyTrust","trust_creator":"p1"}`,
				`{"type":"Entity","id":"e1","top_account_id":"TA-1","legal_name":"E","ownership":[{"percentage":100,"owner_id":"p1"}]}`,
				`{"type":"Individual","id":"p2","top_account_id":"TA-9","first_name":"A","last_name":"B"}`,
				`{"type":"Individual","id":"p3","client_id":"C-1","first_name":"A","last_name":"B"}`,
				`{"type":"Entity","id":"e2","top_account_id":"TA-1","legal_name":"E","ownership":[{"percentage":100,"owner_id":["p1","t1"]}]}`,
			)}},
		{name: "the container model's Add/Update Top Accounts file: limits, repeats, and People rows naming its rows",
			world: world{topAccounts: []string{"TA-1"}}, model: advisorspec.TopAccountModel,
			files: []file{
				topAccounts(
					`{"id":"TA-2","name":"Okafor Family"}`,
					`{"id":"TA-1","name":"Renamed"}`,
					`{"id":"TA-3"}`,
					`{"id":"TA-2","name":"Again"}`,
					`{"id":"`+strings.Repeat("t", 50)+`","name":"`+strings.Repeat("n", 255)+`"}`,
					`{"id":"`+strings.Repeat("t", 51)+`","name":"N"}`,
					`{"id":"TA-4","name":"N","external_id":"TA-4"}`,
					`{"id":"TA-5","name":"N","wid":"w"}`,
					`[]`,
				),
				people(
					`{"type":"Individual","id":"p1","top_account_id":"TA-2","first_name":"A","last_name":"B"}`,
					`{"type":"Individual","id":"p2","top_account_id":"TA-1","first_name":"A","last_name":"B"}`,
					`{"type":"Individual","id":"p3","top_account_id":"TA-3","first_name":"A","last_name":"B"}`,
					`{"type":"Individual","id":"p4","top_account_id":"TA-9","first_name":"A","last_name":"B"}`,
					`{"type":"Trust","id":"t1","top_account_id":"TA-2","legal_name":"T","trust_type":"DynastyTrust","trust_creator":["p1"]}`,
				),
			}},
		{name: "a Top Accounts file whose every row is invalid", files: []file{topAccounts(`{"id":"TA-1"}`, `{"name":"N"}`)}},
		{name: "an empty Top Accounts file", files: []file{{sftpd.TopAccounts, "\n"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gateway := checkWithBulkfile(t, tc.world, tc.model, tc.files)
			service := loadIntoSandbox(t, tc.world, tc.files)
			compared := map[string]bool{}
			for i, f := range tc.files {
				g, s := gateway[i], service[i]
				compare := func(key string, same bool, got string) {
					compared[key] = true
					switch why, listed := tc.differ[key]; {
					case !same && !listed:
						t.Errorf("%s: the gateway and the sandbox differ:\n%s", key, got)
					case !same:
						t.Logf("%s differs as expected (%s):\n%s", key, why, got)
					case listed:
						t.Errorf("%s: listed as a difference, but the two now agree: %s", key, got)
					}
				}
				compare(fmt.Sprintf("%s:file", f.kind), g.rows == s.rows && g.fileError == s.fileError,
					fmt.Sprintf("  gateway: %d rows, file error %q\n  sandbox: %d rows, file error %q", g.rows, g.fileError, s.rows, s.fileError))
				for _, line := range slices.Sorted(maps.Keys(mergeKeys(g.invalid, s.invalid))) {
					compare(fmt.Sprintf("%s:%d", f.kind, line), slices.Equal(g.invalid[line], s.invalid[line]),
						fmt.Sprintf("  gateway: %q\n  sandbox: %q", g.invalid[line], s.invalid[line]))
				}
			}
			for key := range tc.differ {
				if !compared[key] {
					t.Errorf("%s: listed as a difference, but neither side found the line invalid", key)
				}
			}
		})
	}
}

func mergeKeys[V any](a, b map[int]V) map[int]bool {
	out := map[int]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func readSample(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile("../../docs/examples/bulk/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

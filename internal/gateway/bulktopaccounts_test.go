package gateway_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// The deprecated container model's People rows carry "top_account_id (string max 255; an
// existing top account or one in the Add/Update Top Accounts file)": validateBulkFiles and
// uploadBulkFiles take that file as `topAccounts`, in model TOP_ACCOUNTS only, check it row by
// row, resolve the People rows' top_account_id against it, and send it over SFTP before the
// People file; the sandbox adds the top account, which GraphQL then shows.

const validateTopAccountsQuery = `mutation($topAccounts: Upload, $people: Upload, $model: BulkModel) {
  validateBulkFiles(topAccounts: $topAccounts, people: $people, model: $model) {
    valid
    topAccounts { rows validRows invalidRows errors { line id field message } errorCount fileError }
    people { rows validRows invalidRows errors { line id field message } errorCount fileError }
  }
}`

type taLineError struct {
	Line      int
	ID, Field *string
	Message   string
}

func (e taLineError) String() string {
	return fmt.Sprintf("%d %s %s: %s", e.Line, taText(e.ID), taText(e.Field), e.Message)
}

func taText(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

type taFileReport struct {
	Rows, ValidRows, InvalidRows, ErrorCount int
	Errors                                   []taLineError
	FileError                                *string
}

func TestValidateBulkFilesChecksTheTopAccountsFileOfTheContainerModel(t *testing.T) {
	t.Parallel()
	gw, _ := sandboxed(t)
	accounts, people := readSample(t, "top-accounts.jsonl"), readSample(t, "people-top-accounts.jsonl")
	top := map[string]any{"model": "TOP_ACCOUNTS"}
	for _, tc := range []struct {
		name        string
		files       map[string][]byte
		valid       bool
		topAccounts []string // the Top Accounts file's errors, as taLineError prints them
		people      []string // the People file's
	}{
		{"the sample files: People rows naming top accounts of the Top Accounts file", map[string][]byte{"topAccounts": accounts, "people": people}, true, nil, nil},
		{"the People file alone names top accounts that exist nowhere", map[string][]byte{"people": people}, false, nil, []string{
			`1 RV-P1 top_account_id: top_account_id "RIVERA-010" names no top account of the Top Accounts file and no existing one`,
			`2 RV-P2 top_account_id: top_account_id "RIVERA-010" names no top account of the Top Accounts file and no existing one`,
			`3 RV-T1 top_account_id: top_account_id "RIVERA-010" names no top account of the Top Accounts file and no existing one`,
			`3 RV-T1 trust_creator: trust_creator "RV-P1" names the row on line 1, which is invalid`,
			`3 RV-T1 trust_creator: trust_creator "RV-P2" names the row on line 2, which is invalid`,
			`3 RV-T1 initial_trustee: initial_trustee "RV-P1" names the row on line 1, which is invalid`,
			`4 LQ-P1 top_account_id: top_account_id "LINDQVIST-011" names no top account of the Top Accounts file and no existing one`,
		}},
		{"an existing top account needs no row", map[string][]byte{"people": []byte(`{"type":"Individual","id":"hw-9","top_account_id":"HARTWELL-001","first_name":"Ivy","last_name":"Hartwell"}` + "\n")}, true, nil, nil},
		{"invalid rows of the Top Accounts file, per line, and the People rows naming them", map[string][]byte{
			"topAccounts": []byte(`{"id":"RIVERA-010","name":"Rivera Family"}` + "\n" + `{"id":"LINDQVIST-011"}` + "\n" + `{"id":"` + strings.Repeat("x", 51) + `","name":"Too long"}` + "\n"),
			"people":      people,
		}, false, []string{
			"2 LINDQVIST-011 name: name is required",
			"3  id: id must be at most 50 characters",
		}, []string{
			`4 LQ-P1 top_account_id: top_account_id "LINDQVIST-011" names no top account of the Top Accounts file and no existing one`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got struct {
				ValidateBulkFiles struct {
					Valid               bool
					TopAccounts, People *taFileReport
				}
			}
			bulkPost(t, gw, validateTopAccountsQuery, maps.Clone(top), tc.files).ok(t, &got)
			r := got.ValidateBulkFiles
			if r.Valid != tc.valid {
				t.Errorf("valid %v, want %v: %+v %+v", r.Valid, tc.valid, r.TopAccounts, r.People)
			}
			if _, given := tc.files["topAccounts"]; given != (r.TopAccounts != nil) {
				t.Errorf("topAccounts report %+v, want one only when the file is given", r.TopAccounts)
			}
			if r.TopAccounts != nil && !slices.Equal(lineErrors(r.TopAccounts.Errors), tc.topAccounts) {
				t.Errorf("the Top Accounts file's errors\n%q, want\n%q", lineErrors(r.TopAccounts.Errors), tc.topAccounts)
			}
			if !slices.Equal(lineErrors(r.People.Errors), tc.people) {
				t.Errorf("the People file's errors\n%q, want\n%q", lineErrors(r.People.Errors), tc.people)
			}
		})
	}
	// The file belongs to the deprecated model alone.
	for _, m := range []map[string]any{{}, {"model": "CLIENTS"}} {
		bulkPost(t, gw, validateTopAccountsQuery, m, map[string][]byte{"topAccounts": accounts}).
			wantError(t, "BAD_USER_INPUT", "topAccounts is the Add/Update Top Accounts file of the deprecated top-account model: give model: TOP_ACCOUNTS with it, or leave it out")
	}
}

func lineErrors(errs []taLineError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.String())
	}
	return out
}

// A load of the sample Top Accounts and People files ends DONE with each file's own result, the
// Top Accounts file's first; the new top accounts and their cards are then there over GraphQL.
// A Top Accounts file with an invalid row sends nothing unless the valid rows are asked for.
func TestUploadBulkFilesLoadsTheTopAccountsFileOverSFTP(t *testing.T) {
	t.Parallel()
	gw, _ := sandboxed(t)
	const upload = `mutation($topAccounts: Upload, $people: Upload, $model: BulkModel, $validRowsOnly: Boolean) {
  uploadBulkFiles(topAccounts: $topAccounts, people: $people, model: $model, validRowsOnly: $validRowsOnly) { id } }`
	start := func(vars map[string]any, files map[string][]byte) string {
		var started struct{ UploadBulkFiles struct{ ID string } }
		bulkPost(t, gw, upload, vars, files).ok(t, &started)
		return started.UploadBulkFiles.ID
	}
	type loadResult struct {
		File, Kind             string
		Rows, Applied, Invalid int
		FileError              *string
	}
	type load struct {
		Phase      string
		Error      *string
		Validation *struct{ TopAccounts *taFileReport }
		Results    []loadResult
	}
	await := func(id string) load {
		var got struct{ BulkUpload load }
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			gw.post(t, `query($id: ID!) { bulkUpload(id: $id) { phase error
  validation { topAccounts { rows validRows invalidRows errors { line id field message } errorCount fileError } }
  results { file kind rows applied invalid fileError } } }`, map[string]any{"id": id}).ok(t, &got)
			if p := got.BulkUpload.Phase; p == "DONE" || p == "FAILED" {
				return got.BulkUpload
			}
			if time.Now().After(deadline) {
				t.Fatalf("load %s is still %s after 30 s", id, got.BulkUpload.Phase)
			}
		}
	}

	l := await(start(map[string]any{"model": "TOP_ACCOUNTS"}, map[string][]byte{
		"topAccounts": readSample(t, "top-accounts.jsonl"), "people": readSample(t, "people-top-accounts.jsonl"),
	}))
	if l.Phase != "DONE" || len(l.Results) != 2 {
		t.Fatalf("the load ended %s (%v) with %+v, want DONE with two results", l.Phase, taText(l.Error), l.Results)
	}
	if r := l.Results[0]; r.Kind != "top-accounts" || !strings.HasPrefix(r.File, "top-accounts-") || r.Rows != 2 || r.Applied != 2 || r.FileError != nil {
		t.Errorf("the Top Accounts file's result %+v, want top-accounts-<UTC timestamp>.jsonl with its 2 rows applied", r)
	}
	if r := l.Results[1]; r.Kind != "people" || r.Applied != 4 {
		t.Errorf("the People file's result %+v, want its 4 rows applied", r)
	}
	var page struct {
		TopAccounts struct {
			Nodes []struct{ Wid, ExternalID, Name string }
		}
	}
	gw.post(t, `{ topAccounts(limit: 100) { nodes { wid externalId name } } }`, nil).ok(t, &page)
	wid := ""
	for _, n := range page.TopAccounts.Nodes {
		if n.ExternalID == "RIVERA-010" && n.Name == "Rivera Family" {
			wid = n.Wid
		}
	}
	if wid == "" {
		t.Fatalf("topAccounts %+v lacks RIVERA-010, Rivera Family", page.TopAccounts.Nodes)
	}
	var fam struct {
		TopAccount struct {
			Name     string
			Contacts []struct{ ExternalID string }
		}
	}
	gw.post(t, `query($w: ID!) { topAccount(wid: $w) { name contacts { ... on ContactCard { externalId } } } }`, map[string]any{"w": wid}).ok(t, &fam)
	if got := fmt.Sprint(fam.TopAccount.Contacts); !strings.Contains(got, "RV-P1") || !strings.Contains(got, "RV-P2") || !strings.Contains(got, "RV-T1") {
		t.Errorf("RIVERA-010's cards %s, want RV-P1, RV-P2 and RV-T1", got)
	}

	// An invalid row: FAILED with the row in the validation, nothing sent; then its valid rows.
	files := map[string][]byte{"topAccounts": []byte(`{"id":"MORI-012","name":"Mori Family"}` + "\n" + `{"id":"SATO-013"}` + "\n")}
	l = await(start(map[string]any{"model": "TOP_ACCOUNTS"}, files))
	if l.Phase != "FAILED" || l.Validation == nil || l.Validation.TopAccounts == nil ||
		!slices.Equal(lineErrors(l.Validation.TopAccounts.Errors), []string{"2 SATO-013 name: name is required"}) {
		t.Fatalf("a Top Accounts file with an invalid row ended %s with %+v, want FAILED naming line 2", l.Phase, l.Validation)
	}
	l = await(start(map[string]any{"model": "TOP_ACCOUNTS", "validRowsOnly": true}, files))
	if l.Phase != "DONE" || len(l.Results) != 1 || l.Results[0].Applied != 1 {
		t.Fatalf("its valid rows only ended %s with %+v, want DONE with 1 applied", l.Phase, l.Results)
	}
}

// For a firm whose API user reaches several advisors, the gateway looks a People file's
// clients up as the advisor and team `advisorId` and `teamId` name ("advisor_id string
// optional, required when the API user can access multiple advisors"); without them it still
// says that it cannot tell.
func TestValidateBulkFilesLooksClientsUpAsTheAdvisorItNames(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	clAddClient(t, up, sandbox.Client{ExternalID: "CL-3003", AdvisorID: "adv-002", TeamID: "team-east"},
		map[string]any{"type": "Individual", "external_id": "cl3-sam", "first_name": "Sam", "dob": "1980-02-29"})
	people := map[string][]byte{"people": []byte(`{"type":"Trust","id":"T-9","client_id":"CL-3003","legal_name":"Sam Trust","trust_type":"IndividualRevocableTrust","trust_creator":"cl3-sam"}` + "\n")}
	const q = `mutation($people: Upload, $advisorId: String, $teamId: String) {
  validateBulkFiles(people: $people, advisorId: $advisorId, teamId: $teamId) { valid people { errors { line field message } } } }`
	var got struct {
		ValidateBulkFiles struct {
			Valid  bool
			People struct{ Errors []taLineError }
		}
	}
	bulkPost(t, gw, q, map[string]any{"advisorId": "adv-002", "teamId": "team-east"}, people).ok(t, &got)
	if !got.ValidateBulkFiles.Valid {
		t.Errorf("naming the client's advisor and team: %+v, want valid", got.ValidateBulkFiles.People.Errors)
	}
	bulkPost(t, gw, q, map[string]any{"advisorId": "adv-001", "teamId": "team-west"}, people).ok(t, &got)
	if got.ValidateBulkFiles.Valid {
		t.Error("naming another advisor and team: valid, want CL-3003 to be no client of theirs")
	}
	r := bulkPost(t, gw, q, map[string]any{}, people)
	if len(r.Errors) == 0 || !strings.Contains(r.Errors[0].Message, "advisorId is required when the API user can access multiple advisors") {
		t.Errorf("naming none: %+v, want an error saying advisorId is required", r.Errors)
	}
}

// Naming another advisor for a load's lookups is naming another advisor, as on every v1
// operation: FORBIDDEN without the firm-admin role (the embedded sandbox's caller has none),
// allowed with it.
func TestABulkLoadNamingAnotherAdvisorNeedsTheAdminRole(t *testing.T) {
	t.Parallel()
	people := map[string][]byte{"people": []byte(`{"type":"Individual","id":"P-9","client_id":"CL-1001","first_name":"A","last_name":"B"}` + "\n")}
	const forbidden = "advisorId names another advisor; a caller acts as the advisor of its token"
	gw, _ := sandboxed(t)
	for _, mutation := range []string{"validateBulkFiles(people: $people, advisorId: $a) { valid }", "uploadBulkFiles(people: $people, advisorId: $a) { id }"} {
		bulkPost(t, gw, `mutation($people: Upload, $a: String) { `+mutation+` }`, map[string]any{"a": "adv-002"}, people).
			wantError(t, "FORBIDDEN", forbidden)
	}
	tf := newTwoFirms(t, map[string]string{"AUTH_FIRM_ADMIN_ROLE": "firm-admin"})
	for _, tc := range []struct {
		name, advisor string
		roles         []string
	}{{"a caller without the role", "adv-777", nil}, {"the firm admin", "adv-777", []string{"firm-admin"}}} {
		t.Run(tc.name, func(t *testing.T) {
			caller := "Bearer " + sandboxTokenWith(t, tf.up.URL, tokenA, map[string]any{"advisor": tc.advisor, "firm": firmA, "roles": tc.roles})
			body, ct := bulkBody(t, `mutation($people: Upload, $a: String) { validateBulkFiles(people: $people, advisorId: $a) { valid } }`,
				map[string]any{"a": sandbox.DefaultAdvisorID}, people)
			req, _ := http.NewRequest(http.MethodPost, tf.gw.url+"/graphql", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", ct)
			req.Header.Set("GraphQL-Require-Preflight", "1")
			req.Header.Set("Authorization", caller)
			r := tf.gw.do(t, req)
			if tc.roles == nil {
				r.wantError(t, "FORBIDDEN", forbidden+" unless it has the role firm-admin")
				return
			}
			var got struct{ ValidateBulkFiles struct{ Valid bool } }
			r.ok(t, &got)
			if !got.ValidateBulkFiles.Valid {
				t.Error("the admin naming the client's advisor: invalid, want valid")
			}
		})
	}
}

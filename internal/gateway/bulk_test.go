package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sftpupload"
	"github.com/advisorhq/gateway/internal/testrun"
)

// The embedded sandbox takes bulk files over SFTP at the address the gateway prints, and the
// host key the gateway prints is the one it presents: an uploader that trusts nothing else
// gets both sample files in, Clients first.
func TestTheEmbeddedSandboxTakesBulkFilesOverSFTP(t *testing.T) {
	t.Parallel()
	lines := startedLines(t, nil, map[string]string{"ADDR": "127.0.0.1:0"}, "gateway serving", "its bulk files:")
	m := regexp.MustCompile(`sftp://(\w+)@(\S+) \(password (\S+), host key (SHA256:\S+)\)`).FindStringSubmatch(lines[1])
	if m == nil {
		t.Fatalf("the start-up line %q does not give the SFTP server's address, login and host key", lines[1])
	}
	up, err := sftpupload.New(sftpupload.Config{Addr: m[2], User: m[1], Password: m[3], Dir: ".", HostKeyFingerprint: m[4]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var files []sftpupload.File
	for _, f := range []struct {
		kind sftpupload.Kind
		path string
	}{{sftpupload.People, repoRoot + "/docs/examples/bulk/people.jsonl"}, {sftpupload.Clients, repoRoot + "/docs/examples/bulk/clients.jsonl"}} {
		body, err := os.Open(f.path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = body.Close() })
		files = append(files, sftpupload.File{Kind: f.kind, Body: body})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := up.Upload(ctx, files...)
	if err != nil {
		t.Fatalf("upload the sample files: %v", err)
	}
	if len(got) != 2 || got[0].Kind != sftpupload.Clients || !strings.HasPrefix(got[0].Name, "clients-") || !strings.HasPrefix(got[1].Name, "people-") {
		t.Fatalf("uploaded %+v, want the Clients file, then the People file", got)
	}
}

// bulkPost sends a bulk mutation with the files given (fields "topAccounts", "clients",
// "people").
func bulkPost(t *testing.T, gw *testGateway, query string, vars map[string]any, files map[string][]byte) *result {
	t.Helper()
	body, ct := bulkBody(t, query, vars, files)
	return uplPost(t, gw, body, ct, false)
}

// bulkBody is a bulk mutation's multipart body with the files given.
func bulkBody(t *testing.T, query string, vars map[string]any, files map[string][]byte) ([]byte, string) {
	t.Helper()
	fileMap := map[string][]string{}
	var parts []uplFile
	for _, name := range []string{"topAccounts", "clients", "people"} {
		if data, ok := files[name]; ok {
			vars[name] = nil
			fileMap[name] = []string{"variables." + name}
			parts = append(parts, uplFile{field: name, filename: name + ".jsonl", contentType: "application/x-ndjson", data: data})
		}
	}
	return uplBody(t, map[string]any{"query": query, "variables": vars}, fileMap, parts...)
}

const validateBulkQuery = `mutation($clients: Upload, $people: Upload, $model: BulkModel) {
  validateBulkFiles(clients: $clients, people: $people, model: $model) {
    valid
    clients { rows validRows invalidRows errorCount fileError }
    people { rows validRows invalidRows errors { line id field message } errorCount fileError }
  }
}`

func TestValidateBulkFilesReportsEveryRowItBreaks(t *testing.T) {
	t.Parallel()
	gw, _ := sandboxed(t)
	clients, people := readSample(t, "clients.jsonl"), readSample(t, "people.jsonl")
	type fileReport struct {
		Rows, ValidRows, InvalidRows, ErrorCount int
		FileError                                *string
		Errors                                   []struct {
			Line      int
			ID, Field *string
			Message   string
		}
	}
	for _, tc := range []struct {
		name      string
		files     map[string][]byte
		valid     bool
		peopleErr string // in the People file's errors
	}{
		{"the README's sample files", map[string][]byte{"clients": clients, "people": people}, true, ""},
		{"people of the demo client, which exists", map[string][]byte{"people": []byte(`{"type":"Individual","id":"P-9","client_id":"CL-1001","first_name":"A","last_name":"B"}` + "\n")}, true, ""},
		{"people of a client nobody has", map[string][]byte{"people": people}, false, "C-1001"},
		{"an existing client updated, its new trust naming its existing card", map[string][]byte{
			"clients": []byte(`{"id":"CL-1001","first_name":"Marcus","last_name":"Bell"}` + "\n"),
			"people":  []byte(`{"type":"Trust","id":"T-9","client_id":"CL-1001","legal_name":"Bell Family Trust","trust_type":"IndividualRevocableTrust","trust_creator":"cl-marcus"}` + "\n"),
		}, true, ""},
		{"a card the client does not have", map[string][]byte{
			"people": []byte(`{"type":"Trust","id":"T-9","client_id":"CL-1001","legal_name":"Bell Family Trust","trust_type":"IndividualRevocableTrust","trust_creator":"hw-eleanor"}` + "\n"),
		}, false, "hw-eleanor"},
		{"a row missing its last name", map[string][]byte{"clients": clients, "people": append(slices.Clone(people), []byte(`{"type":"Individual","id":"P-8","client_id":"C-1001","first_name":"A"}`+"\n")...)}, false, "last_name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got struct {
				ValidateBulkFiles struct {
					Valid           bool
					Clients, People *fileReport
				}
			}
			bulkPost(t, gw, validateBulkQuery, map[string]any{}, tc.files).ok(t, &got)
			r := got.ValidateBulkFiles
			if r.Valid != tc.valid {
				t.Fatalf("valid %v, want %v: %+v", r.Valid, tc.valid, r.People)
			}
			if tc.peopleErr != "" && !strings.Contains(fmt.Sprint(r.People.Errors), tc.peopleErr) {
				t.Fatalf("the People file's errors %+v do not name %q", r.People.Errors, tc.peopleErr)
			}
		})
	}
}

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "examples", "bulk", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A load through the gateway reaches the embedded sandbox over SFTP; its progress is followed
// with bulkUpload until the sandbox has processed the files, and the new family is there.
func TestUploadBulkFilesLoadsTheFamilyIntoTheSandbox(t *testing.T) {
	t.Parallel()
	gw, _ := sandboxed(t)
	var started struct {
		UploadBulkFiles struct{ ID, Phase string }
	}
	bulkPost(t, gw, `mutation($clients: Upload, $people: Upload) { uploadBulkFiles(clients: $clients, people: $people) { id phase } }`,
		map[string]any{}, map[string][]byte{"clients": readSample(t, "clients.jsonl"), "people": readSample(t, "people.jsonl")}).ok(t, &started)
	id := started.UploadBulkFiles.ID
	if id == "" {
		t.Fatalf("uploadBulkFiles answered %+v", started)
	}
	var load struct {
		BulkUpload struct {
			Phase   string
			Error   *string
			Results []struct {
				Kind          string
				Rows, Applied int
				FileError     *string
			}
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		gw.post(t, `query($id: ID!) { bulkUpload(id: $id) { phase error results { kind rows applied fileError } } }`, map[string]any{"id": id}).ok(t, &load)
		if p := load.BulkUpload.Phase; p == "DONE" || p == "FAILED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the load is still %s after 30 s", load.BulkUpload.Phase)
		}
	}
	if load.BulkUpload.Phase != "DONE" || len(load.BulkUpload.Results) != 2 || load.BulkUpload.Results[1].Applied != 6 {
		t.Fatalf("the load ended %+v", load.BulkUpload)
	}
	var client struct {
		Client struct {
			Contacts []struct{ ExternalID, DisplayName string }
		}
	}
	gw.post(t, `{ client(ref: "C-1001") { contacts { ... on ContactCard { externalId displayName } } } }`, nil).ok(t, &client)
	names := fmt.Sprint(client.Client.Contacts)
	for _, want := range []string{"P-1001", "T-1001", "E-1001", "Okafor Family Revocable Trust"} {
		if !strings.Contains(names, want) {
			t.Errorf("client C-1001's cards %s lack %s", names, want)
		}
	}
}

// Against the Advisor service without BULK_SFTP_* settings, loads are refused, saying what to
// set; checks still work, as they need no SFTP server.
func TestBulkLoadsWithoutAnSFTPServerAreRefusedSayingWhatToSet(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	r := bulkPost(t, gw, `mutation($clients: Upload) { uploadBulkFiles(clients: $clients) { id } }`,
		map[string]any{}, map[string][]byte{"clients": readSample(t, "clients.jsonl")})
	r.wantError(t, "BAD_USER_INPUT", "Bulk loads are not configured on this gateway: set BULK_SFTP_ADDR and the other BULK_SFTP_* settings")
	var got struct{ ValidateBulkFiles struct{ Valid bool } }
	bulkPost(t, gw, validateBulkQuery, map[string]any{}, map[string][]byte{"clients": readSample(t, "clients.jsonl")}).ok(t, &got)
	if !got.ValidateBulkFiles.Valid {
		t.Fatal("the sample Clients file did not validate")
	}
}

// startLoad starts a load of the given files through GraphQL and returns its id.
func startLoad(t *testing.T, gw *testGateway, vars map[string]any, files map[string][]byte) string {
	t.Helper()
	var started struct{ UploadBulkFiles struct{ ID string } }
	bulkPost(t, gw, `mutation($clients: Upload, $people: Upload, $model: BulkModel, $validRowsOnly: Boolean) {
  uploadBulkFiles(clients: $clients, people: $people, model: $model, validRowsOnly: $validRowsOnly) { id } }`, vars, files).ok(t, &started)
	return started.UploadBulkFiles.ID
}

// bulkUploadProgress follows a load over SSE, phase after phase, to its end; the stream then
// completes.
func TestBulkUploadProgressFollowsALoadToItsEnd(t *testing.T) {
	t.Parallel()
	gw, _ := sandboxed(t)
	id := startLoad(t, gw, map[string]any{}, map[string][]byte{"clients": readSample(t, "clients.jsonl"), "people": readSample(t, "people.jsonl")})
	s := openSSE(t, gw, `subscription($id: ID!) { bulkUploadProgress(id: $id) { phase results { applied } } }`, map[string]any{"id": id})
	var phases []string
	for {
		ev := s.next()
		if ev.name == "complete" {
			break
		}
		var msg struct {
			Data struct{ BulkUploadProgress struct{ Phase string } }
		}
		if err := json.Unmarshal([]byte(ev.data), &msg); err != nil {
			t.Fatalf("event %q: %v", ev.data, err)
		}
		phases = append(phases, msg.Data.BulkUploadProgress.Phase)
	}
	if len(phases) == 0 || phases[len(phases)-1] != "DONE" {
		t.Fatalf("the stream saw %v, want it to end with DONE", phases)
	}
	r := gw.post(t, `subscription { bulkUploadProgress(id: "nobody") { phase } }`, nil)
	if len(r.Errors) == 0 {
		t.Fatal("following an unknown load did not fail")
	}
}

// The deprecated container model and a load of the valid rows only, through GraphQL.
func TestUploadBulkFilesInTheContainerModelAndValidRowsOnly(t *testing.T) {
	t.Parallel()
	gw, _ := sandboxed(t)
	await := func(id string) (phase string, applied []int) {
		var load struct {
			BulkUpload struct {
				Phase   string
				Error   *string
				Results []struct{ Applied int }
			}
		}
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			gw.post(t, `query($id: ID!) { bulkUpload(id: $id) { phase error results { applied } } }`, map[string]any{"id": id}).ok(t, &load)
			if p := load.BulkUpload.Phase; p == "DONE" || p == "FAILED" {
				for _, r := range load.BulkUpload.Results {
					applied = append(applied, r.Applied)
				}
				return p, applied
			}
		}
		t.Fatalf("load %s did not end", id)
		return "", nil
	}
	// HARTWELL-001 is a demo top account.
	container := `{"type":"Individual","id":"ta-p1","top_account_id":"HARTWELL-001","first_name":"Ivy","last_name":"Hartwell"}` + "\n"
	if phase, applied := await(startLoad(t, gw, map[string]any{"model": "TOP_ACCOUNTS"}, map[string][]byte{"people": []byte(container)})); phase != "DONE" || fmt.Sprint(applied) != "[1]" {
		t.Fatalf("the container model: %s %v", phase, applied)
	}
	mixed := append(readSample(t, "people.jsonl"), []byte(`{"type":"Individual","id":"P-9","client_id":"C-1001","first_name":"A"}`+"\n")...)
	files := map[string][]byte{"clients": readSample(t, "clients.jsonl"), "people": mixed}
	if phase, _ := await(startLoad(t, gw, map[string]any{}, files)); phase != "FAILED" {
		t.Fatalf("a file with an invalid row, without validRowsOnly: %s, want FAILED", phase)
	}
	if phase, applied := await(startLoad(t, gw, map[string]any{"validRowsOnly": true}, files)); phase != "DONE" || fmt.Sprint(applied) != "[2 6]" {
		t.Fatalf("validRowsOnly: %s %v, want DONE with the 2 clients and 6 valid people", phase, applied)
	}
}

// A load the SFTP server refuses ends FAILED saying why, in words an operator can act on: a
// host key other than the one configured, or a wrong password. Nothing reaches the service.
func TestALoadTheSFTPServerRefusesFailsSayingWhy(t *testing.T) {
	t.Parallel()
	lines := startedLines(t, []string{"sandbox", "-addr", "127.0.0.1:0", "-sftp-addr", "127.0.0.1:0"}, nil, "sandbox serving", "bulk:")
	base := testrun.URL(lines[0])
	m := regexp.MustCompile(`sftp://(\S+) .*host key (SHA256:\S+)`).FindStringSubmatch(lines[1])
	if m == nil {
		t.Fatalf("no SFTP address and host key in %q", lines[1])
	}
	other := "SHA256:" + strings.Repeat("A", 43)
	for _, tc := range []struct {
		name, password, fingerprint, want string
	}{
		{"another host key", "sandbox", other, "host key"},
		{"a wrong password", "pw-7f3k9q", m[2], "BULK_SFTP_PASSWORD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := &testGateway{url: started(t, nil, map[string]string{
				"ADDR": "127.0.0.1:0", "ADVISOR_BASE_URL": base, "ADVISOR_FIRM": sandbox.DemoFirmID, "ADVISOR_ACCESS_TOKEN": sandbox.DefaultAccessToken,
				"ADVISOR_BASIC_CREDENTIALS": sandbox.DefaultBasicCredentials, "WEBHOOK_API_KEY": webhookKey, "AUTH_DISABLED": "true",
				"BULK_SFTP_ADDR": m[1], "BULK_SFTP_USER": "sandbox", "BULK_SFTP_PASSWORD": tc.password,
				"BULK_SFTP_HOST_KEY_FINGERPRINT": tc.fingerprint,
			}, "gateway serving")}
			id := startLoad(t, gw, map[string]any{}, map[string][]byte{"clients": readSample(t, "clients.jsonl")})
			var load struct {
				BulkUpload struct {
					Phase string
					Error *string
				}
			}
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				gw.post(t, `query($id: ID!) { bulkUpload(id: $id) { phase error } }`, map[string]any{"id": id}).ok(t, &load)
				if load.BulkUpload.Phase == "FAILED" || load.BulkUpload.Phase == "DONE" {
					break
				}
			}
			if load.BulkUpload.Phase != "FAILED" || load.BulkUpload.Error == nil || !strings.Contains(*load.BulkUpload.Error, tc.want) {
				t.Fatalf("the load ended %s: %v, want FAILED naming %q", load.BulkUpload.Phase, load.BulkUpload.Error, tc.want)
			}
			if strings.Contains(*load.BulkUpload.Error, tc.password) && tc.password != "sandbox" {
				t.Fatalf("the error shows the password: %s", *load.BulkUpload.Error)
			}
		})
	}
}

// Once the API user reaches a second advisor ("An API user with access to several advisors or
// teams supplies advisor_id and team_id"), the service would apply no row of a Clients file,
// which names none: validateBulkFiles says the file is invalid and why, and an upload ends
// FAILED having sent nothing rather than DONE with nothing applied.
func TestAClientsFileUnderSeveralAdvisorsIsInvalid(t *testing.T) {
	t.Parallel()
	gw, sb := sandboxed(t)
	// A caller acts as its token's advisor, so the firm's API user adds the other advisor's
	// client itself.
	req := jsonRequest(http.MethodPost, sb+"/v1/clients?advisor_id=adv-other", map[string]any{"id": "C-OTHER", "first_name": "Ada", "last_name": "Other"})
	user, pass, _ := strings.Cut(sandbox.DefaultBasicCredentials, ":")
	req.SetBasicAuth(user, pass)
	if status, out := doJSON(t, req); status != http.StatusCreated {
		t.Fatalf("add a client for another advisor: status %d: %v", status, out)
	}
	clients := map[string][]byte{"clients": []byte(`{"id":"C-NEW","first_name":"Bo","last_name":"New"}` + "\n")}
	var got struct {
		ValidateBulkFiles struct {
			Valid   bool
			Clients struct{ FileError *string }
		}
	}
	bulkPost(t, gw, validateBulkQuery, map[string]any{}, clients).ok(t, &got)
	const why = "advisorId is required when the API user can access multiple advisors"
	if r := got.ValidateBulkFiles; r.Valid || r.Clients.FileError == nil || !strings.HasPrefix(*r.Clients.FileError, why) {
		t.Fatalf("validateBulkFiles answered %+v, want invalid with a fileError beginning %q", r, why)
	}
	var started struct{ UploadBulkFiles struct{ ID string } }
	bulkPost(t, gw, `mutation($clients: Upload) { uploadBulkFiles(clients: $clients, validRowsOnly: true) { id } }`, map[string]any{}, clients).ok(t, &started)
	var load struct{ BulkUpload struct{ Phase string } }
	for deadline := time.Now().Add(30 * time.Second); load.BulkUpload.Phase != "DONE" && load.BulkUpload.Phase != "FAILED"; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the load is still %s after 30 s", load.BulkUpload.Phase)
		}
		gw.post(t, `query($id: ID!) { bulkUpload(id: $id) { phase } }`, map[string]any{"id": started.UploadBulkFiles.ID}).ok(t, &load)
	}
	if load.BulkUpload.Phase != "FAILED" {
		t.Fatalf("the load ended %s, want FAILED", load.BulkUpload.Phase)
	}
}

package sandbox_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// Two firms, each with its own credentials; the first has the Hartwell demo data, the second the
// Castellano family.
var (
	firmA = sandbox.Firm{
		ID: "firm-a", AccessToken: "token-a", BasicCredentials: "user-a:pass-a",
		SFTPCredentials: "sftp-a:pass-a", WebhookKey: "key-a",
	}
	firmB = sandbox.Firm{
		ID: "firm-b", AccessToken: "token-b", BasicCredentials: "user-b:pass-b",
		SFTPCredentials: "sftp-b:pass-b", WebhookKey: "key-b", AdvisorID: "adv-b", TeamID: "team-b",
	}
)

// caller sends requests with one firm's credentials.
type caller struct {
	f    *fixture
	firm sandbox.Firm
}

func (c caller) v2(method, path string, body any) *response {
	c.f.t.Helper()
	req := c.f.request(method, path, body)
	req.Header.Set("Authorization", "Bearer "+c.firm.AccessToken)
	return c.f.do(req)
}

func (c caller) v1(method, path string, body any) *response {
	c.f.t.Helper()
	req := c.f.request(method, path, body)
	user, pass, _ := strings.Cut(c.firm.BasicCredentials, ":")
	req.SetBasicAuth(user, pass)
	return c.f.do(req)
}

// twoFirms starts a sandbox serving firmA and firmB with their demo data, with a webhook target
// when rc is set.
func twoFirms(t *testing.T, rc *whReceiver) (*fixture, caller, caller) {
	t.Helper()
	c := newTestClock()
	opts := sandbox.Options{Firms: []sandbox.Firm{firmA, firmB}, Now: c.Now, Seed: 5}
	if rc != nil {
		opts.WebhookURL, opts.WebhookRetryBase = rc.srv.URL+whPath, 2*time.Millisecond
	}
	s := sandboxtest.Start(t, opts)
	f := &fixture{t: t, srv: s.Server, sb: s.Sandbox, clock: c}
	return f, caller{f, firmA}, caller{f, firmB}
}

// externalIDs lists the external ids of the top accounts a firm sees.
func (c caller) externalIDs(t *testing.T) []string {
	t.Helper()
	var page struct {
		TopAccounts []struct {
			ExternalID string `json:"external_id"`
		} `json:"top_accounts"`
	}
	c.v2("GET", "/v2/top-accounts/?limit=100", nil).wantOK(t).decode(t, &page)
	var out []string
	for _, ta := range page.TopAccounts {
		out = append(out, ta.ExternalID)
	}
	return out
}

// records are the ids of one firm's records that another firm will try to reach.
type records struct {
	wid, contactID, vaultID, clientWID, clientExternalID, clientContactID string
}

// seed gives the firm a client with a contact, and returns the ids of its records.
func (c caller) seed(t *testing.T, familyExternalID string) records {
	t.Helper()
	tn, ok := c.f.sb.Tenant(c.firm.ID)
	if !ok {
		t.Fatalf("Tenant(%q): not found", c.firm.ID)
	}
	var r records
	if r.wid, ok = tn.TopAccountWID(familyExternalID); !ok {
		t.Fatalf("firm %s has no top account %s", c.firm.ID, familyExternalID)
	}
	var contacts struct {
		Contacts []struct {
			ID string `json:"id"`
		} `json:"contacts"`
	}
	c.v2("GET", "/v2/top-accounts/"+r.wid+"/contacts/", nil).wantOK(t).decode(t, &contacts)
	var docs struct {
		Documents []struct {
			VaultID string `json:"vault_id"`
		} `json:"documents"`
	}
	c.v2("GET", docsPath(r.wid), nil).wantOK(t).decode(t, &docs)
	if len(contacts.Contacts) == 0 || len(docs.Documents) == 0 {
		t.Fatalf("firm %s's family has %d contacts and %d documents, want some of each", c.firm.ID, len(contacts.Contacts), len(docs.Documents))
	}
	r.contactID, r.vaultID = contacts.Contacts[0].ID, docs.Documents[0].VaultID
	r.clientExternalID = "SHARED-" + c.firm.ID
	created := c.v1("POST", "/v1/clients", map[string]any{"id": r.clientExternalID, "first_name": "Kim", "last_name": "Lee"}).object(t)
	r.clientWID = str(t, created, "wid")
	r.clientContactID = str(t, created, "primary_contact_id")
	return r
}

// absentRecords are ids no firm has, shaped as real ones.
var absentRecords = records{
	wid: "0b9e7c1a-6a55-4e0b-9a43-1f2d3c4b5a69", contactID: "2c8d1e4f-7b66-4f1c-8b54-2e3f4a5b6c7d",
	vaultID: "3d9e2f5a-8c77-4a2d-9c65-3f4a5b6c7d8e", clientWID: "4e0f3a6b-9d88-4b3e-ad76-4a5b6c7d8e9f",
	clientExternalID: "NO-SUCH-CLIENT", clientContactID: "5f1a4b7c-ae99-4c4f-be87-5b6c7d8e9fa0",
}

// crossFirmRequests are every path that names a record, filled with r's ids.
func crossFirmRequests(r records) []struct {
	v1           bool
	method, path string
	body         any
} {
	ta := "/v2/top-accounts/" + r.wid
	return []struct {
		v1           bool
		method, path string
		body         any
	}{
		{false, "GET", ta, nil},
		{false, "PUT", ta, map[string]any{"name": "Taken over"}},
		{false, "GET", ta + "/contacts/", nil},
		{false, "POST", ta + "/contacts/", person("intruder")},
		{false, "GET", ta + "/contacts/" + r.contactID, nil},
		{false, "PUT", ta + "/contacts/" + r.contactID, map[string]any{"first_name": "Mallory"}},
		{false, "GET", docsPath(r.wid), nil},
		{false, "POST", docsPath(r.wid), pdfDocument("Planted.pdf")},
		{false, "GET", docPath(r.wid, r.vaultID), nil},
		{false, "PATCH", docPath(r.wid, r.vaultID), map[string]any{"name": "Renamed"}},
		{false, "DELETE", docPath(r.wid, r.vaultID), nil},
		{false, "POST", docPath(r.wid, r.vaultID) + "/analysis", map[string]any{}},
		{true, "GET", "/v1/clients/" + r.clientWID + "/contacts", nil},
		{true, "GET", "/v1/clients/" + r.clientExternalID + "/contacts", nil},
		{true, "POST", "/v1/clients/" + r.clientWID + "/contacts", map[string]any{"type": "Individual", "external_id": "intruder"}},
		{true, "GET", "/v1/clients/" + r.clientWID + "/contacts/" + r.clientContactID, nil},
		{true, "PUT", "/v1/clients/" + r.clientWID + "/contacts/" + r.clientContactID, map[string]any{"first_name": "Mallory"}},
		{true, "DELETE", "/v1/clients/" + r.clientExternalID, nil},
	}
}

// A firm's credentials reach its own records only: every path naming another firm's top
// account, contact, document or client answers exactly as for a record that does not exist,
// and changes nothing of the other firm's.
func TestFirmsReachOnlyTheirOwnRecords(t *testing.T) {
	_, a, b := twoFirms(t, nil)
	own := map[string]records{
		firmA.ID: a.seed(t, sandbox.DemoFamilyExternalID),
		firmB.ID: b.seed(t, sandbox.SecondFamilyExternalID),
	}
	for _, tc := range []struct {
		name          string
		self, other   caller
		otherFamilyID string
	}{
		{"firm A naming firm B's records", a, b, sandbox.SecondFamilyExternalID},
		{"firm B naming firm A's records", b, a, sandbox.DemoFamilyExternalID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			theirs := crossFirmRequests(own[tc.other.firm.ID])
			absent := crossFirmRequests(absentRecords)
			for i, req := range theirs {
				send := tc.self.v2
				if req.v1 {
					send = tc.self.v1
				}
				got := send(req.method, req.path, req.body)
				want := send(absent[i].method, absent[i].path, absent[i].body)
				if got.status != http.StatusNotFound || got.status != want.status || string(got.body) != string(want.body) {
					t.Errorf("%s %s: got %d %s, want %d %s as for a record that does not exist",
						req.method, req.path, got.status, got.body, want.status, want.body)
				}
			}
			// The other firm's records are as they were.
			theirRecords := own[tc.other.firm.ID]
			ta := tc.other.v2("GET", "/v2/top-accounts/"+theirRecords.wid, nil).wantOK(t).object(t)
			if ta["name"] == "Taken over" {
				t.Errorf("the other firm's top account was renamed: %v", ta)
			}
			tc.other.v2("GET", docPath(theirRecords.wid, theirRecords.vaultID), nil).wantOK(t)
			tc.other.v1("GET", "/v1/clients/"+theirRecords.clientWID+"/contacts/"+theirRecords.clientContactID, nil).wantOK(t)
			if ids := tc.self.externalIDs(t); slices.Contains(ids, tc.otherFamilyID) {
				t.Errorf("the top accounts listed: %v, want none of the other firm's (%s)", ids, tc.otherFamilyID)
			}
		})
	}
}

// Each firm lists its own demo data, and the same external id can be used by both firms
// without either seeing the other's.
func TestFirmsHaveSeparateDataAndExternalIDs(t *testing.T) {
	_, a, b := twoFirms(t, nil)
	for _, tc := range []struct {
		c          caller
		want, hide string
	}{
		{a, sandbox.DemoFamilyExternalID, sandbox.SecondFamilyExternalID},
		{b, sandbox.SecondFamilyExternalID, sandbox.DemoFamilyExternalID},
	} {
		ids := tc.c.externalIDs(t)
		if !slices.Contains(ids, tc.want) || slices.Contains(ids, tc.hide) {
			t.Errorf("firm %s lists %v, want %s and not %s", tc.c.firm.ID, ids, tc.want, tc.hide)
		}
	}
	widA := str(t, a.v2("POST", "/v2/top-accounts/", map[string]any{"external_id": "SAME-1", "name": "A's"}).wantOK(t).object(t), "wid")
	widB := str(t, b.v2("POST", "/v2/top-accounts/", map[string]any{"external_id": "SAME-1", "name": "B's"}).wantOK(t).object(t), "wid")
	if widA == widB {
		t.Fatalf("both firms got wid %s", widA)
	}
	for _, tc := range []struct {
		c         caller
		wid, name string
	}{{a, widA, "A's"}, {b, widB, "B's"}} {
		if got := tc.c.v2("GET", "/v2/top-accounts/"+tc.wid, nil).wantOK(t).object(t)["name"]; got != tc.name {
			t.Errorf("firm %s's SAME-1 is named %v, want %s", tc.c.firm.ID, got, tc.name)
		}
	}
	// Clients too: the same external id is a different client in each firm, of the firm's
	// advisor.
	for _, tc := range []struct {
		c       caller
		advisor string
	}{{a, sandbox.DefaultAdvisorID}, {b, "adv-b"}} {
		r := tc.c.v1("POST", "/v1/clients", map[string]any{"id": "C-SAME", "first_name": "Ann", "last_name": "Lee"})
		if r.status != http.StatusCreated || r.object(t)["advisor_id"] != tc.advisor {
			t.Errorf("firm %s adding C-SAME: got %d %s, want 201 for advisor %s", tc.c.firm.ID, r.status, r.body, tc.advisor)
		}
	}
}

// A presigned address works for the document of the firm that issued it and for nothing else:
// its signature replayed on another firm's document, with either firm's credentials or none,
// is refused.
func TestPresignedAddressesReachOnlyTheirFirmsDocument(t *testing.T) {
	f, a, b := twoFirms(t, nil)
	recA, recB := a.seed(t, sandbox.DemoFamilyExternalID), b.seed(t, sandbox.SecondFamilyExternalID)
	// A document of each firm with a file: the first of the family's is uploaded in both demos.
	for _, tc := range []struct {
		self, other caller
		mine, them  records
	}{{a, b, recA, recB}, {b, a, recB, recA}} {
		t.Run(tc.self.firm.ID, func(t *testing.T) {
			doc := tc.self.v2("GET", docPath(tc.mine.wid, tc.mine.vaultID), nil).wantOK(t).object(t)
			download := str(t, doc, "download_uri")
			if got := f.do(f.request("GET", download, nil)); got.status != http.StatusOK || !strings.HasPrefix(string(got.body), "%PDF") {
				t.Fatalf("download of the firm's own document: got %d %.40q, want 200 and the PDF", got.status, got.body)
			}
			upload := str(t, tc.self.v2("PATCH", docPath(tc.mine.wid, tc.mine.vaultID), map[string]any{"description": "signed"}).wantOK(t).object(t), "upload_uri")
			for _, addr := range []struct {
				name, uri, method string
			}{{"download", download, "GET"}, {"upload", upload, "PUT"}} {
				u, err := url.Parse(addr.uri)
				if err != nil {
					t.Fatal(err)
				}
				prefix, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
				u.Path = "/" + prefix + "/" + tc.them.wid + "/" + tc.them.vaultID
				for _, creds := range []caller{{}, a, b} {
					req := f.request(addr.method, u.String(), nil)
					if addr.method == "PUT" {
						req.Body = io.NopCloser(strings.NewReader("%PDF-1.4 planted"))
						req.Header.Set("Content-Type", "application/pdf")
					}
					if creds.firm.AccessToken != "" {
						req.Header.Set("Authorization", "Bearer "+creds.firm.AccessToken)
					}
					f.do(req).wantError(t, http.StatusForbidden, "The address is not valid: its signature does not match")
				}
			}
			// The other firm's file is untouched.
			theirDoc := tc.other.v2("GET", docPath(tc.them.wid, tc.them.vaultID), nil).wantOK(t).object(t)
			got := f.do(f.request("GET", str(t, theirDoc, "download_uri"), nil))
			if got.status != http.StatusOK || strings.Contains(string(got.body), "planted") {
				t.Errorf("the other firm's file: got %d %.60q, want its own PDF", got.status, got.body)
			}
		})
	}
}

// tokenClaims decodes a JWT's claims, unverified: the identity tests verify signatures.
func tokenClaims(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", token)
	}
	data, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(data, &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

// POST /sandbox/token mints tokens for the firm whose access token asks, and for no other; the
// team and roles the body names become claims.
func TestSandboxTokenMintsForTheCredentialsFirmOnly(t *testing.T) {
	_, a, b := twoFirms(t, nil)
	for _, tc := range []struct {
		name   string
		c      caller
		body   string
		status int
		want   map[string]any // claims; absent keys must be absent
	}{
		{"firm left out", a, `{"advisor":"adv-1"}`, 200, map[string]any{"sub": "adv-1", "firm_id": "firm-a"}},
		{"own firm named", b, `{"advisor":"adv-2","firm":"firm-b"}`, 200, map[string]any{"sub": "adv-2", "firm_id": "firm-b"}},
		{"team and roles", b, `{"advisor":"adv-3","team":"team-b","roles":["firm-admin","reviewer"]}`, 200,
			map[string]any{"sub": "adv-3", "firm_id": "firm-b", "team_id": "team-b", "roles": []any{"firm-admin", "reviewer"}}},
		{"no roles", a, `{"advisor":"adv-4","roles":[]}`, 200, map[string]any{"sub": "adv-4", "firm_id": "firm-a", "roles": []any{}}},
		{"another firm named", a, `{"advisor":"adv-1","firm":"firm-b"}`, 403, nil},
		{"an unknown firm named", b, `{"advisor":"adv-1","firm":"firm-900"}`, 403, nil},
		{"an empty firm", a, `{"advisor":"adv-1","firm":""}`, 400, nil},
		{"an empty team", a, `{"advisor":"adv-1","team":""}`, 400, nil},
		{"an empty role", a, `{"advisor":"adv-1","roles":["admin",""]}`, 400, nil},
		{"a role over 255 characters", a, `{"advisor":"adv-1","roles":["` + strings.Repeat("r", 256) + `"]}`, 400, nil},
		{"too many roles", a, `{"advisor":"adv-1","roles":[` + strings.Repeat(`"r",`, 32) + `"r"]}`, 400, nil},
		{"roles not strings", a, `{"advisor":"adv-1","roles":[1]}`, 400, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.c.v2("POST", "/sandbox/token", tc.body)
			if r.status != tc.status {
				t.Fatalf("got %d %s, want %d", r.status, r.body, tc.status)
			}
			if tc.status == http.StatusForbidden {
				r.wantError(t, http.StatusForbidden, "Access Denied")
			}
			if tc.want == nil {
				return
			}
			claims := tokenClaims(t, str(t, r.object(t), "token"))
			for _, k := range []string{"sub", "firm_id", "team_id", "roles"} {
				want, expected := tc.want[k]
				got, present := claims[k]
				if present != expected || !jsonEqual(t, got, want) {
					t.Errorf("claim %s: got %v (present %v), want %v (present %v)", k, got, present, want, expected)
				}
			}
		})
	}
}

// POST /sandbox/events plays events about the caller's firm's data, and every firm's events
// (played, scenarios, and analysis outcomes) carry that firm's webhook key.
func TestEventsAreTheFirmsOwnWithItsKey(t *testing.T) {
	rc := newWhReceiver(t, nil)
	_, a, b := twoFirms(t, rc)
	recA, recB := a.seed(t, sandbox.DemoFamilyExternalID), b.seed(t, sandbox.SecondFamilyExternalID)
	a.v2("POST", "/sandbox/events", map[string]any{"EventType": "ClientProgressChanged"}).wantOK(t)
	b.v2("POST", "/sandbox/events", map[string]any{"scenario": "onboarding", "interval": "0s"}).wantOK(t)
	a.v2("POST", docPath(recA.wid, recA.vaultID)+"/analysis", map[string]any{}).wantOK(t)
	b.v2("POST", docPath(recB.wid, recB.vaultID)+"/analysis", map[string]any{}).wantOK(t)
	got := rc.waitDelivered(t, 1+9+1+1)
	keyOf := map[string]string{recA.wid: firmA.WebhookKey, recB.wid: firmB.WebhookKey}
	perKey := map[string]int{}
	for _, at := range got {
		ev := whObject(t, at.body)
		wid, _ := ev["Wid"].(string)
		key := at.header.Get("service-api-key")
		if want, ok := keyOf[wid]; !ok || key != want {
			t.Errorf("%v about %q came with key %q, want the key of the firm whose top account it is", ev["EventType"], wid, key)
		}
		perKey[key]++
	}
	if perKey[firmA.WebhookKey] != 2 || perKey[firmB.WebhookKey] != 10 {
		t.Errorf("deliveries per key: %v, want 2 with firm A's and 10 with firm B's", perKey)
	}
}

// Each firm's SFTP user is jailed in its own directory, and the bulk files it uploads go into
// its firm's data only.
func TestBulkFilesGoToTheUploadersFirm(t *testing.T) {
	f, a, b := twoFirms(t, nil)
	addr, fp := sandboxtest.ServeSFTP(t, f.sb)
	for _, tc := range []struct {
		c      caller
		client string
	}{{a, "BULK-A"}, {b, "BULK-B"}} {
		user, pass, _ := strings.Cut(tc.c.firm.SFTPCredentials, ":")
		c, err := sandboxtest.DialSFTP(t, addr, fp, user, pass)
		if err != nil {
			t.Fatalf("login as %s: %v", user, err)
		}
		bf := &bulkFixture{fixture: f, bulk: sandboxtest.NewBulk(c)} // the same file name for both firms
		res := bf.load(t, sftpd.Clients, []byte(`{"id":"`+tc.client+`","first_name":"Bo","last_name":"Kim"}`+"\n"), 1, 1)
		if res.FileError != "" {
			t.Fatalf("firm %s's file: %+v", tc.c.firm.ID, res)
		}
		entries, err := c.ReadDir("/")
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 2 { // the file and its result, nothing of the other firm's
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("firm %s's SFTP root: %v, want its file and its result only", tc.c.firm.ID, names)
		}
	}
	for _, tc := range []struct {
		c            caller
		mine, theirs string
	}{{a, "BULK-A", "BULK-B"}, {b, "BULK-B", "BULK-A"}} {
		tc.c.v1("GET", "/v1/clients/"+tc.mine+"/contacts", nil).wantOK(t)
		tc.c.v1("GET", "/v1/clients/"+tc.theirs+"/contacts", nil).wantError(t, http.StatusNotFound, "Client not found")
	}
}

// New refuses firms that share an id or a credential, naming the firm, and settings that mix
// Firms with the single-firm options.
func TestNewRefusesFirmsThatShareCredentials(t *testing.T) {
	with := func(f sandbox.Firm, change func(*sandbox.Firm)) sandbox.Firm {
		change(&f)
		return f
	}
	for _, tc := range []struct {
		name string
		opts sandbox.Options
		want string
	}{
		{"the same id", sandbox.Options{Firms: []sandbox.Firm{firmA, with(firmB, func(f *sandbox.Firm) { f.ID = "firm-a" })}},
			`firm "firm-a": its ID is also firm "firm-a"'s`},
		{"the same access token", sandbox.Options{Firms: []sandbox.Firm{firmA, with(firmB, func(f *sandbox.Firm) { f.AccessToken = "token-a" })}},
			`firm "firm-b": its access token is also firm "firm-a"'s`},
		{"the same basic user", sandbox.Options{Firms: []sandbox.Firm{firmA, with(firmB, func(f *sandbox.Firm) { f.BasicCredentials = "user-a:other" })}},
			`firm "firm-b": its basic credentials user is also firm "firm-a"'s`},
		{"the same SFTP user but for case", sandbox.Options{Firms: []sandbox.Firm{firmA, with(firmB, func(f *sandbox.Firm) { f.SFTPCredentials = "SFTP-A:other" })}},
			`firm "firm-b": its SFTP user is also firm "firm-a"'s`},
		{"the same webhook key", sandbox.Options{WebhookURL: "http://127.0.0.1:1/webhooks",
			Firms: []sandbox.Firm{firmA, with(firmB, func(f *sandbox.Firm) { f.WebhookKey = "key-a" })}},
			`firm "firm-b": its webhook key is also firm "firm-a"'s`},
		{"two firms without a webhook key", sandbox.Options{WebhookURL: "http://127.0.0.1:1/webhooks",
			Firms: []sandbox.Firm{with(firmA, func(f *sandbox.Firm) { f.WebhookKey = "" }), with(firmB, func(f *sandbox.Firm) { f.WebhookKey = "" })}},
			`firm "firm-b": its webhook key is also firm "firm-a"'s`},
		{"the default first firm given the second's token", sandbox.Options{AccessToken: sandbox.SecondAccessToken},
			`firm "firm-002": its access token is also firm "firm-001"'s`},
		{"no id", sandbox.Options{Firms: []sandbox.Firm{with(firmA, func(f *sandbox.Firm) { f.ID = " " })}}, "every firm needs an ID"},
		{"no access token", sandbox.Options{Firms: []sandbox.Firm{with(firmA, func(f *sandbox.Firm) { f.AccessToken = "" })}},
			`firm "firm-a": an access token without spaces is required`},
		{"malformed basic credentials", sandbox.Options{Firms: []sandbox.Firm{with(firmA, func(f *sandbox.Firm) { f.BasicCredentials = "nocolon" })}},
			`firm "firm-a": basic credentials must have the form "user:password"`},
		{"SFTP keys without a user", sandbox.Options{Firms: []sandbox.Firm{with(firmA, func(f *sandbox.Firm) {
			f.SFTPCredentials, f.SFTPAuthorizedKeys = "", "/some/keys"
		})}}, `firm "firm-a": SFTP credentials must have the form "user:password"`},
		{"an empty list of firms", sandbox.Options{Firms: []sandbox.Firm{}}, "name at least one firm"},
		{"Firms with a single-firm token", sandbox.Options{Firms: []sandbox.Firm{firmA}, AccessToken: "x"}, "Options.AccessToken describes the only firm"},
		{"Firms with Empty", sandbox.Options{Firms: []sandbox.Firm{firmA}, Empty: true}, "Options.Empty describes the only firm"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.FileDir = t.TempDir()
			sb, err := sandbox.New(tc.opts)
			if err == nil {
				_ = sb.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// With no Firms, the sandbox serves the two default firms: the first as the single-firm
// settings describe it, with the Hartwell family, and the second with its own credentials,
// family and client, whatever those settings say.
func TestDefaultFirms(t *testing.T) {
	s := sandboxtest.Start(t, sandbox.Options{})
	f := &fixture{t: t, srv: s.Server, sb: s.Sandbox}
	firms := sandbox.DefaultFirms()
	if got := s.Sandbox.FirmIDs(); !slices.Equal(got, []string{sandbox.DemoFirmID, sandbox.SecondFirmID}) || firms[0].ID != got[0] || firms[1].ID != got[1] {
		t.Fatalf("FirmIDs %v and DefaultFirms %+v, want %s then %s", got, firms, sandbox.DemoFirmID, sandbox.SecondFirmID)
	}
	first, second := caller{f, firms[0]}, caller{f, firms[1]}
	if ids := first.externalIDs(t); !slices.Contains(ids, sandbox.DemoFamilyExternalID) || slices.Contains(ids, sandbox.SecondFamilyExternalID) {
		t.Errorf("firm-001 lists %v, want the Hartwell family only", ids)
	}
	if ids := second.externalIDs(t); !slices.Equal(ids, []string{sandbox.SecondFamilyExternalID}) {
		t.Errorf("firm-002 lists %v, want only %s", ids, sandbox.SecondFamilyExternalID)
	}
	second.v1("GET", "/v1/clients/CL-2001/contacts?advisor_id="+sandbox.SecondAdvisorID, nil).wantOK(t)
	first.v1("GET", "/v1/clients/CL-2001/contacts", nil).wantError(t, http.StatusNotFound, "Client not found")
	second.v1("GET", "/v1/clients/CL-1001/contacts", nil).wantError(t, http.StatusNotFound, "Client not found")
	claims := tokenClaims(t, str(t, second.v2("POST", "/sandbox/token", map[string]any{"advisor": sandbox.SecondAdvisorID}).wantOK(t).object(t), "token"))
	if claims["firm_id"] != sandbox.SecondFirmID {
		t.Errorf("a token minted with firm-002's access token: firm_id %v, want %s", claims["firm_id"], sandbox.SecondFirmID)
	}
	// Single-firm settings describe the first firm only.
	s2 := sandboxtest.Start(t, sandbox.Options{AccessToken: "mine", Empty: true})
	f2 := &fixture{t: t, srv: s2.Server, sb: s2.Sandbox}
	if ids := (caller{f2, sandbox.Firm{AccessToken: "mine"}}).externalIDs(t); len(ids) != 0 {
		t.Errorf("the first firm, Empty: lists %v, want none", ids)
	}
	if ids := (caller{f2, firms[1]}).externalIDs(t); !slices.Equal(ids, []string{sandbox.SecondFamilyExternalID}) {
		t.Errorf("the second firm beside an Empty first: lists %v, want %s", ids, sandbox.SecondFamilyExternalID)
	}
	(caller{f2, firms[0]}).v2("GET", "/v2/top-accounts/", nil).wantError(t, http.StatusForbidden, "Access Denied")
}

// Credentials are a firm's as a whole: one firm's user with another's password, or a bearer
// token where Basic credentials are due, is refused before the path is looked at.
func TestMixedFirmCredentialsAreRefused(t *testing.T) {
	f, _, _ := twoFirms(t, nil)
	for _, tc := range []struct {
		name string
		set  func(*http.Request)
		path string
	}{
		{"firm A's user with firm B's password", func(r *http.Request) { r.SetBasicAuth("user-a", "pass-b") }, "/v1/clients/CL-1001/contacts"},
		{"firm B's user with firm A's password", func(r *http.Request) { r.SetBasicAuth("user-b", "pass-a") }, "/v1/no-such-path"},
		{"a firm's access token on v1", func(r *http.Request) { r.Header.Set("Authorization", "Bearer token-a") }, "/v1/clients/CL-1001/contacts"},
		{"a firm's Basic credentials on v2", func(r *http.Request) { r.SetBasicAuth("user-a", "pass-a") }, "/v2/top-accounts/"},
		{"two firms' tokens run together", func(r *http.Request) { r.Header.Set("Authorization", "Bearer token-atoken-b") }, "/v2/top-accounts/"},
		{"a firm's SFTP login as its Basic credentials", func(r *http.Request) { r.SetBasicAuth("sftp-a", "pass-a") }, "/v1/clients"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := f.request("GET", tc.path, nil)
			tc.set(req)
			f.do(req).wantError(t, http.StatusForbidden, "Access Denied")
		})
	}
}

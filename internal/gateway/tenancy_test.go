package gateway_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

// Two firms, one gateway: the sandbox serves three firms and is the identity provider of all
// three; the gateway serves two of them. Every caller sees only its own firm's families,
// documents, clients, bulk loads and events, over HTTP, SSE, WebSocket and the family page, and a
// caller of the third firm is refused before anything reaches the upstream.

const (
	firmA, firmB, firmX = sandbox.DemoFirmID, sandbox.SecondFirmID, "firm-900"
	tokenA, tokenB      = "upstream-token-a", "upstream-token-b"
	tokenX              = "upstream-token-x"
	keyA, keyB          = "webhook-key-firm-a-0123456789", "webhook-key-firm-b-0123456789"
)

// twoFirms is a gateway serving firms A and B of a sandbox that also serves X.
type twoFirms struct {
	gw                  *testGateway
	up                  *upstream
	callerA, callerB    string // Authorization headers
	callerX             string
	hartwell, castellan string // the wids of A's and B's demo families
}

func newTwoFirms(t *testing.T, env map[string]string) *twoFirms {
	t.Helper()
	up := &upstream{sandboxtest.Start(t, sandbox.Options{Seed: 11, Firms: []sandbox.Firm{
		{ID: firmA, AccessToken: tokenA, BasicCredentials: "gw-a:pass-a"},
		{ID: firmB, AccessToken: tokenB, BasicCredentials: "gw-b:pass-b", AdvisorID: sandbox.SecondAdvisorID, TeamID: sandbox.SecondTeamID},
		{ID: firmX, AccessToken: tokenX, BasicCredentials: "gw-x:pass-x"},
	}})}
	firms, _ := json.Marshal(map[string]any{"firms": []map[string]string{
		{"id": firmA, "access_token": tokenA, "basic_credentials": "gw-a:pass-a", "webhook_api_key": keyA},
		{"id": firmB, "access_token": tokenB, "basic_credentials": "gw-b:pass-b", "webhook_api_key": keyB},
	}})
	file := filepath.Join(t.TempDir(), "firms.json")
	if err := os.WriteFile(file, firms, 0o600); err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{
		"ADDR": "127.0.0.1:0", "ADVISOR_BASE_URL": up.URL, "FIRMS_FILE": file,
		"AUTH_JWKS_URL": up.URL + "/sandbox/jwks.json", "AUTH_ISSUER": sandbox.TokenIssuer, "AUTH_AUDIENCE": sandbox.TokenAudience,
	}
	for k, v := range env {
		settings[k] = v
	}
	printed, _, _ := runWithLog(t, settings)
	tf := &twoFirms{
		gw:      &testGateway{url: regexp.MustCompile(`http://\S+`).FindString(printed[0]), up: up},
		up:      up,
		callerA: "Bearer " + sandboxToken(t, up.URL, tokenA, sandbox.DefaultAdvisorID, firmA),
		callerB: "Bearer " + sandboxToken(t, up.URL, tokenB, sandbox.SecondAdvisorID, firmB),
		callerX: "Bearer " + sandboxToken(t, up.URL, tokenX, "adv-900", firmX),
	}
	a, _ := up.Sandbox.Tenant(firmA)
	b, _ := up.Sandbox.Tenant(firmB)
	tf.hartwell, _ = a.TopAccountWID(sandbox.DemoFamilyExternalID)
	tf.castellan, _ = b.TopAccountWID(sandbox.SecondFamilyExternalID)
	if tf.hartwell == "" || tf.castellan == "" {
		t.Fatal("the sandbox's demo families are missing")
	}
	return tf
}

// postVars sends an operation with variables as the caller auth.
func (g *testGateway) postVars(t testing.TB, auth, query string, vars map[string]any) *result {
	t.Helper()
	req := jsonRequest(http.MethodPost, g.url+"/graphql", map[string]any{"query": query, "variables": vars})
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return g.do(t, req)
}

func TestEachFirmSeesOnlyItsOwnFamiliesDocumentsAndClients(t *testing.T) {
	t.Parallel()
	tf := newTwoFirms(t, nil)
	gw := tf.gw

	var page struct {
		TopAccounts struct{ Nodes []struct{ Wid, Name string } }
	}
	gw.postAs(t, tf.callerA, `{ topAccounts(limit: 100) { nodes { wid name } } }`).ok(t, &page)
	if names := fmt.Sprint(page.TopAccounts.Nodes); !strings.Contains(names, "Hartwell") || strings.Contains(names, "Castellano") {
		t.Errorf("firm A lists %s, want its Hartwell family and no Castellano", names)
	}
	gw.postAs(t, tf.callerB, `{ topAccounts(limit: 100) { nodes { wid name } } }`).ok(t, &page)
	if names := fmt.Sprint(page.TopAccounts.Nodes); strings.Contains(names, "Hartwell") || !strings.Contains(names, "Castellano") {
		t.Errorf("firm B lists %s, want its Castellano family and no Hartwell", names)
	}

	// Firm B names firm A's family by its wid: it does not exist for B, in reads and writes.
	reads := []struct {
		name, query string
	}{
		{"the family", `query($w: ID!) { topAccount(wid: $w) { name } }`},
		{"its cards", `query($w: ID!) { topAccount(wid: $w) { contacts { ... on ContactCard { id } } } }`},
		{"its documents", `query($w: ID!) { topAccount(wid: $w) { documents { nodes { vaultId downloadUri } } } }`},
	}
	for _, tc := range reads {
		t.Run("B cannot read A's "+tc.name, func(t *testing.T) {
			var got struct{ TopAccount any }
			gw.postVars(t, tf.callerB, tc.query, map[string]any{"w": tf.hartwell}).ok(t, &got)
			if got.TopAccount != nil {
				t.Errorf("firm B read %v of firm A's family", got.TopAccount)
			}
			// A reads its own.
			gw.postVars(t, tf.callerA, tc.query, map[string]any{"w": tf.hartwell}).ok(t, &got)
			if got.TopAccount == nil {
				t.Error("firm A cannot read its own family")
			}
		})
	}
	writes := []struct {
		name, query string
		vars        map[string]any
	}{
		{"rename it", `mutation($w: ID!) { updateTopAccount(wid: $w, input: {name: "Taken"}) { name } }`, nil},
		{"add a card to it", `mutation($w: ID!) { createContact(wid: $w, input: {individual: {externalId: "intruder"}}) { ... on ContactCard { id } } }`, nil},
	}
	for _, tc := range writes {
		t.Run("B cannot "+tc.name, func(t *testing.T) {
			vars := map[string]any{"w": tf.hartwell}
			r := gw.postVars(t, tf.callerB, tc.query, vars)
			if len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != "NOT_FOUND" {
				t.Errorf("firm B's write answered %s %+v, want NOT_FOUND", r.Data, r.Errors)
			}
		})
	}
	var fam struct{ TopAccount struct{ Name string } }
	gw.postVars(t, tf.callerA, `query($w: ID!) { topAccount(wid: $w) { name } }`, map[string]any{"w": tf.hartwell}).ok(t, &fam)
	if fam.TopAccount.Name != "Hartwell Family" {
		t.Errorf("firm A's family is now %q", fam.TopAccount.Name)
	}

	// v1 clients: A's demo client is not B's.
	var client struct{ Client any }
	gw.postAs(t, tf.callerB, `{ client(ref: "CL-1001") { ref contacts { ... on ContactCard { id } } } }`).ok(t, &client)
	if client.Client != nil {
		t.Errorf("firm B read firm A's client: %v", client.Client)
	}
}

func TestACallerMayNotNameAnotherAdvisorOrTeamWithoutTheAdminRole(t *testing.T) {
	t.Parallel()
	tf := newTwoFirms(t, map[string]string{"AUTH_FIRM_ADMIN_ROLE": "firm-admin"})
	const q = `query($a: String, $t: String) { client(ref: "CL-1001", advisorId: $a, teamId: $t) { ref } }`
	admin := "Bearer " + sandboxTokenWith(t, tf.up.URL, tokenA, map[string]any{"advisor": "adv-777", "firm": firmA, "roles": []string{"firm-admin"}})
	tests := []struct {
		name   string
		caller string
		vars   map[string]any
		code   string // "" when allowed
	}{
		{"its own advisor, named", tf.callerA, map[string]any{"a": sandbox.DefaultAdvisorID}, ""},
		{"another advisor", tf.callerA, map[string]any{"a": "adv-002"}, "FORBIDDEN"},
		{"another team", tf.callerA, map[string]any{"t": "team-east"}, "FORBIDDEN"},
		{"the admin names an advisor", admin, map[string]any{"a": sandbox.DefaultAdvisorID}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tf.gw.postVars(t, tc.caller, q, tc.vars)
			if tc.code == "" {
				r.ok(t, nil)
				return
			}
			r.wantError(t, tc.code, "")
		})
	}
}

// sandboxTokenWith asks the sandbox for a caller token with these claims.
func sandboxTokenWith(t testing.TB, base, accessToken string, body map[string]any) string {
	t.Helper()
	out := sandboxJSON(t, http.MethodPost, base+"/sandbox/token", body,
		func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+accessToken) })
	token, _ := out["token"].(string)
	if token == "" {
		t.Fatalf("the sandbox minted no token: %v", out)
	}
	return token
}

func TestACallerOfAFirmTheGatewayDoesNotServeIsRefusedBeforeTheUpstream(t *testing.T) {
	t.Parallel()
	tf := newTwoFirms(t, nil)
	tf.up.ResetRequests()

	// HTTP: 403 FORBIDDEN, whatever the operation.
	for _, q := range []string{`{ topAccounts { nodes { wid } } }`, `mutation { createTopAccount(input: {externalId: "x", name: "x"}) { wid } }`} {
		r := tf.gw.postAs(t, tf.callerX, q)
		if r.status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", q, r.status)
		}
		r.wantError(t, "FORBIDDEN", "")
	}
	// SSE: refused before the stream opens.
	req := jsonRequest(http.MethodPost, tf.gw.url+"/graphql", map[string]any{"query": `subscription { events { id } }`})
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", tf.callerX)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("SSE: status %d, want 403", resp.StatusCode)
	}
	// WebSocket: 4403 at connection_init.
	ws := dialWS(t, tf.gw, "graphql-transport-ws", nil)
	ws.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": tf.callerX}})
	if code, _ := ws.closed(5 * time.Second); code != 4403 {
		t.Errorf("WebSocket closed with %d, want 4403", code)
	}
	for _, r := range tf.up.Requests() {
		if !strings.HasPrefix(r, "GET /sandbox/jwks.json") {
			t.Errorf("the upstream was asked %s for a caller of an unserved firm", r)
		}
	}
}

func TestEventsReachOnlyTheFirmTheyBelongTo(t *testing.T) {
	t.Parallel()
	tf := newTwoFirms(t, nil)
	gw := tf.gw
	const sub = `subscription { events { id wid eventType } }`

	// Each firm subscribes over SSE and over a WebSocket.
	sseA, sseB := openSSEAs(t, gw, tf.callerA, sub, nil), openSSEAs(t, gw, tf.callerB, sub, nil)
	wsA, wsB := dialWS(t, gw, "graphql-transport-ws", nil), dialWS(t, gw, "graphql-transport-ws", nil)
	for _, c := range []struct {
		ws   *wsClient
		auth string
	}{{wsA, tf.callerA}, {wsB, tf.callerB}} {
		c.ws.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": c.auth}})
		if m := c.ws.read(); m["type"] != "connection_ack" {
			t.Fatalf("got %v, want connection_ack", m)
		}
		c.ws.subscribe("1", sub, nil)
	}
	waitSubscribers(t, gw, 4)

	// The service delivers one event of each firm, each with its firm's key; the same body
	// from both firms is two events, one for each.
	body := func(wid string) []byte {
		b, _ := json.Marshal(progress(wid, 40))
		return b
	}
	for _, d := range []struct{ key, wid string }{{keyA, "wid-of-a"}, {keyB, "wid-of-b"}, {keyA, "same"}, {keyB, "same"}} {
		if status, out := gw.deliver(t, d.key, body(d.wid)); status != http.StatusOK {
			t.Fatalf("delivery: %d %v", status, out)
		}
	}
	want := map[string][]string{"A": {"wid-of-a", "same"}, "B": {"wid-of-b", "same"}}
	for name, s := range map[string]*sseStream{"A": sseA, "B": sseB} {
		for _, w := range want[name] {
			if got := sseWid(t, s.next()); got != w {
				t.Errorf("SSE of firm %s got %s, want %s", name, got, w)
			}
		}
	}
	for name, c := range map[string]*wsClient{"A": wsA, "B": wsB} {
		for _, w := range want[name] {
			data := c.nextData("1")
			if got := data["events"].(map[string]any)["wid"]; got != w {
				t.Errorf("WebSocket of firm %s got %v, want %s", name, got, w)
			}
		}
	}
	// recentEvents answers each firm with its own.
	for name, auth := range map[string]string{"A": tf.callerA, "B": tf.callerB} {
		var got struct{ RecentEvents []struct{ Wid string } }
		gw.postAs(t, auth, `{ recentEvents(last: 10) { wid } }`).ok(t, &got)
		var wids []string
		for _, e := range got.RecentEvents {
			wids = append(wids, e.Wid)
		}
		if strings.Join(wids, ",") != strings.Join(want[name], ",") && strings.Join(wids, ",") != reverse(want[name]) {
			t.Errorf("recentEvents of firm %s: %v, want %v", name, wids, want[name])
		}
	}
	// eventHistory too, and another firm's cursor reaches none of that firm's events.
	cursors := map[string]string{}
	for name, auth := range map[string]string{"A": tf.callerA, "B": tf.callerB} {
		var got struct {
			EventHistory struct {
				Edges []struct {
					Cursor string
					Node   struct{ Wid string }
				}
			}
		}
		gw.postAs(t, auth, `{ eventHistory(last: 10) { edges { cursor node { wid } } } }`).ok(t, &got)
		var wids []string
		for _, e := range got.EventHistory.Edges {
			wids = append(wids, e.Node.Wid)
			cursors[name] = e.Cursor
		}
		if strings.Join(wids, ",") != strings.Join(want[name], ",") && strings.Join(wids, ",") != reverse(want[name]) {
			t.Errorf("eventHistory of firm %s: %v, want %v", name, wids, want[name])
		}
	}
	e := gw.postVars(t, tf.callerB, `query($c: String) { eventHistory(last: 10, before: $c) { edges { cursor } } }`,
		map[string]any{"c": cursors["A"]}).wantError(t, "BAD_USER_INPUT", "")
	if !strings.HasPrefix(e.Message, "before is a cursor of another list of Query.eventHistory") {
		t.Errorf("firm B with firm A's cursor: %q, want it refused as another list's", e.Message)
	}
	// A key of neither firm is refused.
	if status, _ := gw.deliver(t, "webhook-key-of-nobody-0123456789", body("x")); status != http.StatusUnauthorized {
		t.Errorf("a delivery with an unknown key: %d, want 401", status)
	}
}

func reverse(s []string) string {
	out := make([]string, 0, len(s))
	for i := len(s) - 1; i >= 0; i-- {
		out = append(out, s[i])
	}
	return strings.Join(out, ",")
}

func sseWid(t testing.TB, ev sseEvent) string {
	t.Helper()
	var m struct {
		Data struct{ Events struct{ Wid string } }
	}
	if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
		t.Fatalf("SSE event %q: %v", ev.data, err)
	}
	return m.Data.Events.Wid
}

func TestTheFamilyPageOfAnotherFirmsFamilyShowsNothing(t *testing.T) {
	t.Parallel()
	tf := newTwoFirms(t, nil)
	// The page is the same for everyone and holds no data; what it asks /graphql for, with the
	// caller's credentials, is what a caller of firm B gets for firm A's family: nothing.
	resp, err := http.Get(tf.gw.url + "/family/" + tf.hartwell)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	_, _ = page.ReadFrom(resp.Body)
	resp.Body.Close()
	if strings.Contains(page.String(), "Hartwell") {
		t.Error("the family page itself shows the family's data")
	}
	js, err := os.ReadFile(filepath.Join(repoRoot, "internal", "familypage", "assets", "family.js"))
	if err != nil {
		t.Fatal(err)
	}
	pageQuery := regexp.MustCompile("(?s)const QUERY = `(.*?)`").FindSubmatch(js)
	if pageQuery == nil {
		t.Fatal("family.js has no QUERY")
	}
	var got struct{ TopAccount any }
	tf.gw.postVars(t, tf.callerB, string(pageQuery[1]), map[string]any{"wid": tf.hartwell}).ok(t, &got)
	if got.TopAccount != nil {
		t.Errorf("firm B's family page query read firm A's family: %v", got.TopAccount)
	}
}

// The zero-configuration gateway serves the embedded sandbox's two firms: each firm's bulk
// loads go up with its own SFTP login into its own data, and each firm's events, sent by the
// sandbox with that firm's webhook key, reach only that firm's callers.
func TestTheEmbeddedSandboxsTwoFirmsKeepTheirBulkLoadsAndEventsApart(t *testing.T) {
	t.Parallel()
	gw, sbURL := sandboxed(t)
	first := "" // the demo advisor of the first firm: no token at all
	second := "Bearer " + sandboxToken(t, sbURL, sandbox.SecondAccessToken, sandbox.SecondAdvisorID, sandbox.SecondFirmID)

	// A bulk load of the second firm.
	fileMap := map[string][]string{"clients": {"variables.clients"}}
	body, ct := uplBody(t, map[string]any{"query": `mutation($clients: Upload) { uploadBulkFiles(clients: $clients) { id } }`,
		"variables": map[string]any{"clients": nil}}, fileMap,
		uplFile{field: "clients", filename: "clients.jsonl", contentType: "application/x-ndjson", data: readSample(t, "clients.jsonl")})
	req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", ct)
	req.Header.Set("GraphQL-Require-Preflight", "1")
	req.Header.Set("Authorization", second)
	var started struct{ UploadBulkFiles struct{ ID string } }
	gw.do(t, req).ok(t, &started)
	id := started.UploadBulkFiles.ID

	const loadQuery = `query($id: ID!) { bulkUpload(id: $id) { phase error } }`
	var load struct {
		BulkUpload *struct{ Phase, Error string }
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		gw.postVars(t, second, loadQuery, map[string]any{"id": id}).ok(t, &load)
		if load.BulkUpload == nil {
			t.Fatal("the second firm cannot see its own load")
		}
		if p := load.BulkUpload.Phase; p == "DONE" || p == "FAILED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the load is still %s after 30 s", load.BulkUpload.Phase)
		}
	}
	if load.BulkUpload.Phase != "DONE" {
		t.Fatalf("the load ended %+v", load.BulkUpload)
	}
	gw.postVars(t, first, loadQuery, map[string]any{"id": id}).ok(t, &load)
	if load.BulkUpload != nil {
		t.Errorf("the first firm sees the second's load: %+v", load.BulkUpload)
	}
	var client struct{ Client any }
	gw.postAs(t, second, `{ client(ref: "C-1001") { ref } }`).ok(t, &client)
	if client.Client == nil {
		t.Error("the second firm's load did not add its client")
	}
	gw.postAs(t, first, `{ client(ref: "C-1001") { ref } }`).ok(t, &client)
	if client.Client != nil {
		t.Error("the second firm's client is the first firm's too")
	}

	// Each firm plays a scenario; each firm's callers see its own events only.
	for _, token := range []string{sandbox.DefaultAccessToken, sandbox.SecondAccessToken} {
		sandboxJSON(t, http.MethodPost, sbURL+"/sandbox/events", map[string]any{"scenario": "onboarding"},
			func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) })
	}
	ids := map[string][]string{}
	for deadline := time.Now().Add(30 * time.Second); len(ids[first]) == 0 || len(ids[second]) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("events did not arrive: %v", ids)
		}
		for _, caller := range []string{first, second} {
			var got struct{ RecentEvents []struct{ ID string } }
			gw.postAs(t, caller, `{ recentEvents(last: 100) { id } }`).ok(t, &got)
			ids[caller] = nil
			for _, e := range got.RecentEvents {
				ids[caller] = append(ids[caller], e.ID)
			}
		}
	}
	for _, id := range ids[first] {
		if slices.Contains(ids[second], id) {
			t.Errorf("event %s reached both firms", id)
		}
	}
}

// Batches, persisted queries, GET, uploads and deletes act for the caller's firm like any
// other operation: firm B reaches nothing of firm A's family by any of them.
func TestEveryWayInActsForTheCallersFirm(t *testing.T) {
	t.Parallel()
	tf := newTwoFirms(t, map[string]string{"GRAPHQL_BATCH_LIMIT": "5"})
	gw := tf.gw
	const family = `query($w: ID!) { topAccount(wid: $w) { name documents { nodes { vaultId downloadUri } } } }`
	vars := map[string]any{"w": tf.hartwell}

	t.Run("a batch", func(t *testing.T) {
		req := jsonRequest(http.MethodPost, gw.url+"/graphql", []map[string]any{
			{"query": family, "variables": vars}, {"query": `{ viewer { firmId } }`},
		})
		req.Header.Set("Authorization", tf.callerB)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var answers []struct {
			Data struct {
				TopAccount any
				Viewer     struct{ FirmID string }
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&answers); err != nil || len(answers) != 2 {
			t.Fatalf("batch answered %v %v", answers, err)
		}
		if answers[0].Data.TopAccount != nil || answers[1].Data.Viewer.FirmID != firmB {
			t.Errorf("firm B's batch answered %+v", answers)
		}
	})

	t.Run("a persisted query registered by A, sent by B", func(t *testing.T) {
		sum := sha256.Sum256([]byte(family))
		ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
		reqA := jsonRequest(http.MethodPost, gw.url+"/graphql", map[string]any{"query": family, "variables": vars, "extensions": ext})
		reqA.Header.Set("Authorization", tf.callerA)
		var a struct{ TopAccount struct{ Name string } }
		gw.do(t, reqA).ok(t, &a)
		if a.TopAccount.Name != "Hartwell Family" {
			t.Fatalf("firm A reads %+v", a)
		}
		reqB := jsonRequest(http.MethodPost, gw.url+"/graphql", map[string]any{"variables": vars, "extensions": ext})
		reqB.Header.Set("Authorization", tf.callerB)
		var b struct{ TopAccount any }
		gw.do(t, reqB).ok(t, &b)
		if b.TopAccount != nil {
			t.Errorf("firm B ran firm A's persisted query on firm A's data: %v", b.TopAccount)
		}
	})

	t.Run("a GET", func(t *testing.T) {
		v, _ := json.Marshal(vars)
		req, _ := http.NewRequest(http.MethodGet, gw.url+"/graphql?query="+url.QueryEscape(family)+"&variables="+url.QueryEscape(string(v)), nil)
		req.Header.Set("Authorization", tf.callerB)
		var b struct{ TopAccount any }
		gw.do(t, req).ok(t, &b)
		if b.TopAccount != nil {
			t.Errorf("firm B read firm A's family over GET: %v", b.TopAccount)
		}
	})

	t.Run("an upload into A's family", func(t *testing.T) {
		const create = `mutation($wid: ID!, $in: CreateDocumentInput!, $file: Upload) { createDocument(wid: $wid, input: $in, file: $file) { document { vaultId } } }`
		body, ct := uplBody(t, map[string]any{"query": create, "variables": map[string]any{"wid": tf.hartwell, "file": nil,
			"in": map[string]any{"name": "planted", "extension": "pdf", "category": "MISCELLANEOUS", "subCategory": "UNCATEGORIZED"}}},
			map[string][]string{"0": {"variables.file"}}, uplFile{"0", "planted.pdf", "application/pdf", []byte("%PDF-1.4 planted")})
		req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		req.Header.Set("GraphQL-Require-Preflight", "1")
		req.Header.Set("Authorization", tf.callerB)
		r := gw.do(t, req)
		if len(r.Errors) == 0 || r.Errors[0].Extensions["code"] != "NOT_FOUND" {
			t.Errorf("firm B's upload into firm A's family answered %s %+v, want NOT_FOUND", r.Data, r.Errors)
		}
	})

	t.Run("a delete of A's document", func(t *testing.T) {
		var a struct {
			TopAccount struct {
				Documents struct{ Nodes []struct{ VaultID string } }
			}
		}
		gw.postVars(t, tf.callerA, family, vars).ok(t, &a)
		if len(a.TopAccount.Documents.Nodes) == 0 {
			t.Fatal("firm A's family has no document")
		}
		doc := a.TopAccount.Documents.Nodes[0].VaultID
		for _, q := range []string{
			`query($w: ID!, $v: ID!) { document(wid: $w, vaultId: $v) { name downloadUri } }`,
			`mutation($w: ID!, $v: ID!) { deleteDocument(wid: $w, vaultId: $v) { deleted } }`,
		} {
			r := gw.postVars(t, tf.callerB, q, map[string]any{"w": tf.hartwell, "v": doc})
			if strings.Contains(string(r.Data), "http") || !strings.Contains(string(r.Data), "null") && len(r.Errors) == 0 {
				t.Errorf("firm B's %q answered %s %+v", q, r.Data, r.Errors)
			}
		}
		gw.postVars(t, tf.callerA, family, vars).ok(t, &a)
		if len(a.TopAccount.Documents.Nodes) == 0 || a.TopAccount.Documents.Nodes[0].VaultID != doc {
			t.Error("firm A's document is gone")
		}
	})
}

// "A caller cannot reach another advisor's object through `node`", nor another firm's: an id
// names an object, and node reads it in the caller's firm and as the caller may act, so
// another firm's family, card or document and another advisor's client are NOT_FOUND, as a
// forged id is, in node and in nodes.
func TestNodeReachesOnlyTheCallersFirmAndAdvisor(t *testing.T) {
	t.Parallel()
	tf := newTwoFirms(t, nil)
	gw := tf.gw
	var a struct {
		TopAccount struct {
			ID        string
			Contacts  []struct{ ID string }
			Documents struct{ Nodes []struct{ ID string } }
		}
		Client struct {
			ID       string
			Contacts []struct{ ID string }
		}
	}
	gw.postVars(t, tf.callerA, `query($w: ID!) { topAccount(wid: $w) { id
  contacts { ... on ContactCard { id } } documents(first: 1) { nodes { id } } }
  client(ref: "CL-1001") { id contacts { ... on ContactCard { id } } } }`, map[string]any{"w": tf.hartwell}).ok(t, &a)
	if len(a.TopAccount.Contacts) == 0 || len(a.TopAccount.Documents.Nodes) == 0 || len(a.Client.Contacts) == 0 {
		t.Fatalf("firm A's demo family answered %+v", a)
	}
	ids := map[string]string{
		"family": a.TopAccount.ID, "card": a.TopAccount.Contacts[0].ID,
		"document": a.TopAccount.Documents.Nodes[0].ID, "client": a.Client.ID, "client's card": a.Client.Contacts[0].ID,
	}
	otherAdvisor := "Bearer " + sandboxToken(t, tf.up.URL, tokenA, "adv-002", firmA)
	for _, name := range []string{"family", "card", "document", "client", "client's card"} {
		id := ids[name]
		t.Run("A reads its own "+name, func(t *testing.T) {
			var got struct{ Node struct{ ID string } }
			gw.postVars(t, tf.callerA, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}).ok(t, &got)
			if got.Node.ID != id {
				t.Errorf("node(%s) = %+v", id, got.Node)
			}
		})
		for _, other := range []struct{ who, caller string }{{"firm B", tf.callerB}, {"another advisor of firm A", otherAdvisor}} {
			if !strings.HasPrefix(name, "client") && other.caller == otherAdvisor {
				continue // a firm's families are its advisors' alike
			}
			t.Run(other.who+" cannot read A's "+name, func(t *testing.T) {
				r := gw.postVars(t, other.caller, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id})
				if string(r.Data) != `{"node":null}` {
					t.Errorf("data %s, want node null", r.Data)
				}
				r.wantError(t, "NOT_FOUND", "No object the caller may read has the id given in id")
				r = gw.postVars(t, other.caller, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": []string{id, id}})
				if string(r.Data) != `{"nodes":[null,null]}` || len(r.Errors) != 2 || r.Errors[0].Extensions["code"] != "NOT_FOUND" {
					t.Errorf("nodes answered %s %+v, want two nulls, each NOT_FOUND", r.Data, r.Errors)
				}
			})
		}
	}
}

package sandbox_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// Authentication and the behaviour every endpoint shares, from the specification's
// Authentication, Endpoints and Errors sections:
//
//   - v2 endpoints (top accounts, v2 contacts, documents) take `Authorization: Bearer
//     <ACCESS_TOKEN>`; v1 client-scoped contact endpoints take `Authorization: Basic
//     <CREDENTIALS>`.
//   - Invalid credentials or insufficient permission return 403 with message Access Denied.
//   - All requests send `Content-Type: application/json`.
//
// A caller without valid credentials must learn nothing: not whether a record exists (404),
// not whether its body is acceptable (400, 409, 413, 415, 422), not which methods a path
// supports (405). So every probe below is first sent with each kind of bad credential and must
// get 403 Access Denied, then with the right credential to show what it would have revealed.

// authOn is f reporting to t: the harness's helpers fail the test they were made for, and a
// subtest must not stop its parent.
func authOn(f *fixture, t *testing.T) *fixture {
	g := *f
	g.t = t
	return &g
}

// authMaxBody is the largest JSON request body the sandbox reads: 1 MiB.
const authMaxBody = 1 << 20

// authPadded is body as JSON followed by spaces up to size bytes: still one valid JSON object.
func authPadded(t *testing.T, body map[string]any, size int) []byte {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("marshal body: %v", err)
	}
	if len(data) > size {
		t.Fatalf("body is %d bytes, more than %d", len(data), size)
	}
	return append(data, bytes.Repeat([]byte(" "), size-len(data))...)
}

// authWorld is a sandbox with one of everything, so that every endpoint has a record to find.
type authWorld struct {
	f                                           *fixture
	wid, contactID, vaultID, client, clientCard string
}

func authSetup(t *testing.T) *authWorld {
	t.Helper()
	f := emptySandbox(t)
	w := &authWorld{f: f}
	w.wid = f.addTopAccount("AUTH-TA", "Auth family")
	w.contactID = f.addContact(w.wid, person("auth-person"))
	w.vaultID = str(t, f.addDocument(w.wid, pdfDocument("Private memo")), "vault_id")
	if _, err := f.sb.AddClient(sandbox.Client{ExternalID: "AUTH-CL", AdvisorID: "adv-1", TeamID: "team-1"}); err != nil {
		t.Fatalf("add client: %v", err)
	}
	w.client = "AUTH-CL"
	r := f.v1("POST", "/v1/clients/AUTH-CL/contacts", person("auth-client-person")).wantOK(t)
	w.clientCard = str(t, r.object(t), "id")
	return w
}

// snapshot is what a caller with credentials sees of every record, to show that refused
// requests changed nothing.
func (w *authWorld) snapshot(t *testing.T) string {
	t.Helper()
	g := authOn(w.f, t)
	var b strings.Builder
	for _, r := range []*response{
		g.v2("GET", "/v2/top-accounts/?limit=100", nil).wantOK(t),
		g.v2("GET", "/v2/top-accounts/"+w.wid+"/contacts/", nil).wantOK(t),
		g.v2("GET", "/v2/top-accounts/"+w.wid+"/documents/", nil).wantOK(t),
		g.v2("GET", "/v2/top-accounts/"+w.wid+"/documents/"+w.vaultID, nil).wantOK(t),
		g.v1("GET", "/v1/clients/"+w.client+"/contacts", nil).wantOK(t),
	} {
		b.Write(r.body)
	}
	return b.String()
}

// authProbe is one request to an endpoint.
type authProbe struct {
	name        string
	v1          bool // a v1 (Basic) endpoint; otherwise v2 (Bearer)
	method      string
	path        string
	body        any
	contentType string // default: application/json when there is a body
	// want is the status the probe gets with the right credential; 0 means it would succeed
	// and change data, so it is only sent without.
	want int
}

func (w *authWorld) probes(t *testing.T) []authProbe {
	ta := "/v2/top-accounts/"
	taItem := ta + w.wid
	contacts := taItem + "/contacts/"
	contact := contacts + w.contactID
	docs := taItem + "/documents/"
	doc := docs + w.vaultID
	v1Contacts := "/v1/clients/" + w.client + "/contacts"
	v1Contact := v1Contacts + "/" + w.clientCard
	tooLarge := func(body map[string]any) []byte { return authPadded(t, body, authMaxBody+1) }
	const malformed = `{"name":`
	const text = "text/plain"
	return []authProbe{
		// Top accounts (v2).
		{name: "List Top Accounts", method: "GET", path: ta, want: 200},
		{name: "List Top Accounts with limit over 100", method: "GET", path: ta + "?limit=101", want: 400},
		{name: "Add Top Account", method: "POST", path: ta, body: map[string]any{"external_id": "INTRUDER", "name": "Intruder"}},
		{name: "Add Top Account with a malformed body", method: "POST", path: ta, body: malformed, want: 400},
		{name: "Add Top Account with an existing external_id", method: "POST", path: ta, body: map[string]any{"external_id": "AUTH-TA", "name": "x"}, want: 409},
		{name: "Add Top Account as text/plain", method: "POST", path: ta, body: `{"external_id":"X","name":"x"}`, contentType: text, want: 415},
		{name: "Add Top Account over 1 MiB", method: "POST", path: ta, body: tooLarge(map[string]any{"external_id": "BIG", "name": "Big"}), want: 413},
		{name: "Get Top Account", method: "GET", path: taItem, want: 200},
		{name: "Get an unknown top account", method: "GET", path: ta + "no-such-wid", want: 404},
		{name: "Get Top Account with a blank wid", method: "GET", path: ta + "%20", want: 400},
		{name: "Update Top Account", method: "PUT", path: taItem, body: map[string]any{"name": "Hijacked"}},
		{name: "Update an unknown top account", method: "PUT", path: ta + "no-such-wid", body: map[string]any{"name": "x"}, want: 404},
		{name: "Update Top Account with an empty body", method: "PUT", path: taItem, body: map[string]any{}, want: 400},
		{name: "Update Top Account without a wid", method: "PUT", path: ta, body: map[string]any{"name": "x"}, want: 400},
		{name: "Update Top Account as text/plain", method: "PUT", path: taItem, body: `{"name":"x"}`, contentType: text, want: 415},
		{name: "Update Top Account over 1 MiB", method: "PUT", path: taItem, body: tooLarge(map[string]any{"name": "Big"}), want: 413},
		{name: "DELETE a top account", method: "DELETE", path: taItem, want: 405},
		{name: "PATCH the top-account collection", method: "PATCH", path: ta, body: map[string]any{"name": "x"}, want: 405},

		// Contacts by top account (v2).
		{name: "List Contacts (v2)", method: "GET", path: contacts, want: 200},
		{name: "List Contacts (v2) of an unknown top account", method: "GET", path: ta + "no-such-wid/contacts/", want: 404},
		{name: "Add Contact (v2)", method: "POST", path: contacts, body: person("intruder")},
		{name: "Add Contact (v2) to an unknown top account", method: "POST", path: ta + "no-such-wid/contacts/", body: person("intruder"), want: 404},
		{name: "Add Contact (v2) with a malformed body", method: "POST", path: contacts, body: malformed, want: 400},
		{name: "Add Contact (v2) with an existing external_id", method: "POST", path: contacts, body: person("auth-person"), want: 409},
		{name: "Add Contact (v2) as text/plain", method: "POST", path: contacts, body: `{"type":"Individual","external_id":"x"}`, contentType: text, want: 415},
		{name: "Add Contact (v2) over 1 MiB", method: "POST", path: contacts, body: tooLarge(person("big")), want: 413},
		{name: "Get Contact (v2)", method: "GET", path: contact, want: 200},
		{name: "Get an unknown contact (v2)", method: "GET", path: contacts + "no-such-id", want: 404},
		{name: "Update Contact (v2)", method: "PUT", path: contact, body: map[string]any{"first_name": "Hijacked"}},
		{name: "Update an unknown contact (v2)", method: "PUT", path: contacts + "no-such-id", body: map[string]any{"first_name": "x"}, want: 404},
		{name: "Update Contact (v2) with a malformed body", method: "PUT", path: contact, body: malformed, want: 400},
		{name: "Update Contact (v2) changing its type", method: "PUT", path: contact, body: map[string]any{"type": "Trust"}, want: 400},
		{name: "Update Contact (v2) as text/plain", method: "PUT", path: contact, body: `{"first_name":"x"}`, contentType: text, want: 415},
		{name: "Update Contact (v2) over 1 MiB", method: "PUT", path: contact, body: tooLarge(map[string]any{"first_name": "Big"}), want: 413},
		{name: "DELETE a contact (v2)", method: "DELETE", path: contact, want: 405},

		// Documents (v2).
		{name: "List Documents", method: "GET", path: docs, want: 200},
		{name: "List Documents of an unknown top account", method: "GET", path: ta + "no-such-wid/documents/", want: 404},
		{name: "List Documents with limit over 1000", method: "GET", path: docs + "?limit=1001", want: 400},
		{name: "Upload Document", method: "POST", path: docs, body: pdfDocument("Intruder")},
		{name: "Upload Document to an unknown top account", method: "POST", path: ta + "no-such-wid/documents/", body: pdfDocument("x"), want: 404},
		{name: "Upload Document with a malformed body", method: "POST", path: docs, body: malformed, want: 400},
		{name: "Upload Document as text/plain", method: "POST", path: docs, body: `{"name":"x"}`, contentType: text, want: 415},
		{name: "Upload Document over 1 MiB", method: "POST", path: docs, body: tooLarge(pdfDocument("big")), want: 413},
		{name: "Get Document", method: "GET", path: doc, want: 200},
		{name: "Get an unknown document", method: "GET", path: docs + "no-such-vault", want: 404},
		{name: "Update Document", method: "PATCH", path: doc, body: map[string]any{"name": "Hijacked"}},
		{name: "Update an unknown document", method: "PATCH", path: docs + "no-such-vault", body: map[string]any{"name": "x"}, want: 404},
		{name: "Update Document with a malformed body", method: "PATCH", path: doc, body: malformed, want: 400},
		{name: "Update Document as text/plain", method: "PATCH", path: doc, body: `{"name":"x"}`, contentType: text, want: 415},
		{name: "Update Document over 1 MiB", method: "PATCH", path: doc, body: tooLarge(map[string]any{"name": "big"}), want: 413},
		{name: "Delete Document", method: "DELETE", path: doc},
		{name: "Delete an unknown document", method: "DELETE", path: docs + "no-such-vault", want: 404},
		{name: "PUT a document", method: "PUT", path: doc, body: map[string]any{"name": "x"}, want: 405},
		// README decision: the analysis start endpoint.
		{name: "Start Document Analysis", method: "POST", path: doc + "/analysis", body: map[string]any{"start_tax_job": true}},

		// Contacts by client (v1).
		{name: "List Contacts (v1)", v1: true, method: "GET", path: v1Contacts, want: 200},
		{name: "List Contacts (v1) of an unknown client", v1: true, method: "GET", path: "/v1/clients/NO-SUCH-CLIENT/contacts", want: 404},
		{name: "Add Contact (v1)", v1: true, method: "POST", path: v1Contacts, body: person("intruder")},
		{name: "Add Contact (v1) to an unknown client", v1: true, method: "POST", path: "/v1/clients/NO-SUCH-CLIENT/contacts", body: person("x"), want: 404},
		{name: "Add Contact (v1) with a malformed body", v1: true, method: "POST", path: v1Contacts, body: malformed, want: 422},
		{name: "Add Contact (v1) with an existing external_id", v1: true, method: "POST", path: v1Contacts, body: person("auth-client-person"), want: 409},
		{name: "Add Contact (v1) as text/plain", v1: true, method: "POST", path: v1Contacts, body: `{"type":"Individual","external_id":"x"}`, contentType: text, want: 415},
		{name: "Add Contact (v1) over 1 MiB", v1: true, method: "POST", path: v1Contacts, body: tooLarge(person("big")), want: 413},
		{name: "Get Contact (v1)", v1: true, method: "GET", path: v1Contact, want: 200},
		{name: "Get an unknown contact (v1)", v1: true, method: "GET", path: v1Contacts + "/no-such-id", want: 404},
		{name: "Update Contact (v1)", v1: true, method: "PUT", path: v1Contact, body: map[string]any{"first_name": "Hijacked"}},
		{name: "Update an unknown contact (v1)", v1: true, method: "PUT", path: v1Contacts + "/no-such-id", body: map[string]any{"first_name": "x"}, want: 404},
		{name: "Update Contact (v1) with a malformed body", v1: true, method: "PUT", path: v1Contact, body: malformed, want: 400},
		{name: "Update Contact (v1) with an empty body", v1: true, method: "PUT", path: v1Contact, body: map[string]any{}, want: 400},
		{name: "Update Contact (v1) as text/plain", v1: true, method: "PUT", path: v1Contact, body: `{"first_name":"x"}`, contentType: text, want: 415},
		{name: "Update Contact (v1) over 1 MiB", v1: true, method: "PUT", path: v1Contact, body: tooLarge(map[string]any{"first_name": "Big"}), want: 413},
		{name: "DELETE a contact (v1)", v1: true, method: "DELETE", path: v1Contact, want: 405},
		{name: "PATCH the contacts of a client (v1)", v1: true, method: "PATCH", path: v1Contacts, body: map[string]any{"first_name": "x"}, want: 405},
		// README decisions: Add Client and Delete Client.
		{name: "Add Client", v1: true, method: "POST", path: "/v1/clients", body: map[string]any{"id": "INTRUDER", "first_name": "I", "last_name": "N"}},
		{name: "Add Client with a malformed body", v1: true, method: "POST", path: "/v1/clients", body: malformed, want: 400},
		{name: "Add Client with a field it does not have", v1: true, method: "POST", path: "/v1/clients", body: map[string]any{"external_id": "INTRUDER"}, want: 400},
		{name: "Add Client as text/plain", v1: true, method: "POST", path: "/v1/clients", body: `{"id":"X","first_name":"I","last_name":"N"}`, contentType: text, want: 415},
		{name: "Add Client over 1 MiB", v1: true, method: "POST", path: "/v1/clients", body: tooLarge(map[string]any{"id": "BIG", "first_name": "I", "last_name": "N"}), want: 413},
		{name: "GET the clients", v1: true, method: "GET", path: "/v1/clients", want: 405},
		{name: "Delete Client", v1: true, method: "DELETE", path: "/v1/clients/" + w.client},
		{name: "Delete an unknown client", v1: true, method: "DELETE", path: "/v1/clients/NO-SUCH-CLIENT", want: 404},
		{name: "PUT a client", v1: true, method: "PUT", path: "/v1/clients/" + w.client, body: map[string]any{"id": "x"}, want: 405},
	}
}

// authCredential is one way of presenting credentials.
type authCredential struct {
	name string
	set  func(req *http.Request)
}

func authHeader(value string) func(*http.Request) {
	return func(req *http.Request) { req.Header.Set("Authorization", value) }
}

func authBasic(user, pass string) func(*http.Request) {
	return func(req *http.Request) { req.SetBasicAuth(user, pass) }
}

// authBadBearer are credentials a v2 endpoint must refuse.
func authBadBearer() []authCredential {
	return []authCredential{
		{"no Authorization header", func(*http.Request) {}},
		{"a wrong bearer token", authHeader("Bearer wrong-" + testToken)},
		{"an empty bearer token", authHeader("Bearer ")},
		{"a prefix of the bearer token", authHeader("Bearer " + testToken[:len(testToken)-1])},
		{"the bearer token without its scheme", authHeader(testToken)},
		{"the bearer token under another scheme", authHeader("Token " + testToken)},
		{"the v1 basic credentials", authBasic(testUser, testPass)},
	}
}

// authBadBasic are credentials a v1 endpoint must refuse.
func authBadBasic() []authCredential {
	return []authCredential{
		{"no Authorization header", func(*http.Request) {}},
		{"a wrong password", authBasic(testUser, "wrong-"+testPass)},
		{"a wrong user", authBasic("wrong-"+testUser, testPass)},
		{"an empty password", authBasic(testUser, "")},
		{"basic credentials without a colon", authHeader("Basic " + base64.StdEncoding.EncodeToString([]byte(testUser+testPass)))},
		{"basic credentials that are not base64", authHeader("Basic !!" + testUser + ":" + testPass)},
		{"the v2 bearer token", authHeader("Bearer " + testToken)},
	}
}

// send builds and sends a probe with the given credentials.
func (p authProbe) send(f *fixture, cred func(*http.Request)) *response {
	f.t.Helper()
	req := f.request(p.method, p.path, p.body)
	if p.contentType != "" {
		req.Header.Set("Content-Type", p.contentType)
	}
	cred(req)
	return f.do(req)
}

// authWantDenied checks a 403 Access Denied that tells nothing more.
func authWantDenied(t *testing.T, r *response) {
	t.Helper()
	r.wantError(t, http.StatusForbidden, "Access Denied")
	if m := r.object(t); len(m) != 1 {
		t.Errorf("403 body is %s, want only the message", r.body)
	}
	if allow := r.header.Get("Allow"); allow != "" {
		t.Errorf("403 carries Allow: %s, which tells the path's methods", allow)
	}
}

func TestEveryEndpointRefusesMissingOrWrongCredentialsBeforeAnythingElse(t *testing.T) {
	t.Parallel()
	w := authSetup(t)
	before := w.snapshot(t)
	for _, p := range w.probes(t) {
		bad, good := authBadBearer(), authHeader("Bearer "+testToken)
		if p.v1 {
			bad, good = authBadBasic(), authBasic(testUser, testPass)
		}
		for _, cred := range bad {
			t.Run(fmt.Sprintf("%s (%s %s) with %s is Access Denied", p.name, p.method, p.path, cred.name), func(t *testing.T) {
				authWantDenied(t, p.send(authOn(w.f, t), cred.set))
			})
		}
		if p.want != 0 {
			t.Run(fmt.Sprintf("%s (%s %s) with the right credentials is %d", p.name, p.method, p.path, p.want), func(t *testing.T) {
				r := p.send(authOn(w.f, t), good)
				if r.status != p.want {
					t.Errorf("status %d, want %d; body %.300s", r.status, p.want, r.body)
				}
			})
		}
	}
	if after := w.snapshot(t); after != before {
		t.Errorf("refused requests changed the data:\nbefore %s\nafter  %s", before, after)
	}
}

func TestBearerTokenOnlyOnV2AndBasicCredentialsOnlyOnV1(t *testing.T) {
	t.Parallel()
	w := authSetup(t)
	v2Paths := []string{
		"/v2/top-accounts/",
		"/v2/top-accounts/" + w.wid,
		"/v2/top-accounts/" + w.wid + "/contacts/",
		"/v2/top-accounts/" + w.wid + "/contacts/" + w.contactID,
		"/v2/top-accounts/" + w.wid + "/documents/",
		"/v2/top-accounts/" + w.wid + "/documents/" + w.vaultID,
	}
	v1Paths := []string{
		"/v1/clients/" + w.client + "/contacts",
		"/v1/clients/" + w.client + "/contacts/" + w.clientCard,
	}
	bearer, basic := authHeader("Bearer "+testToken), authBasic(testUser, testPass)
	type tc struct {
		name, path string
		cred       func(*http.Request)
		ok         bool
	}
	var cases []tc
	for _, p := range v2Paths {
		cases = append(cases,
			tc{"the bearer token opens v2 " + p, p, bearer, true},
			tc{"basic credentials do not open v2 " + p, p, basic, false})
	}
	for _, p := range v1Paths {
		cases = append(cases,
			tc{"basic credentials open v1 " + p, p, basic, true},
			tc{"the bearer token does not open v1 " + p, p, bearer, false})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := authProbe{method: "GET", path: c.path}.send(authOn(w.f, t), c.cred)
			if c.ok {
				r.wantOK(t)
				return
			}
			authWantDenied(t, r)
		})
	}
}

func TestV1AdvisorOrTeamTheUserCannotAccessIsAccessDenied(t *testing.T) {
	t.Parallel()
	w := authSetup(t)
	base := "/v1/clients/" + w.client + "/contacts"
	for _, tc := range []struct {
		name, query string
		denied      bool
	}{
		{name: "the client's own advisor and team are allowed", query: "?advisor_id=adv-1&team_id=team-1"},
		{name: "an advisor the API user cannot access is Access Denied", query: "?advisor_id=adv-elsewhere", denied: true},
		{name: "a team the API user cannot access is Access Denied", query: "?team_id=team-elsewhere", denied: true},
		{name: "an inaccessible team is Access Denied even with the right advisor", query: "?advisor_id=adv-1&team_id=team-elsewhere", denied: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{base + tc.query, base + "/" + w.clientCard + tc.query} {
				r := authOn(w.f, t).v1("GET", path, nil)
				if tc.denied {
					authWantDenied(t, r)
				} else {
					r.wantOK(t)
				}
			}
		})
	}
}

func TestUnknownPathIsNotFound(t *testing.T) {
	t.Parallel()
	w := authSetup(t)
	bearer, basic := authHeader("Bearer "+testToken), authBasic(testUser, testPass)
	none := func(*http.Request) {}
	for _, tc := range []struct {
		name, method, path string
		cred               func(*http.Request)
		denied             bool // 403 instead of 404: the credentials are checked first
	}{
		{name: "an unknown v2 resource is Not Found", method: "GET", path: "/v2/accounts/", cred: bearer},
		{name: "the bare v2 prefix is Not Found", method: "GET", path: "/v2/", cred: bearer},
		{name: "an unknown sub-resource of a top account is Not Found", method: "GET", path: "/v2/top-accounts/" + w.wid + "/invoices/", cred: bearer},
		{name: "a path below a contact is Not Found", method: "GET", path: "/v2/top-accounts/" + w.wid + "/contacts/" + w.contactID + "/extra", cred: bearer},
		{name: "a path below a document is Not Found", method: "GET", path: "/v2/top-accounts/" + w.wid + "/documents/" + w.vaultID + "/extra/more", cred: bearer},
		{name: "an unknown v1 resource is Not Found", method: "GET", path: "/v1/advisors/", cred: basic},
		{name: "a v1 client without /contacts is Not Found", method: "GET", path: "/v1/clients/" + w.client + "/documents", cred: basic},
		{name: "a path below a v1 contact is Not Found", method: "GET", path: "/v1/clients/" + w.client + "/contacts/" + w.clientCard + "/extra", cred: basic},
		{name: "top accounts are not at /v1/", method: "GET", path: "/v1/top-accounts/", cred: basic},
		{name: "an unknown version is Not Found", method: "GET", path: "/v3/top-accounts/", cred: bearer},
		{name: "a path without a version is Not Found", method: "GET", path: "/top-accounts/", cred: bearer},
		{name: "an unknown path outside v1 and v2 is Not Found without credentials too", method: "GET", path: "/no/such/path", cred: none},
		{name: "an unknown v2 path without credentials is Access Denied, not Not Found", method: "GET", path: "/v2/accounts/", cred: none, denied: true},
		{name: "an unknown v1 path without credentials is Access Denied, not Not Found", method: "GET", path: "/v1/advisors/", cred: none, denied: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := authProbe{method: tc.method, path: tc.path}.send(authOn(w.f, t), tc.cred)
			if tc.denied {
				authWantDenied(t, r)
				return
			}
			r.wantError(t, http.StatusNotFound, "Not Found")
		})
	}
}

// authBodyEndpoint is an endpoint that takes a JSON body, with a fresh valid body for it.
type authBodyEndpoint struct {
	name, method, path string
	v1                 bool
	body               func(i int) map[string]any
}

func (w *authWorld) bodyEndpoints() []authBodyEndpoint {
	taItem := "/v2/top-accounts/" + w.wid
	v1Contacts := "/v1/clients/" + w.client + "/contacts"
	return []authBodyEndpoint{
		{"Add Top Account", "POST", "/v2/top-accounts/", false, func(i int) map[string]any {
			return map[string]any{"external_id": fmt.Sprintf("BODY-%d", i), "name": "Body family"}
		}},
		{"Update Top Account", "PUT", taItem, false, func(i int) map[string]any {
			return map[string]any{"name": fmt.Sprintf("Renamed %d", i)}
		}},
		{"Add Contact (v2)", "POST", taItem + "/contacts/", false, func(i int) map[string]any {
			return person(fmt.Sprintf("body-%d", i))
		}},
		{"Update Contact (v2)", "PUT", taItem + "/contacts/" + w.contactID, false, func(i int) map[string]any {
			return map[string]any{"first_name": fmt.Sprintf("First %d", i)}
		}},
		{"Upload Document", "POST", taItem + "/documents/", false, func(i int) map[string]any {
			return pdfDocument(fmt.Sprintf("Doc %d", i))
		}},
		{"Update Document", "PATCH", taItem + "/documents/" + w.vaultID, false, func(i int) map[string]any {
			return map[string]any{"name": fmt.Sprintf("Doc %d", i)}
		}},
		{"Add Contact (v1)", "POST", v1Contacts, true, func(i int) map[string]any {
			return person(fmt.Sprintf("v1-body-%d", i))
		}},
		{"Update Contact (v1)", "PUT", v1Contacts + "/" + w.clientCard, true, func(i int) map[string]any {
			return map[string]any{"first_name": fmt.Sprintf("First %d", i)}
		}},
	}
}

func (e authBodyEndpoint) send(f *fixture, body []byte, contentType string) *response {
	f.t.Helper()
	req := f.request(e.method, e.path, body)
	if contentType == "" {
		req.Header.Del("Content-Type")
	} else {
		req.Header.Set("Content-Type", contentType)
	}
	if e.v1 {
		req.SetBasicAuth(testUser, testPass)
	} else {
		req.Header.Set("Authorization", "Bearer "+testToken)
	}
	return f.do(req)
}

func TestNonJSONContentTypeIsUnsupportedMediaType(t *testing.T) {
	t.Parallel()
	w := authSetup(t)
	// The specification: "All requests send Content-Type: application/json". It gives no status
	// for a request that declares another type; the sandbox answers 415 with its own message.
	const refused = "Content-Type must be application/json"
	n := 0
	for _, e := range w.bodyEndpoints() {
		for _, tc := range []struct {
			name, contentType string
			accepted          bool
		}{
			{name: "application/json is accepted", contentType: "application/json", accepted: true},
			{name: "application/json with a charset is accepted", contentType: "application/json; charset=utf-8", accepted: true},
			{name: "the media type is matched without regard to case", contentType: "Application/JSON", accepted: true},
			{name: "text/plain is Unsupported Media Type", contentType: "text/plain"},
			{name: "a form is Unsupported Media Type", contentType: "application/x-www-form-urlencoded"},
			{name: "multipart is Unsupported Media Type", contentType: "multipart/form-data; boundary=x"},
			{name: "application/xml is Unsupported Media Type", contentType: "application/xml"},
			{name: "a JSON-like type is Unsupported Media Type", contentType: "application/json-patch+json"},
			{name: "an unparsable Content-Type is Unsupported Media Type", contentType: "application/json;;;="},
		} {
			t.Run(e.name+": "+tc.name, func(t *testing.T) {
				n++
				g := authOn(w.f, t)
				before := w.snapshot(t)
				data, err := json.Marshal(e.body(n))
				if err != nil {
					t.Fatal(err)
				}
				r := e.send(g, data, tc.contentType)
				if tc.accepted {
					r.wantOK(t)
					return
				}
				r.wantError(t, http.StatusUnsupportedMediaType, refused)
				if after := w.snapshot(t); after != before {
					t.Errorf("a refused request changed the data:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

func TestRequestBodyOverOneMiBIsTooLarge(t *testing.T) {
	t.Parallel()
	w := authSetup(t)
	// The sandbox reads at most 1 MiB of a JSON body; the specification's largest valid body is
	// far smaller. The status and message are the sandbox's.
	const refused = "Request body too large"
	before := w.snapshot(t)
	for i, e := range w.bodyEndpoints() {
		for _, tc := range []struct {
			name    string
			size    int
			chunked bool
		}{
			{name: "a body of 1 MiB and one byte is Request Entity Too Large", size: authMaxBody + 1},
			{name: "a chunked body of 1 MiB and one byte is Request Entity Too Large", size: authMaxBody + 1, chunked: true},
		} {
			t.Run(e.name+": "+tc.name, func(t *testing.T) {
				authSendSized(authOn(w.f, t), e, authPadded(t, e.body(i), tc.size), tc.chunked).
					wantError(t, http.StatusRequestEntityTooLarge, refused)
			})
		}
	}
	if after := w.snapshot(t); after != before {
		t.Errorf("refused requests changed the data:\nbefore %s\nafter  %s", before, after)
	}
}

func TestRequestBodyOfExactlyOneMiBIsAccepted(t *testing.T) {
	t.Parallel()
	w := authSetup(t)
	// The boundary of the limit above, on one endpoint of each version: a valid body padded
	// with whitespace to exactly 1 MiB is read and accepted, with a Content-Length and (v2)
	// without one.
	for i, e := range w.bodyEndpoints() {
		if e.name != "Add Top Account" && e.name != "Add Contact (v1)" {
			continue
		}
		for j, chunked := range []bool{false, true} {
			if chunked && e.v1 {
				continue
			}
			name := e.name + ": a valid body of exactly 1 MiB is accepted"
			if chunked {
				name = e.name + ": a chunked valid body of exactly 1 MiB is accepted"
			}
			t.Run(name, func(t *testing.T) {
				authSendSized(authOn(w.f, t), e, authPadded(t, e.body(10*i+j), authMaxBody), chunked).wantOK(t)
			})
		}
	}
}

// authChunked hides a reader's length, so the request is sent with chunked encoding and no
// Content-Length.
type authChunked struct{ io.Reader }

// authSendSized sends body to a body endpoint with the right credentials.
func authSendSized(f *fixture, e authBodyEndpoint, body []byte, chunked bool) *response {
	f.t.Helper()
	req := f.request(e.method, e.path, body)
	if chunked {
		req.Body = io.NopCloser(authChunked{bytes.NewReader(body)})
		req.ContentLength = -1
		req.GetBody = nil
	}
	if e.v1 {
		req.SetBasicAuth(testUser, testPass)
	} else {
		req.Header.Set("Authorization", "Bearer "+testToken)
	}
	return f.do(req)
}

func TestHealthzNeedsNoCredentials(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	for _, cred := range []authCredential{
		{"no credentials", func(*http.Request) {}},
		{"a wrong bearer token", authHeader("Bearer wrong")},
		{"wrong basic credentials", authBasic("nobody", "nothing")},
		{"the bearer token", authHeader("Bearer " + testToken)},
	} {
		t.Run("/healthz with "+cred.name+" is 200 ok", func(t *testing.T) {
			r := authProbe{method: "GET", path: "/healthz"}.send(authOn(f, t), cred.set).wantOK(t)
			if m := r.object(t); len(m) != 1 || m["status"] != "ok" {
				t.Errorf(`body is %s, want {"status":"ok"}`, r.body)
			}
		})
	}
}

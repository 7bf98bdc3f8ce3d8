package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// publishedAs is a client that reaches the gateway at gwURL by whatever host and port an
// address names, as a browser on the host reaches a container's published port (`docker run
// -p 18080:8080`): the gateway never learns the name, and can only have built an address on it
// from the Host of the request.
func publishedAs(gwURL string) *http.Client {
	addr := strings.TrimPrefix(gwURL, "http://")
	dial := (&net.Dialer{}).DialContext
	return &http.Client{
		Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dial(ctx, network, addr)
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// send makes a request with client and returns its status, headers and body.
func send(t *testing.T, client *http.Client, method, url string, body io.Reader, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, data
}

// Issue 26: "one published port should be enough for the zero-configuration demo (the gateway
// can serve what a newcomer needs of the sandbox on its own origin)", and "The
// zero-configuration demo works from the host when the gateway runs in a container with one
// published port". The client knows the gateway as http://gateway.test:18080, a name and port
// the gateway does not listen on, while something else holds the sandbox's usual ports; every
// address the gateway gives leads back to that origin, and works through it.
func TestTheZeroConfigGatewayServesTheSandboxOnItsOrigin(t *testing.T) {
	t.Parallel()
	stray := holdSandboxPorts(t)
	gw, _ := sandboxed(t)
	const origin = "http://gateway.test:18080"
	client := publishedAs(gw.url)
	graphql := func(t *testing.T, auth, query string) map[string]any {
		t.Helper()
		header := map[string]string{"Content-Type": "application/json"}
		if auth != "" {
			header["Authorization"] = auth
		}
		body, _ := json.Marshal(map[string]string{"query": query})
		status, _, data := send(t, client, http.MethodPost, origin+"/graphql", bytes.NewReader(body), header)
		var out struct {
			Data   map[string]any
			Errors []any
		}
		if err := json.Unmarshal(data, &out); err != nil || status != http.StatusOK || len(out.Errors) > 0 {
			t.Fatalf("%s: %d %s", query, status, data)
		}
		return out.Data
	}

	// mint runs the docs' token command against the origin: a token for adv-002.
	mint := func(t *testing.T) string {
		t.Helper()
		status, _, data := send(t, client, http.MethodPost, origin+"/sandbox/token", strings.NewReader(`{"advisor":"adv-002","firm":"`+sandbox.DemoFirmID+`"}`),
			map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + sandbox.DefaultAccessToken})
		var out struct{ Token string }
		if err := json.Unmarshal(data, &out); err != nil || status != http.StatusOK || out.Token == "" {
			t.Fatalf("POST /sandbox/token = %d %s, want a token", status, data)
		}
		return out.Token
	}

	t.Run("the sandbox asks for its credentials there as at its root", func(t *testing.T) {
		// A caller token the gateway takes is not a credential of the sandbox's.
		caller := "Bearer " + mint(t)
		for _, tc := range []struct{ method, path string }{
			{"POST", "/sandbox/token"}, {"POST", "/sandbox/events"}, {"GET", "/sandbox/v2/top-accounts/"},
			{"GET", "/sandbox/v1/clients/CL-1001/contacts"}, {"PUT", "/sandbox/uploads/w/v?expires=9999999999&signature=00"},
			{"GET", "/sandbox/downloads/w/v?expires=9999999999&signature=00"},
		} {
			for _, auth := range []string{"", "Bearer not-the-token", caller} {
				header := map[string]string{"Content-Type": "application/json"}
				if auth != "" {
					header["Authorization"] = auth
				}
				if status, _, body := send(t, client, tc.method, origin+tc.path, strings.NewReader("{}"), header); status != http.StatusForbidden {
					t.Errorf("%s %s with Authorization %.20q = %d %s, want 403", tc.method, tc.path, auth, status, body)
				}
			}
		}
	})

	t.Run("its token command mints a token the gateway takes", func(t *testing.T) {
		got := graphql(t, "Bearer "+mint(t), `{ viewer { advisorId firmId } }`)
		if v := got["viewer"].(map[string]any); v["advisorId"] != "adv-002" || v["firmId"] != sandbox.DemoFirmID {
			t.Errorf("viewer is %v, want adv-002 of %s", v, sandbox.DemoFirmID)
		}
	})

	t.Run("its events command plays events a subscriber sees", func(t *testing.T) {
		c := dialWS(t, gw, "graphql-transport-ws", nil)
		c.init()
		c.subscribe("live", `subscription { events { eventType } }`, nil)
		waitSubscribers(t, gw, 1)
		body := `{"scenario":"onboarding","interval":"10ms"}`
		header := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + sandbox.DefaultAccessToken}
		if status, _, data := send(t, client, http.MethodPost, origin+"/sandbox/events", strings.NewReader(body), header); status != http.StatusOK {
			t.Fatalf("POST /sandbox/events = %d %s", status, data)
		}
		if ev := c.nextData("live")["events"].(map[string]any); ev["eventType"] != "CLIENT_ACCEPTED_INVITATION" {
			t.Errorf("the first event is %v, want the scenario's CLIENT_ACCEPTED_INVITATION", ev)
		}
	})

	t.Run("the pop-out assistant names no other origin", func(t *testing.T) {
		status, header, page := send(t, client, http.MethodGet, origin+"/assistant", nil, nil)
		if status != http.StatusOK {
			t.Fatalf("GET /assistant = %d", status)
		}
		csp := header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self';") || !strings.Contains(csp, "frame-src 'self';") || strings.Contains(csp, "://") {
			t.Errorf("the pop-out's policy %q allows something other than its own origin", csp)
		}
		refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(string(page), -1)
		for _, ref := range refs {
			if !strings.HasPrefix(ref[1], "/") || strings.HasPrefix(ref[1], "//") {
				t.Errorf("the pop-out loads %s, not a path of its own origin", ref[1])
			}
			if status, _, _ := send(t, client, http.MethodGet, origin+ref[1], nil, nil); status != http.StatusOK {
				t.Errorf("GET %s, which the pop-out loads, = %d", ref[1], status)
			}
		}
		if len(refs) < 4 || !strings.Contains(string(page), `src="/sandbox/v1/sdk/assistant-sdk.js"`) {
			t.Errorf("the pop-out does not load the chat SDK below /sandbox:\n%s", page)
		}
		// The chat page the SDK frames (../chat beside it) lets its own origin frame it.
		status, header, chat := send(t, client, http.MethodGet, origin+"/sandbox/v1/chat", nil, nil)
		if status != http.StatusOK || !strings.Contains(header.Get("Content-Security-Policy"), "'self'") ||
			!strings.Contains(string(chat), `src="/sandbox/v1/chat/chat.js"`) {
			t.Errorf("GET /sandbox/v1/chat = %d, policy %q:\n%s", status, header.Get("Content-Security-Policy"), chat)
		}
	})

	t.Run("documents' addresses are on its origin and work through it", func(t *testing.T) {
		wid := graphql(t, "", `{ topAccounts(limit: 1) { nodes { wid } } }`)["topAccounts"].(map[string]any)["nodes"].([]any)[0].(map[string]any)["wid"].(string)
		created := graphql(t, "", fmt.Sprintf(`mutation { createDocument(wid: %q, input: {name: "Origin notes", extension: "csv", category: MISCELLANEOUS, subCategory: UNCATEGORIZED}) { uploadUri document { vaultId } } }`, wid))["createDocument"].(map[string]any)
		upload := created["uploadUri"].(string)
		if !strings.HasPrefix(upload, origin+"/sandbox/uploads/") {
			t.Fatalf("uploadUri is %s, want it below %s/sandbox/uploads/", upload, origin)
		}
		if status, _, body := send(t, client, http.MethodPut, upload, strings.NewReader("a,b\n1,2\n"), map[string]string{"Content-Type": "text/csv"}); status != http.StatusOK {
			t.Fatalf("PUT uploadUri = %d %s", status, body)
		}
		vaultID := created["document"].(map[string]any)["vaultId"].(string)
		doc := graphql(t, "", fmt.Sprintf(`{ document(wid: %q, vaultId: %q) { fileStatus downloadUri } }`, wid, vaultID))["document"].(map[string]any)
		download, _ := doc["downloadUri"].(string)
		if doc["fileStatus"] != "UPLOADED" || !strings.HasPrefix(download, origin+"/sandbox/downloads/") {
			t.Fatalf("the document is %v, want UPLOADED with its downloadUri below %s/sandbox/downloads/", doc, origin)
		}
		status, header, body := send(t, client, http.MethodGet, download, nil, nil)
		if status != http.StatusOK || string(body) != "a,b\n1,2\n" || header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET downloadUri = %d %q (nosniff %q), want the uploaded bytes, never sniffed", status, body, header.Get("X-Content-Type-Options"))
		}

		// A file sent to the gateway goes to the address the sandbox gave, on a name the gateway
		// itself cannot resolve: it must go straight to the sandbox instead.
		var form bytes.Buffer
		mw := multipart.NewWriter(&form)
		ops, _ := json.Marshal(map[string]any{"query": fmt.Sprintf(`mutation($file: Upload) { createDocument(wid: %q, input: {name: "Sent notes", extension: "csv", category: MISCELLANEOUS, subCategory: UNCATEGORIZED}, file: $file) { document { fileStatus downloadUri } } }`, wid), "variables": map[string]any{"file": nil}})
		_ = mw.WriteField("operations", string(ops))
		_ = mw.WriteField("map", `{"0":["variables.file"]}`)
		fw, _ := mw.CreateFormFile("0", "notes.csv")
		_, _ = fw.Write([]byte("c,d\n3,4\n"))
		_ = mw.Close()
		status, _, answer := send(t, client, http.MethodPost, origin+"/graphql", &form, map[string]string{"Content-Type": mw.FormDataContentType(), "GraphQL-Require-Preflight": "1"})
		if status != http.StatusOK || !strings.Contains(string(answer), `"fileStatus":"UPLOADED"`) || !strings.Contains(string(answer), origin+"/sandbox/downloads/") {
			t.Errorf("createDocument with a file = %d %s, want it UPLOADED with a downloadUri on %s", status, answer, origin)
		}
	})

	t.Run("the IDE and the family page load from it alone", func(t *testing.T) {
		wid, _ := gwDemoWID(t, graphql)
		for _, path := range []string{"/", "/family/" + wid} {
			status, _, page := send(t, client, http.MethodGet, origin+path, nil, nil)
			if status != http.StatusOK {
				t.Fatalf("GET %s = %d", path, status)
			}
			for _, ref := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(string(page), -1) {
				if (!strings.HasPrefix(ref[1], "/") || strings.HasPrefix(ref[1], "//")) && !strings.HasPrefix(ref[1], "data:") {
					t.Errorf("%s loads %s, not a path of its own origin", path, ref[1])
				}
			}
		}
	})
	if n := stray(); n > 0 {
		t.Errorf("%d requests reached the services holding the sandbox's usual ports", n)
	}
}

// gwDemoWID is the demo Hartwell family's wid, as the gateway answers it.
func gwDemoWID(t *testing.T, graphql func(*testing.T, string, string) map[string]any) (string, bool) {
	t.Helper()
	nodes := graphql(t, "", `{ topAccounts(limit: 10) { nodes { wid name } } }`)["topAccounts"].(map[string]any)["nodes"].([]any)
	for _, n := range nodes {
		if m := n.(map[string]any); m["name"] == "Hartwell Family" {
			return m["wid"].(string), true
		}
	}
	t.Fatal("no Hartwell Family among the top accounts")
	return "", false
}

// Against the Advisor service the gateway serves nothing of a sandbox: below /sandbox is 404,
// whatever credentials a request carries.
func TestAGatewayWithAnUpstreamServesNoSandbox(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/sandbox"}, {"GET", "/sandbox/"}, {"GET", "/sandbox/v2/top-accounts/"}, {"POST", "/sandbox/token"},
		{"POST", "/sandbox/events"}, {"GET", "/sandbox/jwks.json"}, {"GET", "/sandbox/v1/sdk/assistant-sdk.js"},
	} {
		req := jsonRequest(tc.method, gw.url+tc.path, map[string]string{})
		req.Header.Set("Authorization", "Bearer "+upstreamToken)
		status, _ := doJSON(t, req)
		if status != http.StatusNotFound {
			t.Errorf("%s %s = %d, want 404", tc.method, tc.path, status)
		}
	}
	for _, r := range up.Requests() {
		if strings.Contains(r, "/sandbox") || strings.Contains(r, "/v2/top-accounts/") || strings.Contains(r, "/v1/sdk") {
			t.Errorf("the upstream was asked %s, want nothing of what was asked below /sandbox", r)
		}
	}
}

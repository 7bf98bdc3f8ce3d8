package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/advisorhq/gateway/internal/sandbox"
)

const viewerQuery = `{ viewer { advisorId firmId } }`

// sandboxToken asks the sandbox at base, as its identity provider, for a caller token.
func sandboxToken(t testing.TB, base, accessToken, advisor, firm string) string {
	t.Helper()
	out := sandboxJSON(t, http.MethodPost, base+"/sandbox/token", map[string]string{"advisor": advisor, "firm": firm},
		func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+accessToken) })
	token, _ := out["token"].(string)
	if token == "" {
		t.Fatalf("the sandbox minted no token: %v", out)
	}
	return token
}

// callerGateway runs the gateway against a sandbox that is also its identity provider, as
// production runs against its own: AUTH_JWKS_URL, AUTH_ISSUER and AUTH_AUDIENCE set.
func callerGateway(t *testing.T, up *upstream, env map[string]string) (*testGateway, *logBuffer) {
	t.Helper()
	settings := map[string]string{
		"ADDR": "127.0.0.1:0", "ADVISOR_BASE_URL": up.URL, "ADVISOR_FIRM": sandbox.DemoFirmID, "ADVISOR_ACCESS_TOKEN": upstreamToken,
		"ADVISOR_BASIC_CREDENTIALS": upstreamBasic, "WEBHOOK_API_KEY": webhookKey,
		"AUTH_JWKS_URL": up.URL + "/sandbox/jwks.json", "AUTH_ISSUER": sandbox.TokenIssuer, "AUTH_AUDIENCE": sandbox.TokenAudience,
	}
	for k, v := range env {
		settings[k] = v
	}
	printed, log, _ := runWithLog(t, settings)
	return &testGateway{url: regexp.MustCompile(`http://\S+`).FindString(printed[0]), up: up}, log
}

// postAs sends query with the Authorization header auth (none when empty).
func (g *testGateway) postAs(t testing.TB, auth, query string) *result {
	t.Helper()
	req := jsonRequest(http.MethodPost, g.url+"/graphql", map[string]any{"query": query})
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return g.do(t, req)
}

type viewer struct {
	Viewer *struct{ AdvisorID, FirmID string }
}

func TestCallersAreTheAdvisorAndFirmTheirTokenNames(t *testing.T) {
	t.Parallel()
	gw, log := callerGateway(t, newUpstream(t, false), nil)
	token := sandboxToken(t, gw.up.URL, upstreamToken, "adv-042", sandbox.DemoFirmID)

	var got viewer
	gw.postAs(t, "Bearer "+token, viewerQuery).ok(t, &got)
	if got.Viewer == nil || got.Viewer.AdvisorID != "adv-042" || got.Viewer.FirmID != sandbox.DemoFirmID {
		t.Fatalf("viewer %+v, want adv-042 of firm-001", got.Viewer)
	}

	// An issuer or audience of another identity provider is refused, as is anything not a
	// token of this one.
	other, _ := callerGateway(t, gw.up, map[string]string{"AUTH_AUDIENCE": "another-gateway"})
	for _, tc := range []struct {
		name, auth, challenge string
		gw                    *testGateway
	}{
		{"no token", "", `Bearer realm="advisor-gateway"`, gw},
		{"another scheme", "Basic " + upstreamBasic, `Bearer realm="advisor-gateway"`, gw},
		{"a token that is not one", "Bearer not.a.jwt", `error="invalid_token"`, gw},
		{"a token whose signature was changed", "Bearer " + token[:len(token)-4] + "AAAA", `error_description="the token signature or algorithm is not accepted"`, gw},
		{"a token for another audience", "Bearer " + token, `error_description="the token has the wrong audience"`, other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.gw.postAs(t, tc.auth, viewerQuery)
			if r.status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", r.status)
			}
			r.wantError(t, "UNAUTHENTICATED", "")
			if got := r.header.Get("WWW-Authenticate"); !strings.Contains(got, tc.challenge) {
				t.Errorf("WWW-Authenticate %q, want it to contain %s", got, tc.challenge)
			}
		})
	}
	if strings.Contains(log.String(), token[:20]) {
		t.Errorf("the log holds the token:\n%s", log)
	}
	if ops := log.lines("operation"); len(ops) == 0 || !strings.Contains(ops[0], "advisor=adv-042 firm=firm-001") {
		t.Errorf("the operation's log line does not name its caller: %q", ops)
	}
	if !strings.Contains(log.String(), "reason=bad_signature") {
		t.Errorf("the log does not say why a token was refused:\n%s", log)
	}
}

// Every transport asks for the token before it does anything with the request: GET, SSE and
// multipart like POST, and a WebSocket at connection_init.
func TestEveryTransportRefusesACallerWithoutAToken(t *testing.T) {
	t.Parallel()
	gw, _ := callerGateway(t, newUpstream(t, false), nil)
	multipartBody := func() (*bytes.Buffer, string) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		_ = w.WriteField("operations", `{"query":"mutation($f: Upload!) { validateBulkFiles(clients: $f) { valid } }","variables":{"f":null}}`)
		_ = w.WriteField("map", `{"0":["variables.f"]}`)
		fw, _ := w.CreateFormFile("0", "clients.jsonl")
		_, _ = fw.Write([]byte("{}\n"))
		_ = w.Close()
		return &b, w.FormDataContentType()
	}
	for _, tc := range []struct {
		name string
		req  func() *http.Request
	}{
		{"GET", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, gw.url+"/graphql?query=%7B%20viewer%20%7B%20advisorId%20%7D%20%7D", nil)
			return r
		}},
		{"SSE", func() *http.Request {
			r := jsonRequest(http.MethodPost, gw.url+"/graphql", map[string]any{"query": `subscription { events { id } }`})
			r.Header.Set("Accept", "text/event-stream")
			return r
		}},
		{"multipart", func() *http.Request {
			body, ct := multipartBody()
			r, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", body)
			r.Header.Set("Content-Type", ct)
			r.Header.Set("GraphQL-Require-Preflight", "1")
			return r
		}},
		{"the schema", func() *http.Request {
			r, _ := http.NewRequest(http.MethodGet, gw.url+"/graphql/schema.graphql", nil)
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.DefaultClient.Do(tc.req())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "UNAUTHENTICATED") ||
				resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("status %d, WWW-Authenticate %q, body %s; want 401 UNAUTHENTICATED with a challenge",
					resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
			}
		})
	}

	t.Run("WebSocket without a token: 4403", func(t *testing.T) {
		c := dialWS(t, gw, "graphql-transport-ws", nil)
		c.send(map[string]any{"type": "connection_init"})
		_, err := c.next(5 * time.Second)
		if status := websocket.CloseStatus(err); status != 4403 {
			t.Errorf("closed with %v (%v), want 4403", status, err)
		}
	})
	t.Run("WebSocket with a bad token in connection_init: 4403", func(t *testing.T) {
		c := dialWS(t, gw, "graphql-transport-ws", nil)
		c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer forged"}})
		_, err := c.next(5 * time.Second)
		if status := websocket.CloseStatus(err); status != 4403 {
			t.Errorf("closed with %v (%v), want 4403", status, err)
		}
	})
	t.Run("WebSocket with a token in connection_init runs as its caller", func(t *testing.T) {
		token := sandboxToken(t, gw.up.URL, upstreamToken, "adv-ws", sandbox.DemoFirmID)
		c := dialWS(t, gw, "graphql-transport-ws", nil)
		c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}})
		if m := c.read(); m["type"] != "connection_ack" {
			t.Fatalf("got %v, want connection_ack", m)
		}
		c.send(map[string]any{"type": "subscribe", "id": "1", "payload": map[string]any{"query": viewerQuery}})
		m := c.read()
		raw, _ := json.Marshal(m["payload"])
		if m["type"] != "next" || !strings.Contains(string(raw), `"advisorId":"adv-ws"`) {
			t.Errorf("got %v, want the viewer adv-ws", m)
		}
	})
}

// With no configuration the embedded sandbox is the identity provider: its tokens are
// verified as a real provider's, and a request without one acts as the demo advisor.
func TestTheEmbeddedSandboxIsTheIdentityProvider(t *testing.T) {
	t.Parallel()
	lines := startedLines(t, nil, map[string]string{"ADDR": "127.0.0.1:0"}, "embedded Advisor sandbox", "gateway serving")
	sbURL := regexp.MustCompile(`http://\S+`).FindString(lines[0])
	gw := &testGateway{url: regexp.MustCompile(`http://\S+`).FindString(lines[1])}

	var got viewer
	gw.postAs(t, "", viewerQuery).ok(t, &got)
	if got.Viewer == nil || got.Viewer.AdvisorID != sandbox.DefaultAdvisorID || got.Viewer.FirmID != sandbox.DemoFirmID {
		t.Errorf("without a token: viewer %+v, want the demo advisor %s of %s", got.Viewer, sandbox.DefaultAdvisorID, sandbox.DemoFirmID)
	}
	token := sandboxToken(t, sbURL, sandbox.DefaultAccessToken, "adv-002", "firm-001")
	got = viewer{}
	gw.postAs(t, "Bearer "+token, viewerQuery).ok(t, &got)
	if got.Viewer == nil || got.Viewer.AdvisorID != "adv-002" {
		t.Errorf("with a token for adv-002: viewer %+v", got.Viewer)
	}
	// A token that is sent and wrong never falls back to the demo advisor.
	if r := gw.postAs(t, "Bearer "+token+"x", viewerQuery); r.status != http.StatusUnauthorized {
		t.Errorf("a forged token: status %d, want 401", r.status)
	}
}

func TestProductionNeedsCallerAuthenticationToStart(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"ADDR": "127.0.0.1:0", "ADVISOR_BASE_URL": "http://127.0.0.1:1", "ADVISOR_FIRM": sandbox.DemoFirmID, "ADVISOR_ACCESS_TOKEN": "t", "WEBHOOK_API_KEY": webhookKey,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := serve(ctx, func(k string) string { return env[k] }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "AUTH_JWKS_URL: required when ADVISOR_BASE_URL is set") ||
		!strings.Contains(err.Error(), "AUTH_DISABLED=true") {
		t.Errorf("run: %v, want it to stop naming AUTH_JWKS_URL and AUTH_DISABLED", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Error("start-up waited instead of refusing")
	}
}

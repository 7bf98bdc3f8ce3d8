package gateway_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/command"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/testnpm"
)

const assistantDir = repoRoot + "/internal/assistantpage/testdata"

// Under `go run .` the pop-out page at /assistant loads the embedded sandbox's SDK from the
// gateway's own origin (below /sandbox), and the chat lets its own origin frame it, so the chat
// says ready by whatever name the browser reaches the gateway: its listening address, or
// another, as a container's published port is (issue 26: "The zero-configuration demo works
// from the host when the gateway runs in a container with one published port: ... the pop-out
// assistant"). (Its token comes from createAssistantSession, tested with the page in
// internal/assistantpage.)
func TestTheZeroConfigGatewayServesAReadyAssistant(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	npmInstall(t, assistantDir, "playwright-core")
	gw, _ := sandboxed(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(gw.url, "http://"))
	for _, tc := range []struct{ name, url string }{
		{"at its address", gw.url},
		// localhost is not the address the gateway prints (127.0.0.1), nor, on this port, on the
		// sandbox's allow-list: only the origin the browser used can let the chat show.
		{"by another name", "http://localhost:" + port},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", filepath.Join(assistantDir, "popout.mjs"), "watch", tc.url)
			cmd.Env = append(os.Environ(), "CHROMIUM="+browser, "WATCH_MS=3000")
			var got struct {
				Events     []string `json:"events"`
				PageErrors []string `json:"pageErrors"`
			}
			testnpm.RunJSON(t, cmd, &got)
			if !slices.Contains(got.Events, "ready") {
				t.Errorf("the pop-out at %s heard %v, want ready: the embedded sandbox must let the page's own origin embed the chat", tc.url, got.Events)
			}
			if len(got.PageErrors) > 0 {
				t.Errorf("exceptions in the page: %v", got.PageErrors)
			}
		})
	}
}

// The whole production path, each piece configured as an operator would: a sandbox run on its
// own (`go run . sandbox`, 5-second sessions), a certificate enrolled from it, and a gateway
// with ADVISOR_BASE_URL, AUTH_JWKS_URL, ASSISTANT_SESSION_URL and the enrolled files. The
// opener hands the pop-out its caller's token; the pop-out mints sessions through the gateway
// over mutual TLS, chats, and identifies again when its session expires, keeping the
// conversation.
func TestThePopOutChatsThroughAProductionGateway(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	npmInstall(t, assistantDir, "playwright-core")
	fileDir, certs := t.TempDir(), t.TempDir()
	gwAddr := freeLoopbackAddr(t)
	sb := startedURLs(t, []string{"sandbox", "-addr", "127.0.0.1:0", "-sftp-addr", "127.0.0.1:0", "-session-addr", "127.0.0.1:0",
		"-file-dir", fileDir, "-session-ttl", "5s"},
		map[string]string{"SANDBOX_EMBED_ORIGINS": "http://" + gwAddr}, "Advisor sandbox serving", "sessions:")
	var out strings.Builder
	if err := command.Run(t.Context(), []string{"sandbox", "enroll", "-file-dir", fileDir, "-env", "uat", "-out", certs}, nil, &out, io.Discard); err != nil {
		t.Fatalf("sandbox enroll: %v", err)
	}
	gw := started(t, nil, map[string]string{
		"ADDR": gwAddr, "ADVISOR_BASE_URL": sb[0], "ADVISOR_FIRM": sandbox.DemoFirmID, "ADVISOR_ACCESS_TOKEN": sandbox.DefaultAccessToken,
		"ADVISOR_BASIC_CREDENTIALS": sandbox.DefaultBasicCredentials, "WEBHOOK_API_KEY": webhookKey,
		"AUTH_JWKS_URL": sb[0] + "/sandbox/jwks.json", "AUTH_ISSUER": sandbox.TokenIssuer, "AUTH_AUDIENCE": sandbox.TokenAudience,
		"ASSISTANT_SESSION_URL": sb[1], "ASSISTANT_CLIENT_CERT": filepath.Join(certs, "client.crt"),
		"ASSISTANT_CLIENT_KEY": filepath.Join(certs, "client.key"), "ASSISTANT_SERVER_CA": filepath.Join(certs, "ca.crt"),
		"ASSISTANT_EMBED_URL": sb[0],
	}, "gateway serving")
	if status, body := doJSON(t, jsonRequest(http.MethodGet, gw+"/readyz", nil)); status != http.StatusOK {
		t.Fatalf("/readyz: %d %v", status, body)
	}
	token := sandboxToken(t, sb[0], sandbox.DefaultAccessToken, "adv-popout", sandbox.DemoFirmID)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(assistantDir, "popout.mjs"), "popout", gw)
	cmd.Env = append(os.Environ(), "CHROMIUM="+browser, "EXPECT_EXPIRY=1", "OPENER_AUTHORIZATION=Bearer "+token)
	var got struct {
		Events, URLs, Tokens, Messages, GraphqlAuth, PageErrors []string
	}
	testnpm.RunJSON(t, cmd, &got)
	if len(got.PageErrors) > 0 {
		t.Errorf("exceptions in the pages: %v", got.PageErrors)
	}
	count := func(name string) (n int) {
		for _, e := range got.Events {
			if e == name {
				n++
			}
		}
		return n
	}
	if count("ready") != 1 || count("session_expired") < 1 || count("identify") < 2 {
		t.Errorf("the pop-out heard %v, want ready, identify, session_expired and identify again", got.Events)
	}
	if len(got.Tokens) < 2 || got.Tokens[0] == got.Tokens[1] {
		t.Errorf("createAssistantSession answered %d tokens, want a new one after the session expired", len(got.Tokens))
	}
	for _, tok := range append(got.Tokens, token) {
		for _, u := range got.URLs {
			if strings.Contains(u, tok) {
				t.Errorf("a token appears in the address %s", u)
			}
		}
	}
	for _, a := range got.GraphqlAuth {
		if a != "Bearer "+token {
			t.Errorf("the pop-out asked the gateway with Authorization %.20q…, want the opener's token", a)
		}
	}
	history := strings.Join(got.Messages, "\n")
	for _, want := range []string{"first message", "You said: first message", "second message", "You said: second message"} {
		if !strings.Contains(history, want) {
			t.Errorf("the conversation after the new session lacks %q:\n%s", want, history)
		}
	}
}

// freeLoopbackAddr is a loopback address no one listens on, for a program whose address
// another must know before it starts (the sandbox's embed allow-list names the gateway's
// origin).
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

const mintMutation = `mutation { createAssistantSession { token expiresAt } }`

func TestCreateAssistantSessionMintsForTheCaller(t *testing.T) {
	t.Parallel()
	printed, log, _ := runWithLog(t, map[string]string{"ADDR": "127.0.0.1:0"})
	gw := &testGateway{}
	for _, line := range printed {
		if strings.Contains(line, "gateway serving") {
			gw.url = regexp.MustCompile(`http://\S+`).FindString(line)
		}
	}
	var got struct {
		CreateAssistantSession struct {
			Token     string
			ExpiresAt time.Time
		}
	}
	gw.postAs(t, "", mintMutation).ok(t, &got)
	s := got.CreateAssistantSession
	if s.Token == "" || time.Until(s.ExpiresAt) < 14*time.Minute || time.Until(s.ExpiresAt) > 16*time.Minute {
		t.Errorf("got %+v, want a token for 15 minutes", s)
	}
	if strings.Contains(log.String(), s.Token) {
		t.Error("the gateway's log holds the session token")
	}
	status, body := doJSON(t, jsonRequest(http.MethodGet, gw.url+"/readyz", nil))
	if checks, _ := body["checks"].(map[string]any); status != http.StatusOK || checks["assistant_session"] != "ok" {
		t.Errorf("/readyz: %d %v, want the session host ok", status, body)
	}
}

func TestCreateAssistantSessionRefusals(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	// A session host that is down, as the gateway's settings name it.
	fileDir, certs := t.TempDir(), t.TempDir()
	e, err := sandbox.Enroll(fileDir, sandbox.EnvUAT, "gw", time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := sandbox.WriteEnrollment(e, certs); err != nil {
		t.Fatal(err)
	}
	host := map[string]string{
		"ASSISTANT_SESSION_URL": "https://" + freeLoopbackAddr(t), "ASSISTANT_CLIENT_CERT": filepath.Join(certs, "client.crt"),
		"ASSISTANT_CLIENT_KEY": filepath.Join(certs, "client.key"), "ASSISTANT_SERVER_CA": filepath.Join(certs, "ca.crt"),
	}
	disabled := newGateway(t, up, host) // AUTH_DISABLED: no caller
	disabled.post(t, mintMutation, nil).wantError(t, "UNAUTHENTICATED",
		"An assistant session belongs to the signed-in advisor, and this gateway authenticates no caller (AUTH_DISABLED)")
	withAuth := map[string]string{"AUTH_DISABLED": "", "AUTH_JWKS_URL": up.URL + "/sandbox/jwks.json"}
	maps.Copy(withAuth, host)
	down := newGateway(t, up, withAuth)
	token := sandboxToken(t, up.URL, upstreamToken, "adv-1", sandbox.DemoFirmID)
	down.postAs(t, "Bearer "+token, mintMutation).wantError(t, "UPSTREAM_UNAVAILABLE",
		"The assistant session host could not be reached: check ASSISTANT_SESSION_URL")
	status, body := doJSON(t, jsonRequest(http.MethodGet, down.url+"/readyz", nil))
	if checks, _ := body["checks"].(map[string]any); status != http.StatusServiceUnavailable || checks["assistant_session"] == "ok" {
		t.Errorf("/readyz with the session host down: %d %v, want 503", status, body)
	}
	// No session host configured against the service: the mutation names the settings.
	off := newGateway(t, up, map[string]string{"AUTH_DISABLED": "", "AUTH_JWKS_URL": up.URL + "/sandbox/jwks.json"})
	r := off.postAs(t, "Bearer "+token, mintMutation)
	if e := r.wantError(t, "UPSTREAM_UNAVAILABLE", ""); !strings.Contains(e.Message, "ASSISTANT_SESSION_URL") {
		t.Errorf("got %q, want it to name ASSISTANT_SESSION_URL", e.Message)
	}
}

// Issue 26, item 5: "Every client snippet runs as written in a test". docs/callers.md's page of
// the integrator's own ("pop-out opener"), as written but for the gateway's address, served from
// another origin than a zero-config gateway's: pressing its button opens the window
// assistant-popout at the gateway's /assistant, which greets the reader, and its chat becomes
// ready and answers. The pop-out is a page of the gateway's origin, whatever origin opened it,
// so neither CORS_ALLOWED_ORIGINS nor SANDBOX_EMBED_ORIGINS has to name the opener's; the case
// of another site (not only another port) shows no same-site allowance is at work either.
// What does depend on the opener's origin is the docs' "a page served by the gateway's own
// origin can hand the pop-out its caller's credentials": session storage is kept per origin,
// so credentials another origin hands over never reach the pop-out, which asks with none.
func TestTheDocsPopOutOpenerWorksFromAPageOfAnotherOrigin(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	npmInstall(t, ideDir, "playwright-core")
	snippet := markedBlock(t, "pop-out opener", "html")
	gateway, sb := sandboxed(t)
	gw := gateway.url
	const docsGateway = "https://gateway.example.com"
	if !strings.Contains(snippet, docsGateway+"/assistant/open.js") {
		t.Fatalf("the docs' opener does not include %s/assistant/open.js:\n%s", docsGateway, snippet)
	}
	mine := strings.ReplaceAll(snippet, docsGateway, gw)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, mine)
	}))
	t.Cleanup(site.Close) // after the parallel subtests
	_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
	const otherSite = "MAP app.example.test 127.0.0.1"
	caller := "Bearer " + sandboxToken(t, sb, sandbox.DefaultAccessToken, "adv-002", sandbox.DemoFirmID)
	for _, tc := range []struct {
		name, page, hostRules string
		authorization         string // handed to openAssistant instead of pressing the button
	}{
		{name: "on another port of the gateway's host", page: site.URL},
		{name: "on another site", page: "http://app.example.test:" + port, hostRules: otherSite},
		{name: "on another site, handing over credentials", page: "http://app.example.test:" + port, hostRules: otherSite, authorization: caller},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", filepath.Join(ideDir, "opener.mjs"), tc.page, gw)
			cmd.Env = append(os.Environ(), "CHROMIUM="+browser, "HOST_RULES="+tc.hostRules, "OPENER_AUTHORIZATION="+tc.authorization)
			var got struct {
				Popup                             struct{ URL, Name, Title string }
				Heading, Greeting, Notices        string
				Ready                             bool
				Events, Messages, GraphqlAuth     []string
				PageErrors, ConsoleErrors, Failed []string
			}
			testnpm.RunJSON(t, cmd, &got)
			why := fmt.Sprintf("(exceptions %v, console errors %v, failed loads %v, notices %q)", got.PageErrors, got.ConsoleErrors, got.Failed, got.Notices)
			if got.Popup.URL != gw+"/assistant" || got.Popup.Name != "assistant-popout" {
				t.Fatalf("the page opened %q at %s, want assistant-popout at %s/assistant %s", got.Popup.Name, got.Popup.URL, gw, why)
			}
			if got.Popup.Title != "Advisor assistant" || got.Heading != "Advisor assistant" || !strings.HasPrefix(got.Greeting, "Hello!") {
				t.Errorf("the pop-out is titled %q, headed %q and greets %q, want Advisor assistant and a greeting", got.Popup.Title, got.Heading, got.Greeting)
			}
			if !got.Ready {
				t.Errorf("the pop-out heard %v, want ready and identify %s", got.Events, why)
			} else if !slices.Contains(got.Messages, "You said: hello from my page") {
				// Every case chats as the zero-config demo caller, so one may see another's too.
				t.Errorf("the conversation is %q, want the chat's answer to the message sent %s", got.Messages, why)
			}
			if len(got.GraphqlAuth) == 0 {
				t.Errorf("the pop-out never asked the gateway for a session %s", why)
			}
			for _, a := range got.GraphqlAuth {
				if a != "" {
					t.Errorf("the pop-out asked for a session with Authorization %.20q…, want none: credentials stay with the origin that was given them", a)
				}
			}
			if len(got.PageErrors) > 0 {
				t.Errorf("exceptions in the pages: %v", got.PageErrors)
			}
		})
	}
}

package assistantpage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/assistantpage"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
	"github.com/advisorhq/gateway/internal/testnpm"
)

// chromium finds Debian's Chromium (testnpm.Chromium: CI sets REQUIRE_BROWSER=1, so there
// the tests fail rather than skip without it) and installs the browser driver.
func chromium(t *testing.T) string {
	t.Helper()
	path := testnpm.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if err := testnpm.Install(ctx, "testdata", "playwright-core"); err != nil {
		t.Fatal(err)
	}
	return path
}

// popoutSetup is how a test's page server and sandbox differ from the usual.
type popoutSetup struct {
	ttl      time.Duration
	unlisted bool                // the page's origin is not on the sandbox's allow-list
	csp      func(string) string // rewrites the pop-out page's policy
	embedCSP func(string) string // rewrites the policies of the embed host's answers
}

// popoutServer stands in for the gateway: the pop-out pages, and a POST /graphql that answers
// createAssistantSession with a token minted by an in-process sandbox, which is the embed host
// on another origin. It also serves /harness, a bare page with the SDK, for the SDK's cases.
func popoutServer(t *testing.T, s popoutSetup) (pageURL string, sb *sandbox.Sandbox) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pageURL = "http://" + ln.Addr().String()
	origins := []string{pageURL}
	if s.unlisted {
		origins = []string{"http://127.0.0.1:1"}
	}
	embed := sandboxtest.Start(t, sandbox.Options{Empty: true, SessionTTL: s.ttl, EmbedOrigins: origins})
	embedURL := embed.Server.URL
	if s.embedCSP != nil {
		// The same sandbox behind a front that rewrites its chat page's policy.
		embedURL = sandboxtest.Serve(t, rewriteCSP(embed.Sandbox, s.embedCSP)).URL
	}
	page, err := assistantpage.New(embedURL)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /assistant", rewriteCSP(page, s.csp))
	mux.Handle("GET /assistant/", page)
	mux.HandleFunc("POST /graphql", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Query string }
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !strings.Contains(req.Query, "createAssistantSession") {
			http.Error(w, "not the mutation", http.StatusBadRequest)
			return
		}
		token, expires := embed.Sandbox.MintAssistantSession("advisor-1", "firm-1")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"data":{"createAssistantSession":{"token":%q,"expiresAt":%q}}}`, token, expires.Format(time.RFC3339))
	})
	mux.HandleFunc("GET /harness", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><script src="/assistant/queue.js"></script>
<script>window.__queuedHeard = []; Assistant('on', 'error', function (e) { window.__queuedHeard.push(e.message); }); Assistant('identify', {token: 'ast_early'});</script>
<script async src="%s/v1/sdk/assistant-sdk.js"></script></head>
<body><div id="box" style="height:300px"></div></body></html>`, embedURL)
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return pageURL, embed.Sandbox
}

// rewriteCSP serves h with the Content-Security-Policy of its answers, where they have one,
// rewritten by f (nil: as they are).
func rewriteCSP(h http.Handler, f func(string) string) http.Handler {
	if f == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		if csp := rec.Header().Get("Content-Security-Policy"); csp != "" {
			w.Header().Set("Content-Security-Policy", f(csp))
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// without is a policy rewrite that drops one directive.
func without(directive string) func(string) string {
	return func(csp string) string {
		var kept []string
		for _, d := range strings.Split(csp, "; ") {
			if !strings.HasPrefix(d, directive+" ") {
				kept = append(kept, d)
			}
		}
		return strings.Join(kept, "; ")
	}
}

// browserRun is what popout.mjs saw.
type browserRun struct {
	URLs          []string `json:"urls"`
	Tokens        []string `json:"tokens"`
	Bearers       []string `json:"bearers"`
	PageErrors    []string `json:"pageErrors"`
	GraphqlBodies []string `json:"graphqlBodies"`
	GraphqlAuth   []string `json:"graphqlAuth"`
	WiderWidth    int      `json:"widerWidth"`
	Opener        struct{ ScreenX, ScreenY, OuterWidth, OuterHeight int }
	Opened        [][]string `json:"opened"`
	Popup         struct {
		Name                    string
		InnerWidth, InnerHeight int
		URL                     string
	}
	FrameBox struct{ Width, Height float64 } `json:"frameBox"`
	Resized  [][]float64                     `json:"resized"`
	Pages    int                             `json:"pages"`
	Messages []string                        `json:"messages"`
	Events   []string                        `json:"events"`
	Notices  string                          `json:"notices"`
	Iframes  int                             `json:"iframes"`
	Cases    map[string]json.RawMessage      `json:"cases"`
	Waiting  string                          `json:"waiting"`
	Refused  int                             `json:"refused"`
}

func drive(t *testing.T, browser, mode, url string, env ...string) browserRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "popout.mjs"), mode, url)
	cmd.Env = append(append(os.Environ(), "CHROMIUM="+browser), env...)
	var got browserRun
	testnpm.RunJSON(t, cmd, &got)
	if len(got.PageErrors) > 0 {
		t.Errorf("exceptions in the pages: %v", got.PageErrors)
	}
	return got
}

// The demo's button opens the pop-out as the spec's reference window; the chat becomes ready,
// is identified with a token that no address carried, answers, notifies, asks to widen and
// narrow the window; a 5-second session expires and the page identifies again within the
// spec's window, and the conversation keeps its history.
func TestPopoutOpensIdentifiesAndSurvivesExpiry(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	url, _ := popoutServer(t, popoutSetup{ttl: 5 * time.Second})
	got := drive(t, browser, "popout", url, "EXPECT_EXPIRY=1")

	if len(got.Opened) != 1 || len(got.Opened[0]) != 3 {
		t.Fatalf("window.open was called with %v, want once, with an address, a name and features, for both clicks", got.Opened)
	}
	// Opened blank, by name, and only then sent to the pop-out page: an address given to
	// window.open would navigate a pop-out that is already open.
	o := got.Opened[0]
	if o[0] != "" || o[1] != "assistant-popout" {
		t.Errorf("window.open(%q, %q, ...), want (\"\", \"assistant-popout\", ...)", o[0], o[1])
	}
	if got.Popup.URL != url+"/assistant" {
		t.Errorf("the pop-out shows %s, want %s/assistant", got.Popup.URL, url)
	}
	left := got.Opener.ScreenX + got.Opener.OuterWidth - 500
	top := got.Opener.ScreenY + got.Opener.OuterHeight - 730
	if want := fmt.Sprintf("popup=yes,width=500,height=730,left=%d,top=%d,menubar=no,toolbar=no,location=no,status=no", left, top); o[2] != want {
		t.Errorf("features %q, want %q", o[2], want)
	}
	// Headless Chromium gives a pop-out of height h an innerHeight of h-1 (its window frame is
	// drawn in whole pixels); a headed one gives h.
	if got.Popup.Name != "assistant-popout" || got.Popup.InnerWidth != 500 || got.Popup.InnerHeight < 729 || got.Popup.InnerHeight > 730 {
		t.Errorf("the pop-out is %q %dx%d, want assistant-popout 500x730", got.Popup.Name, got.Popup.InnerWidth, got.Popup.InnerHeight)
	}
	if got.FrameBox.Width < 490 || got.FrameBox.Height < 600 {
		t.Errorf("the chat is %vx%v, want it to fill the 500x730 window", got.FrameBox.Width, got.FrameBox.Height)
	}
	if got.Pages != 2 {
		t.Errorf("after a second click there are %d pages, want 2: the same pop-out refocused", got.Pages)
	}
	if got.WiderWidth != 700 {
		t.Errorf("after \"wider\" the pop-out is %d wide, want 700", got.WiderWidth)
	}
	if len(got.Resized) != 2 || got.Resized[0][0] != 200 || got.Resized[1][0] != -200 || got.Resized[0][1] != 0 {
		t.Errorf("the pop-out resized by %v, want [200 0] then [-200 0]", got.Resized)
	}
	if len(got.Tokens) < 2 {
		t.Fatalf("the page fetched %d tokens, want one and another after session_expired", len(got.Tokens))
	}
	for _, tok := range got.Tokens {
		for _, u := range got.URLs {
			if strings.Contains(u, tok) {
				t.Errorf("a session token appears in the address %s", u)
			}
		}
	}
	seen := strings.Join(got.Bearers, " ")
	for _, tok := range got.Tokens[:2] {
		if !strings.Contains(seen, tok) {
			t.Errorf("the chat never used token %.8s… the page passed to identify", tok)
		}
	}
	for _, a := range got.GraphqlAuth {
		if a != "Bearer caller-1" {
			t.Errorf("the page asked for a token with Authorization %q, want the opener's Bearer caller-1", a)
		}
	}
	for _, b := range got.GraphqlBodies {
		if !strings.Contains(b, "mutation { createAssistantSession { token expiresAt } }") {
			t.Errorf("the page asked /graphql %s, want the createAssistantSession mutation", b)
		}
	}
	// The page may identify before ready (the SDK holds the token until then).
	wantEvents := []string{"ready", "session_expired", "identify"}
	if i := subsequence(got.Events, wantEvents); i < len(wantEvents) {
		t.Errorf("events %v, want %v in that order", got.Events, wantEvents)
	}
	want := []string{"first message", "You said: first message", "second message", "You said: second message"}
	if strings.Join(got.Messages, "|") != strings.Join(want, "|") {
		t.Errorf("the conversation is %q, want %q: the first exchange kept across the new token", got.Messages, want)
	}
	// Issue 26: "the echo reply shows twice (in a bubble and in a bar)": in the conversation
	// only, while the window is seen (TestPopoutGreetsAndShowsEachReplyOnce).
	if strings.Contains(got.Notices, "You said:") {
		t.Errorf("the page shows notices %q, want the reply in the conversation only", got.Notices)
	}
}

// Issue 26: "The pop-out assistant opens as a blank white window with an input box: give it a
// title, a greeting and an empty state; the echo reply shows twice (in a bubble and in a bar)."
// The SDK's rule 7 says "the chat draws no title bar or buttons", so the pop-out page draws
// them: a title and a greeting from the first paint, a line saying the chat is on its way until
// it is ready, and the chat's own empty state until the first message. A reply shows once, in
// the conversation; a reply that comes while the window is hidden is also a notification
// ("notice from the chat"), which the page shows.
func TestPopoutGreetsAndShowsEachReplyOnce(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	url, _ := popoutServer(t, popoutSetup{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "popout.mjs"), "greet", url)
	cmd.Env = append(os.Environ(), "CHROMIUM="+browser)
	var got struct {
		PageErrors []string
		Before     struct{ Heading, Greeting, Waiting string }
		After      struct {
			WaitingVisible bool
			Empty          string
		}
		ReplyShown        int
		EmptyAfter        bool
		NoticesAfterReply string
		Notices           string
		Messages          []string
	}
	testnpm.RunJSON(t, cmd, &got)
	if len(got.PageErrors) > 0 {
		t.Errorf("exceptions in the pages: %v", got.PageErrors)
	}
	if got.Before.Heading != "Advisor assistant" || !strings.HasPrefix(got.Before.Greeting, "Hello!") {
		t.Errorf("the pop-out opens titled %q and greeting %q, want Advisor assistant and a greeting", got.Before.Heading, got.Before.Greeting)
	}
	if got.Before.Waiting == "" || got.After.WaitingVisible {
		t.Errorf("before ready the pop-out says %q, after it the line is visible: %v; want a line until the chat is ready, then none",
			got.Before.Waiting, got.After.WaitingVisible)
	}
	if !strings.HasPrefix(got.After.Empty, "No messages yet") || got.EmptyAfter {
		t.Errorf("the chat's empty state is %q, and after a message still visible: %v; want one until the first message", got.After.Empty, got.EmptyAfter)
	}
	if got.ReplyShown != 1 || strings.Contains(got.NoticesAfterReply, "You said: hello") {
		t.Errorf("the reply shows %d times (notices %q), want once, in the conversation", got.ReplyShown, got.NoticesAfterReply)
	}
	if !strings.Contains(got.Notices, "You said: while away") {
		t.Errorf("a reply while the window was hidden left the notices %q, want it there", got.Notices)
	}
	want := []string{"hello", "You said: hello", "while away", "You said: while away"}
	if strings.Join(got.Messages, "|") != strings.Join(want, "|") {
		t.Errorf("the conversation is %q, want %q", got.Messages, want)
	}
}

// Rule 7: "window name assistant-popout (reusing the name refocuses the existing window)",
// also when the opener has reloaded and no longer holds a reference to it: the pop-out is not
// loaded again, and the text typed into it before is still there to send.
func TestPopoutReopenedAfterTheOpenerReloadsKeepsItsText(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	url, _ := popoutServer(t, popoutSetup{})
	got := drive(t, browser, "reopen", url)
	if len(got.Opened) != 1 || len(got.Opened[0]) != 3 || got.Opened[0][0] != "" || got.Opened[0][1] != "assistant-popout" {
		t.Errorf("after the reload, opening called window.open with %v, want (\"\", \"assistant-popout\", features): by name, no address", got.Opened)
	}
	if got.Refused != 0 {
		t.Errorf("opening again loaded the pop-out page %d times, want none: the window refocused as it was", got.Refused)
	}
	if got.Pages != 2 {
		t.Errorf("there are %d pages, want 2: the opener and the one pop-out", got.Pages)
	}
	if got.Popup.Name != "assistant-popout" || got.Popup.URL != url+"/assistant" {
		t.Errorf("the pop-out is %q at %s, want assistant-popout at %s/assistant", got.Popup.Name, got.Popup.URL, url)
	}
	if got.Waiting != "typed before the reload" {
		t.Errorf("after opening again the message box holds %q, want the text typed before the reload", got.Waiting)
	}
	want := []string{"typed before the reload", "You said: typed before the reload"}
	if strings.Join(got.Messages, "|") != strings.Join(want, "|") {
		t.Errorf("the conversation is %q, want %q", got.Messages, want)
	}
}

// A message sent after the session expired, while the gateway cannot give a new token, is
// kept, and sent once the page's retries get one and identify with it (rule 3: "within about
// 15 seconds, before the waiting message fails"). The script waits on the page's events and
// requests, never on time, so that two loaded cores running the suite in parallel cannot
// change the outcome: the session may run out before the first message is answered.
func TestPopoutKeepsTheUnsentMessageUntilTheNextIdentify(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	url, _ := popoutServer(t, popoutSetup{ttl: 5 * time.Second})
	got := drive(t, browser, "pending", url)
	if got.Refused == 0 {
		t.Error("the page never asked for a new token while the gateway was unreachable")
	}
	if got.Waiting != "after expiry" {
		t.Errorf("while no token could be had the message box held %q, want the unsent message", got.Waiting)
	}
	want := []string{"before expiry", "You said: before expiry", "after expiry", "You said: after expiry"}
	if strings.Join(got.Messages, "|") != strings.Join(want, "|") {
		t.Errorf("the conversation is %q, want %q", got.Messages, want)
	}
}

// subsequence is how many of want appear in got in order.
func subsequence(got, want []string) int {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i
}

// A page whose origin is not on the allow-list, or whose policy lacks frame-src for the embed
// host, stays empty: no ready and no error, neither event nor exception. The allow-list holds
// twice: the browser refuses to frame the chat page (frame-ancestors), and the chat page says
// nothing to a parent that is not on it.
func TestPopoutStaysEmpty(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	for _, tc := range []struct {
		name  string
		setup popoutSetup
	}{
		{"unlisted origin", popoutSetup{unlisted: true}},
		{"no frame-src", popoutSetup{csp: without("frame-src")}},
		// The chat page's own check, for browsers that ignore frame-ancestors.
		{"unlisted origin, chat page without frame-ancestors", popoutSetup{unlisted: true, embedCSP: without("frame-ancestors")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, _ := popoutServer(t, tc.setup)
			got := drive(t, browser, "watch", url, "WATCH_MS=3000")
			for _, e := range got.Events {
				if e == "ready" || e == "error" {
					t.Errorf("events %v, want neither ready nor error", got.Events)
				}
			}
			if strings.TrimSpace(got.Notices) != "" {
				t.Errorf("the page shows %q, want nothing", got.Notices)
			}
			if got.Iframes != 1 {
				t.Errorf("%d iframes, want the SDK's one, left empty", got.Iframes)
			}
		})
	}
}

// The SDK's rules: calls queued before it loads are played; identify before init, and bad
// init configurations, are error events, never exceptions; a second init is ignored; destroy
// removes the frame and says so.
func TestSDKConfigurationErrors(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	url, _ := popoutServer(t, popoutSetup{})
	got := drive(t, browser, "sdk", url)
	type step struct {
		Heard  []string
		Thrown *string
	}
	var queued []string
	if err := json.Unmarshal(got.Cases["queued"], &queued); err != nil || len(queued) != 1 || !strings.Contains(queued[0], "identify must come after init") {
		t.Errorf("the queued identify before init gave %v, want one error event saying identify must come after init", queued)
	}
	for name, want := range map[string]string{
		"identifyBeforeInit": "identify must come after init",
		"noConfig":           "init needs a config object",
		"noContainer":        "container is required",
		"selector":           "container is an element id, not a selector",
		"missing":            `no element has the id "nowhere"`,
		"badURL":             "iframeUrl must be an absolute http or https URL",
	} {
		var s step
		if err := json.Unmarshal(got.Cases[name], &s); err != nil {
			t.Fatalf("case %s: %v", name, err)
		}
		if s.Thrown != nil {
			t.Errorf("%s threw %q, want no exception", name, *s.Thrown)
		}
		if len(s.Heard) != 1 || !strings.Contains(s.Heard[0], want) {
			t.Errorf("%s: heard %v, want one error event containing %q", name, s.Heard, want)
		}
	}
	var first, second, destroy step
	var framesBad, framesInits, framesDestroy []string
	for name, v := range map[string]any{"first": &first, "second": &second, "destroy": &destroy,
		"framesAfterBad": &framesBad, "framesAfterInits": &framesInits, "framesAfterDestroy": &framesDestroy} {
		if err := json.Unmarshal(got.Cases[name], v); err != nil {
			t.Fatalf("case %s: %v", name, err)
		}
	}
	if len(framesBad) != 0 {
		t.Errorf("bad configurations made frames %v, want none", framesBad)
	}
	if strings.Join(first.Heard, " ") != "ready" {
		t.Errorf("a good init heard %v, want ready", first.Heard)
	}
	if len(second.Heard) != 0 || strings.Join(framesInits, " ") != "First" {
		t.Errorf("a second init heard %v and left frames %v, want nothing heard and the first's frame only", second.Heard, framesInits)
	}
	// The spec: "The events open, close, statechange and unread belong to the floating
	// launcher and are not used in pop-out mode." A page may subscribe to them: no error
	// event, and their handlers never run, not even on destroy.
	var launcher, unknown step
	for name, v := range map[string]*step{"launcher": &launcher, "unknown": &unknown} {
		if err := json.Unmarshal(got.Cases[name], v); err != nil {
			t.Fatalf("case %s: %v", name, err)
		}
	}
	if launcher.Thrown != nil || len(launcher.Heard) != 0 {
		t.Errorf("subscribing to open, close, statechange and unread heard %v (threw %v), want nothing", launcher.Heard, launcher.Thrown)
	}
	if len(unknown.Heard) != 1 || !strings.Contains(unknown.Heard[0], `unknown event "opened"`) {
		t.Errorf("subscribing to \"opened\" heard %v, want one error event saying it is unknown", unknown.Heard)
	}
	var late []string
	if err := json.Unmarshal(got.Cases["lateReady"], &late); err != nil || strings.Join(late, " ") != "ready" {
		t.Errorf("a ready handler added after ready heard %v, want ready: on may be called at any time", late)
	}
	if strings.Join(destroy.Heard, " ") != "destroy" || len(framesDestroy) != 0 {
		t.Errorf("destroy heard %v and left frames %v, want destroy and no frame", destroy.Heard, framesDestroy)
	}
}

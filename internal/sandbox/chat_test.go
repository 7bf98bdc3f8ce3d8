package sandbox_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// chat sends a request to the chat API with a session token ("" sends none).
func (f *fixture) chat(method, path, token string, body any) *response {
	f.t.Helper()
	req := f.request(method, path, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return f.do(req)
}

type chatReply struct {
	Messages []struct {
		From, Text string
	} `json:"messages"`
	ExpiresAt time.Time `json:"expires_at"`
}

// The chat API answers a session token's advisor: an echo, with the whole conversation, which
// belongs to the advisor record, so a new token for the same advisor sees it and another
// advisor does not.
func TestChatConversationBelongsToTheAdvisor(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	first, expires := f.sb.MintAssistantSession("adv-1", "firm-1")
	if want := f.clock.Now().Add(sandbox.DefaultSessionTTL); !expires.Equal(want) {
		t.Errorf("the token expires at %v, want %v", expires, want)
	}
	var got chatReply
	f.chat(http.MethodPost, "/v1/chat/messages", first, map[string]string{"text": " hello "}).wantOK(t).decode(t, &got)
	if len(got.Messages) != 2 || got.Messages[0].From != "advisor" || got.Messages[0].Text != "hello" ||
		got.Messages[1].From != "assistant" || got.Messages[1].Text != "You said: hello" {
		t.Errorf("conversation %+v, want hello and its echo", got.Messages)
	}
	if !got.ExpiresAt.Equal(expires) {
		t.Errorf("expires_at %v, want %v", got.ExpiresAt, expires)
	}

	second, _ := f.sb.MintAssistantSession("adv-1", "firm-1")
	f.chat(http.MethodGet, "/v1/chat/history", second, nil).wantOK(t).decode(t, &got)
	if len(got.Messages) != 2 {
		t.Errorf("a new token of the same advisor sees %d messages, want the 2 of the conversation", len(got.Messages))
	}
	other, _ := f.sb.MintAssistantSession("adv-2", "firm-1")
	f.chat(http.MethodGet, "/v1/chat/history", other, nil).wantOK(t).decode(t, &got)
	if len(got.Messages) != 0 {
		t.Errorf("another advisor sees %d messages, want none", len(got.Messages))
	}
}

// Refusals: 401 for a missing, unknown or expired token (the expired one says so, so the page
// asks for a new token), 400 for a body that is not a message, 413 for one too long; none of
// them is added to the conversation.
func TestChatAPIRefusals(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	token, _ := f.sb.MintAssistantSession("adv-1", "firm-1")
	expired, _ := f.sb.MintAssistantSession("adv-2", "firm-1")
	f.clock.Advance(sandbox.DefaultSessionTTL)
	token, _ = f.sb.MintAssistantSession("adv-1", "firm-1") // minted after the clock moved

	for _, tc := range []struct {
		name, method, path, token string
		body                      any
		status                    int
		message                   string
	}{
		{"no token", http.MethodGet, "/v1/chat/history", "", nil, 401, "Session token required"},
		{"unknown token", http.MethodGet, "/v1/chat/history", "ast_nope", nil, 401, "Invalid session token"},
		{"the sandbox's access token", http.MethodGet, "/v1/chat/history", testToken, nil, 401, "Invalid session token"},
		{"expired token", http.MethodGet, "/v1/chat/history", expired, nil, 401, "Session expired"},
		{"expired token posting", http.MethodPost, "/v1/chat/messages", expired, map[string]string{"text": "hi"}, 401, "Session expired"},
		{"malformed JSON", http.MethodPost, "/v1/chat/messages", token, `{"text": `, 400, `Request body must be a JSON object such as {"text": "..."}`},
		{"not an object", http.MethodPost, "/v1/chat/messages", token, `["hi"]`, 400, `Request body must be a JSON object such as {"text": "..."}`},
		{"no text", http.MethodPost, "/v1/chat/messages", token, `{}`, 400, "text is required"},
		{"blank text", http.MethodPost, "/v1/chat/messages", token, `{"text": "  "}`, 400, "text is required"},
		{"oversized message", http.MethodPost, "/v1/chat/messages", token, map[string]string{"text": strings.Repeat("é", 4001)}, 413, "text must be at most 4000 characters"},
		{"oversized body", http.MethodPost, "/v1/chat/messages", token, `{"text": "` + strings.Repeat("a", 1<<20) + `"}`, 413, "Request body too large"},
		{"wrong method", http.MethodDelete, "/v1/chat/messages", token, nil, 405, "Method Not Allowed"},
		{"unknown path", http.MethodGet, "/v1/chat/nothing", token, nil, 404, "Not Found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.chat(tc.method, tc.path, tc.token, tc.body)
			r.wantError(t, tc.status, tc.message)
			if tc.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate %q, want a Bearer challenge", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	var got chatReply
	f.chat(http.MethodPost, "/v1/chat/messages", token, map[string]string{"text": strings.Repeat("é", 4000)}).wantOK(t).decode(t, &got)
	if len(got.Messages) != 2 {
		t.Errorf("after the refusals the conversation has %d messages, want only the 2 of the accepted one", len(got.Messages))
	}
}

// The embed host is public: the SDK, the chat page and its files need no credentials, and the
// page tells the browser which pages may frame it.
func TestEmbedHostFiles(t *testing.T) {
	t.Parallel()
	f := newSandbox(t, sandbox.Options{EmbedOrigins: []string{"https://crm.example.com", "http://localhost:3000"}}, false)
	for _, tc := range []struct{ path, contentType, contains string }{
		{"/v1/sdk/assistant-sdk.js", "text/javascript; charset=utf-8", "assistant-embed/1.0"},
		{"/v1/chat", "text/html; charset=utf-8", `data-embed-origins="https://crm.example.com http://localhost:3000"`},
		{"/v1/chat/chat.js", "text/javascript; charset=utf-8", "assistant-embed/1.0"},
		{"/v1/chat/chat.css", "text/css; charset=utf-8", "#messages"},
	} {
		r := f.do(f.request(http.MethodGet, tc.path, nil))
		if r.status != http.StatusOK || r.header.Get("Content-Type") != tc.contentType || !strings.Contains(string(r.body), tc.contains) {
			t.Errorf("GET %s = %d %s, want 200 %s containing %q", tc.path, r.status, r.header.Get("Content-Type"), tc.contentType, tc.contains)
		}
	}
	r := f.do(f.request(http.MethodGet, "/v1/chat", nil))
	want := "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; " +
		"frame-ancestors https://crm.example.com http://localhost:3000"
	if got := r.header.Get("Content-Security-Policy"); got != want {
		t.Errorf("the chat page's CSP is\n%s\nwant\n%s", got, want)
	}
	f.do(f.request(http.MethodGet, "/v1/sdk/other.js", nil)).wantError(t, 404, "Not Found")
	// The rest of /v1 still takes the Basic credentials.
	f.do(f.request(http.MethodPost, "/v1/clients", map[string]string{})).wantError(t, 403, "Access Denied")
}

func TestParseEmbedOrigins(t *testing.T) {
	got, err := sandbox.ParseEmbedOrigins(" https://crm.example.com, http://localhost:8080 ,")
	if err != nil || strings.Join(got, " ") != "https://crm.example.com http://localhost:8080" {
		t.Errorf("got %q, %v; want the two origins", got, err)
	}
	for _, bad := range []string{"crm.example.com", "https://crm.example.com/", "https://crm.example.com/path", "ftp://x", ","} {
		if _, err := sandbox.ParseEmbedOrigins(bad); err == nil {
			t.Errorf("ParseEmbedOrigins(%q) accepted it, want an error", bad)
		}
	}
}

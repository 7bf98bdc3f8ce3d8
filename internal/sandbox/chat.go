package sandbox

import (
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The embed host: the chat SDK, the chat page it frames, and the page's API. None of it takes
// the sandbox's credentials: the SDK and the page are public, and the API takes the session
// token the page was given by postMessage.
//
//go:embed chat/*.js chat/*.css
var chatFiles embed.FS

// DefaultEmbedOrigins are the pages that may embed the chat when Options.EmbedOrigins is
// empty: a gateway on its default address.
var DefaultEmbedOrigins = []string{"http://localhost:8080", "http://127.0.0.1:8080"}

// maxChatText bounds one chat message, in characters.
const maxChatText = 4000

// MintAssistantSession mints a session token for the advisor at the firm, as the mTLS session
// host does, for tests and tools in process.
func (s *Sandbox) MintAssistantSession(advisor, firm string) (token string, expires time.Time) {
	token, sess, _ := s.sessions.mint(advisor, firm)
	return token, sess.ExpiresAt
}

// embedOrigins is the allow-list of pages that may embed the chat.
func (s *Sandbox) embedOrigins() []string {
	if len(s.opts.EmbedOrigins) == 0 {
		return DefaultEmbedOrigins
	}
	return s.opts.EmbedOrigins
}

// routeEmbed serves /v1/sdk/... and /v1/chat/...; segs follow /v1.
func (s *Sandbox) routeEmbed(w http.ResponseWriter, r *http.Request, segs []string) {
	switch {
	case len(segs) == 2 && segs[0] == "sdk" && segs[1] == "assistant-sdk.js":
		s.serveChatFile(w, r, "assistant-sdk.js")
	case len(segs) == 1 && segs[0] == "chat":
		s.serveChatPage(w, r)
	case len(segs) != 2 || segs[0] != "chat":
		writeError(w, http.StatusNotFound, "Not Found")
	case segs[1] == "chat.js" || segs[1] == "chat.css":
		s.serveChatFile(w, r, segs[1])
	case segs[1] == "history":
		methods(w, r, handlers{http.MethodGet: func() (any, *apiError) {
			sess, err := s.chatSession(w, r)
			if err != nil {
				return nil, err
			}
			return chatReply{Messages: s.sessions.history(sess.Advisor), ExpiresAt: sess.ExpiresAt}, nil
		}})
	case segs[1] == "messages":
		methods(w, r, handlers{http.MethodPost: func() (any, *apiError) { return s.postChatMessage(w, r) }})
	default:
		writeError(w, http.StatusNotFound, "Not Found")
	}
}

// chatReply is the conversation, oldest first, and when the token that asked runs out, so the
// page can say the session expired without waiting for a refusal.
type chatReply struct {
	Messages  []chatMessage `json:"messages"`
	ExpiresAt time.Time     `json:"expires_at"`
}

// chatSession is the session of the request's bearer token. A refusal is 401; an expired
// token's says so, so the page asks for a new one rather than failing.
func (s *Sandbox) chatSession(w http.ResponseWriter, r *http.Request) (assistantSession, *apiError) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="assistant"`)
		return assistantSession{}, errorf(http.StatusUnauthorized, "Session token required")
	}
	sess, ok, expired := s.sessions.lookup(strings.TrimSpace(token))
	switch {
	case expired:
		w.Header().Set("WWW-Authenticate", `Bearer realm="assistant", error="invalid_token", error_description="expired"`)
		return assistantSession{}, errorf(http.StatusUnauthorized, "Session expired")
	case !ok:
		w.Header().Set("WWW-Authenticate", `Bearer realm="assistant", error="invalid_token"`)
		return assistantSession{}, errorf(http.StatusUnauthorized, "Invalid session token")
	}
	return sess, nil
}

// postChatMessage adds the advisor's message and the assistant's answer, an echo, to the
// advisor's conversation.
func (s *Sandbox) postChatMessage(w http.ResponseWriter, r *http.Request) (any, *apiError) {
	sess, aerr := s.chatSession(w, r)
	if aerr != nil {
		return nil, aerr
	}
	body, aerr := readJSON(w, r)
	if aerr != nil {
		return nil, aerr
	}
	var in struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, errorf(http.StatusBadRequest, "Request body must be a JSON object such as {\"text\": \"...\"}")
	}
	switch {
	case in.Text == nil || strings.TrimSpace(*in.Text) == "":
		return nil, errorf(http.StatusBadRequest, "text is required")
	case utf8.RuneCountInString(*in.Text) > maxChatText:
		return nil, errorf(http.StatusRequestEntityTooLarge, "text must be at most 4000 characters")
	}
	now := s.opts.Now().UTC()
	text := strings.TrimSpace(*in.Text)
	msgs := s.sessions.appendMessages(sess.Advisor,
		chatMessage{From: "advisor", Text: text, At: now},
		chatMessage{From: "assistant", Text: "You said: " + text, At: now})
	return chatReply{Messages: msgs, ExpiresAt: sess.ExpiresAt}, nil
}

func (s *Sandbox) serveChatFile(w http.ResponseWriter, r *http.Request, name string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	data, err := chatFiles.ReadFile("chat/" + name)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	ct := "text/javascript; charset=utf-8"
	if strings.HasSuffix(name, ".css") {
		ct = "text/css; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	// Fixes ship in place under /v1/, so browsers check back rather than keep an old SDK.
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(data)
}

// serveChatPage serves the page the SDK frames. Its script shows the chat only to a parent
// page whose origin is on the allow-list (checked against the origin of that page's first
// message); frame-ancestors says the same to the browser, which leaves the frame empty for
// any other page, without an error the page could see.
func (s *Sandbox) serveChatPage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	origins := s.embedOrigins()
	if s.opts.EmbedSameOrigin {
		// 'self' is the origin the browser loaded the page from, whatever host or published
		// port it used, which the sandbox could not name for itself.
		origins = append(slices.Clone(origins), "'self'")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "+
		"base-uri 'none'; form-action 'none'; frame-ancestors "+strings.Join(origins, " "))
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Cache-Control", "no-store")
	_ = chatPage.Execute(w, chatPageData{Origins: strings.Join(origins, " "), Base: mounted(r)})
}

// chatPageData is what the chat page is made of: the origins that may embed it, and the path
// its files and API are below (MountPath when it was asked for there, or the root).
type chatPageData struct{ Origins, Base string }

var chatPage = template.Must(template.New("chat").Parse(`<!DOCTYPE html>
<html lang="en" data-embed-origins="{{.Origins}}" data-base="{{.Base}}">
<head>
  <meta charset="utf-8">
  <title>Assistant</title>
  <link rel="stylesheet" href="{{.Base}}/v1/chat/chat.css">
  <script src="{{.Base}}/v1/chat/chat.js"></script>
</head>
<body>
  <main id="chat" hidden>
    <p id="empty">No messages yet. Type a question below to start the conversation.</p>
    <ol id="messages" aria-live="polite"></ol>
    <form id="compose">
      <input id="text" name="text" autocomplete="off" maxlength="4000" aria-label="Message" placeholder="Ask the assistant…">
      <button id="send" type="submit">Send</button>
      <button id="wider" type="button">Wider</button>
    </form>
  </main>
</body>
</html>
`))

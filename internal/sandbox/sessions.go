package sandbox

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"
)

// DefaultSessionTTL is the lifetime of an assistant session token, as the spec gives it.
const DefaultSessionTTL = 15 * time.Minute

// maxAssistantTokens bounds the session tokens kept at once: each mint adds one, and a caller
// minting in a loop must not grow the sandbox without end. Expired tokens go first.
const maxAssistantTokens = 100_000

// assistantAdvisor is the service's advisor record behind the chat: made the first time an
// advisor external id is seen, reused after. Its conversation belongs to it, so a new token
// for the same advisor continues the same conversation, and a changed id starts an empty one.
type assistantAdvisor struct {
	ID         string // the service's own id
	ExternalID string
	FirmID     string // the firm external id of the latest mint
	Created    time.Time

	// messages is the conversation, oldest first; guarded by assistantSessions.mu.
	messages []chatMessage
}

// chatMessage is one line of a conversation.
type chatMessage struct {
	From string    `json:"from"` // "advisor" or "assistant"
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// assistantSession is what a session token stands for.
type assistantSession struct {
	Advisor   *assistantAdvisor
	FirmID    string
	ExpiresAt time.Time
}

// assistantSessions are the session tokens the session host mints and the chat page accepts,
// and the advisor records they belong to. It is safe for concurrent use.
type assistantSessions struct {
	ttl time.Duration
	now func() time.Time

	mu       sync.Mutex
	advisors map[string]*assistantAdvisor // by advisor external id
	tokens   map[string]assistantSession
}

func newAssistantSessions(ttl time.Duration, now func() time.Time) *assistantSessions {
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	return &assistantSessions{ttl: ttl, now: now, advisors: map[string]*assistantAdvisor{}, tokens: map[string]assistantSession{}}
}

// mint makes a session token for the advisor at the firm, creating the advisor's record the
// first time its external id is seen. created reports whether it was.
func (a *assistantSessions) mint(advisorID, firmID string) (token string, s assistantSession, created bool) {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	adv, ok := a.advisors[advisorID]
	if !ok {
		adv = &assistantAdvisor{ID: "adv_" + randomToken(9), ExternalID: advisorID, Created: now}
		a.advisors[advisorID] = adv
	}
	adv.FirmID = firmID
	if len(a.tokens) >= maxAssistantTokens {
		a.dropExpiredLocked(now)
	}
	for len(a.tokens) >= maxAssistantTokens { // still full: the oldest-expiring go
		var oldest string
		for t, s := range a.tokens {
			if oldest == "" || s.ExpiresAt.Before(a.tokens[oldest].ExpiresAt) {
				oldest = t
			}
		}
		delete(a.tokens, oldest)
	}
	token = "ast_" + randomToken(24)
	s = assistantSession{Advisor: adv, FirmID: firmID, ExpiresAt: now.Add(a.ttl).Truncate(time.Second)}
	a.tokens[token] = s
	return token, s, !ok
}

// lookup is the session a token stands for. expired reports a token that was minted here but
// has run out, so the chat can say "session expired" rather than "unknown".
func (a *assistantSessions) lookup(token string) (s assistantSession, ok, expired bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok = a.tokens[token]
	if !ok {
		return assistantSession{}, false, false
	}
	if !a.now().Before(s.ExpiresAt) {
		return assistantSession{}, false, true
	}
	return s, true, false
}

// advisorCount is how many advisor records exist.
func (a *assistantSessions) advisorCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.advisors)
}

// appendMessages adds to an advisor's conversation and returns a copy of the whole of it.
func (a *assistantSessions) appendMessages(adv *assistantAdvisor, msgs ...chatMessage) []chatMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	adv.messages = append(adv.messages, msgs...)
	return append([]chatMessage(nil), adv.messages...)
}

// history is a copy of an advisor's conversation.
func (a *assistantSessions) history(adv *assistantAdvisor) []chatMessage {
	return a.appendMessages(adv)
}

func (a *assistantSessions) dropExpiredLocked(now time.Time) {
	for t, s := range a.tokens {
		if !now.Before(s.ExpiresAt) {
			delete(a.tokens, t)
		}
	}
}

// randomToken is n random bytes, base64url-encoded.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// AssistantAdvisors is how many advisor records the assistant has: one per advisor external id
// a session was ever minted for.
func (s *Sandbox) AssistantAdvisors() int { return s.sessions.advisorCount() }

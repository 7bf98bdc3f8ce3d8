package assistant

import (
	"context"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/callerauth"
)

// Sessions mints session tokens for the caller of each request: the advisor and firm of the
// caller's verified token, never ids a request names.
type Sessions struct {
	// Client is the session host; nil when the gateway has none configured.
	Client *Client
}

// ForCaller mints a session token for the caller in ctx. Errors are *apperr.Error.
func (s *Sessions) ForCaller(ctx context.Context) (Session, error) {
	if s == nil || s.Client == nil {
		return Session{}, apperr.New(apperr.UpstreamUnavailable,
			"Assistant sessions are off: the gateway has no session host (set ASSISTANT_SESSION_URL, ASSISTANT_CLIENT_CERT, ASSISTANT_CLIENT_KEY and ASSISTANT_SERVER_CA)")
	}
	c, ok := callerauth.FromContext(ctx)
	if !ok {
		return Session{}, apperr.New(apperr.Unauthenticated,
			"An assistant session belongs to the signed-in advisor, and this gateway authenticates no caller (AUTH_DISABLED)")
	}
	return s.Client.Mint(ctx, c.AdvisorID, c.FirmID)
}

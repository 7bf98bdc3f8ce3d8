package callerauth

import (
	"errors"
	"fmt"
	"net/http"
)

// Realm is the realm of every WWW-Authenticate challenge the gateway sends.
const Realm = "advisor-gateway"

// Reason says why a caller was refused. It is safe to log and to show: it never carries the token.
type Reason string

// The reasons a token is refused. All but ReasonKeysUnavailable are the caller's fault.
const (
	ReasonMissing         Reason = "missing"
	ReasonMalformed       Reason = "malformed"
	ReasonExpired         Reason = "expired"
	ReasonNotYetValid     Reason = "not_yet_valid"
	ReasonBadSignature    Reason = "bad_signature"
	ReasonUnknownKey      Reason = "unknown_key"
	ReasonWrongIssuer     Reason = "wrong_issuer"
	ReasonWrongAudience   Reason = "wrong_audience"
	ReasonMissingClaim    Reason = "missing_claim"
	ReasonKeysUnavailable Reason = "keys_unavailable"
)

// descriptions are the error_description of each reason's challenge. They are fixed strings so
// nothing the caller sent (a kid, a claim) can reach a response header, and they use only the
// characters RFC 6750 allows there (no quote, no backslash).
var descriptions = map[Reason]string{
	ReasonMissing:         "no bearer token",
	ReasonMalformed:       "the token is malformed",
	ReasonExpired:         "the token has expired",
	ReasonNotYetValid:     "the token is not valid yet",
	ReasonBadSignature:    "the token signature or algorithm is not accepted",
	ReasonUnknownKey:      "the token is signed with an unknown key",
	ReasonWrongIssuer:     "the token has the wrong issuer",
	ReasonWrongAudience:   "the token has the wrong audience",
	ReasonMissingClaim:    "the token lacks a required claim",
	ReasonKeysUnavailable: "the signing keys cannot be fetched",
}

// The causes FromRequest and Verify give for a token that is not there at all, so a transport
// can tell them apart with errors.Is; each is wrapped in an *Error.
var (
	ErrNoAuthorization = errors.New("no Authorization header")
	ErrNotBearer       = errors.New("the Authorization header is not a Bearer credential")
	ErrEmptyToken      = errors.New("the bearer token is empty")
	ErrTokenTooLarge   = errors.New("the token is larger than the limit")
)

// Error is why a caller was refused. Its message names the reason and a detail written by this
// package; it never contains the token. Err, the cause, is kept for errors.Is and may quote the
// token's kid, but never the token either.
type Error struct {
	Reason Reason
	// Detail adds to the reason for the log: which claim is missing, which kid is unknown.
	Detail string
	Err    error
}

func (e *Error) Error() string {
	msg := "caller token refused: " + descriptions[e.Reason]
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Status is the HTTP status to answer with: 401 when the caller must present a better token,
// 503 when the gateway cannot check any token because the JWKS cannot be fetched (the caller
// may well be right, and retrying later may succeed).
func (e *Error) Status() int {
	if e.Reason == ReasonKeysUnavailable {
		return http.StatusServiceUnavailable
	}
	return http.StatusUnauthorized
}

// CallerFault reports whether the caller, not the gateway, is to blame.
func (e *Error) CallerFault() bool { return e.Reason != ReasonKeysUnavailable }

// WWWAuthenticate is the value of the WWW-Authenticate header for a 401 (RFC 6750 section 3):
// without an error code when no token was sent, so a client that did not know authentication
// was needed is simply asked for it, and with error="invalid_token" otherwise. It is empty
// when the fault is the gateway's: a 503 challenges nobody.
func (e *Error) WWWAuthenticate() string {
	switch e.Reason {
	case ReasonKeysUnavailable:
		return ""
	case ReasonMissing:
		return fmt.Sprintf(`Bearer realm=%q`, Realm)
	}
	return fmt.Sprintf(`Bearer realm=%q, error="invalid_token", error_description=%q`, Realm, descriptions[e.Reason])
}

// Challenge gives the status and the WWW-Authenticate value for any error Verify or FromRequest
// returned. An error that is not an *Error (there should be none) is the gateway's fault: 503
// without a challenge.
func Challenge(err error) (status int, wwwAuthenticate string) {
	var e *Error
	if errors.As(err, &e) {
		return e.Status(), e.WWWAuthenticate()
	}
	return http.StatusServiceUnavailable, ""
}

// Package apperr is the gateway's one error type: a code the client can act on, a message safe
// to show, and the cause, kept for the log. The GraphQL error presenter turns it into
// extensions.code; anything else becomes INTERNAL after it is logged.
package apperr

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Code is what a client can act on; it goes in a GraphQL error's extensions.code.
type Code string

// The codes of DESIGN.md.
const (
	// BadUserInput: the request is wrong (the upstream's 400 or 422, or the gateway's own check).
	BadUserInput Code = "BAD_USER_INPUT"
	// NotFound: what the request names does not exist (a write's target; a lookup of one
	// missing object answers null instead).
	NotFound Code = "NOT_FOUND"
	// Conflict: the request clashes with what exists, such as a taken external_id.
	Conflict Code = "CONFLICT"
	// Forbidden: the gateway's credentials may not do this.
	Forbidden Code = "FORBIDDEN"
	// Unauthenticated: the caller's own credentials, vetted by the gateway, are missing or
	// refused. (DESIGN.md's list predates callers having credentials; this is the code
	// GraphQL clients conventionally expect for it.)
	Unauthenticated Code = "UNAUTHENTICATED"
	// UpstreamUnavailable: the Advisor service timed out, failed, or could not be reached.
	UpstreamUnavailable Code = "UPSTREAM_UNAVAILABLE"
	// Internal: anything else; the message shown is generic and the cause is logged.
	Internal Code = "INTERNAL"
	// OperationLimitExceeded: the operation is larger or costlier than a limit allows; the
	// message names the limit, its value and the setting that changes it. Nothing was done.
	OperationLimitExceeded Code = "OPERATION_LIMIT_EXCEEDED"

	// The codes of persisted operations, as Apollo's clients and routers name them.

	// PersistedQueryNotFound: no document is registered under the hash the request sent; send
	// the document with its hash to register it (automatic persisted queries).
	PersistedQueryNotFound Code = "PERSISTED_QUERY_NOT_FOUND"
	// PersistedQueryNotSupported: the gateway registers no documents; send them in full.
	PersistedQueryNotSupported Code = "PERSISTED_QUERY_NOT_SUPPORTED"
	// PersistedQueryNotInList: the id the request sent names no trusted document.
	PersistedQueryNotInList Code = "PERSISTED_QUERY_NOT_IN_LIST"
	// OperationNotInList: the gateway runs trusted documents only, and the document the request
	// sent is not one of them.
	OperationNotInList Code = "OPERATION_NOT_IN_LIST"

	// RateLimited: the caller has spent a budget of RATE_LIMIT, RATE_LIMIT_SUBSCRIPTIONS or
	// RATE_LIMIT_COST; extensions.retryAfter says when to try again. Nothing was done.
	RateLimited Code = "RATE_LIMITED"

	// The codes that refuse or end an event subscription (docs/events.md); the streaming
	// transports act on EventsUnavailable too.

	// EventsUnavailable: the event store cannot be reached; retry later.
	EventsUnavailable Code = "EVENTS_UNAVAILABLE"
	// SlowConsumer: the subscriber fell too far behind; resume with after.
	SlowConsumer Code = "SLOW_CONSUMER"
	// EventsExpired: the events after the requested id are no longer kept.
	EventsExpired Code = "EVENTS_EXPIRED"
)

// ErrReported ends a field whose reason a sibling field already reported, such as the rest of
// an operation whose client went away: the presenter drops it, so an operation ended halfway
// carries one error, not one for every field it did not resolve.
var ErrReported = errors.New("ended for a reason already reported")

// OutcomeUnknown is Error.Outcome for a write whose effect upstream is not known.
const OutcomeUnknown = "UNKNOWN"

// Error is an error with a code and a message safe to show to any client.
type Error struct {
	Code    Code
	Message string
	// Field is the input field at fault, when known, in the request's own terms.
	Field string
	// WID is, for a CONFLICT over a top account's external_id, the wid that already has it.
	WID string
	// Outcome is OutcomeUnknown when a write may or may not have been applied upstream (it
	// timed out after it was sent), so a client checks before it retries; empty otherwise.
	Outcome string
	// Upstream is what the Advisor service answered, when the error came from its answer;
	// Message is then the same in the schema's words.
	Upstream *Upstream
	// RetryAfter is, for RATE_LIMITED, how long until the request would be allowed; it goes in
	// extensions.retryAfter in whole seconds, for clients that see no headers (WebSockets).
	RetryAfter time.Duration
	// Err is the cause. It is for the log: it may carry addresses or upstream detail.
	Err error
}

// Upstream is the Advisor service's own answer to a refused request: its status and its message
// as it said it, scrubbed of credentials, signatures and the service's address.
type Upstream struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error with a code and a message safe to show.
func New(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Wrap returns an error with a code and a safe message whose cause is err.
func Wrap(code Code, message string, err error) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

// Input returns a BAD_USER_INPUT error about one field. field is the path of the value at fault
// in the field's arguments, as a client writes it and as gqlgen reports an argument it cannot
// coerce: the argument's name, then input fields and list indices (input.address.zip,
// input.entity.ownership[0].owners, wid). The message names the value by the same path.
func Input(field, message string) *Error {
	return &Error{Code: BadUserInput, Field: field, Message: message}
}

// InputAt is Input for a message that names the value by its path within an input object
// (short: firstName must not be blank): the message is given the whole path instead
// (input.individual.firstName must not be blank), or, when it does not start with short, the
// path is put before it (input.tags: Invalid tags: x).
func InputAt(field, short, message string) *Error {
	switch rest, ok := strings.CutPrefix(message, short+" "); {
	case short != "" && ok:
		message = field + " " + rest
	case !strings.HasPrefix(message, field+" "):
		message = field + ": " + message
	}
	return Input(field, message)
}

// As returns the *Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// CodeOf returns the code of err: its *Error's, or INTERNAL.
func CodeOf(err error) Code {
	if e, ok := As(err); ok {
		return e.Code
	}
	return Internal
}

// IsNotFound reports whether err says that what was asked for does not exist.
func IsNotFound(err error) bool { return CodeOf(err) == NotFound }

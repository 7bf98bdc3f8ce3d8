package apperr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// internalMessage is all a client learns of an error the gateway did not expect.
const internalMessage = "Internal error"

// PresenterOption configures Presenter.
type PresenterOption func(*presenter)

// WithSchema lets the presenter name what a GraphQL validation error is about: the valid values
// of an enum, the members of a @oneOf input, the type of a missing input field. It tells what
// introspection would, so give it only where introspection is on.
func WithSchema(schema *ast.Schema) PresenterOption {
	return func(p *presenter) { p.schema = schema }
}

type presenter struct {
	log    *slog.Logger
	schema *ast.Schema // nil: messages do not list what the schema holds
}

// Presenter returns gqlgen's error presenter: every error leaves with extensions.code and a
// message safe to show. An *Error shows its own message (and field, wid, outcome and the
// upstream's own words when it has them); gqlgen's parse and validation errors keep their code,
// worded to name the field or value at fault (see validation.go); anything else is logged,
// redacted, and shown as INTERNAL.
func Presenter(log *slog.Logger, opts ...PresenterOption) graphql.ErrorPresenterFunc {
	p := &presenter{log: log}
	for _, o := range opts {
		o(p)
	}
	return p.present
}

func (p *presenter) present(ctx context.Context, err error) *gqlerror.Error {
	if errors.Is(err, ErrReported) {
		return nil // gqlgen adds no error for a nil
	}
	var wrapper *gqlerror.Error
	errors.As(err, &wrapper) // gqlgen wraps a resolver's error to give it a path and location
	app, ok := As(err)
	if arg := argumentPath(ctx, wrapper); arg != nil && (!ok || app.Code == BadUserInput) {
		return coercionError(wrapper, arg, app)
	}
	if !ok && wrapper != nil && wrapper.Err == nil {
		if wrapper.Extensions["code"] == nil {
			// gqlgen's own execution errors ("must not be null") are the gateway's bugs.
			p.log.ErrorContext(ctx, "graphql error without a code", "path", wrapper.Path.String(), "error", Redact(wrapper.Message))
			wrapper.Message = internalMessage
			wrapper.Extensions = map[string]any{"code": Internal}
			return wrapper
		}
		wrapper.Message = p.reword(ctx, wrapper)
		return wrapper
	}
	out := &gqlerror.Error{Path: graphql.GetPath(ctx)}
	if wrapper != nil {
		out.Path, out.Locations = wrapper.Path, wrapper.Locations
	}
	if !ok {
		p.log.ErrorContext(ctx, "unexpected error", "path", out.Path.String(), "error", Redact(err.Error()))
		app = New(Internal, internalMessage)
	} else if app.Err != nil && (app.Code == Internal || app.Code == UpstreamUnavailable) {
		p.log.WarnContext(ctx, "request failed", "code", app.Code, "path", out.Path.String(), "error", Redact(app.Error()))
	}
	out.Message = app.Message
	out.Extensions = map[string]any{"code": app.Code}
	if app.Field != "" {
		out.Extensions["field"] = app.Field
	}
	if app.WID != "" {
		out.Extensions["wid"] = app.WID
	}
	if app.Outcome != "" {
		out.Extensions["outcome"] = app.Outcome
	}
	if u := app.Upstream; u != nil {
		out.Extensions["upstream"] = map[string]any{"status": u.Status, "message": Redact(u.Message)}
	}
	if app.RetryAfter > 0 {
		out.Extensions["retryAfter"] = RetrySeconds(app.RetryAfter)
	}
	return out
}

// Recover returns gqlgen's recover function: a panic in a resolver is logged with its stack and
// becomes an INTERNAL error for that field, not a crashed request.
func Recover(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "panic in resolver", "path", graphql.GetPath(ctx).String(),
			"panic", Redact(fmt.Sprint(p)), "stack", Redact(string(debug.Stack())))
		return New(Internal, internalMessage)
	}
}

var (
	// Presigned addresses carry their signature in the query.
	urlQuery = regexp.MustCompile(`(https?://[^\s"'?#]+)\?[^\s"'#]*`)
	// Credentials in header form, wherever they were printed.
	credential = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	// Credentials embedded in an address: scheme://user:password@host.
	userinfo = regexp.MustCompile(`(https?://)[^\s/@"']+@`)
)

// Redact removes from text what must never reach a log or a client: the query of every
// address (a presigned address's signature), credentials in an address, and bearer or basic
// credentials.
func Redact(text string) string {
	text = urlQuery.ReplaceAllString(text, "$1?REDACTED")
	text = userinfo.ReplaceAllString(text, "${1}REDACTED@")
	return credential.ReplaceAllString(text, "$1 REDACTED")
}

// RetrySeconds is d as the whole seconds of a Retry-After: rounded up, so a client that waits
// them is not refused again, and at least 1.
func RetrySeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

package apperr_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
)

func TestRedactRemovesSecrets(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`PUT "http://up.example/uploads/w/v?expires=1&nonce=2&signature=abc": EOF`,
			`PUT "http://up.example/uploads/w/v?REDACTED": EOF`},
		{"Authorization: Bearer s3cr3t.tok-en", "Authorization: Bearer REDACTED"},
		{"basic dXNlcjpwYXNz header", "basic REDACTED header"},
		{"get https://ann:pw@advisor.example/v2/x", "get https://REDACTED@advisor.example/v2/x"},
		{"no secrets at http://advisor.example/v2/top-accounts/", "no secrets at http://advisor.example/v2/top-accounts/"},
	} {
		if got := apperr.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestPresenterShowsCodesAndHidesCauses(t *testing.T) {
	var logs bytes.Buffer
	present := apperr.Presenter(slog.New(slog.NewTextHandler(&logs, nil)))
	ctx := graphql.WithPathContext(context.Background(), graphql.NewPathWithField("topAccount"))
	secretCause := errors.New(`Get "http://advisor/x?signature=abc": dial tcp: refused`)
	for _, tc := range []struct {
		name       string
		err        error
		wantCode   apperr.Code
		wantMsg    string
		wantExt    map[string]any
		wantLogged bool
	}{
		{"an app error keeps its message", apperr.New(apperr.NotFound, "Top account not found"), apperr.NotFound, "Top account not found", nil, false},
		{"the upstream's own words are kept beside the message", &apperr.Error{Code: apperr.BadUserInput, Field: "input.trust.trustCreationDate",
			Message: "trustCreationDate must be a date (YYYY-MM-DD)", Upstream: &apperr.Upstream{Status: 400, Message: "trust_creation_date must be a valid date in YYYY-MM-DD format"}},
			apperr.BadUserInput, "trustCreationDate must be a date (YYYY-MM-DD)", map[string]any{"field": "input.trust.trustCreationDate",
				"upstream": map[string]any{"status": 400, "message": "trust_creation_date must be a valid date in YYYY-MM-DD format"}}, false},
		{"a conflict carries the wid", &apperr.Error{Code: apperr.Conflict, Message: "taken", WID: "w1"}, apperr.Conflict, "taken", map[string]any{"wid": "w1"}, false},
		{"an input error carries the field", apperr.Input("legalName", "legalName is required"), apperr.BadUserInput, "legalName is required", map[string]any{"field": "legalName"}, false},
		{"an unknown error becomes INTERNAL", secretCause, apperr.Internal, "Internal error", nil, true},
		{"a wrapped app error is found", fmt.Errorf("load: %w", apperr.New(apperr.Forbidden, "Access Denied")), apperr.Forbidden, "Access Denied", nil, false},
		{"the cause of an outage is logged, not shown", apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service is unavailable", secretCause),
			apperr.UpstreamUnavailable, "The Advisor service is unavailable", nil, true},
		{"gqlgen's error without a code is INTERNAL", &gqlerror.Error{Message: "must not be null"}, apperr.Internal, "Internal error", nil, true},
		{"a write of unknown outcome says so", &apperr.Error{Code: apperr.UpstreamUnavailable, Message: "The Advisor service did not answer in time",
			Outcome: apperr.OutcomeUnknown, Err: secretCause}, apperr.UpstreamUnavailable, "The Advisor service did not answer in time",
			map[string]any{"outcome": apperr.OutcomeUnknown}, true},
		{"a limit names itself", apperr.New(apperr.OperationLimitExceeded, "This operation needs more than 50 requests to the Advisor service (UPSTREAM_REQUEST_BUDGET)"),
			apperr.OperationLimitExceeded, "This operation needs more than 50 requests to the Advisor service (UPSTREAM_REQUEST_BUDGET)", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs.Reset()
			got := present(ctx, tc.err)
			if got.Extensions["code"] != tc.wantCode || got.Message != tc.wantMsg {
				t.Errorf("got code %v message %q, want %v %q", got.Extensions["code"], got.Message, tc.wantCode, tc.wantMsg)
			}
			for _, k := range []string{"field", "wid", "outcome", "upstream"} {
				want, wanted := tc.wantExt[k]
				if v, ok := got.Extensions[k]; ok != wanted || !reflect.DeepEqual(v, want) {
					t.Errorf("got extensions[%s] = %v (present %v), want %v (present %v)", k, v, ok, want, wanted)
				}
			}
			if strings.Contains(got.Message, "signature") || strings.Contains(logs.String(), "signature=abc") {
				t.Errorf("a secret leaked: message %q, log %q", got.Message, logs.String())
			}
			if logged := logs.Len() > 0; logged != tc.wantLogged {
				t.Errorf("logged %v, want %v: %s", logged, tc.wantLogged, logs.String())
			}
		})
	}
}

func TestPresenterKeepsGqlgensCodedErrors(t *testing.T) {
	present := apperr.Presenter(slog.New(slog.DiscardHandler))
	in := &gqlerror.Error{Message: "Cannot query field", Path: ast.Path{ast.PathName("x")},
		Extensions: map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}}
	if got := present(context.Background(), in); got.Message != in.Message || got.Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
		t.Errorf("got %+v, want the validation error unchanged", got)
	}
}

// A field ended for a reason a sibling already reported adds no error of its own.
func TestPresenterDropsErrorsAlreadyReported(t *testing.T) {
	present := apperr.Presenter(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if got := present(context.Background(), fmt.Errorf("field x: %w", apperr.ErrReported)); got != nil {
		t.Errorf("got %v, want no error", got)
	}
}

// docs/errors.md: "its message names the value by the same path, first"; a message that does
// not start with it "gets it put before it".
func TestInputAtNamesTheFieldByItsWholePath(t *testing.T) {
	for _, tc := range []struct {
		name, field, short, message, want string
	}{
		{"the path within the input becomes the whole path", "input.individual.firstName", "firstName", "firstName must not be blank",
			"input.individual.firstName must not be blank"},
		{"an index stays", "input.entity.ownership[0].owners", "ownership[0].owners", "ownership[0].owners must name at least one contact",
			"input.entity.ownership[0].owners must name at least one contact"},
		{"a message already naming the whole path is kept", "input.firstName", "firstName", "input.firstName must not be blank",
			"input.firstName must not be blank"},
		{"the upstream's own words get the path before them", "input.tags", "tags", "Invalid tags: x", "input.tags: Invalid tags: x"},
		{"a rule of the whole input names the input", "input", "", "At least one of name or externalId must be provided",
			"input: At least one of name or externalId must be provided"},
		{"a word that only starts like the field is not it", "input.name", "name", "names must be unique", "input.name: names must be unique"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := apperr.InputAt(tc.field, tc.short, tc.message)
			if e.Code != apperr.BadUserInput || e.Field != tc.field || e.Message != tc.want {
				t.Errorf("got %s %q %q, want BAD_USER_INPUT %q %q", e.Code, e.Field, e.Message, tc.field, tc.want)
			}
		})
	}
}

// docs/errors.md: a value that cannot be coerced while the operation runs "is BAD_USER_INPUT
// too, with the same extensions.field, worded as GraphQL validation words a variable's value";
// gqlgen reports it on the field's path followed by the argument's.
func TestPresenterNamesAnArgumentItCouldNotCoerce(t *testing.T) {
	present := apperr.Presenter(slog.New(slog.DiscardHandler))
	fc := &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Alias: "addClient"}}}
	ctx := graphql.WithFieldContext(context.Background(), fc)
	at := func(err error, path ...any) *gqlerror.Error {
		p := ast.Path{ast.PathName("addClient")}
		for _, s := range path {
			switch s := s.(type) {
			case string:
				p = append(p, ast.PathName(s))
			case int:
				p = append(p, ast.PathIndex(s))
			}
		}
		return gqlerror.WrapPath(p, err)
	}
	for _, tc := range []struct {
		name                 string
		err                  error
		code, field, message string
	}{
		{"an enum value in the wrong case", at(apperr.BadEnumValue("MaritalStatus", "married", []string{"MARRIED"}), "input", "maritalStatus"),
			"BAD_USER_INPUT", "input.maritalStatus",
			`Argument "input" got an invalid value at "input.maritalStatus"; Value "married" does not exist in "MaritalStatus" enum. Did you mean the enum value "MARRIED"?`},
		{"a DateTime that is not one, gqlgen's own error", at(errors.New("time should be RFC3339Nano formatted string"), "input", "subscriptionStartDate"),
			"BAD_USER_INPUT", "input.subscriptionStartDate",
			`Argument "input" got an invalid value at "input.subscriptionStartDate"; DateTime must be an ISO 8601 date-time such as 2026-11-22T09:30:00Z.`},
		{"a value in a list", at(errors.New("int overflow"), "input", "ownership", 1, "percentage"),
			"BAD_USER_INPUT", "input.ownership[1].percentage", `Argument "input" got an invalid value at "input.ownership[1].percentage"; int overflow`},
		{"a resolver's error is on the field's own path", at(errors.New("boom")), "INTERNAL", "", "Internal error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := present(ctx, tc.err)
			field, _ := got.Extensions["field"].(string)
			if got.Extensions["code"] != apperr.Code(tc.code) || field != tc.field || got.Message != tc.message {
				t.Errorf("got %v %q %q, want %s %q %q", got.Extensions["code"], field, got.Message, tc.code, tc.field, tc.message)
			}
		})
	}
}

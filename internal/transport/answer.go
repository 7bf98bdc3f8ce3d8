package transport

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
)

// WriteError answers with a GraphQL-shaped error that carries code, like every error of the
// gateway, whichever layer refuses the request.
func WriteError(w http.ResponseWriter, status int, code apperr.Code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	writeJSON(w, map[string]any{"errors": []map[string]any{{
		"message":    message,
		"extensions": map[string]any{"code": code},
	}}})
}

// writeError answers a request the client got wrong.
func writeError(w http.ResponseWriter, status int, message string) {
	WriteError(w, status, apperr.BadUserInput, message)
}

func writeJSON(w http.ResponseWriter, v any) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to tell it
}

// Media types of GraphQL over HTTP.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// requestError answers a request that was not executed: errors and no "data" entry.
func requestError(w http.ResponseWriter, status int, errs gqlerror.List) {
	w.WriteHeader(status)
	writeJSON(w, notExecuted(errs))
}

// withCodes gives BAD_USER_INPUT to the errors gqlgen gave no code: the request itself is
// malformed.
func withCodes(errs gqlerror.List) gqlerror.List {
	for _, e := range errs {
		if e.Extensions == nil {
			e.Extensions = map[string]any{}
		}
		if e.Extensions["code"] == nil {
			e.Extensions["code"] = apperr.BadUserInput
		}
	}
	return errs
}

// hasCode reports whether one of errs carries code in extensions.code.
func hasCode(errs gqlerror.List, code apperr.Code) bool {
	for _, e := range errs {
		switch c := e.Extensions["code"].(type) {
		case apperr.Code:
			if c == code {
				return true
			}
		case string:
			if c == string(code) {
				return true
			}
		}
	}
	return false
}

// notExecuted is the response of an operation that did not run: errors, each with a code, and
// no "data" entry, as GraphQL over HTTP answers a request that was not executed.
func notExecuted(errs gqlerror.List) any {
	return struct {
		Errors gqlerror.List `json:"errors"`
	}{withCodes(errs)}
}

// StatusError is an error that says how HTTP answers it, such as a rate limit's refusal (429
// with Retry-After).
type StatusError interface {
	Status() int
	Header() http.Header
}

// statusOf finds, among the errors that kept an operation from running, one that says how
// HTTP answers it.
func statusOf(errs gqlerror.List) (StatusError, bool) {
	for _, e := range errs {
		var se StatusError
		if errors.As(e, &se) {
			return se, true
		}
	}
	return nil, false
}

// answerStatus answers a request refused with se: its status and headers, and the errors.
func answerStatus(w http.ResponseWriter, se StatusError, errs gqlerror.List) {
	for k, v := range se.Header() {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", mediaJSON+"; charset=utf-8")
	requestError(w, se.Status(), errs)
}

// refuse answers a request refused before it became an operation: status and err's message.
// It is counted against its caller's rate limit first, as every operation is before it is
// parsed, so that a malformed or oversized request costs its sender too; a caller past its
// budget is told that instead (429 with Retry-After), so that it backs off.
func refuse(w http.ResponseWriter, r *http.Request, count func(context.Context) error, status int, err error) {
	if pastBudget(w, r, count) {
		return
	}
	requestError(w, status, gqlerror.List{gqlerror.Errorf("%s", err.Error())})
}

// pastBudget counts a request refused before it became an operation against its caller's
// rate limit, as refuse does, and reports whether the caller is past its budget,
// having then answered so (429 with Retry-After) in place of the refusal, so that it backs off.
// The refusal is the caller's to answer otherwise.
func pastBudget(w http.ResponseWriter, r *http.Request, count func(context.Context) error) bool {
	if count == nil {
		return false
	}
	err := count(r.Context())
	if err == nil {
		return false
	}
	var gerr *gqlerror.Error
	if !errors.As(err, &gerr) {
		gerr = gqlerror.WrapPath(nil, err)
	}
	se, ok := statusOf(gqlerror.List{gerr})
	if !ok {
		return false // the rate limit could not say: the refusal stands, as for an operation
	}
	answerStatus(w, se, gqlerror.List{gerr})
	return true
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the values marshalled here are built by this package
	}
	return b
}

package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
)

// Media types of GraphQL over HTTP.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// jsonTransport serves GraphQL over HTTP as its specification says: POST with a JSON body and
// GET with the parameters in the query string (queries only), answered as application/json or
// application/graphql-response+json as the client accepts. gqlgen's own GET and POST answer
// 422 where the specification asks for 200, always write "data", and echo a body they cannot
// decode back into the error.
type jsonTransport struct{}

var _ graphql.Transport = jsonTransport{}

func (jsonTransport) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return false
	}
	if r.Method == http.MethodGet {
		return true
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return r.Method == http.MethodPost && err == nil && mt == mediaJSON
}

func (t jsonTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	media := responseMedia(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", media+"; charset=utf-8")
	start := graphql.Now()
	params, err := readParams(r)
	if err != nil {
		requestError(w, http.StatusBadRequest, gqlerror.List{gqlerror.Errorf("%s", err.Error())})
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	executeOnce(w, r, exec, params)
}

// responseMedia picks the response's media type from the Accept header: the first of the two
// GraphQL types it names, application/json for */* or no Accept at all.
func responseMedia(accept string) string {
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		case mediaJSON, "application/*", "*/*":
			return mediaJSON
		}
	}
	return mediaJSON
}

// readParams reads the request's GraphQL parameters, from the body of a POST or the query
// string of a GET, and checks their types.
func readParams(r *http.Request) (*graphql.RawParams, error) {
	var raw struct {
		Query         *string        `json:"query"`
		OperationName *string        `json:"operationName"`
		Variables     map[string]any `json:"variables"`
		Extensions    map[string]any `json:"extensions"`
	}
	if r.Method == http.MethodGet {
		q := r.URL.Query()
		if q.Has("query") {
			s := q.Get("query")
			raw.Query = &s
		}
		if q.Has("operationName") {
			s := q.Get("operationName")
			raw.OperationName = &s
		}
		for name, dst := range map[string]*map[string]any{"variables": &raw.Variables, "extensions": &raw.Extensions} {
			if v := q.Get(name); v != "" {
				if err := decodeJSON(strings.NewReader(v), dst); err != nil {
					return nil, errors.New("the " + name + " parameter must be a JSON object")
				}
			}
		}
	} else {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, errors.New("the request body could not be read")
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return nil, errors.New("the request body is empty: send a JSON object with a query")
		}
		if err := decodeJSON(bytes.NewReader(body), &raw); err != nil {
			return nil, errors.New("the request body must be a JSON object whose query and operationName are strings and whose variables and extensions are objects")
		}
	}
	if raw.Query == nil || strings.TrimSpace(*raw.Query) == "" {
		return nil, errors.New("the request has no query")
	}
	p := &graphql.RawParams{Query: *raw.Query, Variables: raw.Variables, Extensions: raw.Extensions}
	if raw.OperationName != nil {
		p.OperationName = *raw.OperationName
	}
	return p, nil
}

func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// requestError answers a request that was not executed: errors and no "data" entry. Errors
// gqlgen gave no code (the request itself is malformed) get BAD_USER_INPUT.
func requestError(w http.ResponseWriter, status int, errs gqlerror.List) {
	for _, e := range errs {
		if e.Extensions == nil {
			e.Extensions = map[string]any{}
		}
		if e.Extensions["code"] == nil {
			e.Extensions["code"] = apperr.BadUserInput
		}
	}
	w.WriteHeader(status)
	writeJSON(w, struct {
		Errors gqlerror.List `json:"errors"`
	}{errs})
}

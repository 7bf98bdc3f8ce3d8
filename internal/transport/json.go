package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

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
// decode back into the error. A POST whose body is an array is a batch of operations, served
// when batchLimit allows.
type jsonTransport struct {
	// batchLimit is how many operations a batch may hold; 0 refuses batches.
	batchLimit int
	// persistedMaxAge is how long a client may cache the answer to a query it named by id
	// over GET; 0 caches nothing.
	persistedMaxAge time.Duration
	// maxBytes bounds a body; 0 leaves it to the server in front.
	maxBytes int64
	// bounds bound what a body holds, checked before it is decoded.
	bounds BodyBounds
	// countRefused counts a request refused before it became an operation against its
	// caller's rate limit; nil counts none.
	countRefused func(context.Context) error
}

// newJSONTransport is the JSON transport cfg describes.
func newJSONTransport(cfg Config) jsonTransport {
	return jsonTransport{
		batchLimit:      cfg.BatchLimit,
		persistedMaxAge: cfg.PersistedMaxAge,
		maxBytes:        cfg.MaxRequestBytes,
		bounds:          cfg.BodyBounds.withDefaults(),
		countRefused:    cfg.CountRefused,
	}
}

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
	var params *graphql.RawParams
	var err error
	if r.Method == http.MethodPost {
		body, rerr := readBody(r, t.maxBytes)
		if rerr != nil {
			t.refuse(w, r, bodyStatus(rerr), rerr)
			return
		}
		if body = bytes.TrimSpace(body); len(body) > 0 && body[0] == '[' {
			t.batch(w, r, exec, body)
			return
		}
		params, err = bodyParams(body, t.bounds)
	} else {
		params, err = queryParams(r, t.bounds)
	}
	if err != nil {
		t.refuse(w, r, http.StatusBadRequest, err)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	executeOnce(w, r, exec, params, t.persistedMaxAge)
}

// refuse answers a request refused before it became an operation: status and err's message.
// It is counted against its caller's rate limit first, as every operation is before it is
// parsed, so that a malformed or oversized request costs its sender too; a caller past its
// budget is told that instead (429 with Retry-After), so that it backs off.
func (t jsonTransport) refuse(w http.ResponseWriter, r *http.Request, status int, err error) {
	if t.countRefused != nil {
		if cerr := t.countRefused(r.Context()); cerr != nil {
			var gerr *gqlerror.Error
			if !errors.As(cerr, &gerr) {
				gerr = gqlerror.WrapPath(nil, cerr)
			}
			if se, ok := statusOf(gqlerror.List{gerr}); ok {
				answerStatus(w, se, gqlerror.List{gerr})
				return
			}
		}
	}
	requestError(w, status, gqlerror.List{gqlerror.Errorf("%s", err.Error())})
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

// rawParams are a request's GraphQL parameters as they arrive, before their types are checked.
type rawParams struct {
	Query         *string        `json:"query"`
	OperationName *string        `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
	// DocumentID names a persisted document instead of sending it (GraphQL over HTTP's
	// persisted documents); it is passed on as extensions.persistedQuery.
	DocumentID *string `json:"documentId"`
}

// queryParams reads a GET's parameters from its query string.
func queryParams(r *http.Request, b BodyBounds) (*graphql.RawParams, error) {
	var raw rawParams
	q := r.URL.Query()
	for name, dst := range map[string]**string{"query": &raw.Query, "operationName": &raw.OperationName, "documentId": &raw.DocumentID} {
		if q.Has(name) {
			s := q.Get(name)
			*dst = &s
		}
	}
	for name, dst := range map[string]*map[string]any{"variables": &raw.Variables, "extensions": &raw.Extensions} {
		if v := q.Get(name); v != "" {
			if err := scanParam(name, []byte(v), b); err != nil && !errors.Is(err, errNotJSON) {
				return nil, err
			}
			if err := decodeJSON(strings.NewReader(v), dst); err != nil {
				return nil, errors.New("the " + name + " parameter must be a JSON object")
			}
		}
	}
	return raw.params()
}

// errBadBody is a body that is not one operation as GraphQL over HTTP sends it.
var errBadBody = errors.New("the request body must be a JSON object whose query, operationName and documentId are strings and whose variables and extensions are objects")

// bodyParams reads a POST's parameters from its JSON body, once its bytes show it holds no
// more than b allows.
func bodyParams(body []byte, b BodyBounds) (*graphql.RawParams, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errors.New("the request body is empty: send a JSON object with a query")
	}
	if err := scanOperation(body, b); errors.Is(err, errNotJSON) {
		return nil, errBadBody
	} else if err != nil {
		return nil, err
	}
	var raw rawParams
	if err := decodeJSON(bytes.NewReader(body), &raw); err != nil {
		return nil, errBadBody
	}
	return raw.params()
}

// params checks what arrived: a query, or the id of a persisted document in its place.
func (raw rawParams) params() (*graphql.RawParams, error) {
	p := &graphql.RawParams{Variables: raw.Variables, Extensions: raw.Extensions}
	if raw.Query != nil {
		p.Query = *raw.Query
	}
	if raw.OperationName != nil {
		p.OperationName = *raw.OperationName
	}
	if err := namePersisted(p, raw.DocumentID); err != nil {
		return nil, err
	}
	return p, nil
}

// namePersisted passes a request's documentId on as extensions.persistedQuery, where the
// persisted operations extension reads ids from either protocol, and checks that the request
// has a query or names one.
func namePersisted(p *graphql.RawParams, documentID *string) error {
	if documentID != nil {
		switch {
		case strings.TrimSpace(p.Query) != "":
			return errors.New("the request has both a query and a documentId: send one of them")
		case p.Extensions["persistedQuery"] != nil:
			return errors.New("the request has both a documentId and extensions.persistedQuery: send one of them")
		}
		if p.Extensions == nil {
			p.Extensions = map[string]any{}
		}
		p.Extensions["persistedQuery"] = map[string]any{"version": 1, "sha256Hash": *documentID}
		return nil
	}
	if strings.TrimSpace(p.Query) == "" && p.Extensions["persistedQuery"] == nil {
		return errors.New("the request has no query")
	}
	return nil
}

// persistedID reports whether a request named its document by id.
func persistedID(p *graphql.RawParams) bool {
	return p.Extensions["persistedQuery"] != nil
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

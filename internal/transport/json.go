package transport

import (
	"bytes"
	"context"
	"mime"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
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
			refuse(w, r, t.countRefused, bodyStatus(rerr), rerr)
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
		refuse(w, r, t.countRefused, http.StatusBadRequest, err)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	executeOnce(w, r, exec, params, t.persistedMaxAge)
}

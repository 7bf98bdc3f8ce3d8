package transport

import (
	"bytes"
	"mime"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
)

// jsonTransport serves GraphQL over HTTP as its specification says: POST with a JSON body and
// GET with the parameters in the query string (queries only), answered as application/json or
// application/graphql-response+json as the client accepts. gqlgen's own GET and POST answer
// 422 where the specification asks for 200, always write "data", and echo a body they cannot
// decode back into the error. A POST whose body is an array is a batch of operations, served
// when cfg.BatchLimit allows.
type jsonTransport struct{ cfg *Config }

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
		body, rerr := readBody(r, t.cfg.MaxRequestBytes)
		if rerr != nil {
			refuse(w, r, t.cfg.CountRefused, bodyStatus(rerr), rerr)
			return
		}
		if body = bytes.TrimSpace(body); len(body) > 0 && body[0] == '[' {
			t.batch(w, r, exec, body)
			return
		}
		params, err = bodyParams(body, t.cfg.BodyBounds)
	} else {
		params, err = queryParams(r, t.cfg.BodyBounds)
	}
	if err != nil {
		refuse(w, r, t.cfg.CountRefused, http.StatusBadRequest, err)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	executeOnce(w, r, exec, params, t.cfg.PersistedMaxAge, t.cfg)
}

package transport

import (
	"bytes"
	"errors"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
)

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
	if err := decodeParams(body, &raw); err != nil {
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

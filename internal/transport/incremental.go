package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
)

// An operation with @defer answers in parts: the initial response, then one for each deferred
// fragment as it resolves. A client that accepts multipart/mixed gets them as they come,
// in the incremental delivery format Apollo Client reads (deferSpec=20220824: each later part
// is {"incremental": [{"data", "path", "label"}], "hasNext"}); any other client gets one
// response with the parts merged into it, as if nothing had been deferred.

// multipartBoundary is the boundary of incremental responses; Apollo Client's default.
const multipartBoundary = "-"

// acceptsMultipart reports whether the client accepts incremental delivery.
func acceptsMultipart(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "multipart/mixed" {
			return true
		}
	}
	return false
}

// deferred reports whether resp is the first of several.
func deferred(resp *graphql.Response) bool {
	return resp != nil && resp.HasNext != nil && *resp.HasNext
}

// incrementalItem is one deferred fragment's result within a later part.
type incrementalItem struct {
	Data       json.RawMessage `json:"data"`
	Path       any             `json:"path"`
	Label      string          `json:"label,omitempty"`
	Errors     gqlerror.List   `json:"errors,omitempty"`
	Extensions map[string]any  `json:"extensions,omitempty"`
}

// writeIncremental writes first and the responses that follow it as multipart/mixed, each part
// flushed as soon as it is written, so the client renders what has come while the rest resolves.
func writeIncremental(ctx context.Context, w http.ResponseWriter, first *graphql.Response, next graphql.ResponseHandler) {
	w.Header().Set("Content-Type", `multipart/mixed; boundary="`+multipartBoundary+`"; deferSpec=20220824`)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	var buf bytes.Buffer
	buf.WriteString("--" + multipartBoundary + "\r\n")
	part := func(v any, hasNext bool) bool {
		buf.WriteString("Content-Type: application/json; charset=utf-8\r\n\r\n")
		if b, err := json.Marshal(v); err == nil {
			buf.Write(b)
		} else {
			buf.WriteString(`{"errors":[{"message":"the response could not be encoded","extensions":{"code":"` + string(apperr.Internal) + `"}}],"hasNext":false}`)
			hasNext = false
		}
		buf.WriteString("\r\n--" + multipartBoundary)
		if !hasNext {
			buf.WriteString("--")
		}
		buf.WriteString("\r\n")
		_, err := w.Write(buf.Bytes())
		buf.Reset()
		if err == nil {
			err = rc.Flush()
		}
		return err == nil && hasNext
	}
	if !part(first, true) {
		return
	}
	for {
		resp := next(ctx)
		if credentialsExpired(ctx) {
			// The caller's token ran out before the deferred parts came (what came meanwhile
			// was cut short by it): the last part says so, and the client asks again with a
			// fresh one.
			part(map[string]any{"errors": gqlerror.List{expiredError()}, "hasNext": false}, false)
			return
		}
		if resp == nil {
			// The executor ended without saying the last part was last: say it.
			part(map[string]any{"hasNext": false}, false)
			return
		}
		hasNext := deferred(resp)
		item := incrementalItem{Data: resp.Data, Path: resp.Path, Label: resp.Label, Errors: resp.Errors, Extensions: resp.Extensions}
		if !part(struct {
			Incremental []incrementalItem `json:"incremental"`
			HasNext     bool              `json:"hasNext"`
		}{[]incrementalItem{item}, hasNext}, hasNext) {
			return
		}
	}
}

// mergeDeferred waits for the parts that follow first and merges each into it at its path,
// for a client that asked for one response. The executor wrote each deferred field as null in
// its place (gqlrun.WithDeferredPlaceholders), so replacing it there keeps the fields in the
// order the operation selected them.
func mergeDeferred(ctx context.Context, first *graphql.Response, next graphql.ResponseHandler) *graphql.Response {
	data, err := decodeOrdered(first.Data)
	if err != nil {
		data = nil
	}
	merged := &graphql.Response{Errors: first.Errors, Extensions: first.Extensions}
	for {
		resp := next(ctx)
		if resp == nil {
			break
		}
		merged.Errors = append(merged.Errors, resp.Errors...)
		part, err := decodeOrdered(resp.Data)
		if target, ok := at(data, resp.Path).(*object); ok && err == nil {
			if p, ok := part.(*object); ok {
				for i, k := range p.keys {
					target.set(k, p.values[i])
				}
			}
		}
		if !deferred(resp) {
			break
		}
	}
	if credentialsExpired(ctx) {
		merged.Errors = append(merged.Errors, expiredError())
	}
	var buf bytes.Buffer
	encodeOrdered(&buf, data)
	merged.Data = buf.Bytes()
	return merged
}

// object is a JSON object that keeps its members' order.
type object struct {
	keys   []string
	values []any
}

func (o *object) set(k string, v any) {
	for i, key := range o.keys {
		if key == k {
			o.values[i] = v
			return
		}
	}
	o.keys = append(o.keys, k)
	o.values = append(o.values, v)
}

// decodeOrdered decodes JSON into *object, []any and json.RawMessage scalars.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return decodeValue(dec)
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := &object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o.keys = append(o.keys, k.(string))
			o.values = append(o.values, v)
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		l := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.Token()
		return l, err
	}
	return tok, nil
}

func encodeOrdered(buf *bytes.Buffer, v any) {
	switch v := v.(type) {
	case *object:
		buf.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeOrdered(buf, k)
			buf.WriteByte(':')
			encodeOrdered(buf, v.values[i])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeOrdered(buf, x)
		}
		buf.WriteByte(']')
	default:
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte("null")
		}
		buf.Write(b)
	}
}

// at is the value at path within v: object keys and list indexes, as GraphQL paths write them.
func at(v any, path ast.Path) any {
	for _, step := range path {
		switch s := step.(type) {
		case ast.PathName:
			o, ok := v.(*object)
			if !ok {
				return nil
			}
			v = nil
			for i, k := range o.keys {
				if k == string(s) {
					v = o.values[i]
				}
			}
		case ast.PathIndex:
			l, ok := v.([]any)
			if !ok || int(s) < 0 || int(s) >= len(l) {
				return nil
			}
			v = l[int(s)]
		default:
			return nil
		}
	}
	return v
}

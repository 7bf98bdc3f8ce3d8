package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// apiError is an error response. Every body is {"message": ...}; the top-account 409 also
// carries the wid of the top account that already has the external_id.
type apiError struct {
	status int
	advisorspec.ErrorBody
}

func errorf(status int, message string) *apiError {
	return &apiError{status: status, ErrorBody: advisorspec.ErrorBody{Message: message}}
}

// writeJSON answers v as JSON with its Content-Length, as a service does for a body it has
// whole, so a client can read it into one buffer of that size.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // upload addresses carry '&', which should read as itself
	if err := enc.Encode(v); err != nil {
		http.Error(w, "encode the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // the client went away; nothing to tell it
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, errorf(status, message))
}

// respond writes v with 200 (201 when the operation marked it created), or err.
func respond(w http.ResponseWriter, v any, err *apiError) {
	if err != nil {
		writeJSON(w, err.status, err)
		return
	}
	if c, ok := v.(created); ok {
		writeJSON(w, http.StatusCreated, c.v)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// readJSON reads a request body that the specification says is JSON. A body with another
// declared Content-Type is refused; one without a Content-Type is read as JSON.
func readJSON(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return nil, errorf(http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, errorf(http.StatusRequestEntityTooLarge, "Request body too large")
	case err != nil:
		return nil, errorf(http.StatusBadRequest, "Request body could not be read")
	}
	return body, nil
}

// statusRecorder remembers the status a handler wrote, for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

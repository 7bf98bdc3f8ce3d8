package transport

import (
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
)

// unsupported answers what no other transport takes, with a status and a message that say
// what to send instead, in the shape of every other error of the gateway. gqlgen's own answer
// is a bare 400 "transport not supported" without a code. Each refusal counts against its
// caller's rate limit, so that a flood of requests no transport serves costs its sender too.
type unsupported struct{ cfg *Config }

var _ graphql.Transport = unsupported{}

func (unsupported) Supports(*http.Request) bool { return true }

func (t unsupported) Do(w http.ResponseWriter, r *http.Request, _ graphql.GraphExecutor) {
	if pastBudget(w, r, t.cfg.CountRefused) {
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, POST, OPTIONS")
		writeError(w, http.StatusMethodNotAllowed, "Send GraphQL requests with GET or POST")
		return
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case r.Method == http.MethodGet: // only an Upgrade other than websocket gets here
		writeError(w, http.StatusBadRequest, "Only WebSocket upgrades are served: use the graphql-transport-ws or graphql-ws subprotocol")
	case mt == "":
		writeError(w, http.StatusUnsupportedMediaType, "The request has no Content-Type: send application/json (or multipart/form-data for uploads)")
	default:
		writeError(w, http.StatusUnsupportedMediaType, "Content-Type "+strings.ToLower(mt)+
			" is not served: send application/json (or multipart/form-data for uploads)")
	}
}

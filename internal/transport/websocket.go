package transport

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gobwas/ws"

	"github.com/advisorhq/gateway/internal/transport/fanout"
	"github.com/advisorhq/gateway/internal/transport/wsconn"
)

// The WebSocket subprotocols served: graphql-ws's graphql-transport-ws, and the legacy
// subscriptions-transport-ws, which calls itself graphql-ws.
const (
	protocolTransportWS = "graphql-transport-ws"
	protocolLegacy      = "graphql-ws"
)

// defaultMessageTimeout bounds how long a WebSocket message may take to arrive once it has
// begun to, when Config sets no bound.
const defaultMessageTimeout = 10 * time.Second

// websocketTransport upgrades a request to a WebSocket and serves it in the subprotocol the
// client asks for: graphql-transport-ws (transportWS) or the legacy one (legacyWS), each a
// session of its own over the same socket layer.
type websocketTransport struct {
	cfg    *Config
	fanout *fanout.Fanout // runs the subscriptions, sharing executions with SSE's where it may
}

var _ graphql.Transport = websocketTransport{}

// IsWebSocket reports whether r asks to open a GraphQL WebSocket. Its credentials may come
// later, in connection_init, so an HTTP layer that vets headers lets it through to the
// transport, which vets them there.
func IsWebSocket(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func (websocketTransport) Supports(r *http.Request) bool { return IsWebSocket(r) }

func (t websocketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if !originAllowed(r, t.cfg.AllowedOrigins) {
		writeError(w, http.StatusForbidden, "This origin may not open a WebSocket to the gateway")
		return
	}
	st := t.cfg.Streams
	if !st.open() {
		refuseWhileStopping(w)
		return
	}
	negotiate, deflate := wsconn.NegotiateDeflate()
	upgrader := ws.HTTPUpgrader{
		Protocol:  func(p string) bool { return p == protocolTransportWS || p == protocolLegacy },
		Timeout:   t.cfg.WriteTimeout,
		Negotiate: negotiate,
	}
	nc, rw, hs, err := upgrader.Upgrade(r, w)
	if err != nil {
		// The upgrader has answered the request, on the connection when it took it.
		if nc != nil {
			_ = nc.Close()
		}
		st.done()
		return
	}
	var handshake *bufio.Reader
	if rw != nil {
		handshake = rw.Reader
	}
	// The connection is hijacked, and the request's goroutine returns now: the session runs in
	// a goroutine of its own with a shallow stack, and net/http's buffers for the request are
	// let go. The context keeps the request's values, not its end.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	c := wsconn.New(nc, handshake, deflate(), wsconn.Limits{
		MaxMessage: t.cfg.MaxMessageBytes, MessageTimeout: t.cfg.MessageTimeout, WriteTimeout: t.cfg.WriteTimeout,
	})
	s := newWSSession(t, c, exec, r.Header, ctx, cancel)
	var p wsProtocol = transportWS{s}
	if hs.Protocol == protocolLegacy {
		p = legacyWS{s}
	}
	go func() {
		if hs.Protocol == "" {
			s.close(ws.StatusProtocolError, "Unsupported subprotocol: use graphql-transport-ws or graphql-ws")
		}
		s.serve(p, st.done)
	}()
}

// originAllowed lets a WebSocket upgrade through when it comes from no browser (no Origin), from
// the gateway's own pages, or from an origin CORS allows. Browsers do not apply CORS to
// WebSockets, so without this any site could open one with its visitors' cookies.
func originAllowed(r *http.Request, allowed []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if _, host, ok := strings.Cut(origin, "://"); ok && strings.EqualFold(host, r.Host) {
		return true
	}
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(a, origin) {
			return true
		}
	}
	return false
}

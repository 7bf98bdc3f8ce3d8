package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/bytesize"
)

// The WebSocket subprotocols served: graphql-ws's graphql-transport-ws, and the legacy
// subscriptions-transport-ws, which calls itself graphql-ws.
const (
	protocolTransportWS = "graphql-transport-ws"
	protocolLegacy      = "graphql-ws"
)

// Close codes of graphql-transport-ws (its PROTOCOL.md), and 1013, which clients retry.
const (
	closeBadRequest      websocket.StatusCode = 4400
	closeUnauthorized    websocket.StatusCode = 4401
	closeForbidden       websocket.StatusCode = 4403
	closeInitTimeout     websocket.StatusCode = 4408
	closeSubscriberTaken websocket.StatusCode = 4409
	closeTooManyInits    websocket.StatusCode = 4429
	closeTryAgainLater                        = websocket.StatusTryAgainLater
)

// websocketTransport serves GraphQL over WebSocket in both subprotocols.
type websocketTransport struct {
	allowedOrigins []string
	// initTimeout is how long a client has to send connection_init.
	initTimeout time.Duration
	// keepAlive is the interval of the server's pings (graphql-transport-ws) or "ka" messages
	// (legacy).
	keepAlive time.Duration
	// authenticate vets connection_init's credentials, merged into the upgrade request's
	// headers; an error refuses the connection (4403). nil accepts every connection, as the
	// HTTP endpoint does.
	authenticate func(ctx context.Context, headers http.Header) (context.Context, error)
	// streams is told when the server shuts down.
	streams *Streams
	// maxMessage bounds one client message.
	maxMessage int64
	// maxOperations bounds the operations running at once on one socket; 0 is
	// defaultMaxOperations.
	maxOperations int
	log           *slog.Logger
	// fanout runs the subscriptions, sharing executions where it may.
	fanout *fanout
}

// defaultMaxOperations bounds the operations of one socket when no limit is set: each holds a
// goroutine and buffers, and one socket once held 20,000.
const defaultMaxOperations = 100

func (t websocketTransport) operationLimit() int {
	if t.maxOperations <= 0 {
		return defaultMaxOperations
	}
	return t.maxOperations
}

var _ graphql.Transport = websocketTransport{}

func (websocketTransport) Supports(r *http.Request) bool { return IsWebSocket(r) }

func (t websocketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if !originAllowed(r, t.allowedOrigins) {
		writeError(w, http.StatusForbidden, "This origin may not open a WebSocket to the gateway")
		return
	}
	if !t.streams.open() {
		refuseWhileStopping(w)
		return
	}
	defer t.streams.done()
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:       []string{protocolTransportWS, protocolLegacy},
		InsecureSkipVerify: true, // the origin was checked above, against the CORS allow-list
	})
	if err != nil {
		return // Accept has answered the request
	}
	// The connection is hijacked: nothing but this releases its descriptor when the handler
	// ends, whichever way it ends (a client gone without a close frame leaves only a read
	// error). A close handshake under way is not cut short: CloseNow waits for it.
	defer conn.CloseNow()
	conn.SetReadLimit(t.maxMessage)
	s := &wsSession{
		t: t, conn: conn, exec: exec, legacy: conn.Subprotocol() == protocolLegacy,
		headers: r.Header, ops: map[string]*wsOperation{},
	}
	s.out.kick = func() { s.wg.Go(s.write) }
	switch conn.Subprotocol() {
	case protocolTransportWS, protocolLegacy:
		s.serve(r.Context())
	default:
		conn.Close(websocket.StatusProtocolError, "Unsupported subprotocol: use graphql-transport-ws or graphql-ws")
	}
}

// wsSession is one connection. Its goroutines (the reader, the keep-alive, the writer while
// there is something to write, one per query or mutation running) all end when the
// connection's context does; its subscriptions are members of the fanout's groups.
type wsSession struct {
	t       websocketTransport
	conn    *websocket.Conn
	exec    graphql.GraphExecutor
	legacy  bool
	headers http.Header
	// authed is the context authenticate returned, carrying the caller; the operations run in
	// it. Only the reading goroutine touches it.
	authed context.Context

	cancel context.CancelFunc
	// wg tracks the session's goroutines; serve waits for them.
	wg  sync.WaitGroup
	out outbox

	mu     sync.Mutex
	inited bool
	acked  bool
	ops    map[string]*wsOperation
	closed bool
}

// wsOperation is one running operation of a session, by its id: a subscription's membership,
// or the cancellation of a query or mutation.
type wsOperation struct {
	s    *wsSession
	id   string
	stop func()
	// next starts a `next` (or legacy `data`) message of this operation, up to its payload.
	next []byte
}

type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func (s *wsSession) serve(parent context.Context) {
	// Deferred in this order so that cancel runs first, the operations leave and nothing more
	// is written, and the goroutines are waited for.
	wg := &s.wg
	defer wg.Wait()
	defer s.out.close()
	defer s.stopAll()
	ctx, cancel := context.WithCancel(parent)
	s.cancel = cancel
	defer cancel()

	initTimer := time.AfterFunc(s.t.initTimeout, func() {
		s.mu.Lock()
		inited := s.inited
		s.mu.Unlock()
		if !inited {
			s.close(closeInitTimeout, "Connection initialisation timeout")
		}
	})
	defer initTimer.Stop()
	wg.Go(func() {
		select {
		case <-ctx.Done():
		case <-s.t.streams.stopping:
			s.close(websocket.StatusServiceRestart, "The gateway is restarting: reconnect")
		}
	})

	for {
		typ, data, err := s.conn.Read(ctx)
		if errors.Is(err, websocket.ErrMessageTooBig) {
			// The library has sent the close frame (1009); completing the handshake drains
			// the rest of the message and waits, briefly, for the client's answer.
			s.close(websocket.StatusMessageTooBig, "A message is larger than "+bytesize.Format(s.t.maxMessage))
			return
		}
		if err != nil {
			return // closed by the client, by s.close, or the request ended
		}
		if typ != websocket.MessageText {
			s.protocolError("", "Messages must be JSON text")
			return
		}
		var m wsMessage
		if err := json.Unmarshal(data, &m); err != nil || m.Type == "" {
			s.protocolError("", "Invalid message received: expected a JSON object with a type")
			return
		}
		if !s.handle(ctx, wg, m) {
			return
		}
	}
}

// handle acts on one message and reports whether the session goes on.
func (s *wsSession) handle(ctx context.Context, wg *sync.WaitGroup, m wsMessage) bool {
	switch m.Type {
	case "connection_init":
		return s.init(ctx, wg, m.Payload)
	case "ping":
		if s.legacy {
			break
		}
		s.send(wsMessage{Type: "pong", Payload: m.Payload})
		return true
	case "pong":
		if !s.legacy {
			return true
		}
	case "subscribe", "start":
		if (m.Type == "subscribe") == s.legacy {
			break
		}
		return s.subscribe(ctx, wg, m)
	case "complete", "stop":
		if (m.Type == "complete") == s.legacy {
			break
		}
		s.mu.Lock()
		var stop func()
		if op := s.ops[m.ID]; op != nil {
			stop = op.stop
			delete(s.ops, m.ID)
		}
		s.mu.Unlock()
		if stop != nil {
			stop() // outside the lock: a subscription's group takes its own
		}
		return true
	case "connection_terminate":
		if s.legacy {
			s.close(websocket.StatusNormalClosure, "")
			return false
		}
	}
	s.protocolError(m.ID, fmt.Sprintf("Invalid message received: unknown type %q", m.Type))
	return !s.isClosed()
}

func (s *wsSession) init(ctx context.Context, wg *sync.WaitGroup, raw json.RawMessage) bool {
	s.mu.Lock()
	again := s.inited
	s.inited = true
	s.mu.Unlock()
	if again {
		if s.legacy {
			s.send(wsMessage{Type: "connection_error", Payload: mustJSON(map[string]string{"message": "Too many initialisation requests"})})
			return true
		}
		s.close(closeTooManyInits, "Too many initialisation requests")
		return false
	}
	var payload map[string]any
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &payload); err != nil {
			s.protocolError("", "Invalid message received: connection_init's payload must be an object")
			return false
		}
	}
	s.headers = initHeaders(s.headers, payload)
	if s.t.authenticate != nil {
		authed, err := s.t.authenticate(ctx, s.headers)
		if err != nil {
			s.forbid("Forbidden")
			return false
		}
		s.authed = authed
		// Credentials that run out (a token's exp: the context's deadline) end the connection,
		// whose subscriptions would otherwise outlive them; 4403 has the client reconnect
		// with fresh ones.
		if _, ok := authed.Deadline(); ok {
			wg.Go(func() {
				<-authed.Done()
				if ctx.Err() == nil {
					s.forbid("Forbidden: the credentials have expired")
				}
			})
		}
	}
	s.mu.Lock()
	s.acked = true
	s.mu.Unlock()
	s.send(wsMessage{Type: "connection_ack"})
	wg.Go(func() { s.keepAlive(ctx) })
	return true
}

// forbid closes the connection for its credentials: 4403, or in the legacy protocol a
// connection_error and a policy violation.
func (s *wsSession) forbid(reason string) {
	if s.legacy {
		// Written now, not queued: the connection closes next, and drops what is queued.
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		_ = s.conn.Write(ctx, websocket.MessageText, mustJSON(wsMessage{Type: "connection_error", Payload: mustJSON(map[string]string{"message": reason})}))
		cancel()
		s.close(websocket.StatusPolicyViolation, reason)
		return
	}
	s.close(closeForbidden, reason)
}

func (s *wsSession) keepAlive(ctx context.Context) {
	tick := time.NewTicker(s.t.keepAlive)
	defer tick.Stop()
	if s.legacy {
		s.send(wsMessage{Type: "ka"})
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if s.legacy {
				s.send(wsMessage{Type: "ka"})
			} else {
				s.send(wsMessage{Type: "ping"})
			}
			// The protocol's messages keep proxies from closing a quiet socket; a WebSocket
			// ping, which browsers answer by themselves, finds a peer that is gone without
			// closing (a sleeping laptop, a dropped network), so its subscriptions end now
			// rather than when TCP gives up minutes later.
			pingCtx, cancel := context.WithTimeout(ctx, s.t.keepAlive)
			err := s.conn.Ping(pingCtx)
			cancel()
			if err != nil && ctx.Err() == nil {
				s.t.log.Debug("websocket peer did not answer a ping; closing", "error", err)
				_ = s.conn.CloseNow()
				s.cancel()
				return
			}
		}
	}
}

func (s *wsSession) subscribe(ctx context.Context, wg *sync.WaitGroup, m wsMessage) bool {
	s.mu.Lock()
	acked := s.acked
	s.mu.Unlock()
	if !acked {
		if s.legacy {
			s.sendError(m.ID, "Send connection_init before starting an operation")
			return true
		}
		s.close(closeUnauthorized, "Unauthorized")
		return false
	}
	if m.ID == "" {
		s.protocolError("", "Invalid message received: subscribe needs an id")
		return !s.isClosed()
	}
	var params graphql.RawParams
	if err := json.Unmarshal(m.Payload, &params); err != nil || params.Query == "" {
		s.protocolError(m.ID, "Invalid message received: the payload must be an object with a query")
		return !s.isClosed()
	}
	params.Headers = s.headers
	params.ReadTime = graphql.TraceTiming{Start: graphql.Now(), End: graphql.Now()}

	if s.authed != nil {
		ctx = s.authed
	}
	op := &wsOperation{s: s, id: m.ID, next: s.nextPrefix(m.ID)}
	s.mu.Lock()
	if _, taken := s.ops[m.ID]; taken {
		s.mu.Unlock()
		if s.legacy {
			s.sendError(m.ID, fmt.Sprintf("An operation with id %q is already running", m.ID))
			return true
		}
		s.close(closeSubscriberTaken, fmt.Sprintf("Subscriber for %s already exists", m.ID))
		return false
	}
	if limit := s.t.operationLimit(); len(s.ops) >= limit {
		s.mu.Unlock()
		// Refusing the one operation keeps the socket, and the operations it runs, alive.
		s.sendCodedError(m.ID, apperr.OperationLimitExceeded, fmt.Sprintf(
			"This WebSocket already runs %d operations, the most one socket may run at once (MAX_SUBSCRIPTIONS_PER_SOCKET): complete one, or open another WebSocket", limit))
		return true
	}
	// Held while the operation is set up, so that a complete arriving meanwhile finds a way to
	// stop it.
	stopped := make(chan struct{})
	var stopOnce sync.Once
	op.stop = func() { stopOnce.Do(func() { close(stopped) }) }
	s.ops[m.ID] = op
	s.mu.Unlock()

	opCtx, errs := s.exec.CreateOperationContext(ctx, &params)
	switch {
	case errs != nil:
		s.finish(op, s.runEmitted(func(emit func(*graphql.Response, bool) bool) streamOutcome {
			return refuseOperation(ctx, s.exec, opCtx, errs, emit)
		}, op))
	case isSubscription(opCtx):
		member := s.t.fanout.subscribe(ctx, s.exec, opCtx, op)
		s.mu.Lock()
		op.stop = member.leave
		s.mu.Unlock()
		select {
		case <-stopped: // completed while it was set up
			member.leave()
		default:
		}
	default:
		runCtx, cancel := context.WithCancel(ctx)
		s.mu.Lock()
		op.stop = cancel
		s.mu.Unlock()
		select {
		case <-stopped:
			cancel()
		default:
		}
		wg.Go(func() {
			defer cancel()
			s.finish(op, s.runEmitted(func(emit func(*graphql.Response, bool) bool) streamOutcome {
				return runCreated(runCtx, s.exec, opCtx, emit)
			}, op))
		})
	}
	return true
}

// runEmitted runs an operation whose responses are sent as they come, as op's messages.
func (s *wsSession) runEmitted(run func(emit func(*graphql.Response, bool) bool) streamOutcome, op *wsOperation) streamOutcome {
	return run(func(resp *graphql.Response, final bool) bool {
		if final && !s.legacy {
			return s.send(wsMessage{ID: op.id, Type: "error", Payload: mustJSON(resp.Errors)})
		}
		return s.out.push(outItem{msg: op.frame(mustJSON(resp))})
	})
}

// nextPrefix is the start of operation id's `next` messages (legacy: `data`), up to the payload.
func (s *wsSession) nextPrefix(id string) []byte {
	kind := "next"
	if s.legacy {
		kind = "data"
	}
	return fmt.Appendf(nil, `{"id":%s,"type":%q,"payload":`, mustJSON(id), kind)
}

// frame is a `next` message of op carrying payload.
func (op *wsOperation) frame(payload []byte) []byte {
	b := make([]byte, 0, len(op.next)+len(payload)+1)
	b = append(b, op.next...)
	b = append(b, payload...)
	return append(b, '}')
}

// deliver queues one result of op's subscription.
func (op *wsOperation) deliver(m *member, r *result) bool {
	return op.s.out.pushResult(m, r, op.s.t.fanout.buffer)
}

// end sends the last word of op's subscription and how it ended.
func (op *wsOperation) end(_ *member, final *result, outcome streamOutcome) {
	s := op.s
	if final != nil {
		if s.legacy {
			s.out.push(outItem{msg: op.frame(final.json)})
		} else {
			s.send(wsMessage{ID: op.id, Type: "error", Payload: final.errors})
		}
	}
	s.finish(op, outcome)
}

// finish forgets op once its stream ended with outcome, and says so to the client as the
// protocol asks.
func (s *wsSession) finish(op *wsOperation, outcome streamOutcome) {
	s.mu.Lock()
	mine := s.ops[op.id] == op
	if mine {
		delete(s.ops, op.id)
	}
	s.mu.Unlock()
	switch outcome {
	case streamUnavailable:
		// After the error that says so has been written.
		s.out.push(outItem{then: func() { s.close(closeTryAgainLater, "The event store is unavailable; try again later") }})
	case streamDone, streamFailed:
		// graphql-transport-ws: an error message ends the operation by itself; complete
		// follows only a stream that ended normally. The legacy protocol always completes.
		if mine && (outcome == streamDone || s.legacy) {
			s.send(wsMessage{ID: op.id, Type: "complete"})
		}
	}
}

// stopAll stops every operation still running, when the connection ends.
func (s *wsSession) stopAll() {
	s.mu.Lock()
	stops := make([]func(), 0, len(s.ops))
	for _, op := range s.ops {
		stops = append(stops, op.stop)
	}
	clear(s.ops)
	s.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
}

// protocolError ends a graphql-transport-ws connection with 4400; the legacy protocol reports
// the error and goes on, as its servers did.
func (s *wsSession) protocolError(id, message string) {
	if s.legacy {
		s.sendError(id, message)
		return
	}
	s.close(closeBadRequest, message)
}

func (s *wsSession) sendError(id, message string) {
	s.send(wsMessage{ID: id, Type: "error", Payload: mustJSON(map[string]string{"message": message})})
}

// sendCodedError ends operation id with a GraphQL error that carries code: graphql-transport-ws
// sends a list of errors, the legacy protocol one error.
func (s *wsSession) sendCodedError(id string, code apperr.Code, message string) {
	var payload any = map[string]any{"message": message, "extensions": map[string]any{"code": code}}
	if !s.legacy {
		payload = []any{payload}
	}
	s.send(wsMessage{ID: id, Type: "error", Payload: mustJSON(payload)})
}

// writeTimeout bounds one batch of writes: a client that stops reading does not hold a
// goroutine forever.
const writeTimeout = 10 * time.Second

// send queues m, and reports false when the connection is closed.
func (s *wsSession) send(m wsMessage) bool {
	return s.out.push(outItem{msg: mustJSON(m)})
}

// write writes what the outbox holds until it is empty; the outbox starts it when something is
// queued. A write that fails ends the connection.
func (s *wsSession) write() {
	var buf []byte
	for {
		batch := s.out.take()
		if batch == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		var err error
		for _, it := range batch {
			switch {
			case it.res != nil:
				if it.m.gone.Load() {
					continue
				}
				op := it.m.sink.(*wsOperation)
				buf = append(append(append(buf[:0], op.next...), it.res.json...), '}')
				err = s.conn.Write(ctx, websocket.MessageText, buf)
			case it.msg != nil:
				err = s.conn.Write(ctx, websocket.MessageText, it.msg)
			}
			if err != nil {
				break
			}
			if it.then != nil {
				it.then()
			}
		}
		cancel()
		s.out.written(batch)
		if err != nil {
			s.out.close()
			s.cancel()
			return
		}
	}
}

func (s *wsSession) close(code websocket.StatusCode, reason string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	// A close reason is at most 123 bytes.
	if len(reason) > 123 {
		reason = reason[:120] + "..."
	}
	if err := s.conn.Close(code, reason); err != nil && !errors.Is(err, context.Canceled) {
		s.t.log.Debug("close a websocket", "error", err)
	}
	s.cancel()
}

func (s *wsSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

package transport

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gobwas/ws"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/bytesize"
	"github.com/advisorhq/gateway/internal/callerauth"
)

// The WebSocket subprotocols served: graphql-ws's graphql-transport-ws, and the legacy
// subscriptions-transport-ws, which calls itself graphql-ws.
const (
	protocolTransportWS = "graphql-transport-ws"
	protocolLegacy      = "graphql-ws"
)

// Close codes of graphql-transport-ws (its PROTOCOL.md), and RFC 6455's registry's 1012 and
// 1013, which clients retry.
const (
	closeBadRequest      ws.StatusCode = 4400
	closeUnauthorized    ws.StatusCode = 4401
	closeForbidden       ws.StatusCode = 4403
	closeInitTimeout     ws.StatusCode = 4408
	closeSubscriberTaken ws.StatusCode = 4409
	closeTooManyInits    ws.StatusCode = 4429
	closeServiceRestart  ws.StatusCode = 1012
	closeTryAgainLater   ws.StatusCode = 1013
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
	// messageTimeout bounds how long a message may take to arrive once it has begun to.
	messageTimeout time.Duration
	// writeTimeout bounds each write that waits for the client to read: a client that stops
	// reading does not hold a goroutine and its queue forever.
	writeTimeout time.Duration
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
	negotiate, deflate := negotiateDeflate()
	upgrader := ws.HTTPUpgrader{
		Protocol:  func(p string) bool { return p == protocolTransportWS || p == protocolLegacy },
		Timeout:   t.writeTimeout,
		Negotiate: negotiate,
	}
	nc, rw, hs, err := upgrader.Upgrade(r, w)
	if err != nil {
		// The upgrader has answered the request, on the connection when it took it.
		if nc != nil {
			_ = nc.Close()
		}
		t.streams.done()
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
	s := &wsSession{
		t: t, c: newWSConn(nc, handshake, t.maxMessage, t.messageTimeout, t.writeTimeout), exec: exec, legacy: hs.Protocol == protocolLegacy,
		headers: r.Header, ops: map[string]*wsOperation{}, ctx: ctx, cancel: cancel,
	}
	s.c.deflate = deflate()
	cw := &connWriter{
		sock: &s.c.socket, out: &s.out, pool: t.streams.writers, frame: s.frame, closed: s.c.closeSent.Load, wg: &s.wg,
		fail: func() { _ = s.c.nc.Close() }, // the reader ends, and the session with it
	}
	s.out.kick = cw.kick
	go func() {
		defer t.streams.done()
		s.serve(hs.Protocol)
	}()
}

// wsSession is one connection. While idle it holds one goroutine, its reader, and no buffer;
// a writer runs while there is something to write, and one goroutine per query or mutation
// while it runs. Its subscriptions are members of the fanout's groups. Timers do the rest: the
// initialisation timeout, the keep-alive, the end of the caller's credentials and the server's
// shutdown each act when they fire, holding no goroutine until then.
type wsSession struct {
	t       websocketTransport
	c       *wsConn
	exec    graphql.GraphExecutor
	legacy  bool
	headers http.Header
	// authed is the context authenticate returned, carrying the caller; the operations run in
	// it. Only the reading goroutine touches it.
	authed context.Context

	// ctx is the connection's; cancel ends it when the connection ends.
	ctx    context.Context
	cancel context.CancelFunc
	// wg tracks the writer and the queries and mutations running; serve waits for them.
	wg  sync.WaitGroup
	out outbox

	mu        sync.Mutex
	inited    bool
	acked     bool
	ops       map[string]*wsOperation
	closed    bool
	keepAlive *time.Timer // running once the connection is acknowledged
	initTimer *time.Timer // running until connection_init arrives
	lastPing  int64       // when the last keep-alive ping went out (Unix nanoseconds)
	// stops undoes what waits on the connection: timers and context callbacks.
	stops []func() bool
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

// serve reads and handles messages until the connection ends, then undoes everything the
// session holds.
func (s *wsSession) serve(protocol string) {
	defer s.end()
	if protocol == "" {
		s.close(ws.StatusProtocolError, "Unsupported subprotocol: use graphql-transport-ws or graphql-ws")
	}
	initTimer := time.AfterFunc(s.t.initTimeout, func() {
		s.mu.Lock()
		inited := s.inited
		s.mu.Unlock()
		if !inited {
			s.close(closeInitTimeout, "Connection initialisation timeout")
		}
	})
	s.mu.Lock()
	s.initTimer = initTimer
	s.mu.Unlock()
	s.after(context.AfterFunc(s.t.streams.stopped, func() {
		s.close(closeServiceRestart, "The gateway is restarting: reconnect")
	}))
	// The wait for the next message is made from here, this shallow, and the messages are read
	// elsewhere, so that an idle connection's goroutine keeps the smallest stack.
	for s.c.waitIdle() == nil && s.readOnFreshStack() {
	}
}

// readOnFreshStack reads and acts on what arrived on a goroutine of its own (see onFreshStack).
func (s *wsSession) readOnFreshStack() (goOn bool) {
	onFreshStack(func() { goOn = s.readAvailable() })
	return goOn
}

// readAvailable reads and acts on messages, one at least, until the connection would wait,
// and reports whether it goes on.
func (s *wsSession) readAvailable() bool {
	for first := true; ; first = false {
		if !first && s.c.idle() {
			return true
		}
		data, err := s.c.readMessage(s.pong)
		var closed peerClosed
		var violation protocolViolation
		switch {
		case err == nil:
		case errors.Is(err, errMessageTooBig):
			// The rest of the message is read and thrown away while the peer answers the close.
			s.close(ws.StatusMessageTooBig, "A message is larger than "+bytesize.Format(s.t.maxMessage))
			continue
		case errors.Is(err, errNotText):
			s.protocolError("", "Messages must be JSON text")
			continue
		case errors.As(err, &violation):
			s.close(ws.StatusProtocolError, violation.Error())
			continue
		case errors.As(err, &closed):
			// The peer closed: answer with its code, as the protocol asks, and end.
			code := closed.code
			if code == 0 || code == ws.StatusNoStatusRcvd {
				code = ws.StatusNormalClosure
			}
			s.c.sendClose(code, "")
			return false
		case errors.Is(err, os.ErrDeadlineExceeded) && !s.isClosed():
			// A message began and stalled: say why, and let go without waiting for an answer.
			s.c.sendClose(ws.StatusPolicyViolation, "A message took longer than "+s.t.messageTimeout.String()+" to arrive")
			return false
		default:
			return false // the connection ended, or the close handshake timed out
		}
		if s.isClosed() {
			continue // closing: read on until the peer answers
		}
		var m wsMessage
		if err := json.Unmarshal(data, &m); err != nil || m.Type == "" {
			s.protocolError("", "Invalid message received: expected a JSON object with a type")
			continue
		}
		s.act(m)
	}
}

// after registers stop to be called when the session ends.
func (s *wsSession) after(stop func() bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stops = append(s.stops, stop)
}

// end undoes what the session holds, in order: its timers and callbacks, its operations, its
// queue and its socket, then waits for its writer and its queries.
func (s *wsSession) end() {
	s.mu.Lock()
	stops := s.stops
	s.stops = nil
	if s.keepAlive != nil {
		s.keepAlive.Stop()
	}
	if s.initTimer != nil {
		s.initTimer.Stop()
	}
	s.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	s.cancel()
	s.stopAll()
	s.out.close()
	_ = s.c.nc.Close()
	s.wg.Wait()
}

// pong answers a ping frame at once, from the reader.
func (s *wsSession) pong(payload []byte) {
	_ = s.c.write(appendFrame(nil, ws.OpPong, payload))
}

// act acts on one message and reports whether the session goes on.
func (s *wsSession) act(m wsMessage) bool {
	switch m.Type {
	case "connection_init":
		return s.init(m.Payload)
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
		return s.subscribe(m)
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
			s.close(ws.StatusNormalClosure, "")
			return false
		}
	}
	s.protocolError(m.ID, fmt.Sprintf("Invalid message received: unknown type %q", m.Type))
	return !s.isClosed()
}

func (s *wsSession) init(raw json.RawMessage) bool {
	s.mu.Lock()
	again := s.inited
	s.inited = true
	if s.initTimer != nil {
		s.initTimer.Stop()
		s.initTimer = nil // its memory goes with it: the connection may live for days
	}
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
		authed, err := s.t.authenticate(s.ctx, s.headers)
		if err != nil {
			s.forbid("Forbidden")
			return false
		}
		s.authed = authed
		// Credentials that run out (a token's exp: the context's deadline) end the connection,
		// whose subscriptions would otherwise outlive them. 4403, not 4401: graphql-ws's client
		// gives up for good on 4401, and retries 4403, asking connectionParams again, which is
		// how it gets a fresh token.
		if _, ok := authed.Deadline(); ok {
			s.after(context.AfterFunc(authed, func() {
				if s.ctx.Err() == nil {
					s.forbid("Forbidden: " + callerauth.ErrCredentialsExpired.Error())
				}
			}))
		}
	}
	s.send(wsMessage{Type: "connection_ack"})
	if s.legacy {
		s.send(wsMessage{Type: "ka"})
	}
	s.mu.Lock()
	s.acked = true
	s.keepAlive = time.AfterFunc(s.t.keepAlive, s.ping)
	s.mu.Unlock()
	return true
}

// forbid closes the connection for its credentials: 4403, or in the legacy protocol a
// connection_error and a policy violation.
func (s *wsSession) forbid(reason string) {
	if s.legacy {
		// Written now, not queued: the connection closes next, and drops what is queued.
		_ = s.c.write(appendFrame(nil, ws.OpText, mustJSON(wsMessage{Type: "connection_error", Payload: mustJSON(map[string]string{"message": reason})})))
		s.close(ws.StatusPolicyViolation, reason)
		return
	}
	s.close(closeForbidden, reason)
}

// ping is the keep-alive, every keepAlive once the connection is acknowledged. The protocol's
// message (ping, or the legacy ka) keeps proxies from closing a quiet socket; a WebSocket ping,
// which browsers answer by themselves, finds a peer that is gone without closing (a sleeping
// laptop, a dropped network): a peer from which nothing arrived since the last ping is gone,
// and its subscriptions end now rather than when TCP gives up minutes later.
func (s *wsSession) ping() {
	now := time.Now().UnixNano()
	s.mu.Lock()
	last := s.lastPing
	s.lastPing = now
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.keepAlive.Reset(s.t.keepAlive)
	s.mu.Unlock()
	if last != 0 && s.c.lastSeen.Load() < last {
		s.t.log.Debug("websocket peer did not answer a ping; closing")
		_ = s.c.nc.Close() // the reader ends, and the session with it
		return
	}
	kind := "ping"
	if s.legacy {
		kind = "ka"
	}
	s.send(wsMessage{Type: kind})
	s.out.push(outItem{frame: pingFrame})
}

// pingFrame is a WebSocket ping with no payload.
var pingFrame = appendFrame(nil, ws.OpPing)

func (s *wsSession) subscribe(m wsMessage) bool {
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
	var raw rawParams
	if err := json.Unmarshal(m.Payload, &raw); err != nil {
		s.protocolError(m.ID, "Invalid message received: the payload must be an object with a query")
		return !s.isClosed()
	}
	p, err := raw.params()
	if err != nil {
		s.protocolError(m.ID, "Invalid message received: "+err.Error())
		return !s.isClosed()
	}
	params := *p
	params.Headers = s.headers
	params.ReadTime = graphql.TraceTiming{Start: graphql.Now(), End: graphql.Now()}

	ctx := s.ctx
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
		s.wg.Go(func() {
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

// send queues m, and reports false when the connection is closed.
func (s *wsSession) send(m wsMessage) bool {
	return s.out.push(outItem{msg: mustJSON(m)})
}

// frame frames a batch: each message and result as a text frame, control frames as they are.
func (s *wsSession) frame(buf []byte, batch []outItem) ([]byte, []func()) {
	var thens []func()
	for _, it := range batch {
		switch {
		case it.res != nil:
			if it.m.gone.Load() {
				continue
			}
			next := it.m.sink.(*wsOperation).next
			if s.c.deflate && len(next)+len(it.res.json)+1 >= deflateMinBytes {
				if len(next) > maxStored {
					// An id too long for one stored block (a client may choose one): the
					// whole message is compressed for this member alone.
					buf = appendDeflatedFrame(buf, append(append(append([]byte(nil), next...), it.res.json...), '}'))
					break
				}
				buf = appendDeflatedNext(buf, next, it.res)
				break
			}
			buf = appendHeader(buf, ws.OpText, len(next)+len(it.res.json)+1)
			buf = append(append(append(buf, next...), it.res.json...), '}')
		case it.msg != nil:
			if s.c.deflate && len(it.msg) >= deflateMinBytes {
				buf = appendDeflatedFrame(buf, it.msg)
				break
			}
			buf = appendFrame(buf, ws.OpText, it.msg)
		case it.frame != nil:
			buf = append(buf, it.frame...)
		}
		if it.then != nil {
			thens = append(thens, it.then)
		}
	}
	return buf, thens
}

// close sends the close frame with code and reason, drops what is still queued, and ends the
// operations; the reader reads on until the peer answers or closeTimeout passes.
func (s *wsSession) close(code ws.StatusCode, reason string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.out.close()
	s.c.sendClose(code, reason)
	s.cancel()
}

func (s *wsSession) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

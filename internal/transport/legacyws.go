package transport

import (
	"errors"
	"fmt"

	"github.com/gobwas/ws"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/transport/fanout"
	"github.com/advisorhq/gateway/internal/transport/socket"
	"github.com/advisorhq/gateway/internal/transport/wsconn"
)

// legacyWS is Apollo's subscriptions-transport-ws, which calls itself graphql-ws: start, data,
// error, complete, stop, ka and connection_terminate. Its servers reported what broke the
// protocol as an error and went on, and so does this one.
type legacyWS struct{ *wsSession }

var _ wsProtocol = legacyWS{}

func (p legacyWS) act(m wsMessage) {
	switch m.Type {
	case "connection_init":
		p.init(m)
	case "start":
		p.subscribe(m)
	case "stop":
		p.stop(m.ID)
	case "connection_terminate":
		p.close(ws.StatusNormalClosure, "")
	default:
		p.refuse(m.ID, fmt.Sprintf("Invalid message received: unknown type %q", m.Type))
	}
}

func (p legacyWS) init(m wsMessage) {
	first, closing := p.firstInit()
	if closing {
		return
	}
	if !first {
		p.send(wsMessage{Type: "connection_error", Payload: mustJSON(map[string]string{"message": "Too many initialisation requests"})})
		return
	}
	if !p.authenticate(m.Payload, p.forbid) {
		return
	}
	p.send(wsMessage{Type: "connection_ack"})
	p.send(wsMessage{Type: "ka"})
	p.acknowledged("ka")
}

// forbid closes the connection for its credentials: a connection_error, then a policy
// violation.
func (p legacyWS) forbid(reason string) {
	// Written now, not queued: the connection closes next, and drops what is queued.
	_ = p.c.Write(wsconn.AppendFrame(nil, ws.OpText, mustJSON(wsMessage{Type: "connection_error", Payload: mustJSON(map[string]string{"message": reason})})))
	p.close(ws.StatusPolicyViolation, reason)
}

func (p legacyWS) subscribe(m wsMessage) {
	if !p.isAcked() {
		p.refuse(m.ID, "Send connection_init before starting an operation")
		return
	}
	var limit *operationLimit
	switch err := p.start(m); {
	case errors.Is(err, errOperationTaken):
		p.refuse(m.ID, fmt.Sprintf("An operation with id %q is already running", m.ID))
	case errors.As(err, &limit):
		p.send(wsMessage{ID: m.ID, Type: "error", Payload: mustJSON(
			map[string]any{"message": limit.Error(), "extensions": map[string]any{"code": apperr.OperationLimitExceeded}},
		)})
	}
}

// refuse reports the error, for the operation id when there is one, and goes on.
func (p legacyWS) refuse(id, message string) {
	p.send(wsMessage{ID: id, Type: "error", Payload: mustJSON(map[string]string{"message": message})})
}

func (legacyWS) nextType() string { return "data" }

// lastWord sends the response whole, as a data message: complete follows.
func (p legacyWS) lastWord(op *wsOperation, final *fanout.Result) bool {
	return p.out.Push(socket.Item[wsResult]{Msg: op.frame(final.JSON)})
}

// completes: every stream ends with complete.
func (legacyWS) completes(fanout.Outcome) bool { return true }

package transport

import (
	"errors"
	"fmt"

	"github.com/gobwas/ws"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/transport/fanout"
)

// Close codes of graphql-transport-ws (its PROTOCOL.md).
const (
	closeBadRequest      ws.StatusCode = 4400
	closeUnauthorized    ws.StatusCode = 4401
	closeForbidden       ws.StatusCode = 4403
	closeSubscriberTaken ws.StatusCode = 4409
	closeTooManyInits    ws.StatusCode = 4429
)

// transportWS is graphql-ws's graphql-transport-ws: subscribe, next, error, complete, ping and
// pong. What breaks the protocol closes the socket with the code PROTOCOL.md gives it.
type transportWS struct{ *wsSession }

var _ wsProtocol = transportWS{}

func (p transportWS) act(m wsMessage) {
	switch m.Type {
	case "connection_init":
		p.init(m)
	case "ping":
		p.send(wsMessage{Type: "pong", Payload: m.Payload})
	case "pong":
	case "subscribe":
		p.subscribe(m)
	case "complete":
		p.stop(m.ID)
	default:
		p.refuse(m.ID, fmt.Sprintf("Invalid message received: unknown type %q", m.Type))
	}
}

func (p transportWS) init(m wsMessage) {
	first, closing := p.firstInit()
	if closing {
		return
	}
	if !first {
		p.close(closeTooManyInits, "Too many initialisation requests")
		return
	}
	if !p.authenticate(m.Payload, p.forbid) {
		return
	}
	p.send(wsMessage{Type: "connection_ack"})
	p.acknowledged("ping")
}

// forbid closes the connection for its credentials with 4403, not 4401: graphql-ws's client
// gives up for good on 4401, and retries 4403, asking connectionParams again, which is how it
// gets a fresh token once its own has run out.
func (p transportWS) forbid(reason string) { p.close(closeForbidden, reason) }

func (p transportWS) subscribe(m wsMessage) {
	if !p.isAcked() {
		p.close(closeUnauthorized, "Unauthorized")
		return
	}
	var limit *operationLimit
	switch err := p.start(m); {
	case errors.Is(err, errOperationTaken):
		p.close(closeSubscriberTaken, fmt.Sprintf("Subscriber for %s already exists", m.ID))
	case errors.As(err, &limit):
		// Refusing the one operation keeps the socket, and the operations it runs, alive.
		p.send(wsMessage{ID: m.ID, Type: "error", Payload: mustJSON([]any{
			map[string]any{"message": limit.Error(), "extensions": map[string]any{"code": apperr.OperationLimitExceeded}},
		})})
	}
}

// refuse ends the connection with 4400.
func (p transportWS) refuse(_, message string) { p.close(closeBadRequest, message) }

func (transportWS) nextType() string { return "next" }

// lastWord sends the errors as an error message, which ends the operation by itself.
func (p transportWS) lastWord(op *wsOperation, final *fanout.Result) bool {
	return p.send(wsMessage{ID: op.id, Type: "error", Payload: final.Errors})
}

// completes: complete follows only a stream that ended normally; an error message ended the
// others.
func (transportWS) completes(outcome fanout.Outcome) bool { return outcome == fanout.Done }

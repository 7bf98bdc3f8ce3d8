package transport

import "testing"

// The legacy subscriptions-transport-ws as its servers spoke it: start and stop, results as
// data, every end as complete, a ka after connection_ack, and what breaks the protocol
// reported as an error on a socket that stays open.
func TestTheLegacyProtocolFollowsItsProtocol(t *testing.T) {
	const (
		init = `{"type":"connection_init"}`
		ok   = `{"id":"1","type":"start","payload":{"query":"{ ok }"}}`
		hold = `{"id":"1","type":"start","payload":{"query":"subscription { hold }"}}`
	)
	srv := probeServer(t, Config{})
	acked := []wsStep{{send: init}, {want: "connection_ack"}, {want: "ka"}}
	tests := []struct {
		name  string
		steps []wsStep
	}{
		{"a query", append(acked, wsStep{send: ok}, wsStep{want: `data 1 {"data":{"ok":true}}`}, wsStep{want: "complete 1"})},
		{"a subscription stopped by the client", append(acked, wsStep{send: hold}, wsStep{want: `data 1 {"data":{"hold":true}}`},
			wsStep{send: `{"id":"1","type":"stop"}`}, wsStep{send: ok}, wsStep{want: `data 1 {"data":{"ok":true}}`})},
		{"an invalid operation ends with data and complete", append(acked,
			wsStep{send: `{"id":"1","type":"start","payload":{"query":"{ nope }"}}`}, wsStep{want: `data 1 {"errors":[{"message":"Cannot query field`},
			wsStep{want: "complete 1"})},
		{"an operation before connection_init", []wsStep{{send: ok}, {want: `error 1 {"message":"Send connection_init before starting an operation"}`},
			{send: init}, {want: "connection_ack"}}},
		{"a second connection_init", append(acked, wsStep{send: init}, wsStep{want: `connection_error  {"message":"Too many initialisation requests"}`},
			wsStep{send: ok}, wsStep{want: "data 1"})},
		{"an id already running", append(acked, wsStep{send: hold}, wsStep{want: "data 1"}, wsStep{send: hold},
			wsStep{want: `error 1 {"message":"An operation with id \"1\" is already running"}`})},
		{"an unknown type", []wsStep{{send: `{"id":"7","type":"subscribe"}`}, {want: `error 7 {"message":"Invalid message received: unknown type \"subscribe\""}`},
			{send: init}, {want: "connection_ack"}}},
		{"a message that is not one", []wsStep{{send: `[]`}, {want: `error  {"message":"Invalid message received`}}},
		{"connection_terminate", append(acked, wsStep{send: `{"type":"connection_terminate"}`}, wsStep{want: "close 1000"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { converse(t, srv, protocolLegacy, tt.steps) })
	}
}

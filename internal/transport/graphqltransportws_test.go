package transport

import "testing"

// graphql-transport-ws as its PROTOCOL.md has it: operations after connection_ack, their results
// as next, their ends as complete or error; whatever breaks the protocol closes the socket
// with the code it names.
func TestGraphQLTransportWSFollowsItsProtocol(t *testing.T) {
	const (
		init = `{"type":"connection_init"}`
		ok   = `{"id":"1","type":"subscribe","payload":{"query":"{ ok }"}}`
		hold = `{"id":"1","type":"subscribe","payload":{"query":"subscription { hold }"}}`
	)
	srv := probeServer(t, Config{})
	tests := []struct {
		name  string
		steps []wsStep
	}{
		{"a query", []wsStep{{send: init}, {want: "connection_ack"}, {send: ok},
			{want: `next 1 {"data":{"ok":true}}`}, {want: "complete 1"}}},
		{"a subscription completed by the client", []wsStep{{send: init}, {want: "connection_ack"}, {send: hold},
			{want: `next 1 {"data":{"hold":true}}`}, {send: `{"id":"1","type":"complete"}`},
			{send: `{"type":"ping","payload":{"n":1}}`}, {want: `pong  {"n":1}`}}},
		{"an invalid operation ends with error alone", []wsStep{{send: init}, {want: "connection_ack"},
			{send: `{"id":"1","type":"subscribe","payload":{"query":"{ nope }"}}`}, {want: `error 1 [{"message":"Cannot query field`},
			{send: `{"type":"ping"}`}, {want: "pong"}}},
		{"ping", []wsStep{{send: `{"type":"ping","payload":{"at":1}}`}, {want: `pong  {"at":1}`}}},
		{"an operation before connection_ack", []wsStep{{send: ok}, {want: "close 4401"}}},
		{"a second connection_init", []wsStep{{send: init}, {want: "connection_ack"}, {send: init}, {want: "close 4429"}}},
		{"an id already running", []wsStep{{send: init}, {want: "connection_ack"}, {send: hold}, {want: "next 1"}, {send: hold}, {want: "close 4409"}}},
		{"an operation without an id", []wsStep{{send: init}, {want: "connection_ack"},
			{send: `{"type":"subscribe","payload":{"query":"{ ok }"}}`}, {want: "close 4400"}}},
		{"an unknown type", []wsStep{{send: `{"type":"start"}`}, {want: "close 4400"}}},
		{"a message that is not one", []wsStep{{send: `[]`}, {want: "close 4400"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { converse(t, srv, protocolTransportWS, tt.steps) })
	}
}

package wsconn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/klauspost/compress/flate"
)

// clientFrame is a frame as a client sends it: first byte (FIN, RSV, opcode), masked with a
// zero key, which leaves the payload as it is.
func clientFrame(first byte, payload []byte) []byte {
	b := []byte{first}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = binary.BigEndian.AppendUint16(append(b, 0x80|126), uint16(n))
	default:
		b = binary.BigEndian.AppendUint64(append(b, 0x80|127), uint64(n))
	}
	return append(append(b, 0, 0, 0, 0), payload...)
}

// compressed is p as a client compresses a message, the sync flush's tail dropped.
func compressed(p []byte) []byte {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	_, _ = w.Write(p)
	_ = w.Flush()
	return bytes.TrimSuffix(b.Bytes(), deflateTail)
}

// ReadMessage returns each text message whole, inflated when it came compressed, answers pings
// on the way, and refuses what a server may not take, with the error that says why.
func TestReadMessageReadsWhatAClientMaySend(t *testing.T) {
	hello := []byte(`{"type":"connection_init"}`)
	tests := []struct {
		name    string
		deflate bool
		send    []byte
		want    string // the message
		pinged  string // what a ping on the way carried
		err     error
	}{
		{name: "a text message", send: clientFrame(0x81, hello), want: string(hello)},
		{name: "a message in two fragments, a ping between", send: bytes.Join([][]byte{
			clientFrame(0x01, hello[:5]), clientFrame(0x89, []byte("hi")), clientFrame(0x80, hello[5:]),
		}, nil), want: string(hello), pinged: "hi"},
		{name: "a compressed message", deflate: true, send: clientFrame(0xC1, compressed(hello)), want: string(hello)},
		{name: "a message over the limit", send: clientFrame(0x81, make([]byte, 200)), err: ErrMessageTooBig},
		{name: "a compressed message that inflates past the limit", deflate: true,
			send: clientFrame(0xC1, compressed(make([]byte, 4096))), err: ErrMessageTooBig},
		{name: "a binary message", send: clientFrame(0x82, hello), err: ErrNotText},
		{name: "a compressed message without deflate", send: clientFrame(0xC1, compressed(hello)), err: ProtocolViolation("reserved bits are set")},
		{name: "an unmasked frame", send: append([]byte{0x81, byte(len(hello))}, hello...), err: ProtocolViolation("client frames must be masked")},
		{name: "a close frame", send: clientFrame(0x88, ws.NewCloseFrameBody(ws.StatusGoingAway, "")), err: PeerClosed{ws.StatusGoingAway}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server, client := net.Pipe()
			defer client.Close()
			defer server.Close()
			c := New(server, nil, tt.deflate, Limits{MaxMessage: 100, MessageTimeout: time.Second, WriteTimeout: time.Second})
			go func() { _, _ = client.Write(tt.send) }()
			pinged := ""
			msg, err := c.ReadMessage(func(p []byte) { pinged = string(p) })
			if !errors.Is(err, tt.err) || string(msg) != tt.want || pinged != tt.pinged {
				t.Fatalf("got %q, %v (pinged %q), want %q, %v (pinged %q)", msg, err, pinged, tt.want, tt.err, tt.pinged)
			}
		})
	}
}

// A close frame is sent once, and nothing is written after it.
func TestNothingIsWrittenAfterTheCloseFrame(t *testing.T) {
	server, client := net.Pipe()
	defer client.Close()
	defer server.Close()
	c := New(server, nil, false, Limits{MaxMessage: 100, MessageTimeout: time.Second, WriteTimeout: time.Second})
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(client)
		got <- b
	}()
	if !c.SendClose(ws.StatusNormalClosure, "bye") || c.SendClose(ws.StatusGoingAway, "again") || !c.CloseSent() {
		t.Fatal("want the first close sent, and the second not")
	}
	if err := c.Write(AppendFrame(nil, ws.OpText, []byte("late"))); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("a write after the close frame: got %v, want net.ErrClosed", err)
	}
	server.Close()
	want := AppendFrame(nil, ws.OpClose, ws.NewCloseFrameBody(ws.StatusNormalClosure, "bye"))
	if b := <-got; !bytes.Equal(b, want) {
		t.Fatalf("the peer read %q, want the one close frame %q", b, want)
	}
}

package fanoutload

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The clients are a minimal RFC 6455 client over the raw TCP socket, not a WebSocket library:
// they share the machine's cores with the gateway they measure, so each frame should cost them
// about what it costs the floor's reader (a bufio.Reader and io.ReadFull), or the gateway's
// latency would include the wait for a core the clients hold. Nothing is offered but the
// subprotocol (no permessage-deflate), and a message is read into one buffer per socket.

// WebSocket opcodes.
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// Close codes the client sends.
const (
	closeNormal        = 1000
	closeProtocolError = 1002
	closeTooBig        = 1009
)

// maxMessage bounds a frame, and a message's fragments together: the gateway's are about 160
// bytes, and a peer that announces more is broken, not to be buffered.
const maxMessage = 1 << 20

// writeTimeout bounds every write: the gateway reads its sockets, and one that does not is a
// failure to report, not to wait for.
const writeTimeout = 5 * time.Second

// wsAcceptGUID is what RFC 6455 appends to the key to make Sec-WebSocket-Accept.
const wsAcceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// closeError is a close frame received from the peer.
type closeError struct {
	code   int // 1005 when the frame carried none
	reason string
}

func (e *closeError) Error() string {
	return fmt.Sprintf("received close frame: status %d, reason %q", e.code, e.reason)
}

// protocolError is a frame the client refuses; code is the close code it answers with.
type protocolError struct {
	code int
	msg  string
}

func (e *protocolError) Error() string { return e.msg }

// wsConn is one client socket after the handshake. Reads are the reader goroutine's (or, before
// it starts, the setup's); writes may come from the reader and from the close at the run's
// end, so they hold wmu.
type wsConn struct {
	// br is held by value, first: each frame's read touches it, and a reader of its own would be
	// one more object per socket, one more cache line to fetch per frame.
	br   bufio.Reader
	conn *probedConn
	msg  []byte    // the message being read, reused from message to message
	ctl  [125]byte // a control frame's payload
	hdr  [8]byte   // an extended length
	wmu  sync.Mutex
}

// dialWS connects to gateway's /graphql and upgrades the socket, asking for graphql-transport-ws.
// The socket is watched by probe, and its first write (the upgrade request) carries
// connection_init when the probe asks it. ctx bounds the dial and the handshake.
func dialWS(ctx context.Context, gateway string, probe *initProbe) (*wsConn, error) {
	u, err := url.Parse(gateway)
	if err != nil {
		return nil, fmt.Errorf("gateway URL: %w", err)
	}
	raw, err := (&net.Dialer{Timeout: 30 * time.Second}).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	pc := &probedConn{Conn: raw, probe: probe, watching: true}
	probe.conn = pc
	c := &wsConn{conn: pc}
	c.br.Reset(pc)
	stop := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Unix(1, 0)) })
	err = c.handshake(u.Host)
	if !stop() {
		err = fmt.Errorf("upgrade: %w", context.Cause(ctx))
	}
	if err != nil {
		raw.Close()
		return nil, err
	}
	return c, nil
}

func (c *wsConn) handshake(host string) error {
	var k [16]byte
	_, _ = rand.Read(k[:])
	key := base64.StdEncoding.EncodeToString(k[:])
	req := "GET /graphql HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n"
	// One write: probedConn appends connection_init to it when asked to.
	_ = c.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := c.conn.Write([]byte(req)); err != nil {
		return fmt.Errorf("upgrade: write the request: %w", err)
	}
	resp, err := http.ReadResponse(&c.br, nil)
	if err != nil {
		return fmt.Errorf("upgrade: read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return fmt.Errorf("upgrade: status %d, want 101: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	sum := sha1.Sum([]byte(key + wsAcceptGUID))
	switch {
	case !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket"):
		return fmt.Errorf("upgrade: Upgrade %q, want websocket", resp.Header.Get("Upgrade"))
	case resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]):
		return fmt.Errorf("upgrade: Sec-WebSocket-Accept %q does not match the key", resp.Header.Get("Sec-WebSocket-Accept"))
	case resp.Header.Get("Sec-WebSocket-Extensions") != "":
		return fmt.Errorf("upgrade: extensions %q that were not offered", resp.Header.Get("Sec-WebSocket-Extensions"))
	case resp.Header.Get("Sec-WebSocket-Protocol") != "graphql-transport-ws":
		return fmt.Errorf("upgrade: subprotocol %q, want graphql-transport-ws", resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	return nil
}

// opened ends the probe's watch of the socket's reads: it is needed only until the socket opens,
// and time.Now on every read is not free. From then on the socket is read directly, as the
// floor's reader reads its own: through the probe, each read touched one more object per socket,
// one more cache line to fetch per frame. (Unless bytes already wait in the buffer, which
// switching readers would drop; at this point none normally do.)
func (c *wsConn) opened() {
	c.conn.watching = false
	if c.br.Buffered() == 0 {
		c.br.Reset(c.conn.Conn)
	}
}

// readMessage reads the next text or binary message, answering pings and reading past pongs on
// the way. The message is valid until the next call (or the next read of the socket). A close frame, or a frame the client
// refuses, is an error.
func (c *wsConn) readMessage() ([]byte, error) {
	c.msg = c.msg[:0]
	inMessage := false
	for {
		b0, err := c.br.ReadByte()
		if err != nil {
			return nil, err
		}
		b1, err := c.br.ReadByte()
		if err != nil {
			return nil, err
		}
		fin, op := b0&0x80 != 0, b0&0x0f
		if b0&0x70 != 0 {
			return nil, &protocolError{closeProtocolError, fmt.Sprintf("frame with reserved bits %#x: no extension was agreed", b0&0x70)}
		}
		if b1&0x80 != 0 {
			return nil, &protocolError{closeProtocolError, "masked frame from the server"}
		}
		n := uint64(b1 & 0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(&c.br, c.hdr[:2]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(c.hdr[:2]))
		case 127:
			if _, err := io.ReadFull(&c.br, c.hdr[:8]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(c.hdr[:8])
		}
		if op >= opClose {
			if !fin || n > uint64(len(c.ctl)) {
				return nil, &protocolError{closeProtocolError, fmt.Sprintf("control frame %#x fragmented or of %d bytes", op, n)}
			}
			payload := c.ctl[:n]
			if _, err := io.ReadFull(&c.br, payload); err != nil {
				return nil, err
			}
			switch op {
			case opPing:
				if err := c.writeFrame(opPong, payload); err != nil {
					return nil, fmt.Errorf("answer a ping: %w", err)
				}
			case opClose:
				e := &closeError{code: 1005}
				if len(payload) >= 2 {
					e.code, e.reason = int(binary.BigEndian.Uint16(payload)), string(payload[2:])
				}
				// Echo it, as RFC 6455 asks; the peer closes the socket next.
				_ = c.writeFrame(opClose, payload[:min(2, len(payload))])
				return nil, e
			case opPong:
			default:
				return nil, &protocolError{closeProtocolError, fmt.Sprintf("unknown control opcode %#x", op)}
			}
			continue
		}
		switch {
		case op != opText && op != opBinary && op != opContinuation:
			return nil, &protocolError{closeProtocolError, fmt.Sprintf("unknown opcode %#x", op)}
		case op == opContinuation && !inMessage:
			return nil, &protocolError{closeProtocolError, "continuation frame outside a message"}
		case op != opContinuation && inMessage:
			return nil, &protocolError{closeProtocolError, "new message before the last one's final fragment"}
		case n > maxMessage || uint64(len(c.msg))+n > maxMessage:
			return nil, &protocolError{closeTooBig, fmt.Sprintf("frame of %d bytes (message of %d so far): over the %d-byte limit", n, len(c.msg), maxMessage)}
		}
		if fin && !inMessage && n <= uint64(c.br.Size()) {
			// A whole message in one frame, as the gateway's are, is read where it lies in the
			// buffer, valid until the next read: copied into the message buffer, it would cost
			// a write to memory of the socket's own, out of the processor's caches, per frame.
			msg, err := c.br.Peek(int(n))
			if err != nil {
				return nil, err
			}
			_, _ = c.br.Discard(int(n))
			return msg, nil
		}
		inMessage = true
		start := len(c.msg)
		c.msg = growTo(c.msg, start+int(n))
		if _, err := io.ReadFull(&c.br, c.msg[start:]); err != nil {
			return nil, err
		}
		if fin {
			return c.msg, nil
		}
	}
}

// growTo extends b to n bytes, keeping its contents, reallocating only when it has to.
func growTo(b []byte, n int) []byte {
	if n <= cap(b) {
		return b[:n]
	}
	nb := make([]byte, n, max(n, 2*cap(b), 512))
	copy(nb, b)
	return nb
}

// writeFrame writes one final frame, masked as a client's must be.
func (c *wsConn) writeFrame(op byte, payload []byte) error {
	n := len(payload)
	out := make([]byte, 0, 14+n)
	out = append(out, 0x80|op)
	switch {
	case n < 126:
		out = append(out, 0x80|byte(n))
	case n <= 0xffff:
		out = append(out, 0x80|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	// The mask is not for secrecy (it guards proxies against crafted bytes): a cheap random key
	// does.
	var key [4]byte
	binary.LittleEndian.PutUint32(key[:], mrand.Uint32())
	out = append(out, key[:]...)
	for i, b := range payload {
		out = append(out, b^key[i&3])
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := c.conn.Write(out)
	return err
}

// writeJSON writes v as a text message.
func (c *wsConn) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.writeFrame(opText, data)
}

// closeWith sends a close frame with code and closes the socket, without waiting for the peer's
// answer: the client is done with it.
func (c *wsConn) closeWith(code int) {
	_ = c.writeFrame(opClose, binary.BigEndian.AppendUint16(nil, uint16(code)))
	_ = c.conn.Close()
}

// closeFor closes the socket after err ended its reading: with the close code a refused frame
// calls for, or at once.
func (c *wsConn) closeFor(err error) {
	var pe *protocolError
	if errors.As(err, &pe) {
		c.closeWith(pe.code)
		return
	}
	_ = c.conn.Close()
}

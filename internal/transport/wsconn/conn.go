// Package wsconn speaks RFC 6455, as a server, on a connection held by package socket: frames,
// the close handshake, and permessage-deflate without context takeover. It holds no read buffer
// while no message is arriving and no writer while nothing is written; the subprotocol spoken
// in its messages is its user's.
package wsconn

import (
	"bufio"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"

	"github.com/advisorhq/gateway/internal/transport/socket"
)

// Conn speaks RFC 6455 on one hijacked connection, as a server, for a gateway that holds
// tens of thousands of mostly idle sockets: while no message is arriving it holds no read
// buffer (its reader waits for the socket to become readable with a one-byte peek, and takes
// a pooled buffer only to read what arrived), and it holds no writer (writes come in batches
// from whoever has something to send). gobwas/ws does the handshake and the header layouts;
// the rest is here, since its helpers read through buffers of their own.
type Conn struct {
	// closeSent is set once the close frame is on its way; nothing is written after it.
	closeSent atomic.Bool
	// deflate is set when permessage-deflate was negotiated: messages with RSV1 set are
	// inflated, and large ones sent compressed.
	deflate bool
	// The connection's write path begins with these and goes on into the socket's first fields:
	// beside them, they are fetched with them.
	socket.Conn
	maxMessage int64
	// messageTimeout bounds how long a message may take to arrive once it has begun to.
	messageTimeout time.Duration

	// Only the reading goroutine touches these.
	br *bufio.Reader // the read buffer while a message arrives; nil while idle
	// handshake is the buffer the upgrade left, holding what the client sent after its request;
	// read first, then dropped.
	handshake *bufio.Reader
	// skip counts bytes of the current frame still to be read and thrown away: the rest of a
	// message over the limit, or anything arriving after the close frame was sent.
	skip int64

	// lastSeen is when a frame last arrived (Unix nanoseconds): the keep-alive's evidence that
	// the peer is there.
	lastSeen atomic.Int64
}

// closeTimeout bounds a close handshake the server began: it ends then whether or not the peer
// answers.
const closeTimeout = 3 * time.Second

// readBufferSize is the pooled read buffer's size: client messages are small (init,
// subscribe, complete, pong); larger ones are read through it.
const readBufferSize = 2048

var readBuffers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// Limits bound what a peer may make a connection hold.
type Limits struct {
	// MaxMessage bounds one message, inflated.
	MaxMessage int64
	// MessageTimeout bounds how long a message may take to arrive once it has begun to, so
	// that a client cannot hold a read buffer by sending half a frame.
	MessageTimeout time.Duration
	// WriteTimeout bounds each write that waits for the peer to read (positive).
	WriteTimeout time.Duration
}

// New speaks RFC 6455 on nc, hijacked after an upgrade that left handshake (nil when it left
// nothing) and that negotiated permessage-deflate when deflate is set.
func New(nc net.Conn, handshake *bufio.Reader, deflate bool, l Limits) *Conn {
	c := &Conn{maxMessage: l.MaxMessage, messageTimeout: l.MessageTimeout, deflate: deflate}
	c.Conn.Init(nc, l.WriteTimeout)
	if handshake != nil && handshake.Buffered() > 0 {
		c.handshake = handshake
	}
	c.lastSeen.Store(time.Now().UnixNano())
	return c
}

// Deflate reports whether permessage-deflate was negotiated: large messages may then be sent
// compressed.
func (c *Conn) Deflate() bool { return c.deflate }

// CloseSent reports whether the close frame is on its way: nothing is written after it.
func (c *Conn) CloseSent() bool { return c.closeSent.Load() }

// LastSeen is when a frame last arrived (Unix nanoseconds): the evidence that the peer is there.
func (c *Conn) LastSeen() int64 { return c.lastSeen.Load() }

// ReadMessage returns the next text message. It answers pings, notes pongs, and returns
// PeerClosed for the peer's close frame. After the server's close frame has gone out, data is
// read and thrown away until the peer's close frame, an error, or the close timeout.
func (c *Conn) ReadMessage(ping func(payload []byte)) ([]byte, error) {
	var msg []byte
	var op ws.OpCode
	compressed := false
	for {
		if err := c.fill(); err != nil {
			return nil, err
		}
		if c.skip > 0 {
			if _, err := c.br.Discard(int(min(c.skip, int64(c.br.Size())))); err != nil {
				return nil, err
			}
			c.skip -= int64(min(c.skip, int64(c.br.Size())))
			continue
		}
		h, err := ws.ReadHeader(c.br)
		if err != nil {
			return nil, err
		}
		c.lastSeen.Store(time.Now().UnixNano())
		if c.deflate && h.Rsv == ws.Rsv(true, false, false) && h.OpCode.IsData() && h.OpCode != ws.OpContinuation {
			// The first frame of a compressed message (RFC 7692 §6): RSV1 on it alone.
			h.Rsv = 0
			compressed = true
		}
		if err := checkClientHeader(h, op != 0); err != nil {
			return nil, err
		}
		if h.OpCode.IsControl() {
			payload := make([]byte, h.Length)
			if _, err := io.ReadFull(c.br, payload); err != nil {
				return nil, err
			}
			ws.Cipher(payload, h.Mask, 0)
			switch h.OpCode {
			case ws.OpPing:
				if !c.closeSent.Load() {
					ping(payload)
				}
			case ws.OpClose:
				code, _ := ws.ParseCloseFrameData(payload)
				return nil, PeerClosed{code}
			}
			if op == 0 { // between messages: the socket may go idle
				c.release()
			}
			continue
		}
		if c.closeSent.Load() {
			c.skip = h.Length
			continue
		}
		if h.OpCode != ws.OpContinuation {
			op = h.OpCode
		}
		if int64(len(msg))+h.Length > c.maxMessage {
			c.skip = h.Length
			return nil, ErrMessageTooBig
		}
		start := len(msg)
		msg = append(msg, make([]byte, h.Length)...)
		if _, err := io.ReadFull(c.br, msg[start:]); err != nil {
			return nil, err
		}
		ws.Cipher(msg[start:], h.Mask, 0)
		if !h.Fin {
			continue
		}
		c.release()
		if op != ws.OpText {
			return nil, ErrNotText
		}
		if compressed {
			// The inflated size counts against the limit, so a small message that inflates to
			// a large one (a deflate bomb) is too big, and costs no more than the limit.
			return inflate(msg, c.maxMessage)
		}
		return msg, nil
	}
}

// checkClientHeader refuses what a client may not send: an unmasked frame, reserved bits
// (ReadMessage has cleared RSV1 where permessage-deflate allows it), an unknown opcode, a control frame that is long or fragmented, and
// a continuation out of place.
func checkClientHeader(h ws.Header, midMessage bool) error {
	switch {
	case !h.Masked:
		return ProtocolViolation("client frames must be masked")
	case h.Rsv != 0:
		return ProtocolViolation("reserved bits are set")
	case h.OpCode.IsReserved():
		return ProtocolViolation("unknown opcode")
	case h.OpCode.IsControl() && (h.Length > 125 || !h.Fin):
		return ProtocolViolation("control frames must be short and whole")
	case h.OpCode == ws.OpContinuation && !midMessage:
		return ProtocolViolation("a continuation frame without a message")
	case h.OpCode.IsData() && h.OpCode != ws.OpContinuation && midMessage:
		return ProtocolViolation("a new message inside a fragmented one")
	}
	return nil
}

// Idle reports whether the reader holds nothing to read: the next message needs a wait.
func (c *Conn) Idle() bool { return c.br == nil && c.handshake == nil }

// fill makes sure the reader has a buffer: the handshake's leftovers, or a pooled one once the
// socket is readable.
func (c *Conn) fill() error {
	if c.br != nil {
		return nil
	}
	if c.handshake != nil {
		c.br, c.handshake = c.handshake, nil
		return nil
	}
	if err := c.WaitReadable(); err != nil {
		return err
	}
	if c.Probes() && !c.closeSent.Load() {
		// Whatever began to arrive must finish arriving soon. (Without the readiness probe the
		// read that follows also waits for the message to begin, which may take any time.)
		_ = c.NetConn().SetReadDeadline(time.Now().Add(c.messageTimeout))
	}
	c.br = readBuffers.Get().(*bufio.Reader)
	c.br.Reset(c.NetConn())
	return nil
}

// release gives the read buffer back once it holds nothing unread: the socket goes idle
// holding no buffer.
func (c *Conn) release() {
	if c.br == nil || c.br.Buffered() > 0 {
		return
	}
	if c.br.Size() == readBufferSize {
		c.br.Reset(nil)
		readBuffers.Put(c.br)
	}
	c.br = nil
	if !c.closeSent.Load() {
		_ = c.NetConn().SetReadDeadline(time.Time{})
	}
}

// Write writes b, whole frames, within the write timeout. Nothing is written after the close
// frame.
func (c *Conn) Write(b []byte) error {
	c.LockWrite()
	defer c.UnlockWrite()
	if c.closeSent.Load() {
		return net.ErrClosed
	}
	return c.WriteWaiting(b)
}

// SendClose sends the close frame once, and gives the peer closeTimeout to answer it; the
// reader then ends. It reports whether this call sent it.
func (c *Conn) SendClose(code ws.StatusCode, reason string) bool {
	c.LockWrite()
	defer c.UnlockWrite()
	if c.closeSent.Swap(true) {
		return false
	}
	// A close reason is at most 123 bytes.
	if len(reason) > 123 {
		reason = reason[:120] + "..."
	}
	_ = c.WriteWaiting(AppendFrame(nil, ws.OpClose, ws.NewCloseFrameBody(code, reason)))
	_ = c.NetConn().SetReadDeadline(time.Now().Add(closeTimeout))
	// A reader that a watcher waits for would not see the deadline: it waits itself now.
	c.Wake()
	return true
}

package fanoutload

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sync/atomic"
	"time"
)

// In a reconnect storm the gateway closes 4408 the clients whose connection_init it has not
// read within its init timeout. A 4408 counts against the gateway only when the client's
// connection_init was in the gateway's socket before the close was sent; the load processes
// share the machine with the gateway and may themselves be too starved to send it in time. So
// each client notes, by its own clock and socket, where its connection_init was when the close
// reached it: not written yet (the close was already in its socket, or read, when it wrote),
// written as the close arrived, or written before (loopback puts a write in the peer's socket
// before the write returns, so the gateway had it when it closed).

// initProbe watches one client's socket around its connection_init.
type initProbe struct {
	withRequest bool // connection_init is sent in the upgrade request's write
	conn        *probedConn
	// written is when the write of connection_init returned (Unix nanoseconds); 0 before.
	written int64
	// unreadBefore and unreadAfter are the bytes waiting in the client's socket just before
	// and just after that write; -1 where they could not be read.
	unreadBefore, unreadAfter int
}

// probedConn notes when bytes were last read from its socket while watching (until the socket
// is open), and appends connection_init to the upgrade request when its probe sends it so.
type probedConn struct {
	net.Conn
	probe    *initProbe
	sent     bool
	watching bool         // the reader's: cleared once the socket is open
	lastRead atomic.Int64 // Unix nanoseconds
}

func (c *probedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && c.watching {
		c.lastRead.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *probedConn) Write(b []byte) (int, error) {
	if c.sent || c.probe == nil || !c.probe.withRequest {
		return c.Conn.Write(b)
	}
	c.sent = true
	// Nothing can be waiting before the request: the gateway answers it.
	c.probe.unreadBefore = 0
	if _, err := c.Conn.Write(append(append([]byte(nil), b...), initFrame...)); err != nil {
		return 0, err
	}
	c.probe.written = time.Now().UnixNano()
	c.probe.unreadAfter = 0 // what arrives now is the upgrade's answer, not a close
	return len(b), nil
}

// initFrame is connection_init as a client frame: text, final, masked with a zero key (which
// leaves the payload as it is).
var initFrame = append([]byte{0x81, 0x80 | byte(len(`{"type":"connection_init"}`)), 0, 0, 0, 0}, `{"type":"connection_init"}`...)

// beforeInit and afterInit bracket the write of connection_init after the upgrade.
func (p *initProbe) beforeInit() { p.unreadBefore = p.unread() }

func (p *initProbe) afterInit() {
	p.written = time.Now().UnixNano()
	p.unreadAfter = p.unread()
}

func (p *initProbe) unread() int {
	if p.conn == nil {
		return -1
	}
	return unreadBytes(p.conn.Conn)
}

// Init placements of a 4408, as InitTimings counts them.
const (
	initNotSent = iota // the close had reached the client before it wrote connection_init
	initCrossed        // the close reached the client's socket during the write
	initSent           // connection_init was written before the close reached the client
	initUnknown        // the client's socket could not be looked at
)

// placement says where the client's connection_init was when the close reached it, and for one
// written before, how long before the close was read (ms).
func (p *initProbe) placement() (int, float64) {
	switch {
	case p.conn == nil || p.unreadBefore < 0 || p.unreadAfter < 0:
		return initUnknown, 0
	case p.written == 0 || p.unreadBefore > 0:
		return initNotSent, 0
	}
	read := p.conn.lastRead.Load()
	switch {
	case read <= p.written:
		// Nothing was read from the socket since the write: the close had been read before
		// it, with the upgrade's answer.
		return initNotSent, 0
	case p.unreadAfter > 0:
		return initCrossed, 0
	}
	return initSent, float64(read-p.written) / 1e6
}

// initClosed is a socket's failure to open, with where its connection_init was.
type initClosed struct {
	err   error
	probe *initProbe
}

func (e *initClosed) Error() string { return e.err.Error() }
func (e *initClosed) Unwrap() error { return e.err }

// InitTimings sorts the sockets the gateway closed 4408 by where each client's connection_init
// was when the close reached it, by the clients' own clocks and sockets.
type InitTimings struct {
	// NotSent counts clients that had not written connection_init when the close reached them.
	NotSent int `json:"notSent"`
	// Crossed counts clients whose close arrived while they wrote it.
	Crossed int `json:"crossed"`
	// SentMS holds, for each client that had written connection_init before the close reached
	// it (the gateway had it, and closed anyway: the target is none), the time from the write to
	// the close read, in ms.
	SentMS []float64 `json:"sentMs,omitempty"`
	// Unknown counts clients whose socket could not be looked at.
	Unknown int `json:"unknown,omitempty"`
}

// add counts one client's 4408.
func (t *InitTimings) add(p *initProbe) {
	switch where, ms := p.placement(); where {
	case initNotSent:
		t.NotSent++
	case initCrossed:
		t.Crossed++
	case initSent:
		t.SentMS = append(t.SentMS, ms)
	default:
		t.Unknown++
	}
}

// merge adds another worker's counts.
func (t *InitTimings) merge(o *InitTimings) {
	t.NotSent += o.NotSent
	t.Crossed += o.Crossed
	t.SentMS = append(t.SentMS, o.SentMS...)
	t.Unknown += o.Unknown
	slices.Sort(t.SentMS)
}

// sentAtLeast counts the clients that had written connection_init at least ms before the close
// reached them.
func (t *InitTimings) sentAtLeast(ms float64) int {
	n := 0
	for _, v := range t.SentMS {
		if v >= ms {
			n++
		}
	}
	return n
}

// leads describes how long before the close those written before it were written (SentMS is
// sorted).
func (t *InitTimings) leads() string {
	if len(t.SentMS) == 0 {
		return ""
	}
	return fmt.Sprintf("; written %.0f ms (least), %.0f ms (median), %.0f ms (most) before the close was read",
		t.SentMS[0], t.SentMS[len(t.SentMS)/2], t.SentMS[len(t.SentMS)-1])
}

// asInitClosed finds the probe of a socket closed 4408.
func asInitClosed(err error) (*initProbe, bool) {
	var ic *initClosed
	if errors.As(err, &ic) && failureKind(err) == "closed 4408" {
		return ic.probe, true
	}
	return nil, false
}

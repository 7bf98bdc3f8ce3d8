package fanoutload

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const testPrefix = "c-fanout-test-"

// nextMsg is the gateway's next message for event seq of the test's run on subscription id,
// with pad bytes more in its eventType, to reach the longer length encodings.
func nextMsg(id string, seq, pad int) []byte {
	return fmt.Appendf(nil, `{"id":%q,"type":"next","payload":{"data":{"events":{"id":"1-%d","wid":"%s%d","eventType":"CLIENT_PROGRESS_CHANGED%s"}}}}`,
		id, seq, testPrefix, seq, strings.Repeat("x", pad))
}

// serverFrame is a frame as a server sends it: unmasked.
func serverFrame(fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		out = append(out, byte(n))
	case n <= 0xffff:
		out = binary.BigEndian.AppendUint16(append(out, 126), uint16(n))
	default:
		out = binary.BigEndian.AppendUint64(append(out, 127), uint64(n))
	}
	return append(out, payload...)
}

func closePayload(code int, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
}

// peer is the gateway's side of one client socket, written by hand so that a test can send
// any frame at all.
type peer struct {
	t    *testing.T
	conn net.Conn
	br   *bufio.Reader
}

func (p *peer) write(frames ...[]byte) {
	if _, err := p.conn.Write(bytes.Join(frames, nil)); err != nil {
		p.t.Errorf("server: write: %v", err)
	}
}

// read reads one client frame, which must be final and masked, and unmasks it.
func (p *peer) read() (op byte, payload []byte) {
	_ = p.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var h [2]byte
	if _, err := io.ReadFull(p.br, h[:]); err != nil {
		p.t.Errorf("server: read a frame: %v", err)
		return 0, nil
	}
	if h[0]&0x80 == 0 || h[1]&0x80 == 0 {
		p.t.Errorf("server: client frame %#x %#x: want final and masked", h[0], h[1])
	}
	n := int(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		_, _ = io.ReadFull(p.br, l[:])
		n = int(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		_, _ = io.ReadFull(p.br, l[:])
		n = int(binary.BigEndian.Uint64(l[:]))
	}
	var key [4]byte
	_, _ = io.ReadFull(p.br, key[:])
	payload = make([]byte, n)
	if _, err := io.ReadFull(p.br, payload); err != nil {
		p.t.Errorf("server: read a frame's payload: %v", err)
	}
	for i := range payload {
		payload[i] ^= key[i&3]
	}
	return h[0] & 0x0f, payload
}

// expect reads a client frame and checks it.
func (p *peer) expect(op byte, payload []byte) {
	gotOp, got := p.read()
	if gotOp != op || !bytes.Equal(got, payload) {
		p.t.Errorf("server: the client sent %#x %q, want %#x %q", gotOp, got, op, payload)
	}
}

// expectJSON reads a client text message and returns its type.
func (p *peer) expectType(want string) {
	op, data := p.read()
	var m frame
	if op != opText || json.Unmarshal(data, &m) != nil || m.Type != want {
		p.t.Errorf("server: the client sent %#x %q, want a %s message", op, data, want)
	}
}

// subscribed acknowledges the client's connection_init and reads its n subscriptions.
func (p *peer) subscribed(n int) {
	p.expectType("connection_init")
	p.write(serverFrame(true, opText, []byte(`{"type":"connection_ack"}`)))
	for range n {
		p.expectType("subscribe")
	}
}

// rawGateway serves one client socket: it checks the upgrade request, answers it by hand and
// runs script on the socket. done closes once script has returned and the socket is closed.
func rawGateway(t *testing.T, script func(p *peer)) (url string, done <-chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		defer ln.Close()
		conn, err := ln.Accept()
		if err != nil {
			t.Errorf("server: accept: %v", err)
			return
		}
		defer conn.Close()
		p := &peer{t: t, conn: conn, br: bufio.NewReader(conn)}
		req, err := http.ReadRequest(p.br)
		if err != nil {
			t.Errorf("server: read the upgrade request: %v", err)
			return
		}
		key := req.Header.Get("Sec-WebSocket-Key")
		if raw, err := base64.StdEncoding.DecodeString(key); err != nil || len(raw) != 16 ||
			req.URL.Path != "/graphql" || req.Header.Get("Upgrade") != "websocket" || req.Header.Get("Sec-WebSocket-Version") != "13" ||
			req.Header.Get("Sec-WebSocket-Protocol") != "graphql-transport-ws" || req.Header.Get("Sec-WebSocket-Extensions") != "" {
			t.Errorf("server: upgrade request %s %v", req.URL, req.Header)
		}
		sum := sha1.Sum([]byte(key + wsAcceptGUID))
		fmt.Fprintf(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Accept: %s\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n", base64.StdEncoding.EncodeToString(sum[:]))
		script(p)
	}()
	return "http://" + ln.Addr().String(), ch
}

// waitUntil polls cond for up to 5 s.
func waitUntil(cond func() bool) {
	for deadline := time.Now().Add(5 * time.Second); !cond() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
}

// The client reads every frame a server may send: it answers pings, reassembles fragments
// with control frames between them, reads the longer length encodings, and ends the socket,
// saying why, at a close, an oversized frame or one a server must not send. When the run ends,
// it closes the socket with a close frame.
func TestTheClientReadsTheFramesAServerSends(t *testing.T) {
	next := nextMsg("1", 0, 0)
	cases := []struct {
		name   string
		script func(p *peer)
		events int
		ended  string // "" when the socket stays open until the run ends
	}{
		{
			name: "a ping is answered with a pong carrying its payload",
			script: func(p *peer) {
				p.write(serverFrame(true, opPing, []byte("are you there")))
				p.expect(opPong, []byte("are you there"))
				p.write(serverFrame(true, opText, next))
			},
			events: 1,
		},
		{
			name: "a fragmented message is reassembled around a ping",
			script: func(p *peer) {
				p.write(serverFrame(false, opText, next[:10]), serverFrame(true, opPing, []byte("x")),
					serverFrame(false, opContinuation, next[10:50]), serverFrame(true, opPong, nil),
					serverFrame(true, opContinuation, next[50:]))
				p.expect(opPong, []byte("x"))
			},
			events: 1,
		},
		{
			name: "16- and 64-bit lengths are read",
			script: func(p *peer) {
				p.write(serverFrame(true, opText, nextMsg("1", 0, 300)), serverFrame(true, opText, nextMsg("1", 1, 70000)))
			},
			events: 2,
		},
		{
			name: "a graphql-transport-ws ping is answered with a pong",
			script: func(p *peer) {
				p.write(serverFrame(true, opText, []byte(`{"type":"ping"}`)))
				p.expectType("pong")
				p.write(serverFrame(true, opText, next))
			},
			events: 1,
		},
		{
			name: "a close from the server ends the socket, echoed",
			script: func(p *peer) {
				p.write(serverFrame(true, opText, next), serverFrame(true, opClose, closePayload(1001, "going away")))
				p.expect(opClose, closePayload(1001, ""))
			},
			events: 1,
			ended:  `socket: received close frame: status 1001, reason "going away"`,
		},
		{
			name: "an oversized frame ends the socket, closed 1009",
			script: func(p *peer) {
				p.write(binary.BigEndian.AppendUint64([]byte{0x81, 127}, 2<<20))
				p.expect(opClose, closePayload(closeTooBig, ""))
			},
			ended: "socket: frame of 2097152 bytes (message of 0 so far): over the 1048576-byte limit",
		},
		{
			name: "fragments over the limit together end the socket",
			script: func(p *peer) {
				p.write(serverFrame(false, opText, make([]byte, 600<<10)), binary.BigEndian.AppendUint64([]byte{0x80, 127}, 600<<10))
				p.expect(opClose, closePayload(closeTooBig, ""))
			},
			ended: "socket: frame of 614400 bytes (message of 614400 so far): over the 1048576-byte limit",
		},
		{
			name: "a masked frame from the server is refused, closed 1002",
			script: func(p *peer) {
				p.write([]byte{0x81, 0x80 | 2, 0, 0, 0, 0, '{', '}'})
				p.expect(opClose, closePayload(closeProtocolError, ""))
			},
			ended: "socket: masked frame from the server",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url, done := rawGateway(t, func(p *peer) {
				p.subscribed(1)
				c.script(p)
				if c.ended == "" {
					p.expect(opClose, closePayload(closeNormal, "")) // at the run's end
				}
			})
			s := &sub{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var readers sync.WaitGroup
			if err := openWS(ctx, ctx, url, testPrefix, []*sub{s}, &readers, false); err != nil {
				t.Fatal(err)
			}
			waitUntil(func() bool {
				n, ended := s.snapshot()
				return n == c.events && ended == (c.ended != "")
			})
			cancel()
			readers.Wait()
			<-done
			if len(s.got) != c.events || s.ended != c.ended {
				t.Errorf("got %d events, ended %q; want %d, %q", len(s.got), s.ended, c.events, c.ended)
			}
		})
	}
}

// A socket the gateway closes 4408 before it acknowledged connection_init fails to open as
// "closed 4408", with its probe, so that the storm counts it and places its connection_init.
func TestA4408BeforeTheAckIsCountedWithItsProbe(t *testing.T) {
	for _, withUpgrade := range []bool{false, true} {
		t.Run(fmt.Sprintf("init with upgrade %v", withUpgrade), func(t *testing.T) {
			url, done := rawGateway(t, func(p *peer) {
				p.expectType("connection_init")
				p.write(serverFrame(true, opClose, closePayload(4408, "Connection initialisation timeout")))
				p.expect(opClose, closePayload(4408, ""))
			})
			ctx := context.Background()
			var readers sync.WaitGroup
			err := openWS(ctx, ctx, url, testPrefix, []*sub{{}}, &readers, withUpgrade)
			<-done
			if err == nil {
				t.Fatal("the socket opened; want it closed 4408")
			}
			probe, ok := asInitClosed(err)
			if !ok || failureKind(err) != "closed 4408" {
				t.Fatalf("got %v (kind %q); want a 4408 with its probe", err, failureKind(err))
			}
			if probe.written == 0 || probe.conn == nil {
				t.Errorf("the probe did not see connection_init written: %+v", probe)
			}
		})
	}
}

// repeatReader reads data over and over.
type repeatReader struct {
	data []byte
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := copy(p, r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}

// In steady state a next frame is read, and its event found, without allocating: the clients
// should cost what the floor's reader does.
func TestReadingANextFrameDoesNotAllocate(t *testing.T) {
	c := &wsConn{}
	c.br.Reset(&repeatReader{data: serverFrame(true, opText, nextMsg("1", 42, 0))})
	read := func() {
		data, err := c.readMessage()
		if err != nil {
			t.Fatal(err)
		}
		if sub, seq, ok := quickNext(data, testPrefix); !ok || sub != 1 || seq != 42 {
			t.Fatalf("quickNext(%s) = %d, %d, %v", data, sub, seq, ok)
		}
	}
	read() // the message buffer grows once
	if allocs := testing.AllocsPerRun(1000, read); allocs != 0 {
		t.Errorf("%.1f allocations per frame, want none", allocs)
	}
}

// Once the socket is open it is read directly, not through the probe; a frame that already
// waits in the buffer when it opens is not lost by the switch.
func TestOpenedReadsTheSocketDirectlyAndKeepsWhatWaits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		waiting bool // the second frame arrived with the first, before opened
	}{
		{"nothing waiting", false},
		{"a frame waiting", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server, client := net.Pipe()
			defer server.Close()
			defer client.Close()
			pc := &probedConn{Conn: client, watching: true}
			c := &wsConn{conn: pc}
			c.br.Reset(pc)
			first, second := serverFrame(true, opText, nextMsg("1", 1, 0)), serverFrame(true, opText, nextMsg("1", 2, 0))
			go func() {
				if tc.waiting {
					_, _ = server.Write(append(append([]byte(nil), first...), second...))
					return
				}
				_, _ = server.Write(first)
				_, _ = server.Write(second)
			}()
			for i, seq := range []int32{1, 2} {
				data, err := c.readMessage()
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if _, got, ok := quickNext(data, testPrefix); !ok || got != seq {
					t.Fatalf("frame %d: got %s, want event %d", i, data, seq)
				}
				if i == 0 {
					if got := c.br.Buffered() > 0; got != tc.waiting {
						t.Fatalf("bytes waiting after the first frame: %v, want %v", got, tc.waiting)
					}
					c.opened()
				}
			}
			if pc.lastRead.Load() == 0 {
				t.Error("the probe saw no read before the socket opened")
			}
		})
	}
}

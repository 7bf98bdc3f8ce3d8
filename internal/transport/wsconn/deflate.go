package wsconn

import (
	"bytes"
	"io"
	"sync"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws/wsflate"
	"github.com/klauspost/compress/flate"
)

// permessage-deflate (RFC 7692), negotiated only when the client offers it, and always without
// context takeover in both directions: the server's response says server_no_context_takeover
// and client_no_context_takeover (§7.1.1.2 lets a server add the latter whether or not the
// offer has it, and the client must then comply). So every message is compressed and inflated
// on its own, and an idle socket holds no compression state: a compressor or an inflater
// (some 40 KB to 600 KB each) is taken from a pool for one batch of writes or one message
// read, and given back. It also lets a message shared by many connections be compressed once
// (Deflate) and the same bytes framed for every connection that negotiated deflate
// (AppendDeflatedNext).

// DeflateMinBytes is the smallest message compressed: below it the saving is a few bytes and
// the CPU is not; RFC 7692 lets any message go uncompressed (RSV1 clear).
const DeflateMinBytes = 512

// deflateTail is the empty stored block a sync flush ends with, which RFC 7692 §7.2.1 has the
// sender drop and the receiver put back.
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff}

// NegotiateDeflate returns the upgrader's Negotiate callback and a report of whether it
// accepted permessage-deflate. It declines an offer that asks the server for a window smaller
// than the 32 KB the compressor uses.
func NegotiateDeflate() (func(httphead.Option) (httphead.Option, error), func() bool) {
	accepted := false
	return func(opt httphead.Option) (httphead.Option, error) {
			if accepted || !bytes.Equal(opt.Name, wsflate.ExtensionNameBytes) {
				return httphead.Option{}, nil
			}
			var offer wsflate.Parameters
			if err := offer.Parse(opt); err != nil {
				return httphead.Option{}, nil // a malformed offer is declined, not refused
			}
			if offer.ServerMaxWindowBits.Defined() && offer.ServerMaxWindowBits != 15 {
				return httphead.Option{}, nil
			}
			accepted = true
			return wsflate.Parameters{ServerNoContextTakeover: true, ClientNoContextTakeover: true}.Option(), nil
		}, func() bool {
			return accepted
		}
}

type deflater struct {
	w   *flate.Writer
	buf bytes.Buffer
}

var deflaters = sync.Pool{New: func() any {
	d := &deflater{}
	d.w, _ = flate.NewWriter(&d.buf, 5)
	return d
}}

// Deflate compresses p as (part of) one message's payload, ending with a sync flush that the
// caller may keep (inside a message) or drop (its end). Without context takeover the same p
// compresses to the same blocks for every connection.
func Deflate(p []byte) []byte {
	d := deflaters.Get().(*deflater)
	d.buf.Reset()
	d.w.Reset(&d.buf)
	_, _ = d.w.Write(p)
	_ = d.w.Flush()
	out := bytes.Clone(d.buf.Bytes())
	if d.buf.Cap() > 64<<10 {
		d.buf = bytes.Buffer{} // a rare large message does not stay in the pool
	}
	deflaters.Put(d)
	return out
}

// AppendDeflatedFrame appends p as one text frame, compressed (RSV1 set).
func AppendDeflatedFrame(b []byte, p []byte) []byte {
	c := Deflate(p)
	c = c[:len(c)-len(deflateTail)]
	b = AppendHeader(b, 0, len(c))
	b[len(b)-headerLen(len(c))] |= 0x40 | 0x1 // RSV1, text
	return append(b, c...)
}

// MaxStored is the most a stored deflate block holds: the longest prefix AppendDeflatedNext
// takes.
const MaxStored = 0xffff

// appendStored appends p, at most MaxStored bytes, as a non-final stored deflate block; the
// writer is byte-aligned before and after it.
func appendStored(b, p []byte) []byte {
	n := len(p)
	return append(append(b, 0x00, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8)), p...)
}

// AppendDeflatedNext appends a message made of prefix, a shared payload and "}", compressed:
// the connection's prefix (at most MaxStored bytes) and the closing brace as stored blocks
// around shared, the payload as Deflate compressed it once for every connection.
func AppendDeflatedNext(b []byte, prefix, shared []byte) []byte {
	n := 5 + len(prefix) + len(shared) + 5 + 1 + 1
	b = AppendHeader(b, 0, n)
	b[len(b)-headerLen(n)] |= 0x40 | 0x1
	b = appendStored(b, prefix)
	b = append(b, shared...)
	b = appendStored(b, []byte{'}'})
	return append(b, 0x00) // the empty stored block's header; its LEN and NLEN are dropped
}

var inflaters = sync.Pool{New: func() any { return flate.NewReader(nil) }}

// inflate decompresses one message's payload, reading at most limit bytes of output: a
// message that inflates to more is errMessageTooBig, however small it arrived, and costs no
// more than limit bytes.
func inflate(p []byte, limit int64) ([]byte, error) {
	fr := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(fr)
	if err := fr.(flate.Resetter).Reset(io.MultiReader(bytes.NewReader(p), bytes.NewReader(deflateTail)), nil); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	n, err := out.ReadFrom(io.LimitReader(fr, limit+1))
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, ProtocolViolation("a compressed message does not inflate")
	}
	if n > limit {
		return nil, ErrMessageTooBig
	}
	return out.Bytes(), nil
}

// Package compress compresses HTTP responses with zstd or gzip, as the client's Accept-Encoding
// asks: JSON answers, incremental (multipart/mixed) ones part by part as they are flushed, and
// the pages' scripts and styles. Mobile clients on slow networks get the family graph's answer
// in a tenth of its bytes. klauspost/compress provides both encoders; its gzhttp handler does
// gzip only, so one writer here negotiates and buffers for both, the same way.
package compress

import (
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// MinSize is the smallest response compressed: below it, the encoding's own frame and the
// work cost more than the bytes saved. A streamed response is compressed from its first flush.
const MinSize = 1024

// Handler compresses what next answers when the client accepts zstd or gzip. WebSocket
// upgrades and Server-Sent Events pass untouched: both take their connection over, and an
// event stream must reach the client event by event. So do HEAD and Range requests.
func Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Accept-Encoding")
		enc := Negotiate(r.Header.Get("Accept-Encoding"))
		// A range is of the bytes as they are, which compressing would change.
		if enc == "" || r.Method == http.MethodHead || r.Header.Get("Range") != "" {
			next.ServeHTTP(w, r)
			return
		}
		cw := &writer{ResponseWriter: w, enc: enc}
		defer cw.close()
		next.ServeHTTP(cw, r)
	})
}

// Negotiate picks the encoding of a response from the request's Accept-Encoding: zstd or gzip,
// whichever has the higher quality, or "" for none. A coding with q=0 is refused; * stands for
// any coding not named. When they tie, gzip: some clients offer zstd they cannot decode
// (@whatwg-node/node-fetch, which graphql-codegen uses, offers it on Node 20, whose zlib has
// none, and crashes on the answer), and gzip is decoded everywhere.
func Negotiate(acceptEncoding string) string {
	q := map[string]float64{}
	star := -1.0
	for part := range strings.SplitSeq(acceptEncoding, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" {
			continue
		}
		quality := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0 // a quality that is not one refuses, rather than guess
				}
				quality = f
			}
		}
		if name == "*" {
			star = quality
		} else {
			q[name] = quality
		}
	}
	quality := func(name string) float64 {
		if v, ok := q[name]; ok {
			return v
		}
		if name == "gzip" {
			if v, ok := q["x-gzip"]; ok {
				return v
			}
		}
		return max(star, 0)
	}
	z, g := quality("zstd"), quality("gzip")
	switch {
	case g > 0 && g >= z:
		return "gzip"
	case z > 0:
		return "zstd"
	}
	return ""
}

// compressible reports whether a response of this Content-Type is worth compressing: text
// formats, whatever is JSON, and multipart answers (incremental delivery's parts are JSON).
func compressible(contentType string) bool {
	switch contentType {
	case "application/json; charset=utf-8", "application/graphql-response+json; charset=utf-8":
		return true // what the GraphQL transports answer, without mime's map of parameters
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case mt == "text/event-stream":
		return false
	case strings.HasPrefix(mt, "text/"), mt == "multipart/mixed", mt == "image/svg+xml",
		mt == "application/json", strings.HasSuffix(mt, "+json"), mt == "application/javascript":
		return true
	}
	return false
}

// encoder is a pooled gzip or zstd writer.
type encoder interface {
	io.WriteCloser
	Flush() error
	Reset(io.Writer)
}

var (
	// gzip at its fastest level, as nginx's default: on the gateway's JSON it gives 10.6% of the
	// bytes against 9.0% at the default level (the 200-card family: 18.4 KB of 174 KB, not
	// 15.6 KB) for 12% less CPU per query (docs/performance.md); zstd, for a client that takes it,
	// does better on both.
	gzipPool = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // the level is valid
		return w
	}}
	// One goroutine each, and a window of 1 MiB: a response is at most MAX_RESPONSE_BYTES, and
	// an encoder's memory grows with its window.
	zstdPool = sync.Pool{New: func() any {
		w, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20),
			zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithLowerEncoderMem(true)) // the options are valid
		return w
	}}
)

func getEncoder(enc string, w io.Writer) encoder {
	var e encoder
	if enc == "zstd" {
		e = zstdPool.Get().(*zstd.Encoder)
	} else {
		e = gzipPool.Get().(*gzip.Writer)
	}
	e.Reset(w)
	return e
}

func putEncoder(enc string, e encoder) {
	e.Reset(io.Discard) // let go of the response
	if enc == "zstd" {
		zstdPool.Put(e)
	} else {
		gzipPool.Put(e)
	}
}

// writer holds a response back until it knows whether to compress it: at MinSize bytes, at
// the first flush, or at the end.
type writer struct {
	http.ResponseWriter
	enc     string
	status  int
	buf     []byte
	decided bool
	e       encoder // nil: not compressed
}

func (w *writer) WriteHeader(status int) {
	if w.decided || w.status != 0 {
		return
	}
	if status < 200 {
		w.ResponseWriter.WriteHeader(status) // informational: passed on as it comes
		return
	}
	w.status = status
}

func (w *writer) Write(b []byte) (int, error) {
	if !w.decided {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		h := w.Header()
		if h.Get("Content-Type") == "" {
			h.Set("Content-Type", http.DetectContentType(append(w.buf, b...)))
		}
		if !w.wanted() {
			if err := w.decide(false); err != nil {
				return 0, err
			}
		} else if len(w.buf)+len(b) < MinSize {
			w.buf = append(w.buf, b...)
			return len(b), nil
		} else if err := w.decide(true); err != nil {
			return 0, err
		}
	}
	if w.e != nil {
		return w.e.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// wanted reports whether the response, as its headers stand, is one to compress.
func (w *writer) wanted() bool {
	h := w.Header()
	return h.Get("Content-Encoding") == "" && w.status != http.StatusNoContent && w.status != http.StatusNotModified &&
		compressible(h.Get("Content-Type"))
}

// decide sends the headers, compressed or not, and what was held back.
func (w *writer) decide(compress bool) error {
	w.decided = true
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if compress {
		h := w.Header()
		h.Del("Content-Length")
		h.Del("Accept-Ranges") // ranges of the compressed bytes are not the ones asked for
		h.Set("Content-Encoding", w.enc)
		w.ResponseWriter.WriteHeader(w.status)
		w.e = getEncoder(w.enc, w.ResponseWriter)
	} else {
		w.ResponseWriter.WriteHeader(w.status)
	}
	held := w.buf
	w.buf = nil
	if len(held) == 0 {
		return nil
	}
	var err error
	if w.e != nil {
		_, err = w.e.Write(held)
	} else {
		_, err = w.ResponseWriter.Write(held)
	}
	return err
}

// Flush sends what is written so far: a streamed response (incremental delivery) is
// compressed from its first flush, part by part.
func (w *writer) Flush() {
	if !w.decided {
		if w.status == 0 && len(w.buf) == 0 {
			w.status = http.StatusOK
		}
		if err := w.decide(w.wanted()); err != nil {
			return
		}
	}
	if w.e != nil {
		if err := w.e.Flush(); err != nil {
			return
		}
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection, for deadlines.
func (w *writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// close ends the response: one that stayed under MinSize goes out as it is, with its length;
// a compressed one gets its encoding's end, and its encoder goes back to the pool.
func (w *writer) close() {
	if !w.decided {
		if w.status == 0 && len(w.buf) == 0 {
			return // nothing was written: the server answers 200 with no body itself
		}
		if w.Header().Get("Content-Encoding") == "" && w.status != http.StatusNoContent && w.status != http.StatusNotModified {
			w.Header().Set("Content-Length", strconv.Itoa(len(w.buf)))
		}
		_ = w.decide(false) // the client went away: nothing to tell it
		return
	}
	if w.e != nil {
		_ = w.e.Close()
		putEncoder(w.enc, w.e)
		w.e = nil
	}
}

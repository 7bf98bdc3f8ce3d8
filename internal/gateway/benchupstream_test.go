package gateway_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

// replay stands between the gateway and a sandbox in the benchmarks. While it records, it
// passes each request to the sandbox and keeps the answer; then it answers the same requests
// itself, from memory, so that a benchmark measures the gateway and not the sandbox's work
// behind it (encoding 200 contacts costs it about as much as the gateway's mapping). The
// gateway still makes every upstream request over loopback HTTP, and replay counts them.
type replay struct {
	sandbox http.Handler

	mu        sync.Mutex
	recording bool
	answers   map[string]*answer

	// latency is how long a replayed answer takes, as a service across a network would.
	latency time.Duration

	served atomic.Int64
	// missed is the first request replay had no answer for.
	missed atomic.Pointer[string]
}

// answer is what the sandbox answered one request.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// newReplayUpstream starts a sandbox without demo data behind a replay, recording.
func newReplayUpstream(t testing.TB) (*upstream, *replay) {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Seed: 11, Empty: true, AccessToken: upstreamToken, BasicCredentials: upstreamBasic, FileDir: t.TempDir()})
	if err != nil {
		t.Fatalf("sandbox.New: %v", err)
	}
	rp := &replay{sandbox: sb, recording: true, answers: map[string]*answer{}}
	s := sandboxtest.Serve(t, rp)
	s.Sandbox = sb
	t.Cleanup(func() {
		s.Close()
		if err := sb.Close(); err != nil {
			t.Errorf("close sandbox: %v", err)
		}
	})
	return &upstream{s}, rp
}

// key names a request by what decides its answer: method, path and query, and body.
func (*replay) key(r *http.Request) (string, []byte) {
	body, _ := io.ReadAll(r.Body)
	k := r.Method + " " + r.URL.RequestURI()
	if len(body) > 0 {
		k += fmt.Sprintf(" %x", sha256.Sum256(body))
	}
	return k, body
}

func (rp *replay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k, body := rp.key(r)
	rp.mu.Lock()
	recording, a := rp.recording, rp.answers[k]
	rp.mu.Unlock()
	if recording {
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		rp.sandbox.ServeHTTP(rec, r)
		a = &answer{status: rec.Code, header: rec.Header().Clone(), body: rec.Body.Bytes()}
		rp.mu.Lock()
		rp.answers[k] = a
		rp.mu.Unlock()
	} else {
		rp.served.Add(1)
		if rp.latency > 0 {
			time.Sleep(rp.latency)
		}
	}
	if a == nil {
		rp.missed.CompareAndSwap(nil, &k)
		http.Error(w, "replay: not recorded: "+k, http.StatusInternalServerError)
		return
	}
	for name, values := range a.header {
		w.Header()[name] = values
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// replaying stops recording: from now on every request is answered from memory.
func (rp *replay) replaying() {
	rp.mu.Lock()
	rp.recording = false
	rp.mu.Unlock()
}

// check fails b if a request was not recorded, or if the n operations since the last check
// did not make perOp upstream requests each, as they did while recording.
func (rp *replay) check(b testing.TB, n, perOp int64) {
	b.Helper()
	if k := rp.missed.Load(); k != nil {
		b.Fatalf("the gateway asked the upstream what the sandbox was never asked: %s", *k)
	}
	if got := rp.served.Swap(0); got != n*perOp {
		b.Fatalf("%d operations made %d upstream requests, want %d each", n, got, perOp)
	}
}

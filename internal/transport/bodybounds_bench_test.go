package transport

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// bomb is a JSON body of about size bytes: head, then as many empty objects as fit, then tail.
func bomb(head, tail string, size int) []byte {
	n := (size - len(head) - len(tail)) / 3
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(head)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("{}")
	}
	b.WriteString(tail)
	return b.Bytes()
}

// bombs are 2 MiB bodies that hold as many values as fit: in variables, in extensions, in
// a batch, and behind a query of the wrong type.
func bombs() map[string][]byte {
	const size = 2 << 20
	long := strings.Repeat("x", size-40_000)
	return map[string][]byte{
		"variables":  bomb(`{"query":"{ ok }","variables":{"a":[`, `]}}`, size),
		"extensions": bomb(`{"query":"{ ok }","extensions":{"a":[`, `]}}`, size),
		"batch":      bomb(`[`, `]`, size),
		"malformed":  bomb(`{"query":5,"variables":{"a":[`, `]}}`, size),
		// The bound passed at the body's end, behind a string: the whole body is scanned.
		"late": bomb(`{"query":"{ ok }","variables":{"s":"`+long+`","a":[`, `]}}`, size),
		// Within every bound but of the wrong type: scanned, then decoded.
		"wrongtype": []byte(`{"query":5,"variables":{"s":"` + long + `"}}`),
		"deep":      []byte(strings.Repeat("[", size/2) + strings.Repeat("]", size/2)),
	}
}

// bombHandler is the JSON transport as the gateway serves it, batches on.
func bombHandler() http.Handler {
	return testHandler(testExecutor(), Config{BatchLimit: 10, MaxRequestBytes: 2 << 20, Streams: NewStreams()})
}

// BenchmarkRefuseBomb measures what refusing a 2 MiB body full of values costs: the CPU of one
// refusal (ns/op) and what it allocates (B/op).
func BenchmarkRefuseBomb(b *testing.B) {
	h := bombHandler()
	for name, body := range bombs() {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusBadRequest {
					b.Fatalf("status %d: %.200s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}

package wsconn_test

import (
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/transport/fanout"
	"github.com/advisorhq/gateway/internal/transport/wsconn"
)

// BenchmarkDeflatedNext compares framing a 3 KB result for one more member: the shared
// compressed bytes, against compressing the member's whole message.
func BenchmarkDeflatedNext(b *testing.B) {
	data := []byte(`{"data":{"clientProgress":{"wid":"w-1","completionPercentage":80,"steps":[` +
		strings.Repeat(`{"name":"Collect documents","done":true,"at":"2026-11-22T10:00:00Z"},`, 40) + `{}]}}}`)
	prefix := []byte(`{"id":"0b6c9c1e-7d2a","type":"next","payload":`)
	b.Run("shared", func(b *testing.B) {
		r := &fanout.Result{JSON: data}
		r.Deflated.Of(r.JSON, wsconn.Deflate)
		b.ReportAllocs()
		buf := make([]byte, 0, 8192)
		for b.Loop() {
			buf = wsconn.AppendDeflatedNext(buf[:0], prefix, r.Deflated.Of(r.JSON, wsconn.Deflate))
		}
		b.ReportMetric(float64(len(buf)), "wire-bytes")
	})
	b.Run("per-member", func(b *testing.B) {
		msg := append(append(append([]byte{}, prefix...), data...), '}')
		b.ReportAllocs()
		buf := make([]byte, 0, 8192)
		for b.Loop() {
			buf = wsconn.AppendDeflatedFrame(buf[:0], msg)
		}
		b.ReportMetric(float64(len(buf)), "wire-bytes")
	})
	b.ReportMetric(float64(len(data)), "json-bytes")
}

package main

import (
	"fmt"
	"testing"
)

// BenchmarkFamilyQuery measures the whole family query through the gateway and a loopback
// sandbox: HTTP both ways, two upstream requests, mapping, the request cache and the graph.
func BenchmarkFamilyQuery(b *testing.B) {
	for _, n := range []int{20, 200} {
		b.Run(fmt.Sprintf("contacts=%d", n), func(b *testing.B) {
			up := newUpstream(b, false)
			gw := newGateway(b, up, nil)
			wid := up.family(b, fmt.Sprintf("BENCH-%d", n), n)
			vars := map[string]any{"wid": wid}
			gw.post(b, familyQuery, vars).ok(b, nil)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				gw.post(b, familyQuery, vars).ok(b, nil)
			}
		})
	}
}

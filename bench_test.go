package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// The benchmarks drive the gateway as a client does: HTTP on loopback, against a loopback
// sandbox in the same process. Run them on one core, where ns/op is the CPU of one operation:
//
//	GOMAXPROCS=1 go test -run '^$' -bench . -benchmem -count 3
//
// Each also reports cpu-ns/op, the process's user and system CPU (getrusage) per operation,
// which counts every core when GOMAXPROCS is larger. Both include the sandbox's share and
// the benchmark's own client, which are small beside the gateway's.

// BenchmarkFamilyQuery measures the whole family query (familyQuery: all six card types, every
// reference and relationship with its contact) at 20, 200 and 2,000 contacts: HTTP both ways,
// two upstream requests, mapping, the request cache and the graph.
func BenchmarkFamilyQuery(b *testing.B) {
	for _, n := range []int{20, 200, 2000} {
		b.Run(fmt.Sprintf("contacts=%d", n), func(b *testing.B) {
			up := newUpstream(b, false)
			gw := newGateway(b, up, nil)
			wid := up.family(b, fmt.Sprintf("BENCH-%d", n), n)
			benchQuery(b, gw, familyQuery, map[string]any{"wid": wid})
		})
	}
}

// BenchmarkTopAccounts measures one page of 100 top accounts, names only.
func BenchmarkTopAccounts(b *testing.B) {
	b.Run("limit=100", func(b *testing.B) {
		up := newUpstream(b, false)
		gw := newGateway(b, up, nil)
		taSeed(b, up, 100)
		benchQuery(b, gw, `{ topAccounts(limit: 100) { nodes { name } } }`, nil)
	})
}

// BenchmarkContact measures one contact card by id, with its type's fields and references.
func BenchmarkContact(b *testing.B) {
	up := newUpstream(b, false)
	gw := newGateway(b, up, nil)
	wid := up.family(b, "BENCH-CONTACT", 20)
	var got struct {
		TopAccount struct{ Contact struct{ ID string } }
	}
	gw.post(b, `query($wid: ID!) { topAccount(wid: $wid) { contact(externalId: "c0") { ... on ContactCard { id } } } }`,
		map[string]any{"wid": wid}).ok(b, &got)
	benchQuery(b, gw, `query($wid: ID!, $id: ID!) {
  contact(wid: $wid, id: $id) {
    ... on ContactCard { id externalId type displayName }
    ... on Trust { legalName trustCreators { externalId } initialTrustees { externalId } }
  }
}`, map[string]any{"wid": wid, "id": got.TopAccount.Contact.ID})
}

// BenchmarkDocumentPage measures one page of 100 vault documents.
func BenchmarkDocumentPage(b *testing.B) {
	b.Run("first=100", func(b *testing.B) {
		up := newUpstream(b, false)
		gw := newGateway(b, up, nil)
		wid := docTopAccount(b, up, "BENCH-DOCS")
		for i := range 100 {
			docAdd(b, up, wid, map[string]any{"name": fmt.Sprintf("Doc %d", i), "extension": "pdf", "category": "miscellaneous", "sub_category": "uncategorized"})
		}
		benchQuery(b, gw, docPageQuery, map[string]any{"wid": wid, "first": 100})
	})
}

// benchQuery checks the operation once, then posts it b.N times and reports allocations and
// cpu-ns/op. The loop reads each answer whole and checks it has no errors, without decoding
// it, so the client's share stays small.
func benchQuery(b *testing.B, gw *gateway, query string, vars map[string]any) {
	b.Helper()
	gw.post(b, query, vars).ok(b, nil)
	body := jsonBody(query, vars)
	errorsKey := []byte(`"errors":`)
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		resp, err := http.Post(gw.url+"/graphql", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || bytes.Contains(data, errorsKey) {
			b.Fatalf("status %d, %v: %.300s", resp.StatusCode, err, data)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// jsonBody is a GraphQL request's body.
func jsonBody(query string, vars map[string]any) []byte {
	req := jsonRequest(http.MethodPost, "http://unused/", map[string]any{"query": query, "variables": vars})
	data, _ := io.ReadAll(req.Body)
	return data
}

// cpuTime is the user and system CPU the process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

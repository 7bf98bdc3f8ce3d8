package gateway_test

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The family query's whole answer at 200 contacts, byte for byte: the sandbox's seed makes its
// ids the same on every run, so any change to what the gateway answers (or to the order of its
// fields and elements) shows here. Performance work on the family graph is checked against it.
// Run with -update to rewrite testdata/family200.golden.json after an intended change.
func TestFamilyQueryGolden(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := up.family(t, "GOLDEN", 200)
	up.ResetRequests()
	got := gw.raw(t, familyQuery, map[string]any{"wid": wid})
	want := []string{"GET /v2/top-accounts/" + wid, "GET /v2/top-accounts/" + wid + "/contacts/"}
	if reqs := up.Requests(); !slices.Equal(reqs, want) {
		t.Errorf("upstream requests %v, want %v", reqs, want)
	}
	golden := filepath.Join("testdata", "family200.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantBody, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, wantBody) {
		at := 0
		for at < min(len(got), len(wantBody)) && got[at] == wantBody[at] {
			at++
		}
		t.Errorf("response differs from %s at byte %d of %d (want %d bytes):\ngot  …%s…\nwant …%s…",
			golden, at, len(got), len(wantBody), around(got, at), around(wantBody, at))
	}
}

// around is up to 80 bytes of b either side of at.
func around(b []byte, at int) []byte {
	return b[max(0, at-80):min(len(b), at+80)]
}

// raw posts a GraphQL operation and returns the response body as it came, which must be 200.
func (g *testGateway) raw(t testing.TB, query string, vars map[string]any) []byte {
	t.Helper()
	req := jsonRequest(http.MethodPost, g.url+"/graphql", map[string]any{"query": query, "variables": vars})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	return body
}

package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/testnpm"
)

// deferredFamilyQuery asks for the family's cards at once and its documents deferred.
const deferredFamilyQuery = `query FamilyFirst {
  topAccounts(limit: 1) {
    nodes {
      name
      contacts { __typename ... on ContactCard { displayName } }
      ... @defer(label: "documents") { documents(first: 5) { totalCount nodes { name } } }
    }
  }
}`

// slowDocuments is the upstream behind a proxy that holds every request for documents for
// delay, as a slow vault would, so that what is deferred visibly comes later.
func slowDocuments(t *testing.T, up *upstream, delay time.Duration) string {
	t.Helper()
	target, err := url.Parse(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/documents") {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The issue's @defer test: Apollo Client 4, reading incremental delivery as front ends do,
// first gets the family's cards with its documents still to come, then the documents; the
// raw answer is multipart/mixed, an initial part and an incremental one.
func TestApolloClientGetsTheCardsFirstAndTheDeferredDocumentsAfter(t *testing.T) {
	t.Parallel()
	npmInstall(t, apolloDir, "@apollo/client")
	up := newUpstream(t, true)
	gw := newGateway(t, up, map[string]string{"ADVISOR_BASE_URL": slowDocuments(t, up, 300*time.Millisecond)})
	queryFile := filepath.Join(t.TempDir(), "family.graphql")
	if err := os.WriteFile(queryFile, []byte(deferredFamilyQuery), 0o644); err != nil {
		t.Fatal(err)
	}
	cards := []string{"Charity", "Class", "Entity", "Individual", "Trust", "Will"}
	possible, _ := json.Marshal(map[string][]string{"Contact": cards, "ContactCard": cards})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var got struct {
		Emitted []struct {
			DataState string
			Data      map[string]any
			Error     *string
		}
		ContentType string
		Raw         string
	}
	testnpm.RunJSON(t, exec.CommandContext(ctx, "node", filepath.Join(apolloDir, "defer.mjs"), gw.url, queryFile, string(possible)), &got)

	// Apollo Client first emits that the query is loading, with no data.
	emitted := got.Emitted
	for len(emitted) > 0 && emitted[0].DataState == "empty" {
		emitted = emitted[1:]
	}
	if len(emitted) < 2 {
		t.Fatalf("Apollo Client emitted %+v, want the cards and then the documents", got.Emitted)
	}
	first, last := emitted[0], emitted[len(emitted)-1]
	if first.DataState != "streaming" || last.DataState != "complete" || last.Error != nil {
		t.Errorf("data states %q then %q (error %v), want streaming then complete", first.DataState, last.DataState, last.Error)
	}
	family := func(data map[string]any) map[string]any {
		nodes, _ := dig(data, "topAccounts", "nodes").([]any)
		if len(nodes) != 1 {
			t.Fatalf("got %v, want one family", data)
		}
		return nodes[0].(map[string]any)
	}
	if f := family(first.Data); len(f["contacts"].([]any)) < 10 || f["documents"] != nil {
		t.Errorf("the first result: %d cards and documents %v; want every card and no documents yet", len(f["contacts"].([]any)), f["documents"])
	}
	if f := family(last.Data); dig(f, "documents", "totalCount") == nil {
		t.Errorf("the complete result has no documents: %v", f)
	}

	if !strings.HasPrefix(got.ContentType, "multipart/mixed") || !strings.Contains(got.ContentType, "deferSpec=20220824") {
		t.Errorf("Content-Type %q, want multipart/mixed with deferSpec=20220824", got.ContentType)
	}
	parts := strings.Split(strings.TrimSuffix(got.Raw, "-----\r\n"), "\r\n---")
	if len(parts) != 2 || !strings.Contains(parts[1], `"incremental":[{"data":{"documents":`) || !strings.Contains(parts[1], `"label":"documents"`) {
		t.Errorf("the raw answer is not an initial part and an incremental one with the documents:\n%s", got.Raw)
	}
}

// A client that does not accept multipart/mixed gets one response with the deferred fields in
// their places.
func TestADeferredOperationIsOneResponseForAClientThatAsksForOne(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	plain := strings.Replace(deferredFamilyQuery, `... @defer(label: "documents") { documents(first: 5) { totalCount nodes { name } } }`,
		`documents(first: 5) { totalCount nodes { name } }`, 1)
	want := gw.post(t, plain, nil)
	want.ok(t, nil)
	got := gw.post(t, deferredFamilyQuery, nil)
	got.ok(t, nil)
	if string(got.Data) != string(want.Data) {
		t.Errorf("with @defer:\n%s\nwant what the same query without it gets:\n%s", got.Data, want.Data)
	}
	if strings.Contains(string(got.Data), "hasNext") {
		t.Error("the merged response carries hasNext")
	}
}

// A client that goes away while the deferred fields resolve leaves nothing waiting for it: the
// executor's goroutines and the request's end. (Not parallel: it counts goroutines.)
func TestAClientThatLeavesDuringADeferredOperationLeavesNothingWaiting(t *testing.T) {
	up := newUpstream(t, true)
	gw := newGateway(t, up, map[string]string{"ADVISOR_BASE_URL": slowDocuments(t, up, 2*time.Second)})
	waiting := func() int {
		buf := make([]byte, 1<<22)
		stacks := string(buf[:runtime.Stack(buf, true)])
		return strings.Count(stacks, "transport.writeIncremental") + strings.Count(stacks, "transport.mergeDeferred")
	}
	for _, accept := range []string{"multipart/mixed;deferSpec=20220824", "application/json"} {
		ctx, cancel := context.WithCancel(context.Background())
		body, _ := json.Marshal(map[string]any{"query": deferredFamilyQuery})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gw.url+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = resp.Body.Read(make([]byte, 64))
				<-ctx.Done() // holding the connection until the client gives up
				resp.Body.Close()
			}
		}()
		deadline := time.Now().Add(5 * time.Second)
		for waiting() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if waiting() == 0 {
			t.Fatalf("%s: the operation never waited for its deferred part", accept)
		}
		cancel()
		<-done
		for waiting() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := waiting(); n > 0 {
			t.Errorf("%s: %d goroutines still wait for a deferred part after the client left", accept, n)
		}
	}
}

// What a deferred fragment adds counts against the response's MAX_RESPONSE_BYTES with the rest:
// deferring part of an answer is no way around the limit.
func TestDeferredFragmentsCountAgainstTheResponseLimit(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, map[string]string{"MAX_RESPONSE_BYTES": "1KiB"})
	query := `query { topAccounts(limit: 1) { nodes { name ... @defer { contacts { __typename ... on ContactCard { displayName } } documents(first: 50) { nodes { name tags } } } } } }`
	for _, accept := range []string{"multipart/mixed;deferSpec=20220824", "application/json"} {
		body, _ := json.Marshal(map[string]any{"query": query})
		req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(raw), "OPERATION_LIMIT_EXCEEDED") || !strings.Contains(string(raw), "MAX_RESPONSE_BYTES") {
			t.Errorf("%s: %d %v: the answer does not say it grew past MAX_RESPONSE_BYTES:\n%s", accept, resp.StatusCode, resp.Header, raw)
		}
		if len(raw) > 8<<10 {
			t.Errorf("%s: the answer is %d bytes, past a limit of 1 KiB by more than its errors", accept, len(raw))
		}
	}
}

package gateway_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A request the gateway accepted before a SIGTERM is finished before the program exits, even
// when it needs the embedded sandbox: the sandbox stops after the gateway has drained, not with
// the signal.
func TestShutdownLetsInFlightRequestsReachTheEmbeddedSandbox(t *testing.T) {
	t.Parallel()
	urls, stop := launch(t, nil, map[string]string{"ADDR": "127.0.0.1:0"}, "gateway serving")
	gw := &testGateway{url: urls[0]}
	var page struct {
		TopAccounts struct {
			Nodes []struct{ Wid string } `json:"nodes"`
		} `json:"topAccounts"`
	}
	// One connection, opened by this first request: the gateway has accepted it before the
	// signal, so the upload below is not a connection still waiting in the listen queue.
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	first := jsonRequest(http.MethodPost, gw.url+"/graphql", map[string]any{"query": `{ topAccounts(limit: 1) { nodes { wid } } }`})
	resp, err := client.Do(first)
	if err != nil {
		t.Fatal(err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&struct{ Data any }{&page})
	resp.Body.Close()
	wid := page.TopAccounts.Nodes[0].Wid

	// A multipart request whose last bytes are still to come when the signal arrives: the
	// gateway has accepted it, and calls the upstream only once the whole body is in.
	var full bytes.Buffer
	mw := multipart.NewWriter(&full)
	ops, _ := json.Marshal(map[string]any{
		"query":     `mutation($wid: ID!, $file: Upload) { createDocument(wid: $wid, input: {name: "Notes", extension: "csv", category: MISCELLANEOUS, subCategory: UNCATEGORIZED}, file: $file) { document { vaultId } } }`,
		"variables": map[string]any{"wid": wid, "file": nil},
	})
	_ = mw.WriteField("operations", string(ops))
	_ = mw.WriteField("map", `{"0":["variables.file"]}`)
	part, _ := mw.CreateFormFile("0", "notes.csv")
	// Larger than the client's write buffer, so the head reaches the gateway before the signal.
	_, _ = part.Write([]byte("a,b\n" + strings.Repeat("1,2\n", 16<<10)))
	_ = mw.Close()
	head, tail := full.Bytes()[:full.Len()-20], full.Bytes()[full.Len()-20:]

	body, bodyW := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", body)
	req.ContentLength = int64(full.Len())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("GraphQL-Require-Preflight", "1")
	answered := make(chan *result, 1)
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			answered <- &result{Errors: []gqlError{{Message: err.Error()}}}
			return
		}
		defer resp.Body.Close()
		r := &result{status: resp.StatusCode}
		_ = json.NewDecoder(resp.Body).Decode(r)
		answered <- r
	}()
	if _, err := bodyW.Write(head); err != nil {
		t.Fatal(err)
	}

	time.Sleep(100 * time.Millisecond) // for the gateway to read the head off its socket
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	time.Sleep(300 * time.Millisecond) // the head is in; let shutting down begin
	if _, err := bodyW.Write(tail); err != nil {
		t.Fatal(err)
	}
	_ = bodyW.Close()

	select {
	case r := <-answered:
		if len(r.Errors) > 0 || r.status != http.StatusOK {
			t.Errorf("the in-flight upload got status %d, errors %+v; want it done", r.status, r.Errors)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the in-flight upload got no answer within 15 s")
	}
	if err := <-stopped; err != nil {
		t.Errorf("run returned %v", err)
	}
}

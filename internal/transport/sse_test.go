package transport

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseEvents posts body to srv accepting text/event-stream, over HTTP/2 when srv serves it, and
// returns the status and the events to the stream's end, each as "<event> <data>"; comments
// (the opening one, keep-alives) are left out. after, if given, runs once the first event has
// arrived.
func sseEvents(t *testing.T, srv *lifetimeServer, body string, after func()) (int, []string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	client := srv.Client()
	client.Timeout = 5 * time.Second
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if want := map[bool]int{false: 1, true: 2}[srv.EnableHTTP2]; resp.ProtoMajor != want {
		t.Fatalf("answered over HTTP/%d, want HTTP/%d", resp.ProtoMajor, want)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream; charset=utf-8" {
		t.Fatalf("got Content-Type %q, want text/event-stream", ct)
	}
	var data []byte
	if after != nil {
		// after runs once the first event is in: over HTTP/2 the headers come before it, and a
		// stream stopped between the two has rightly nothing to show.
		br := bufio.NewReader(resp.Body)
		for !firstEventIn(data) {
			line, err := br.ReadBytes('\n')
			data = append(data, line...)
			if err != nil {
				t.Fatalf("reading the stream's first event: %v (got %q)", err, data)
			}
		}
		after()
		resp.Body = io.NopCloser(br)
	}
	rest, err := io.ReadAll(resp.Body)
	data = append(data, rest...)
	if err != nil {
		t.Fatalf("reading the stream: %v (got %q)", err, data)
	}
	var events []string
	for block := range strings.SplitSeq(string(data), "\n\n") {
		if block == "" || strings.HasPrefix(block, ":") {
			continue
		}
		event, rest, _ := strings.Cut(strings.TrimPrefix(block, "event: "), "\ndata: ")
		events = append(events, strings.TrimSpace(event+" "+rest))
	}
	return resp.StatusCode, events
}

// firstEventIn reports whether data, read to the end of a line, holds a whole event and not
// only comments.
func firstEventIn(data []byte) bool {
	if !strings.HasSuffix(string(data), "\n\n") {
		return false
	}
	for block := range strings.SplitSeq(string(data), "\n\n") {
		if block != "" && !strings.HasPrefix(block, ":") {
			return true
		}
	}
	return false
}

// Over SSE (graphql-sse's distinct connections), an operation's results are `next` events and
// its end is `complete`, whether it is a subscription or a query, over HTTP/1.1 (where the
// stream takes its connection over) and HTTP/2 alike; an operation that cannot run gets its
// errors as its only `next`, and a body that cannot be read is refused before any stream.
func TestSSEStreamsEachResultThenComplete(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		status int
		events []string
	}{
		{name: "a subscription", body: `{"query":"subscription { ticks(n: 3, size: 3, every: 1) }"}`, status: 200, events: []string{
			`next {"data":{"ticks":"0:x"}}`, `next {"data":{"ticks":"1:x"}}`, `next {"data":{"ticks":"2:x"}}`, "complete",
		}},
		{name: "a query", body: `{"query":"{ ok }"}`, status: 200, events: []string{`next {"data":{"ok":true}}`, "complete"}},
		{name: "an invalid operation", body: `{"query":"subscription { nope }"}`, status: 200, events: []string{
			`next {"errors":[{"message":"Cannot query field \"nope\" on type \"Subscription\".","locations":[{"line":1,"column":16}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}],"data":null}`,
			"complete",
		}},
		{name: "a body that is not JSON", body: `{"query":`, status: 400},
	}
	for _, h2 := range []bool{false, true} {
		srv := newLifetimeServer(t, Config{}, h2, 0)
		for _, tt := range tests {
			t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2]+"/"+tt.name, func(t *testing.T) {
				status, events := sseEvents(t, srv, tt.body, nil)
				if status != tt.status || strings.Join(events, "\n") != strings.Join(tt.events, "\n") {
					t.Fatalf("got %d with\n%s\nwant %d with\n%s", status, strings.Join(events, "\n"), tt.status, strings.Join(tt.events, "\n"))
				}
			})
		}
	}
}

// When the gateway shuts down, an SSE stream ends without `complete`, which graphql-sse
// clients read as "reconnect", and reach a replica that is not shutting down.
func TestAnSSEStreamEndsWithoutCompleteWhenTheGatewayStops(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2], func(t *testing.T) {
			srv := newLifetimeServer(t, Config{}, h2, 0)
			_, events := sseEvents(t, srv, `{"query":"subscription { hold }"}`, func() {
				if !eventually(func() bool { return srv.streams.Subscriptions() == 1 }) {
					t.Errorf("got %d subscriptions, want the stream's", srv.streams.Subscriptions())
				}
				srv.streams.Close()
			})
			if strings.Join(events, "\n") != `next {"data":{"hold":true}}` {
				t.Fatalf("got\n%s\nwant the one event, and no complete", strings.Join(events, "\n"))
			}
		})
	}
}

package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/internal/gateway"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// tracedGateway runs the gateway as newGateway does, with its spans going to an in-memory
// recorder and its log to a buffer, against up behind a proxy that records the traceparent of
// every request the gateway makes upstream.
type tracedGateway struct {
	*testGateway
	spans *tracetest.SpanRecorder
	log   *logBuffer

	mu           sync.Mutex
	traceparents []string
}

func startTracedGateway(t *testing.T, up *upstream, env map[string]string) *tracedGateway {
	t.Helper()
	tg := &tracedGateway{spans: tracetest.NewSpanRecorder(), log: &logBuffer{}}
	target, _ := url.Parse(up.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.mu.Lock()
		tg.traceparents = append(tg.traceparents, r.Header.Get("Traceparent"))
		tg.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	settings := map[string]string{
		"ADDR":                      "127.0.0.1:0",
		"ADVISOR_BASE_URL":          front.URL,
		"ADVISOR_FIRM":              sandbox.DemoFirmID,
		"ADVISOR_ACCESS_TOKEN":      upstreamToken,
		"ADVISOR_BASIC_CREDENTIALS": upstreamBasic,
		"WEBHOOK_API_KEY":           webhookKey,
		"AUTH_DISABLED":             "true",
		"LOG_FORMAT":                "json",
	}
	for k, v := range env {
		settings[k] = v
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tg.spans))
	ctx, cancel := context.WithCancel(context.Background())
	out, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, func(k string) string { return settings[k] }, outW, tg.log, gateway.Tracer(tp))
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the gateway returned %v after cancel, want nil", err)
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "gateway serving") {
				found <- regexp.MustCompile(`http://\S+`).FindString(sc.Text())
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case u := <-found:
		tg.testGateway = &testGateway{url: u, up: up}
	case err := <-done:
		t.Fatalf("the gateway ended before serving: %v\n%s", err, tg.log)
	case <-time.After(10 * time.Second):
		t.Fatalf("the gateway did not start within 10 s\n%s", tg.log)
	}
	return tg
}

// ended waits a little for a span named name to end, and returns every span ended by then.
func (tg *tracedGateway) ended(t *testing.T, name string) []sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		spans := tg.spans.Ended()
		for _, s := range spans {
			if s.Name() == name {
				return spans
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span %q ended; got %v", name, spanNames(spans))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	return names
}

// spanTree indexes spans by id, to walk from a span to its parents.
type spanTree map[trace.SpanID]sdktrace.ReadOnlySpan

func treeOf(spans []sdktrace.ReadOnlySpan) spanTree {
	tree := spanTree{}
	for _, s := range spans {
		tree[s.SpanContext().SpanID()] = s
	}
	return tree
}

// ancestors are s's parents' names, nearest first, as far as the recorded spans go.
func (tree spanTree) ancestors(s sdktrace.ReadOnlySpan) []string {
	var names []string
	for p, ok := tree[s.Parent().SpanID()]; ok; p, ok = tree[p.Parent().SpanID()] {
		names = append(names, p.Name())
	}
	return names
}

// A query's trace is a tree: the request's span, the operation's, the spans of the resolvers
// that did I/O, and under them the calls they made upstream, whose traceparent the upstream
// received. The JSON log line of the request carries the same trace id.
func TestAQueryIsTracedFromRequestToUpstream(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	wid := up.family(t, "TRACED", 3)
	tg := startTracedGateway(t, up, nil)
	tg.post(t, familyQuery, map[string]any{"wid": wid}).ok(t, nil)

	spans := tg.ended(t, "POST /graphql")
	tree := treeOf(spans)
	var client []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanKind() == trace.SpanKindClient {
			client = append(client, s)
		}
	}
	if len(client) == 0 {
		t.Fatalf("no upstream client span; got %v", spanNames(spans))
	}
	for _, tc := range []struct {
		name string
		want []string // the span's nearest ancestors, in order
	}{
		{name: "resolve Query.topAccount", want: []string{"query Family", "POST /graphql"}},
		{name: "query Family", want: []string{"POST /graphql"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var found bool
			for _, s := range spans {
				if s.Name() != tc.name {
					continue
				}
				found = true
				if got := tree.ancestors(s); strings.Join(got, " < ") != strings.Join(tc.want, " < ") {
					t.Errorf("got ancestors %v, want %v", got, tc.want)
				}
			}
			if !found {
				t.Errorf("no span %q; got %v", tc.name, spanNames(spans))
			}
		})
	}
	t.Run("an upstream call is a child of a resolver", func(t *testing.T) {
		var under []string
		for _, s := range client {
			a := tree.ancestors(s)
			if len(a) >= 3 && strings.HasPrefix(a[0], "resolve ") && a[len(a)-1] == "POST /graphql" && contains(strings.Join(a, ","), "query Family") {
				under = append(under, s.Name())
			}
		}
		if len(under) == 0 {
			for _, s := range client {
				t.Logf("%s < %v", s.Name(), tree.ancestors(s))
			}
			t.Fatal("no upstream span under resolver < operation < request")
		}
	})
	t.Run("the upstream received each call's traceparent", func(t *testing.T) {
		tg.mu.Lock()
		got := append([]string(nil), tg.traceparents...)
		tg.mu.Unlock()
		want := map[string]bool{}
		for _, s := range client {
			want[fmt.Sprintf("00-%s-%s-01", s.SpanContext().TraceID(), s.SpanContext().SpanID())] = true
		}
		var matched int
		for _, tp := range got {
			if want[tp] {
				matched++
			}
		}
		if matched == 0 || matched != len(client) {
			t.Errorf("got %d of %d client spans' traceparents upstream, want all; upstream saw %v", matched, len(client), got)
		}
	})
	t.Run("the request's JSON log line carries its trace id", func(t *testing.T) {
		var root sdktrace.ReadOnlySpan
		for _, s := range spans {
			if s.Name() == "POST /graphql" {
				root = s
			}
		}
		want := root.SpanContext().TraceID().String()
		for _, msg := range []string{"request", "operation"} {
			line := jsonLogLine(t, tg.log, msg)
			if line["trace_id"] != want {
				t.Errorf("%s line: got trace_id %v, want %s: %v", msg, line["trace_id"], want, line)
			}
		}
	})
}

// jsonLogLine is the first JSON log line whose msg is msg, waited for a little.
func jsonLogLine(t *testing.T, log *logBuffer, msg string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for line := range strings.Lines(log.String()) {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == msg {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no JSON log line %q in:\n%s", msg, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// No span says what a caller sent or what the gateway's credentials are: not a token, not an
// Authorization header, not the upstream's or the webhooks' keys, not a variable's value (the
// wid below also goes into the upstream's URL path, which client spans leave out).
func TestNoSpanCarriesACredentialOrAVariable(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	wid := up.family(t, "SECRETIVE", 2)
	tg := startTracedGateway(t, up, nil)
	const token = "caller-token-5f1e9d2c"
	body, _ := json.Marshal(map[string]any{"query": familyQuery, "variables": map[string]any{"wid": wid}})
	req, _ := http.NewRequest(http.MethodPost, tg.url+"/graphql", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	tg.do(t, req).ok(t, nil)
	// A GET puts the variables in the query string.
	q := url.Values{"query": {familyQuery}, "variables": {fmt.Sprintf(`{"wid":%q}`, wid)}}
	get, _ := http.NewRequest(http.MethodGet, tg.url+"/graphql?"+q.Encode(), nil)
	get.Header.Set("Authorization", "Bearer "+token)
	tg.do(t, get).ok(t, nil)
	tg.mustDeliver(t, progress(wid, 40))
	_ = tg.ended(t, "POST /webhooks")

	secrets := []string{token, "Bearer", upstreamToken, upstreamBasic, "upstream-pass", webhookKey, wid}
	spans := tg.spans.Ended()
	if len(spans) < 6 {
		t.Fatalf("got %d spans, want the requests', operations', resolvers' and upstream calls'", len(spans))
	}
	for _, s := range spans {
		var values []string
		for _, a := range s.Attributes() {
			values = append(values, string(a.Key)+"="+a.Value.Emit())
		}
		for _, e := range s.Events() {
			values = append(values, e.Name)
			for _, a := range e.Attributes {
				values = append(values, string(a.Key)+"="+a.Value.Emit())
			}
		}
		for _, l := range s.Links() {
			for _, a := range l.Attributes {
				values = append(values, string(a.Key)+"="+a.Value.Emit())
			}
		}
		values = append(values, s.Name(), s.Status().Description)
		for _, v := range values {
			for _, secret := range secrets {
				if strings.Contains(v, secret) {
					t.Errorf("span %q carries %q: %s", s.Name(), secret, v)
				}
			}
		}
	}
}

// A webhook's receipt is a span, and with Redis each command storing it is a span under it;
// its delivery to this replica's subscribers is one span with the same event id; a
// subscription over a WebSocket or SSE still works with tracing on.
func TestAWebhookIsTracedAndStreamsStillWork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		env       func(t *testing.T) map[string]string
		wantRedis bool
	}{
		{name: "in process", env: func(*testing.T) map[string]string { return nil }},
		{name: "in Redis", env: func(t *testing.T) map[string]string { return redisEnv(t, "") }, wantRedis: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tg := startTracedGateway(t, newUpstream(t, false), tc.env(t))
			c := dialWS(t, tg.testGateway, "graphql-transport-ws", nil)
			c.init()
			c.subscribe("1", progressSubscription, nil)
			sse := openSSE(t, tg.testGateway, progressSubscription, nil)
			waitSubscribers(t, tg.testGateway, 2)
			tg.mustDeliver(t, progress("w-traced", 55))
			if ev := c.nextData("1")["events"].(map[string]any); ev["completionPercentage"] != 55.0 {
				t.Fatalf("WebSocket: got event %v, want 55%%", ev)
			}
			if ev := sse.next(); ev.name != "next" || !strings.Contains(ev.data, "w-traced") {
				t.Fatalf("SSE: got %q %s, want the event", ev.name, ev.data)
			}
			_ = tg.ended(t, "POST /webhooks")
			spans := tg.ended(t, "deliver event")
			tree := treeOf(spans)
			// The receipt and the delivery name the same event.
			ids := map[string][]string{}
			for _, s := range spans {
				for _, a := range s.Attributes() {
					if a.Key == "event.id" {
						ids[s.Name()] = append(ids[s.Name()], a.Value.AsString())
					}
				}
			}
			if len(ids["POST /webhooks"]) != 1 || len(ids["deliver event"]) != 1 || ids["POST /webhooks"][0] != ids["deliver event"][0] {
				t.Errorf("got event ids %v, want the receipt's and the delivery's the same", ids)
			}
			var redis []string
			for _, s := range spans {
				if a := tree.ancestors(s); len(a) > 0 && a[len(a)-1] == "POST /webhooks" && s.SpanKind() == trace.SpanKindClient {
					redis = append(redis, s.Name())
				}
			}
			if tc.wantRedis && len(redis) == 0 {
				t.Errorf("no Redis command span under the webhook's; got %v", spanNames(spans))
			}
			if !tc.wantRedis && len(redis) > 0 {
				t.Errorf("got client spans %v under an in-process webhook, want none", redis)
			}
		})
	}
}

package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// deliver POSTs a webhook body to the gateway with the given key and returns the status and
// the decoded answer.
func (g *testGateway) deliver(t testing.TB, key string, body []byte) (int, map[string]any) {
	t.Helper()
	return g.webhook(t, http.MethodPost, key, "application/json", body)
}

// webhook sends a request to /webhooks, with key in service-api-key unless it is empty, and
// returns the status and the decoded answer.
func (g *testGateway) webhook(t testing.TB, method, key, contentType string, body []byte) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, g.url+"/webhooks", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if key != "" {
		req.Header.Set("service-api-key", key)
	}
	return doJSON(t, req)
}

// mustDeliver delivers an event and fails the test unless it is stored; it returns the id.
func (g *testGateway) mustDeliver(t testing.TB, ev map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(ev)
	status, out := g.deliver(t, webhookKey, body)
	if status != http.StatusOK {
		t.Fatalf("deliver %v: status %d: %v", ev["EventType"], status, out)
	}
	return out["id"].(string)
}

// progress is a ClientProgressChanged event of wid at pct percent.
func progress(wid string, pct int) map[string]any {
	return map[string]any{
		"EventType": "ClientProgressChanged", "Wid": wid, "Timestamp": "2026-11-22T10:00:00Z",
		"EstateStatus": "InProgress", "CompletionPercentage": pct,
	}
}

// wsClient speaks a GraphQL WebSocket subprotocol to the gateway.
type wsClient struct {
	t    testing.TB
	conn *websocket.Conn
}

func dialWS(t testing.TB, g *testGateway, protocol string, header http.Header) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(g.url, "http") + "/graphql"
	conn, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{protocol}, HTTPHeader: header})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return &wsClient{t: t, conn: conn}
}

func (c *wsClient) send(m map[string]any) {
	c.t.Helper()
	data, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, data); err != nil {
		c.t.Fatalf("write %s: %v", data, err)
	}
}

// read returns the next message that is not a keep-alive.
func (c *wsClient) read() map[string]any {
	c.t.Helper()
	for {
		m, err := c.next(5 * time.Second)
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		if m["type"] != "ka" && m["type"] != "ping" {
			return m
		}
	}
}

func (c *wsClient) next(wait time.Duration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, data, err := c.conn.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("message %s: %w", data, err)
	}
	return m, nil
}

// closed reads until the server closes the connection and returns its close code and reason.
func (c *wsClient) closed(wait time.Duration) (websocket.StatusCode, string) {
	c.t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		_, err := c.next(time.Until(deadline))
		if err == nil {
			continue
		}
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Reason
		}
		c.t.Fatalf("the connection ended without a close frame: %v", err)
	}
	c.t.Fatalf("the server did not close the connection within %s", wait)
	return 0, ""
}

// init sends connection_init and expects the ack.
func (c *wsClient) init() {
	c.t.Helper()
	c.send(map[string]any{"type": "connection_init"})
	if m := c.read(); m["type"] != "connection_ack" {
		c.t.Fatalf("got %v, want connection_ack", m)
	}
}

// subscribe starts an operation in graphql-transport-ws.
func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	c.send(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query, "variables": vars}})
}

// nextData reads the next message, which must be "next" for id, and returns its data.
func (c *wsClient) nextData(id string) map[string]any {
	c.t.Helper()
	m := c.read()
	if m["type"] != "next" || m["id"] != id {
		c.t.Fatalf("got %v, want next for %s", m, id)
	}
	payload := m["payload"].(map[string]any)
	if payload["errors"] != nil {
		c.t.Fatalf("next carries errors: %v", payload["errors"])
	}
	return payload["data"].(map[string]any)
}

// sseStream is a subscription over Server-Sent Events.
type sseStream struct {
	t      testing.TB
	body   io.ReadCloser
	events chan sseEvent
}

type sseEvent struct {
	name string
	data string
}

// postSSE starts an operation over Server-Sent Events and returns the open response, which
// the test's cleanup closes.
func postSSE(t testing.TB, g *testGateway, query string, vars map[string]any) *http.Response {
	t.Helper()
	return postSSEAs(t, g, "", query, vars)
}

// postSSEAs is postSSE with the Authorization header auth (none when empty).
func postSSEAs(t testing.TB, g *testGateway, auth, query string, vars map[string]any) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, g.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	return resp
}

func openSSE(t testing.TB, g *testGateway, query string, vars map[string]any) *sseStream {
	t.Helper()
	return openSSEAs(t, g, "", query, vars)
}

// openSSEAs is openSSE as the caller auth (none when empty).
func openSSEAs(t testing.TB, g *testGateway, auth, query string, vars map[string]any) *sseStream {
	t.Helper()
	resp := postSSEAs(t, g, auth, query, vars)
	s := &sseStream{t: t, body: resp.Body, events: make(chan sseEvent, 100)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" || ev.data != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event:"):
				ev.name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				ev.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
			}
		}
	}()
	return s
}

func (s *sseStream) next() sseEvent {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatal("the event stream ended")
		}
		return ev
	case <-time.After(5 * time.Second):
		s.t.Fatal("no event within 5 s")
	}
	return sseEvent{}
}

// waitSubscribers waits until the gateway has n open event subscriptions, as its metrics
// say: graphql-transport-ws does not acknowledge a subscribe, so an event sent right after
// one could otherwise be stored before the subscription starts, and be missed.
func waitSubscribers(t testing.TB, gw *testGateway, n int) {
	t.Helper()
	waitGauge(t, gw, "advisor_event_subscribers", n)
}

// waitGauge waits until the gateway's metrics report the gauge name at n.
func waitGauge(t testing.TB, gw *testGateway, name string, n int) {
	t.Helper()
	want := fmt.Sprintf("%s %d\n", name, n)
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(gw.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not report %s %d within 5 s", name, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

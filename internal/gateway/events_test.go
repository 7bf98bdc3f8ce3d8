package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const progressSubscription = `subscription($after: ID, $filter: EventFilter) {
  events(after: $after, filter: $filter) {
    id wid eventType group
    ... on ClientProgressChanged { estateStatus completionPercentage }
  }
}`

func TestWebhookDeliveriesAreCheckedBeforeTheyAreStored(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), map[string]string{"MAX_REQUEST_BYTES": "1MiB"})
	valid, _ := json.Marshal(progress("w-1", 10))
	big := []byte(`{"EventType":"ClientProgressChanged","x":"` + strings.Repeat("a", 300<<10) + `"}`)
	for _, tc := range []struct {
		name        string
		method      string
		key         string
		contentType string
		body        []byte
		status      int
		message     string
		field       string
	}{
		{"a missing key is 401, whatever else is wrong", "GET", "", "text/plain", nil, 401, "Missing or invalid service-api-key header", ""},
		{"a wrong key is 401", "POST", "wrong-key-wrong-key", "application/json", valid, 401, "Missing or invalid service-api-key header", ""},
		{"a key that is a prefix of the right one is 401", "POST", webhookKey[:10], "application/json", valid, 401, "Missing or invalid service-api-key header", ""},
		{"GET is 405", "GET", webhookKey, "application/json", nil, 405, "Deliver events with POST", ""},
		{"a body that is not JSON by its type is 415", "POST", webhookKey, "text/plain", valid, 415, "Content-Type must be application/json", ""},
		{"a body over the limit is 413", "POST", webhookKey, "application/json", big, 413, "The event is larger than the limit of 256 KiB", ""},
		{"a body that is not an object is 400", "POST", webhookKey, "application/json", []byte(`[1]`), 400, "the body must be one JSON object", ""},
		{"an EventType the gateway does not know, without its Wid, is 400 naming the Wid", "POST", webhookKey, "application/json",
			[]byte(`{"EventType":"ClientWentSailing","Timestamp":"2026-11-22T10:00:00Z"}`), 400, "Wid: is required", "Wid"},
		{"a percentage over 100 is 400 naming the field", "POST", webhookKey, "application/json",
			[]byte(`{"EventType":"ClientProgressChanged","Wid":"w","Timestamp":"2026-11-22T10:00:00Z","EstateStatus":"InProgress","CompletionPercentage":101}`),
			400, "CompletionPercentage: must be from 0 to 100, got 101", "CompletionPercentage"},
		{"an analysis event without Payload is 400", "POST", webhookKey, "application/json",
			[]byte(`{"EventType":"TaxJobFailed","Wid":"w","Timestamp":"2026-11-22T10:00:00Z"}`), 400, "Payload: is required for TaxJobFailed events", "Payload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := gw.webhook(t, tc.method, tc.key, tc.contentType, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d (%v)", status, tc.status, out)
			}
			if msg, _ := out["error"].(string); !strings.HasPrefix(msg, tc.message) {
				t.Errorf("error %q, want it to start with %q", msg, tc.message)
			}
			if field, _ := out["field"].(string); field != tc.field {
				t.Errorf("field %q, want %q", field, tc.field)
			}
		})
	}
	var got []any
	gw.post(t, `{ recentEvents { id } }`, nil).ok(t, &struct{ RecentEvents *[]any }{&got})
	if len(got) != 0 {
		t.Errorf("refused deliveries were stored: %v", got)
	}
}

func TestARedeliveredEventIsAcknowledgedButPublishedOnce(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("1", progressSubscription, nil)
	waitSubscribers(t, gw, 1)

	body, _ := json.Marshal(progress("w-dup", 30))
	first, out1 := gw.deliver(t, webhookKey, body)
	second, out2 := gw.deliver(t, webhookKey, body)
	if first != 200 || second != 200 {
		t.Fatalf("statuses %d and %d, want 200 twice", first, second)
	}
	if out1["id"] != out2["id"] || out1["duplicate"] != false || out2["duplicate"] != true {
		t.Errorf("answers %v and %v: want the same id, the second marked duplicate", out1, out2)
	}
	gw.mustDeliver(t, progress("w-dup", 31))
	if ev := c.nextData("1")["events"].(map[string]any); ev["completionPercentage"] != 30.0 {
		t.Fatalf("first event %v, want 30%%", ev)
	}
	if ev := c.nextData("1")["events"].(map[string]any); ev["completionPercentage"] != 31.0 {
		t.Fatalf("second event %v, want 31%%: the redelivery was published again", ev)
	}
}

func TestGraphQLTransportWSClosesWithTheProtocolsCodes(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	for _, tc := range []struct {
		name   string
		script func(c *wsClient)
		code   websocket.StatusCode
		reason string
		wait   time.Duration
	}{
		{"no connection_init within 3 s is 4408", func(*wsClient) {}, 4408, "Connection initialisation timeout", 6 * time.Second},
		{"a message that is not JSON is 4400", func(c *wsClient) {
			_ = c.conn.Write(t.Context(), websocket.MessageText, []byte("hello"))
		}, 4400, "Invalid message received: expected a JSON object with a type", 3 * time.Second},
		{"a message without a type is 4400", func(c *wsClient) { c.send(map[string]any{"id": "1"}) }, 4400, "", 3 * time.Second},
		{"an unknown type is 4400", func(c *wsClient) { c.init(); c.send(map[string]any{"type": "start", "id": "1"}) }, 4400, `Invalid message received: unknown type "start"`, 3 * time.Second},
		{"subscribe before the ack is 4401", func(c *wsClient) { c.subscribe("1", progressSubscription, nil) }, 4401, "Unauthorized", 3 * time.Second},
		{"a second connection_init is 4429", func(c *wsClient) { c.init(); c.send(map[string]any{"type": "connection_init"}) }, 4429, "Too many initialisation requests", 3 * time.Second},
		{"a subscription id in use is 4409", func(c *wsClient) {
			c.init()
			c.subscribe("same", progressSubscription, nil)
			c.subscribe("same", progressSubscription, nil)
		}, 4409, "Subscriber for same already exists", 3 * time.Second},
		{"a subscribe without an id is 4400", func(c *wsClient) {
			c.init()
			c.send(map[string]any{"type": "subscribe", "payload": map[string]any{"query": "{ version }"}})
		}, 4400, "Invalid message received: subscribe needs an id", 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dialWS(t, gw, "graphql-transport-ws", nil)
			tc.script(c)
			code, reason := c.closed(tc.wait)
			if code != tc.code || tc.reason != "" && reason != tc.reason {
				t.Errorf("closed with %d %q, want %d %q", code, reason, tc.code, tc.reason)
			}
		})
	}
}

func TestGraphQLTransportWSServesOperationsAndPingPong(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()

	c.send(map[string]any{"type": "ping", "payload": map[string]any{"n": 1}})
	if m := c.read(); m["type"] != "pong" {
		t.Fatalf("got %v, want pong", m)
	}
	c.subscribe("q", `{ version }`, nil)
	if data := c.nextData("q"); data["version"] == nil {
		t.Errorf("query data %v", data)
	}
	if m := c.read(); m["type"] != "complete" || m["id"] != "q" {
		t.Fatalf("got %v, want complete for q", m)
	}

	c.subscribe("bad", `subscription { events { nope } }`, nil)
	m := c.read()
	if m["type"] != "error" || m["id"] != "bad" {
		t.Fatalf("got %v, want error for an invalid operation", m)
	}

	c.subscribe("s", progressSubscription, map[string]any{"filter": map[string]any{"wids": []string{"w-ws"}}})
	waitSubscribers(t, gw, 1)
	gw.mustDeliver(t, progress("other", 5))
	id := gw.mustDeliver(t, progress("w-ws", 50))
	ev := c.nextData("s")["events"].(map[string]any)
	if ev["id"] != id || ev["wid"] != "w-ws" || ev["eventType"] != "CLIENT_PROGRESS_CHANGED" || ev["group"] != "CLIENT" || ev["estateStatus"] != "IN_PROGRESS" {
		t.Errorf("event %v", ev)
	}
	c.send(map[string]any{"type": "complete", "id": "s"})
	c.send(map[string]any{"type": "ping"}) // the pong proves the complete was handled
	if m := c.read(); m["type"] != "pong" {
		t.Fatalf("got %v, want pong", m)
	}
	gw.mustDeliver(t, progress("w-ws", 60))
	c.subscribe("q2", `{ version }`, nil)
	if m := c.read(); m["id"] != "q2" {
		t.Fatalf("got %v after complete, want nothing more for s", m)
	}
}

func TestLegacySubscriptionsTransportWSStillWorks(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	c := dialWS(t, gw, "graphql-ws", nil)
	c.send(map[string]any{"type": "connection_init", "payload": map[string]any{}})
	if m := c.read(); m["type"] != "connection_ack" {
		t.Fatalf("got %v, want connection_ack", m)
	}
	if m, err := c.next(5 * time.Second); err != nil || m["type"] != "ka" {
		t.Fatalf("got %v %v, want a ka right after the ack", m, err)
	}
	c.send(map[string]any{"id": "1", "type": "start", "payload": map[string]any{"query": progressSubscription}})
	waitSubscribers(t, gw, 1)
	gw.mustDeliver(t, progress("w-legacy", 70))
	m := c.read()
	if m["type"] != "data" || m["id"] != "1" {
		t.Fatalf("got %v, want data", m)
	}
	c.send(map[string]any{"id": "1", "type": "stop"})
	c.send(map[string]any{"type": "connection_terminate"})
	if code, _ := c.closed(3 * time.Second); code != websocket.StatusNormalClosure {
		t.Errorf("closed with %d, want 1000 after connection_terminate", code)
	}
}

func TestWebSocketsFromOtherOriginsAreRefused(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), map[string]string{"CORS_ALLOWED_ORIGINS": "https://app.example.com"})
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{"https://app.example.com", true},
		{"https://evil.example.com", false},
		{gw.url, true},
	} {
		t.Run(fmt.Sprintf("origin %q", tc.origin), func(t *testing.T) {
			h := http.Header{}
			if tc.origin != "" {
				h.Set("Origin", tc.origin)
			}
			url := "ws" + strings.TrimPrefix(gw.url, "http") + "/graphql"
			conn, resp, err := websocket.Dial(t.Context(), url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: h})
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				conn.CloseNow()
				return
			}
			if err == nil {
				conn.CloseNow()
				t.Fatal("accepted")
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Errorf("response %v, want 403", resp)
			}
		})
	}
}

func TestSubscriptionsOverServerSentEvents(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	s := openSSE(t, gw, progressSubscription, map[string]any{"filter": map[string]any{"types": []string{"CLIENT_PROGRESS_CHANGED"}}})
	waitSubscribers(t, gw, 1)
	gw.mustDeliver(t, map[string]any{"EventType": "AssetDeleted", "Wid": "w-sse", "Timestamp": "2026-11-22T10:00:00Z", "AssetName": "Boat"})
	id := gw.mustDeliver(t, progress("w-sse", 80))
	ev := s.next()
	if ev.name != "next" || !strings.Contains(ev.data, `"id":"`+id+`"`) || !strings.Contains(ev.data, `"completionPercentage":80`) {
		t.Errorf("event %+v, want next with %s at 80%%", ev, id)
	}
}

func TestSubscriptionsNeedAStreamingTransport(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	r := gw.post(t, progressSubscription, nil)
	r.wantError(t, "BAD_USER_INPUT", "Subscriptions stream: open a WebSocket (graphql-transport-ws) or send Accept: text/event-stream (graphql-sse)")
}

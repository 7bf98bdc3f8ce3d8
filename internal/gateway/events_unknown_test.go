package gateway_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// unknownSubscription selects what tells an event the gateway does not know from one it does.
const unknownSubscription = `subscription($filter: EventFilter) {
  events(filter: $filter) {
    id wid eventType group
    ... on UnknownEvent { rawType body }
    ... on AssistantJobFailed { reason rawReason }
  }
}`

// The service adds event types and values before the gateway knows them, and "the receiver
// de-duplicates and answers 2xx only after the event is durably stored, 5xx otherwise, so a
// retry loses nothing" (spec README); it does not retry a 4xx. So an event of a type that "has
// an EventType that identifies the kind" the gateway does not know, or a known event with a
// value the specification does not list, is stored and answered 200, and reaches every
// replica's subscribers over each transport as UNKNOWN with the raw value beside it.
func TestEventsTheGatewayDoesNotKnowReachEverySubscriber(t *testing.T) {
	t.Parallel()
	moved := map[string]any{"EventType": "ClientMovedHouse", "Wid": "w-unknown", "Timestamp": "2026-11-22T10:00:00Z", "City": "Lyon"}
	overloaded := map[string]any{"EventType": "AssistantJobFailed", "Wid": "w-unknown", "Timestamp": "2026-11-22T10:01:00Z",
		"Payload": map[string]any{"CorrelationId": "c", "JobId": "j", "DocumentWid": "d", "Reason": "ModelOverloaded"}}
	// checks are what a subscriber must see of each, in delivery order.
	checks := []struct {
		name string
		want func(ev map[string]any) bool
	}{
		{`an EventType that does not exist today ("Each event has an EventType that identifies the kind")`, func(ev map[string]any) bool {
			body, _ := ev["body"].(string)
			return ev["eventType"] == "UNKNOWN" && ev["group"] == "UNKNOWN" && ev["rawType"] == "ClientMovedHouse" &&
				ev["wid"] == "w-unknown" && strings.Contains(body, `"City":"Lyon"`)
		}},
		{`a Reason that does not exist today ("Reason ... values")`, func(ev map[string]any) bool {
			return ev["eventType"] == "ASSISTANT_JOB_FAILED" && ev["reason"] == "UNKNOWN" && ev["rawReason"] == "ModelOverloaded"
		}},
	}
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			up := newUpstream(t, false)
			// With Redis, the event goes to one replica and its subscribers are on another; the
			// memory store serves one replica alone.
			var env map[string]string
			if store == "redis" {
				env = redisEnv(t, "")
			}
			sender := newGateway(t, up, env)
			receiver := sender
			if store == "redis" {
				receiver = newGateway(t, up, env)
			}
			ws := dialWS(t, receiver, "graphql-transport-ws", nil)
			ws.init()
			ws.subscribe("1", unknownSubscription, map[string]any{"filter": map[string]any{"types": []string{"UNKNOWN", "ASSISTANT_JOB_FAILED"}}})
			sse := openSSE(t, receiver, unknownSubscription, nil)
			waitSubscribers(t, receiver, 2)

			// The filter of the WebSocket subscriber leaves this one out.
			sender.mustDeliver(t, progress("w-unknown", 10))
			ids := []string{sender.mustDeliver(t, moved), sender.mustDeliver(t, overloaded)}

			if ev := sse.next(); ev.name != "next" || !strings.Contains(ev.data, "CLIENT_PROGRESS_CHANGED") {
				t.Fatalf("SSE: got %+v, want the progress event first", ev)
			}
			for i, c := range checks {
				fromWS := ws.nextData("1")["events"].(map[string]any)
				var fromSSE struct {
					Data struct{ Events map[string]any }
				}
				if ev := sse.next(); json.Unmarshal([]byte(ev.data), &fromSSE) != nil {
					t.Fatalf("SSE: got %+v, want an event", ev)
				}
				for transport, ev := range map[string]map[string]any{"graphql-transport-ws": fromWS, "SSE": fromSSE.Data.Events} {
					if ev["id"] != ids[i] || !c.want(ev) {
						t.Errorf("%s: %s: got %v (id %s)", transport, c.name, ev, ids[i])
					}
				}
			}

			var recent struct{ RecentEvents []map[string]any }
			receiver.post(t, `{ recentEvents(filter: {groups: [UNKNOWN]}) { id ... on UnknownEvent { rawType } } }`, nil).ok(t, &recent)
			if len(recent.RecentEvents) != 1 || recent.RecentEvents[0]["rawType"] != "ClientMovedHouse" {
				t.Errorf("recentEvents of the UNKNOWN group: got %v, want the ClientMovedHouse event alone", recent.RecentEvents)
			}
		})
	}
}

// What the service sends but the gateway does not know is stored (200); a body that is not an
// event at all is still refused (400), being no event a retry could make whole.
func TestTheReceiverStoresUnknownValuesAndRefusesMalformedBodies(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	for _, tc := range []struct {
		name   string
		body   string
		status int
		field  string
	}{
		{"an EventType that does not exist today is stored", `{"EventType":"ClientMovedHouse","Wid":"w","Timestamp":"2026-11-22T10:00:00Z"}`, http.StatusOK, ""},
		{"a Reason that does not exist today is stored", `{"EventType":"AssistantJobFailed","Wid":"w","Timestamp":"2026-11-22T10:00:00Z",
			"Payload":{"CorrelationId":"c","JobId":"j","DocumentWid":"d","Reason":"ModelOverloaded"}}`, http.StatusOK, ""},
		{"a DocumentName that does not exist today is stored", `{"EventType":"DocumentStarted","Wid":"w","Timestamp":"2026-11-22T10:00:00Z",
			"DocumentName":"Living Will","DocumentProgressPercentage":0}`, http.StatusOK, ""},
		{"a body that is not JSON is 400", `{"EventType":`, http.StatusBadRequest, ""},
		{"an unknown type without its Wid is 400", `{"EventType":"ClientMovedHouse","Timestamp":"2026-11-22T10:00:00Z"}`, http.StatusBadRequest, "Wid"},
		{"an unknown type without its Timestamp is 400", `{"EventType":"ClientMovedHouse","Wid":"w"}`, http.StatusBadRequest, "Timestamp"},
		{"an EventType that is not a string is 400", `{"EventType":7,"Wid":"w","Timestamp":"2026-11-22T10:00:00Z"}`, http.StatusBadRequest, "EventType"},
		{"a known field of the wrong type is 400", `{"EventType":"AssistantJobFailed","Wid":"w","Timestamp":"2026-11-22T10:00:00Z",
			"Payload":{"CorrelationId":"c","JobId":7,"DocumentWid":"d","Reason":"ModelOverloaded"}}`, http.StatusBadRequest, "Payload.JobId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := gw.deliver(t, webhookKey, []byte(tc.body))
			if status != tc.status {
				t.Fatalf("status %d, want %d (%v)", status, tc.status, out)
			}
			if field, _ := out["field"].(string); field != tc.field {
				t.Errorf("field %q, want %q", field, tc.field)
			}
		})
	}
}

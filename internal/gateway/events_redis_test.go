package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
)

// redisEnv gives a gateway the shared test Redis (REDIS_URL, by default the local one) under a
// key prefix of the test's own, so tests never see each other's events. Without a Redis the
// test is skipped, or fails when REQUIRE_REDIS is set (as in CI).
func redisEnv(t testing.TB, prefix string) map[string]string {
	t.Helper()
	url := eventlogtest.SharedURL(t)
	if prefix == "" {
		prefix = eventlogtest.KeyPrefix("gateway-test")
		t.Cleanup(func() { dropKeys(url, prefix) })
	}
	return map[string]string{"REDIS_URL": url, "REDIS_KEY_PREFIX": prefix}
}

// dropKeys removes a test's keys.
func dropKeys(url, prefix string) {
	opts, _ := redis.ParseURL(url)
	client := redis.NewClient(opts)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		client.Del(ctx, iter.Val())
	}
}

func TestAWebhookToOneReplicaReachesSubscribersOfAnother(t *testing.T) {
	t.Parallel()
	env := redisEnv(t, "")
	up := newUpstream(t, false)
	first, second := newGateway(t, up, env), newGateway(t, up, env)

	ws := dialWS(t, second, "graphql-transport-ws", nil)
	ws.init()
	ws.subscribe("1", progressSubscription, nil)
	sse := openSSE(t, first, progressSubscription, nil)
	waitSubscribers(t, second, 1)
	waitSubscribers(t, first, 1)

	id := first.mustDeliver(t, progress("w-replicas", 42))
	if ev := ws.nextData("1")["events"].(map[string]any); ev["id"] != id || ev["completionPercentage"] != 42.0 {
		t.Errorf("the second replica's subscriber got %v, want %s", ev, id)
	}
	if ev := sse.next(); !strings.Contains(ev.data, id) {
		t.Errorf("the first replica's subscriber got %+v, want %s", ev, id)
	}
	var recent struct{ RecentEvents []struct{ ID string } }
	second.post(t, `{ recentEvents(last: 5) { id } }`, nil).ok(t, &recent)
	if len(recent.RecentEvents) != 1 || recent.RecentEvents[0].ID != id {
		t.Errorf("recentEvents on the second replica: %+v, want [%s]", recent.RecentEvents, id)
	}
}

func TestResumingAfterADisconnectLosesAndRepeatsNothing(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"memory", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			var env map[string]string
			if store == "redis" {
				env = redisEnv(t, "")
			}
			gw := newGateway(t, newUpstream(t, false), env)
			c := dialWS(t, gw, "graphql-transport-ws", nil)
			c.init()
			c.subscribe("1", progressSubscription, nil)
			waitSubscribers(t, gw, 1)
			for pct := range 3 {
				gw.mustDeliver(t, progress("w-resume", pct))
			}
			var last string
			for range 3 {
				last = c.nextData("1")["events"].(map[string]any)["id"].(string)
			}
			c.conn.CloseNow()

			// Missed while away: 3..9; then, while the new subscription backfills, more arrive.
			for pct := 3; pct < 10; pct++ {
				gw.mustDeliver(t, progress("w-resume", pct))
			}
			c = dialWS(t, gw, "graphql-transport-ws", nil)
			c.init()
			c.subscribe("2", progressSubscription, map[string]any{"after": last})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for pct := 10; pct < 20; pct++ {
					gw.mustDeliver(t, progress("w-resume", pct))
				}
			}()
			for want := 3; want < 20; want++ {
				ev := c.nextData("2")["events"].(map[string]any)
				if got := ev["completionPercentage"].(float64); int(got) != want {
					t.Fatalf("event %d: got %v%%, want %d%% (a gap or a repeat)", want, got, want)
				}
			}
			<-done
		})
	}
}

func TestEveryEventTypeRoundTripsFromTheWebhookToGraphQL(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	for _, tc := range roundTrips() {
		t.Run(tc.body["EventType"].(string), func(t *testing.T) {
			t.Parallel()
			wid := fmt.Sprintf("rt-%s", tc.body["EventType"])
			tc.body["Wid"] = wid
			id := gw.mustDeliver(t, tc.body)
			query := `query($wid: ID!) { recentEvents(filter: {wids: [$wid]}, last: 1) { id wid eventType group timestamp ` + tc.selection + ` } }`
			var out struct{ RecentEvents []map[string]any }
			gw.post(t, query, map[string]any{"wid": wid}).ok(t, &out)
			if len(out.RecentEvents) != 1 {
				t.Fatalf("recentEvents %v", out.RecentEvents)
			}
			got := out.RecentEvents[0]
			want := map[string]any{"id": id, "wid": wid, "eventType": tc.eventType, "group": tc.group, "timestamp": "2026-11-22T10:00:00Z"}
			for k, v := range tc.want {
				want[k] = v
			}
			gotJSON, wantJSON := mustMarshal(got), mustMarshal(want)
			if gotJSON != wantJSON {
				t.Errorf("got  %s\nwant %s", gotJSON, wantJSON)
			}
		})
	}
}

func TestARedisOutageRefusesDeliveriesAndTheGatewayRecovers(t *testing.T) {
	t.Parallel()
	srv := eventlogtest.StartRedis(t)
	gw := newGateway(t, newUpstream(t, false), map[string]string{"REDIS_URL": srv.URL()})
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("1", progressSubscription, nil)
	waitSubscribers(t, gw, 1)
	gw.mustDeliver(t, progress("w-outage", 1))
	c.nextData("1")

	srv.Stop()
	body := mustMarshal(progress("w-outage", 2))
	if status, out := gw.deliver(t, webhookKey, []byte(body)); status != 503 {
		t.Fatalf("delivery during the outage: %d %v, want 503 so the sender retries", status, out)
	}
	if status := getStatus(t, gw.url+"/readyz"); status != 503 {
		t.Errorf("/readyz during the outage: %d, want 503", status)
	}
	// A new subscriber is told to come back later with 1013, which clients retry.
	late := dialWS(t, gw, "graphql-transport-ws", nil)
	late.init()
	late.subscribe("1", progressSubscription, nil)
	if m := late.read(); m["type"] != "error" || !strings.Contains(mustMarshal(m), "EVENTS_UNAVAILABLE") {
		t.Errorf("subscribing during the outage: %v, want an EVENTS_UNAVAILABLE error", m)
	}
	if code, _ := late.closed(5 * time.Second); code != 1013 {
		t.Errorf("closed with %d during the outage, want 1013 (try again later)", code)
	}

	srv.Start()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _ := gw.deliver(t, webhookKey, []byte(body))
		if status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries still refused (%d) 10 s after Redis came back", status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if ev := c.nextData("1")["events"].(map[string]any); ev["completionPercentage"] != 2.0 {
		t.Errorf("after the outage the subscriber got %v, want the 2%% event", ev)
	}
	// Readiness keeps the store's last answer for up to 250 ms, failures too.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		status := getStatus(t, gw.url+"/readyz")
		if status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("/readyz after the outage: %d, want 200", status)
			break
		}
	}
}

func getStatus(t testing.TB, url string) int {
	t.Helper()
	resp, err := httpGet(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

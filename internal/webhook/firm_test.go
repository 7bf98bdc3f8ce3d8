package webhook_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
	"github.com/advisorhq/gateway/internal/webhook"
)

// serve serves a Receiver with keys over log on a loopback server.
func serve(t *testing.T, log eventlog.Log, keys []webhook.Key) *receiver {
	t.Helper()
	obs := &observations{}
	h := &webhook.Receiver{Log: log, Keys: keys, Logger: slog.New(slog.DiscardHandler), Observe: obs.observe}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	return &receiver{url: srv.URL, obs: obs}
}

// Each firm's Advisor service delivers with its own key, and the key says whose event it is: the
// same delivery from two firms is two events, a redelivery is a duplicate of its own firm's only,
// and a firm may have two keys while it rotates them.
func TestReceiverAttributesEachDeliveryToTheFirmOfItsKey(t *testing.T) {
	keys := []webhook.Key{
		{Firm: "firm-a", Key: "key-of-firm-a-0123456789"},
		{Firm: "firm-b", Key: "key-of-firm-b-0123456789"},
		{Firm: "firm-c", Key: "old-key-of-firm-c-012345"},
		{Firm: "firm-c", Key: "new-key-of-firm-c-012345"},
	}
	log := eventlog.NewMemory(100, time.Hour, nil)
	rc := serve(t, log, keys)
	ids := map[string]string{} // firm → the id of its first delivery
	for _, tc := range []struct {
		name, key string
		status    int
		firm      string // whose event it is stored as
		duplicate bool
	}{
		{"firm-a's key", keys[0].Key, 200, "firm-a", false},
		{"firm-b's key, the same delivery", keys[1].Key, 200, "firm-b", false},
		{"firm-a's key again", keys[0].Key, 200, "firm-a", true},
		{"firm-c's old key", keys[2].Key, 200, "firm-c", false},
		{"firm-c's new key, the same delivery", keys[3].Key, 200, "firm-c", true},
		{"firm-b's key again", keys[1].Key, 200, "firm-b", true},
		{"an unknown key", "key-of-firm-d-0123456789", 401, "", false},
		{"two firms' keys run together", keys[0].Key + keys[1].Key, 401, "", false},
		{"a firm's key and one character more", keys[0].Key + "x", 401, "", false},
		{"a firm's key but its last character", keys[0].Key[:len(keys[0].Key)-1], 401, "", false},
		{"a firm's key upper-cased", strings.ToUpper(keys[0].Key), 401, "", false},
		{"a firm's name", "firm-a", 401, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rc.send(t, "POST", tc.key, "application/json", strings.NewReader(progress))
			if got.status != tc.status {
				t.Fatalf("got status %d (%v), want %d", got.status, got.body, tc.status)
			}
			if tc.status != 200 {
				return
			}
			id, _ := got.body["id"].(string)
			if got.body["duplicate"] != tc.duplicate {
				t.Errorf("got %v, want duplicate %v", got.body, tc.duplicate)
			}
			if first, ok := ids[tc.firm]; ok && id != first {
				t.Errorf("got id %s, want %s, the first of %s's", id, first, tc.firm)
			} else if !ok {
				ids[tc.firm] = id
			}
		})
	}
	recs, err := log.After(t.Context(), "", 100)
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, r := range recs {
		stored = append(stored, r.Firm)
		if r.ID != ids[r.Firm] {
			t.Errorf("stored %s as firm %s's, whose delivery was answered with %s", r.ID, r.Firm, ids[r.Firm])
		}
	}
	if got := strings.Join(stored, ","); got != "firm-a,firm-b,firm-c" {
		t.Errorf("stored events of %s, want one each of firm-a, firm-b and firm-c", got)
	}
}

// A key given to two firms is a configuration CheckKeys refuses; a receiver given one anyway
// stores its deliveries as neither firm's, and has the sender deliver again later.
func TestReceiverStoresNothingForAKeyOfSeveralFirms(t *testing.T) {
	log := eventlog.NewMemory(100, time.Hour, nil)
	rc := serve(t, log, []webhook.Key{{Firm: "firm-a", Key: "shared-key-0123456789"}, {Firm: "firm-b", Key: "shared-key-0123456789"}})
	got := rc.send(t, "POST", "shared-key-0123456789", "application/json", strings.NewReader(progress))
	if got.status != 503 || got.header.Get("Retry-After") == "" {
		t.Errorf("got %d %v, want 503 with Retry-After", got.status, got.body)
	}
	if recs, _ := log.After(t.Context(), "", 10); len(recs) != 0 {
		t.Errorf("stored %d events, want none", len(recs))
	}
}

func TestCheckKeysRefusesKeysThatCannotNameOneFirm(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []webhook.Key
		err  string // "" for none
	}{
		{"one firm", []webhook.Key{{"firm-a", "k1"}}, ""},
		{"two firms", []webhook.Key{{"firm-a", "k1"}, {"firm-b", "k2"}}, ""},
		{"a firm with two keys", []webhook.Key{{"firm-a", "k1"}, {"firm-a", "k2"}, {"firm-b", "k3"}}, ""},
		{"no keys", nil, "no firm has a service-api-key"},
		{"an empty key", []webhook.Key{{"firm-a", "k1"}, {"firm-b", ""}}, `firm "firm-b" has an empty service-api-key`},
		{"a key of no firm", []webhook.Key{{"firm-a", "k1"}, {"", "k2"}}, "key #2 has no firm"},
		{"one key for two firms", []webhook.Key{{"firm-a", "k1"}, {"firm-b", "k2"}, {"firm-c", "k1"}},
			`firms "firm-a" and "firm-c" have the same service-api-key`},
		{"one key twice for a firm", []webhook.Key{{"firm-a", "k1"}, {"firm-a", "k1"}}, `firm "firm-a" has the same service-api-key twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.CheckKeys(tc.keys)
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("got %v, want the keys accepted", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("got %v, want an error saying %q", err, tc.err)
			}
			for _, k := range tc.keys {
				if err != nil && k.Key != "" && strings.Contains(err.Error(), k.Key) {
					t.Errorf("the error %q shows a key", err)
				}
			}
		})
	}
}

// A Redis at maxmemory refuses writes: the delivery is refused with 503, for the sender to
// deliver it again, and stored once memory is freed.
func TestReceiverRefusesWithRetryWhileRedisIsFull(t *testing.T) {
	srv := eventlogtest.StartFull(t)
	opts := &redis.Options{Addr: srv.Addr()}
	eventlog.Bound(opts)
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	log := eventlog.NewRedis(client, "webhook-test-full:", 100, time.Hour)
	rc := serve(t, log, []webhook.Key{{Firm: "firm-a", Key: key}})
	free := srv.Fill()
	got := rc.send(t, "POST", key, "application/json", strings.NewReader(progress))
	if got.status != 503 || got.header.Get("Retry-After") != "5" {
		t.Errorf("with Redis full: got %d %v, want 503 with Retry-After: 5", got.status, got.body)
	}
	free()
	got = rc.send(t, "POST", key, "application/json", strings.NewReader(progress))
	if got.status != 200 || got.body["duplicate"] != false {
		t.Errorf("once memory was freed: got %d %v, want 200, stored", got.status, got.body)
	}
	recs, err := log.After(t.Context(), "", 10)
	if err != nil || len(recs) != 1 || recs[0].Firm != "firm-a" {
		t.Errorf("stored %+v, %v; want the one event, of firm-a", recs, err)
	}
}

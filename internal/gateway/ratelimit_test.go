package gateway_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// wantRateLimited checks a refusal over HTTP: 429, Retry-After, the RateLimit fields of policy,
// and one RATE_LIMITED error naming the setting. It returns Retry-After.
func wantRateLimited(t *testing.T, r *result, policy, setting string) time.Duration {
	t.Helper()
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %+v", r.status, r.Errors)
	}
	e := r.wantError(t, "RATE_LIMITED", "")
	if !strings.Contains(e.Message, setting) {
		t.Errorf("message %q does not name %s", e.Message, setting)
	}
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || retry < 1 {
		t.Errorf("Retry-After %q, want whole seconds", r.header.Get("Retry-After"))
	}
	if e.Extensions["retryAfter"] != float64(retry) {
		t.Errorf("extensions.retryAfter %v, want Retry-After's %d", e.Extensions["retryAfter"], retry)
	}
	if p := r.header.Get("RateLimit-Policy"); !strings.HasPrefix(p, `"`+policy+`";q=`) {
		t.Errorf("RateLimit-Policy %q, want the %s policy", p, policy)
	}
	if l := r.header.Get("RateLimit"); !strings.HasPrefix(l, `"`+policy+`";r=0;t=`) {
		t.Errorf("RateLimit %q, want nothing left of %s", l, policy)
	}
	return time.Duration(retry) * time.Second
}

// Operations a second, over HTTP: the one past the burst is refused with 429 and says when to
// retry; then it runs. A batch counts each of its operations, and webhooks count nothing.
func TestOperationsPastTheRateAreRefusedUntilRetryAfter(t *testing.T) {
	t.Parallel()
	g := newGateway(t, newUpstream(t, false), map[string]string{"RATE_LIMIT": "2", "GRAPHQL_BATCH_LIMIT": "5"})
	g.post(t, versionQuery, nil).ok(t, nil)
	// A document that does not parse is counted too: junk costs the sender its budget.
	g.post(t, "{ nope", nil).wantError(t, "GRAPHQL_PARSE_FAILED", "")
	retry := wantRateLimited(t, g.post(t, versionQuery, nil), "operations", "RATE_LIMIT")
	time.Sleep(retry)
	g.post(t, versionQuery, nil).ok(t, nil)

	for i := range 5 {
		body, _ := json.Marshal(map[string]any{"EventType": "ClientProgressChanged", "Wid": "w" + strconv.Itoa(i),
			"Timestamp": "2026-11-22T10:00:00Z", "EstateStatus": "InProgress", "CompletionPercentage": i})
		if status, _ := g.deliver(t, webhookKey, body); status >= 300 {
			t.Errorf("webhook %d: status %d; webhooks are never rate-limited", i, status)
		}
	}

	time.Sleep(time.Second)
	data, _ := json.Marshal([]map[string]any{{"query": versionQuery}, {"query": versionQuery}, {"query": versionQuery}})
	req, _ := http.NewRequest(http.MethodPost, g.url+"/graphql", bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var batch []result
	if err := json.NewDecoder(resp.Body).Decode(&batch); err != nil || len(batch) != 3 {
		t.Fatalf("batch: %v, %d responses", err, len(batch))
	}
	batch[0].ok(t, nil)
	batch[1].ok(t, nil)
	batch[2].wantError(t, "RATE_LIMITED", "")
}

// Two replicas on one Redis share a caller's budget: what it spent on one is spent on both.
func TestReplicasOnOneRedisShareACallersBudget(t *testing.T) {
	t.Parallel()
	env := redisEnv(t, "")
	env["RATE_LIMIT"], env["RATE_LIMIT_BURST"] = "1", "3"
	up := newUpstream(t, false)
	a, b := newGateway(t, up, env), newGateway(t, up, env)
	a.post(t, versionQuery, nil).ok(t, nil)
	a.post(t, versionQuery, nil).ok(t, nil)
	b.post(t, versionQuery, nil).ok(t, nil)
	wantRateLimited(t, b.post(t, versionQuery, nil), "operations", "RATE_LIMIT")
	wantRateLimited(t, a.post(t, versionQuery, nil), "operations", "RATE_LIMIT")
}

// Each caller has a budget of its own: another advisor's token is not refused for what one
// advisor spent.
func TestEachCallerHasABudgetOfItsOwn(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	g, _ := callerGateway(t, up, map[string]string{"RATE_LIMIT": "1"})
	ada := "Bearer " + sandboxToken(t, up.URL, upstreamToken, "adv-001", "firm-001")
	bob := "Bearer " + sandboxToken(t, up.URL, upstreamToken, "adv-002", "firm-001")
	g.postAs(t, ada, versionQuery).ok(t, nil)
	wantRateLimited(t, g.postAs(t, ada, versionQuery), "operations", "RATE_LIMIT")
	g.postAs(t, bob, versionQuery).ok(t, nil)
}

// Subscriptions opened a minute, over a WebSocket: the one past the budget gets an error on
// that operation, and the socket stays open for everything else.
func TestSubscriptionsPastTheBudgetAreRefusedOnAnOpenSocket(t *testing.T) {
	t.Parallel()
	g := newGateway(t, newUpstream(t, false), map[string]string{"RATE_LIMIT_SUBSCRIPTIONS": "1"})
	c := dialWS(t, g, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("1", `subscription { events { id } }`, nil)
	c.subscribe("2", `subscription { events { id } }`, nil)
	m := c.read()
	if m["type"] != "error" || m["id"] != "2" || !strings.Contains(toJSON(m["payload"]), "RATE_LIMITED") ||
		!strings.Contains(toJSON(m["payload"]), "RATE_LIMIT_SUBSCRIPTIONS") || !strings.Contains(toJSON(m["payload"]), "retryAfter") {
		t.Fatalf("got %v, want an error on operation 2 with RATE_LIMITED and retryAfter", m)
	}
	c.subscribe("3", versionQuery, nil)
	if data := c.nextData("3"); data["version"] == nil {
		t.Errorf("a query after the refusal: %v", data)
	}

	// Over SSE the refusal is an HTTP answer, so the client sees Retry-After.
	body, _ := json.Marshal(map[string]any{"query": `subscription { events { id } }`})
	req, _ := http.NewRequest(http.MethodPost, g.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("SSE: %d, Retry-After %q; want 429 and when to retry", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// Cost a minute: each operation spends its cost, so a budget of 20,000 affords two family
// queries (about 7,000 each) and not a third, while a cheap operation still fits.
func TestCostPerMinuteCountsEachOperationsCost(t *testing.T) {
	t.Parallel()
	g := newGateway(t, newUpstream(t, true), map[string]string{"RATE_LIMIT_COST": "20000"})
	family := readmeExampleQuery(t)
	g.post(t, family, nil).ok(t, nil)
	g.post(t, family, nil).ok(t, nil)
	wantRateLimited(t, g.post(t, family, nil), "cost", "RATE_LIMIT_COST")
	g.post(t, versionQuery, nil).ok(t, nil)
}

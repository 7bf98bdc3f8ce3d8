package sandbox_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// Webhook events: the sender (webhook-events.md, Authentication; the README's decision on
// retries), POST /sandbox/events that makes the sandbox send events, and the analysis start
// endpoint the README decides, whose events follow the document's state.

const (
	whKey  = "whk-test-key"
	whPath = "/hooks/advisor"
	// whWait bounds every wait for a delivery; deliveries normally arrive in milliseconds.
	whWait = 3 * time.Second
	// whNow is the fixture clock's time as events stamp it.
	whNow = "2026-11-22T09:30:00.000Z"
	// whMiB is a mebibyte: the FileTooLarge limit is 50 of them.
	whMiB = 1 << 20
)

// whAttempt is one POST the receiver got.
type whAttempt struct {
	method, path string
	header       http.Header
	body         []byte
	at           time.Time
	status       int // what the receiver answered; 0 when it never answered
}

// whReceiver is a webhook target that records every attempt and answers as told.
type whReceiver struct {
	t   *testing.T
	srv *httptest.Server
	// answer gives the status for the n-th attempt (from 1); whHang never answers and
	// whDrop closes the connection without an answer.
	answer  func(n int) int
	release chan struct{}

	mu       sync.Mutex
	attempts []whAttempt
}

const (
	whHang = 0
	whDrop = -1
)

// whStatus answers every attempt with status.
func whStatus(status int) func(int) int { return func(int) int { return status } }

// whFailFirst answers the first n attempts with status and the others with 200.
func whFailFirst(n, status int) func(int) int {
	return func(i int) int {
		if i <= n {
			return status
		}
		return http.StatusOK
	}
}

func newWhReceiver(t *testing.T, answer func(n int) int) *whReceiver {
	t.Helper()
	if answer == nil {
		answer = whStatus(http.StatusOK)
	}
	rc := &whReceiver{t: t, answer: answer, release: make(chan struct{})}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(func() {
		close(rc.release)
		rc.srv.Close()
	})
	return rc
}

func (rc *whReceiver) serve(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	status := rc.answer(len(rc.attempts) + 1)
	a := whAttempt{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body, at: at}
	if status > 0 {
		a.status = status
	}
	rc.attempts = append(rc.attempts, a)
	rc.mu.Unlock()
	switch status {
	case whHang:
		select {
		case <-r.Context().Done():
		case <-rc.release:
		}
	case whDrop:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	default:
		w.WriteHeader(status)
	}
}

func (rc *whReceiver) snapshot() []whAttempt {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.attempts)
}

// waitAttempts waits until the receiver has had at least n attempts and returns them all.
func (rc *whReceiver) waitAttempts(t *testing.T, n int) []whAttempt {
	t.Helper()
	deadline := time.Now().Add(whWait)
	for {
		got := rc.snapshot()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the receiver had %d webhook attempts after %s, want %d", len(got), whWait, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitDelivered waits until n attempts were taken (answered 2xx) and returns those.
func (rc *whReceiver) waitDelivered(t *testing.T, n int) []whAttempt {
	t.Helper()
	deadline := time.Now().Add(whWait)
	for {
		var ok []whAttempt
		for _, a := range rc.snapshot() {
			if a.status/100 == 2 {
				ok = append(ok, a)
			}
		}
		if len(ok) >= n {
			return ok
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d webhook events delivered after %s, want %d", len(ok), whWait, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// whSandbox starts a sandbox whose webhook target is rc (none when rc is nil), with a retry
// base of a few milliseconds unless opts sets one.
func whSandbox(t *testing.T, rc *whReceiver, opts sandbox.Options, withDemo bool) *fixture {
	t.Helper()
	if rc != nil {
		opts.WebhookURL = rc.srv.URL + whPath
		if opts.WebhookKey == "" {
			opts.WebhookKey = whKey
		}
		if opts.WebhookRetryBase == 0 {
			opts.WebhookRetryBase = 2 * time.Millisecond
		}
	}
	return newSandbox(t, opts, withDemo)
}

// whPost sends body to POST /sandbox/events with the bearer token.
func whPost(f *fixture, body any) *response {
	f.t.Helper()
	return f.v2("POST", "/sandbox/events", body)
}

// whSent is the bodies a 200 from POST /sandbox/events says were queued.
func whSent(t *testing.T, r *response) []json.RawMessage {
	t.Helper()
	var out struct {
		Events []json.RawMessage `json:"events"`
	}
	r.decode(t, &out)
	return out.Events
}

// whSend posts body, wants a 200, and returns the queued bodies.
func whSend(f *fixture, body any) []json.RawMessage {
	f.t.Helper()
	return whSent(f.t, whPost(f, body).wantOK(f.t))
}

// whObject decodes a webhook body.
func whObject(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("webhook body is not a JSON object: %v: %s", err, body)
	}
	return m
}

// whSameJSON reports whether two JSON texts hold the same value.
func whSameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

// whParse checks a delivered body against the specification.
func whParse(t *testing.T, body []byte) *advisorspec.Webhook {
	t.Helper()
	ev, err := advisorspec.ParseWebhook(body)
	if err != nil {
		t.Fatalf("delivered body breaks the specification: %v: %s", err, body)
	}
	return ev
}

// whOn is f reporting to t, so the harness's helpers fail a subtest and not its parent.
func whOn(f *fixture, t *testing.T) *fixture {
	g := *f
	g.t = t
	return &g
}

// whFirstAccount is the first top account of the sandbox's list.
func whFirstAccount(f *fixture) (wid, externalID string) {
	f.t.Helper()
	var page struct {
		TopAccounts []struct {
			WID        string `json:"wid"`
			ExternalID string `json:"external_id"`
		} `json:"top_accounts"`
	}
	f.v2("GET", "/v2/top-accounts/", nil).wantOK(f.t).decode(f.t, &page)
	if len(page.TopAccounts) == 0 {
		f.t.Fatal("the sandbox has no top accounts")
	}
	return page.TopAccounts[0].WID, page.TopAccounts[0].ExternalID
}

// whVault lists the vault_ids of a top account's documents in vault order.
func whVault(f *fixture, wid string) []string {
	f.t.Helper()
	var list struct {
		Documents []struct {
			VaultID string `json:"vault_id"`
		} `json:"documents"`
	}
	f.v2("GET", "/v2/top-accounts/"+wid+"/documents/?limit=100", nil).wantOK(f.t).decode(f.t, &list)
	var out []string
	for _, d := range list.Documents {
		out = append(out, d.VaultID)
	}
	return out
}

// whAsset is a small valid event, told apart by its asset name.
func whAsset(name string) map[string]any {
	return map[string]any{"EventType": "AssetDeleted", "AssetName": name}
}

func whAssetName(t *testing.T, body []byte) string {
	t.Helper()
	name, _ := whObject(t, body)["AssetName"].(string)
	return name
}

// whBarrier sends a valid event and checks that it is the first the receiver gets: whatever
// was refused before it was never queued.
func whBarrier(t *testing.T, f *fixture, rc *whReceiver) {
	t.Helper()
	barrier := whAsset("barrier")
	barrier["Wid"] = "barrier-client" // so that it needs no top account
	whSend(whOn(f, t), barrier)
	got := rc.waitAttempts(t, 1)
	if name := whAssetName(t, got[0].body); name != "barrier" {
		t.Errorf("the first delivery is %s, want the barrier event: a refused request sent an event", got[0].body)
	}
}

func TestWebhookSenderDeliveryRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		answer   func(n int) int
		attempts int
		base     time.Duration
		events   int
		// want is which event (0-based) each attempt carries, in order.
		want  []int
		check func(t *testing.T, sent []json.RawMessage, got []whAttempt)
	}{
		{
			name:   "a delivery is a POST to the webhook URL with Content-Type application/json and the service-api-key",
			events: 1, want: []int{0},
			check: func(t *testing.T, _ []json.RawMessage, got []whAttempt) {
				a := got[0]
				if a.method != http.MethodPost || a.path != whPath {
					t.Errorf("delivery is %s %s, want POST %s", a.method, a.path, whPath)
				}
				if ct := a.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				if key := a.header.Values("service-api-key"); !slices.Equal(key, []string{whKey}) {
					t.Errorf("service-api-key %q, want [%q]", key, whKey)
				}
			},
		},
		{
			name:   "events arrive in the order they were sent",
			events: 5, want: []int{0, 1, 2, 3, 4},
		},
		{
			name:   "a 503 is retried with exponential backoff until the receiver takes the event",
			answer: whFailFirst(3, http.StatusServiceUnavailable), base: 5 * time.Millisecond,
			events: 2, want: []int{0, 0, 0, 0, 1},
			check: func(t *testing.T, _ []json.RawMessage, got []whAttempt) {
				base := 5 * time.Millisecond
				for i := 1; i < 4; i++ {
					gap, min := got[i].at.Sub(got[i-1].at), base<<(i-1)
					if gap < min {
						t.Errorf("retry %d came %s after the attempt before it, want at least %s", i, gap, min)
					}
				}
				// The first wait is WebhookRetryBase, not the 500ms default.
				if gap := got[1].at.Sub(got[0].at); gap > 400*time.Millisecond {
					t.Errorf("first retry came %s after the first attempt, want about 5ms", gap)
				}
			},
		},
		{
			name:   "every retry carries the same body and headers",
			answer: whFailFirst(2, http.StatusServiceUnavailable),
			events: 1, want: []int{0, 0, 0},
			check: func(t *testing.T, _ []json.RawMessage, got []whAttempt) {
				for _, a := range got {
					if a.header.Get("service-api-key") != whKey || a.header.Get("Content-Type") != "application/json" {
						t.Errorf("a retry carries service-api-key %q and Content-Type %q", a.header.Get("service-api-key"), a.header.Get("Content-Type"))
					}
				}
			},
		},
		{name: "a 500 is retried", answer: whFailFirst(1, http.StatusInternalServerError), events: 1, want: []int{0, 0}},
		{name: "a 408 Request Timeout is retried", answer: whFailFirst(1, http.StatusRequestTimeout), events: 1, want: []int{0, 0}},
		{name: "a 429 Too Many Requests is retried", answer: whFailFirst(2, http.StatusTooManyRequests), events: 1, want: []int{0, 0, 0}},
		{name: "a connection closed without an answer is retried", answer: whFailFirst(1, whDrop), events: 1, want: []int{0, 0}},
		{name: "a 400 is not retried", answer: whFailFirst(1, http.StatusBadRequest), events: 2, want: []int{0, 1}},
		{name: "a 401 is not retried", answer: whFailFirst(1, http.StatusUnauthorized), events: 2, want: []int{0, 1}},
		{name: "a 404 is not retried", answer: whFailFirst(1, http.StatusNotFound), events: 2, want: []int{0, 1}},
		{name: "a 422 is not retried", answer: whFailFirst(1, http.StatusUnprocessableEntity), events: 2, want: []int{0, 1}},
		{
			name:   "attempts are bounded by WebhookAttempts and the next event is not held back",
			answer: whFailFirst(5, http.StatusServiceUnavailable), attempts: 3,
			events: 2, want: []int{0, 0, 0, 1, 1, 1},
		},
		{
			name:   "WebhookAttempts 1 makes a single try",
			answer: whFailFirst(1, http.StatusServiceUnavailable), attempts: 1,
			events: 2, want: []int{0, 1},
		},
		{
			name:   "any 2xx takes the event",
			answer: func(n int) int { return []int{http.StatusAccepted, http.StatusNoContent}[(n-1)%2] },
			events: 2, want: []int{0, 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := newWhReceiver(t, tc.answer)
			f := whSandbox(t, rc, sandbox.Options{WebhookAttempts: tc.attempts, WebhookRetryBase: tc.base}, true)
			var sent []json.RawMessage
			for i := range tc.events {
				sent = append(sent, whSend(f, whAsset(fmt.Sprintf("asset-%d", i)))...)
			}
			got := rc.waitAttempts(t, len(tc.want))
			// Wait a little for an attempt too many, so that the count is checked, not only
			// the first attempts.
			time.Sleep(20 * time.Millisecond)
			got = rc.snapshot()
			var carried []int
			for _, a := range got {
				carried = append(carried, slices.IndexFunc(sent, func(s json.RawMessage) bool { return whSameJSON(t, s, a.body) }))
			}
			if !slices.Equal(carried, tc.want) {
				t.Errorf("attempts carried events %v, want %v", carried, tc.want)
			}
			if tc.check != nil && len(got) >= len(tc.want) {
				tc.check(t, sent, got)
			}
		})
	}
}

func TestWebhookSenderCloseStopsPromptly(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		answer func(n int) int
		send   any
		// first is how many attempts arrive before Close.
		first int
	}{
		{name: "with a retry pending", answer: whStatus(http.StatusServiceUnavailable), send: whAsset("a"), first: 1},
		{name: "with a delivery in flight to a receiver that does not answer", answer: whStatus(whHang), send: whAsset("a"), first: 1},
		{name: "with events queued for later", send: map[string]any{"scenario": "onboarding", "interval": "5s"}, first: 1},
		{name: "when idle", first: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := newWhReceiver(t, tc.answer)
			// A retry base of seconds: a sender that did not stop would keep Close waiting.
			f := whSandbox(t, rc, sandbox.Options{WebhookRetryBase: 2 * time.Second}, true)
			if tc.send != nil {
				whSend(f, tc.send)
			}
			rc.waitAttempts(t, tc.first)
			closed := make(chan error, 1)
			go func() { closed <- f.sb.Close() }()
			select {
			case err := <-closed:
				if err != nil {
					t.Fatalf("Close: %v", err)
				}
			case <-time.After(time.Second):
				t.Fatal("Close did not return within a second: the sender did not stop")
			}
			time.Sleep(30 * time.Millisecond)
			if n := len(rc.snapshot()); n != tc.first {
				t.Errorf("%d attempts after Close, want %d: the sender kept going", n, tc.first)
			}
		})
	}
}

func TestSandboxEventsRefusals(t *testing.T) {
	t.Parallel()
	noTarget := "No webhook target is configured: start the sandbox with -webhook-url and SANDBOX_WEBHOOK_KEY"
	cases := []struct {
		name      string
		noTarget  bool
		auth      string // Authorization header; "": the bearer token; "none": no credentials
		method    string // POST unless set
		body      any
		ct        string // Content-Type, when not application/json
		status    int
		message   string // exact message
		mentions  []string
		wantAllow string
	}{
		{name: "no credentials are refused", auth: "none", body: whAsset("a"), status: 403, message: "Access Denied"},
		{name: "a wrong bearer token is refused", auth: "Bearer wrong-token", body: whAsset("a"), status: 403, message: "Access Denied"},
		{name: "basic credentials are refused", auth: "Basic dGVzdC11c2VyOnRlc3QtcGFzcw==", body: whAsset("a"), status: 403, message: "Access Denied"},
		{name: "credentials are checked before the webhook target", noTarget: true, auth: "Bearer wrong-token", body: whAsset("a"), status: 403, message: "Access Denied"},
		{name: "an event without a webhook target is a conflict", noTarget: true, body: whAsset("a"), status: 409, message: noTarget},
		{name: "an array without a webhook target is a conflict", noTarget: true, body: []any{whAsset("a")}, status: 409, message: noTarget},
		{name: "a scenario without a webhook target is a conflict", noTarget: true, body: map[string]any{"scenario": "onboarding"}, status: 409, message: noTarget},
		{name: "an unknown EventType is refused and named", body: map[string]any{"EventType": "ClientMovedHouse"}, status: 400, mentions: []string{`"ClientMovedHouse"`, "ClientProgressChanged"}},
		{name: "a missing EventType is refused", body: map[string]any{"AssetName": "a"}, status: 400, mentions: []string{"EventType"}},
		{name: "an EventType that is not a string is refused", body: map[string]any{"EventType": 7}, status: 400, mentions: []string{"EventType"}},
		{name: "an EventType in another case is refused", body: map[string]any{"EventType": "assetdeleted"}, status: 400, mentions: []string{`"assetdeleted"`}},
		{name: "an unknown EventType in an array is refused and named", body: []any{whAsset("a"), map[string]any{"EventType": "Nope"}}, status: 400, mentions: []string{`"Nope"`}},
		{name: "a string body is refused", body: `"AssetDeleted"`, status: 400},
		{name: "a number body is refused", body: `42`, status: 400},
		{name: "a boolean body is refused", body: `true`, status: 400},
		{name: "a null body is refused", body: `null`, status: 400},
		{name: "an empty body is refused", body: ``, status: 400},
		{name: "malformed JSON is refused", body: `{"EventType": "AssetDeleted",`, status: 400},
		{name: "an array of non-objects is refused", body: `[1, 2]`, status: 400},
		{name: "an array holding null is refused", body: `[null]`, status: 400},
		{name: "an empty array is refused", body: `[]`, status: 400, message: "Send at least one event"},
		{name: "CompletionPercentage over 100 breaks the specification", body: map[string]any{"EventType": "ClientProgressChanged", "CompletionPercentage": 150}, status: 400, mentions: []string{"CompletionPercentage", "150"}},
		{name: "CompletionPercentage below 0 breaks the specification", body: map[string]any{"EventType": "ClientProgressChanged", "CompletionPercentage": -1}, status: 400, mentions: []string{"CompletionPercentage"}},
		{name: "an EstateStatus outside the enumeration breaks the specification", body: map[string]any{"EventType": "ClientProgressChanged", "EstateStatus": "Done"}, status: 400, mentions: []string{"EstateStatus"}},
		{name: "a DocumentName outside the supported names breaks the specification", body: map[string]any{"EventType": "DocumentStarted", "DocumentName": "Prenup"}, status: 400, mentions: []string{"DocumentName"}},
		{name: "a Timestamp that is not ISO 8601 breaks the specification", body: map[string]any{"EventType": "AssetDeleted", "Timestamp": "yesterday"}, status: 400, mentions: []string{"Timestamp"}},
		{name: "a Wid over 64 characters breaks the specification", body: map[string]any{"EventType": "AssetDeleted", "Wid": strings.Repeat("w", 65)}, status: 400, mentions: []string{"Wid"}},
		{name: "a Wid that is not a string breaks the specification", body: map[string]any{"EventType": "AssetDeleted", "Wid": 42}, status: 400, mentions: []string{"Wid"}},
		{name: "an empty Wid breaks the specification", body: map[string]any{"EventType": "AssetDeleted", "Wid": ""}, status: 400, mentions: []string{"Wid"}},
		{name: "a Payload of null breaks the specification", body: map[string]any{"EventType": "TaxJobFailed", "Payload": nil}, status: 400, mentions: []string{"Payload"}},
		{name: "an empty AssetName breaks the specification", body: map[string]any{"EventType": "AssetDeleted", "AssetName": " "}, status: 400, mentions: []string{"AssetName"}},
		{name: "a beneficiary without a Name breaks the specification", body: map[string]any{"EventType": "AssetBeneficiaryAdded", "BeneficiaryAdded": []any{map[string]any{}}}, status: 400, mentions: []string{"BeneficiaryAdded[0].Name"}},
		{name: "an assistant Reason outside the enumeration breaks the specification", body: map[string]any{"EventType": "AssistantJobFailed", "Payload": map[string]any{"Reason": "NoTaxReturnFound"}}, status: 400, mentions: []string{"Payload.Reason"}},
		{name: "a tax category other than tax breaks the specification", body: map[string]any{"EventType": "TaxJobCompleted", "Payload": map[string]any{"category": "estate"}}, status: 400, mentions: []string{"Payload.category"}},
		{name: "a generated document type outside the enumeration breaks the specification", body: map[string]any{"EventType": "AssistantJobCompleted", "Payload": map[string]any{"Documents": []any{map[string]any{"DocumentType": "Flowchart", "VaultId": "v-1"}}}}, status: 400, mentions: []string{"Payload.Documents[0].DocumentType"}},
		{name: "a Payload that is not an object breaks the specification", body: map[string]any{"EventType": "TaxJobFailed", "Payload": "NoTaxReturnFound"}, status: 400, mentions: []string{"Payload"}},
		{name: "an ExternalId that is not a string breaks the specification", body: map[string]any{"EventType": "TaxJobFailed", "ExternalId": 12}, status: 400, mentions: []string{"ExternalId"}},
		{name: "one invalid event in an array sends none of them", body: []any{whAsset("a"), map[string]any{"EventType": "ClientProgressChanged", "CompletionPercentage": 150}}, status: 400, mentions: []string{"CompletionPercentage"}},
		{name: "an unknown scenario is refused", body: map[string]any{"scenario": "offboarding"}, status: 400, mentions: []string{"offboarding", "onboarding"}},
		{name: "an interval that is not a duration is refused", body: map[string]any{"scenario": "onboarding", "interval": "soon"}, status: 400, mentions: []string{"interval"}},
		{name: "an interval given as a number is refused", body: map[string]any{"scenario": "onboarding", "interval": 100}, status: 400, mentions: []string{"interval"}},
		{name: "a negative interval is refused", body: map[string]any{"scenario": "onboarding", "interval": "-1s"}, status: 400, mentions: []string{"interval"}},
		{name: "an interval over a minute is refused", body: map[string]any{"scenario": "onboarding", "interval": "61s"}, status: 400, mentions: []string{"interval"}},
		{name: "a scenario Wid over 64 characters breaks the specification", body: map[string]any{"scenario": "onboarding", "interval": "0s", "Wid": strings.Repeat("w", 65)}, status: 400, mentions: []string{"Wid"}},
		{name: "a scenario Wid that is not a string breaks the specification", body: map[string]any{"scenario": "onboarding", "interval": "0s", "Wid": 7}, status: 400, mentions: []string{"Wid"}},
		{name: "GET is not allowed", method: "GET", status: 405, message: "Method Not Allowed", wantAllow: "POST"},
		{name: "PUT is not allowed", method: "PUT", body: whAsset("a"), status: 405, message: "Method Not Allowed", wantAllow: "POST"},
		{name: "a body that is not JSON is an unsupported media type", body: "plain", ct: "text/plain", status: 415},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var rc *whReceiver
			if !tc.noTarget {
				rc = newWhReceiver(t, nil)
			}
			f := whOn(whSandbox(t, rc, sandbox.Options{}, true), t)
			method := cmp.Or(tc.method, "POST")
			req := f.request(method, "/sandbox/events", tc.body)
			r := f.do(whHeaders(req, tc.ct, tc.auth))
			if tc.message != "" {
				r.wantError(t, tc.status, tc.message)
			} else {
				if r.status != tc.status {
					t.Errorf("status %d, want %d; body %s", r.status, tc.status, r.body)
				}
				msg, _ := r.object(t)["message"].(string)
				if msg == "" {
					t.Errorf("no message in %s", r.body)
				}
				for _, m := range tc.mentions {
					if !strings.Contains(msg, m) {
						t.Errorf("message %q does not mention %s", msg, m)
					}
				}
			}
			if tc.wantAllow != "" && r.header.Get("Allow") != tc.wantAllow {
				t.Errorf("Allow %q, want %q", r.header.Get("Allow"), tc.wantAllow)
			}
			if rc != nil {
				whBarrier(t, f, rc)
			}
		})
	}
}

// whHeaders sets a case's Content-Type, when it names one, and its Authorization: the
// sandbox's token when auth is empty, none for "none", auth itself otherwise.
func whHeaders(req *http.Request, ct, auth string) *http.Request {
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	switch auth {
	case "":
		req.Header.Set("Authorization", "Bearer "+testToken)
	case "none":
	default:
		req.Header.Set("Authorization", auth)
	}
	return req
}

// whTypeFields are the fields of each type (inside Payload for analysis events) that the
// sandbox fills when they are left out.
var whTypeFields = map[advisorspec.EventType][]string{
	advisorspec.AssistantJobCompleted:                {"CorrelationId", "JobId", "DocumentWid", "source_document", "category", "Documents"},
	advisorspec.AssistantJobFailed:                   {"CorrelationId", "JobId", "DocumentWid", "Reason"},
	advisorspec.AssistantMultiDocumentRequiresReview: {"CorrelationId", "JobId", "DocumentWid", "VaultLink", "DetectedDocumentCount"},
	advisorspec.TaxJobCompleted:                      {"CorrelationId", "JobId", "DocumentWid", "source_document", "category", "PresentationStatus"},
	advisorspec.TaxJobFailed:                         {"CorrelationId", "JobId", "DocumentWid", "Reason"},
	advisorspec.ClientAcceptedInvitation:             {"AdvisorWid", "TeamId", "CompanyId", "RegistrationEmail"},
	advisorspec.ClientDeclinedInvitation:             {"AdvisorWid", "TeamId", "CompanyId", "RegistrationEmail"},
	advisorspec.UserSubscriptionCreated:              {"NewPlan"},
	advisorspec.UserSubscriptionCanceled:             {"OldPlan"},
	advisorspec.UserSubscriptionChanged:              {"OldPlan", "NewPlan"},
	advisorspec.UserSubscriptionReactivated:          {"OldPlan"},
	advisorspec.ClientProgressChanged:                {"EstateStatus", "CompletionPercentage"},
	advisorspec.AssetAdded:                           {"AssetName", "DollarAmount"},
	advisorspec.AssetDeleted:                         {"AssetName"},
	advisorspec.AssetBeneficiaryAdded:                {"AssetName", "BeneficiaryAdded"},
	advisorspec.AssetBeneficiaryDeleted:              {"AssetName", "BeneficiaryDeleted"},
	advisorspec.AssetOwnershipAdded:                  {"AssetName", "OwnershipAdded"},
	advisorspec.AssetOwnershipDeleted:                {"AssetName", "OwnerDeleted"},
	advisorspec.DocumentStarted:                      {"IsRecommendedDocument", "DocumentName", "DocumentProgressPercentage", "UserTier", "DocumentOwnerInfo", "WasCompletedBefore"},
	advisorspec.DocumentPendingValidation:            {"IsRecommendedDocument", "DocumentName", "DocumentProgressPercentage", "UserTier", "DocumentOwnerInfo"},
	advisorspec.DocumentCompleted:                    {"IsRecommendedDocument", "DocumentName", "DocumentProgressPercentage", "UserTier", "DocumentOwnerInfo"},
}

func TestSandboxEventsFillDefaultsForEveryType(t *testing.T) {
	t.Parallel()
	if len(whTypeFields) != 21 || len(advisorspec.EventTypes) != 21 {
		t.Fatalf("%d types in the table and %d in the specification, want 21", len(whTypeFields), len(advisorspec.EventTypes))
	}
	for _, typ := range advisorspec.EventTypes {
		if got := advisorspec.EventFields(typ); !slices.Equal(got, whTypeFields[typ]) {
			t.Errorf("advisorspec.EventFields(%s) = %v, want %v", typ, got, whTypeFields[typ])
		}
	}
	for _, typ := range advisorspec.EventTypes {
		t.Run(string(typ), func(t *testing.T) {
			t.Parallel()
			rc := newWhReceiver(t, nil)
			f := whOn(whSandbox(t, rc, sandbox.Options{}, true), t)
			wid, externalID := whFirstAccount(f)
			sent := whSend(f, map[string]any{"EventType": typ})
			if len(sent) != 1 {
				t.Fatalf("answer lists %d events, want 1", len(sent))
			}
			got := rc.waitDelivered(t, 1)[0]
			if !whSameJSON(t, sent[0], got.body) {
				t.Errorf("delivered %s, but the answer says %s", got.body, sent[0])
			}
			ev := whParse(t, got.body)
			if ev.EventType != typ || ev.Wid != wid {
				t.Errorf("EventType %s and Wid %s, want %s and the first demo top account %s", ev.EventType, ev.Wid, typ, wid)
			}
			body := whObject(t, got.body)
			if body["Timestamp"] != whNow {
				t.Errorf("Timestamp %v, want the sandbox clock %s", body["Timestamp"], whNow)
			}
			fields := body
			if typ.Group() == advisorspec.GroupAnalysis {
				if body["ExternalId"] != externalID {
					t.Errorf("ExternalId %v, want the top account's %s", body["ExternalId"], externalID)
				}
				fields, _ = body["Payload"].(map[string]any)
				vault := whVault(f, wid)
				if len(vault) == 0 || fields["DocumentWid"] != vault[0] {
					t.Errorf("DocumentWid %v, want the top account's first document %v", fields["DocumentWid"], vault)
				}
				if src, ok := fields["source_document"].(map[string]any); ok && src["vault_id"] != fields["DocumentWid"] {
					t.Errorf("source_document.vault_id %v, want DocumentWid %v", src["vault_id"], fields["DocumentWid"])
				}
			} else if _, ok := body["Payload"]; ok {
				t.Errorf("a %s event is flat, but carries a Payload", typ)
			}
			for _, name := range whTypeFields[typ] {
				if v, ok := fields[name]; !ok || (v == nil && name != "ExternalId") {
					t.Errorf("field %s is %v, want a default", name, v)
				}
			}
		})
	}
}

func TestSandboxEventsProvidedFieldsOverrideDefaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		empty bool // a sandbox with no top accounts
		send  map[string]any
		// want are fields of the delivered body, by path ("Payload.Reason").
		want   map[string]any
		absent []string
	}{
		{
			name: "a provided Wid and Timestamp replace the defaults",
			send: map[string]any{"EventType": "AssetDeleted", "Wid": "client-42", "Timestamp": "2025-01-02T03:04:05Z"},
			want: map[string]any{"Wid": "client-42", "Timestamp": "2025-01-02T03:04:05Z", "AssetName": "Brokerage account"},
		},
		{
			name: "provided fields of the type replace their defaults",
			send: map[string]any{"EventType": "ClientProgressChanged", "EstateStatus": "Completed", "CompletionPercentage": 100},
			want: map[string]any{"EstateStatus": "Completed", "CompletionPercentage": 100.0},
		},
		{
			name: "provided Payload fields replace their defaults and the others are filled",
			send: map[string]any{"EventType": "AssistantJobFailed", "Payload": map[string]any{"CorrelationId": "corr-1", "Reason": "InvalidDocument"}},
			want: map[string]any{"Payload.CorrelationId": "corr-1", "Payload.Reason": "InvalidDocument"},
		},
		{
			name: "a provided ExternalId of null stays null",
			send: map[string]any{"EventType": "TaxJobFailed", "ExternalId": nil},
			want: map[string]any{"ExternalId": nil, "Payload.Reason": "NoTaxReturnFound"},
		},
		{
			name: "a provided Documents array is kept",
			send: map[string]any{"EventType": "AssistantJobCompleted", "Payload": map[string]any{"Documents": []any{map[string]any{"DocumentType": "AdvancedExecSummary", "VaultId": "v-9", "Extension": "pdf"}}}},
			want: map[string]any{"Payload.category": "estate"},
		},
		{
			name:   "owners under OwnerAdded, the field table's name, are kept without an OwnershipAdded",
			send:   map[string]any{"EventType": "AssetOwnershipAdded", "OwnerAdded": []any{map[string]any{"Name": "Pat Rivera"}}},
			want:   map[string]any{"AssetName": "Family home"},
			absent: []string{"OwnershipAdded"},
		},
		{
			name: "fields the specification does not list are passed through",
			send: map[string]any{"EventType": "AssetDeleted", "Note": "added later"},
			want: map[string]any{"Note": "added later"},
		},
		{
			name:  "on a sandbox with no top accounts a provided Wid is enough",
			empty: true,
			send:  map[string]any{"EventType": "ClientDeclinedInvitation", "Wid": "user-7"},
			want:  map[string]any{"Wid": "user-7", "RegistrationEmail": "jordan.rivera@example.com"},
		},
		{
			name:  "an analysis event for an unknown client has a null ExternalId",
			empty: true,
			send:  map[string]any{"EventType": "TaxJobCompleted", "Wid": "client-9"},
			want:  map[string]any{"ExternalId": nil, "Payload.category": "tax"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := newWhReceiver(t, nil)
			f := whOn(whSandbox(t, rc, sandbox.Options{}, !tc.empty), t)
			whSend(f, tc.send)
			got := rc.waitDelivered(t, 1)[0]
			whParse(t, got.body)
			body := whObject(t, got.body)
			for path, want := range tc.want {
				v, ok := whField(body, path)
				if !ok || !reflect.DeepEqual(v, want) {
					t.Errorf("%s is %#v (present %v), want %#v", path, v, ok, want)
				}
			}
			for _, path := range tc.absent {
				if v, ok := whField(body, path); ok {
					t.Errorf("%s is %v, want it absent", path, v)
				}
			}
			// Every provided field arrives as it was sent.
			for k, v := range tc.send {
				if k == "Payload" {
					for pk, pv := range v.(map[string]any) {
						if got, _ := whField(body, "Payload."+pk); !whSameValue(t, got, pv) {
							t.Errorf("Payload.%s is %v, want the provided %v", pk, got, pv)
						}
					}
					continue
				}
				if !whSameValue(t, body[k], v) {
					t.Errorf("%s is %v, want the provided %v", k, body[k], v)
				}
			}
		})
	}
	t.Run("on a sandbox with no top accounts an event without a Wid is refused", func(t *testing.T) {
		t.Parallel()
		rc := newWhReceiver(t, nil)
		f := whOn(whSandbox(t, rc, sandbox.Options{}, false), t)
		r := whPost(f, whAsset("a"))
		if r.status != http.StatusBadRequest || !strings.Contains(str(t, r.object(t), "message"), "Wid") {
			t.Errorf("status %d body %s, want 400 naming Wid", r.status, r.body)
		}
		whBarrier(t, f, rc)
	})
}

// whField reads a dotted path of a decoded object.
func whField(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, key := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[key]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// whSameValue compares a decoded value with one a test wrote, through JSON.
func whSameValue(t *testing.T, got, want any) bool {
	t.Helper()
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	return whSameJSON(t, a, b)
}

func TestSandboxEventsArraySendsAllInOrder(t *testing.T) {
	t.Parallel()
	rc := newWhReceiver(t, nil)
	f := whSandbox(t, rc, sandbox.Options{}, true)
	batch := []any{
		whAsset("first"),
		map[string]any{"EventType": "ClientProgressChanged", "CompletionPercentage": 55},
		map[string]any{"EventType": "TaxJobFailed", "Payload": map[string]any{"Reason": "TimedOut"}},
		whAsset("last"),
	}
	sent := whSend(f, batch)
	if len(sent) != len(batch) {
		t.Fatalf("answer lists %d events, want %d", len(sent), len(batch))
	}
	got := rc.waitDelivered(t, len(batch))
	wantTypes := []advisorspec.EventType{advisorspec.AssetDeleted, advisorspec.ClientProgressChanged, advisorspec.TaxJobFailed, advisorspec.AssetDeleted}
	for i, a := range got {
		if !whSameJSON(t, a.body, sent[i]) {
			t.Errorf("delivery %d is %s, want %s", i, a.body, sent[i])
		}
		if typ := whParse(t, a.body).EventType; typ != wantTypes[i] {
			t.Errorf("delivery %d is %s, want %s", i, typ, wantTypes[i])
		}
	}
	if whAssetName(t, got[0].body) != "first" || whAssetName(t, got[3].body) != "last" {
		t.Errorf("deliveries out of order: %s ... %s", got[0].body, got[3].body)
	}
}

func TestSandboxEventsOnboardingScenario(t *testing.T) {
	t.Parallel()
	wantTypes := []advisorspec.EventType{
		advisorspec.ClientAcceptedInvitation, advisorspec.UserSubscriptionCreated, advisorspec.ClientProgressChanged,
		advisorspec.DocumentStarted, advisorspec.ClientProgressChanged, advisorspec.DocumentPendingValidation,
		advisorspec.ClientProgressChanged, advisorspec.DocumentCompleted, advisorspec.ClientProgressChanged,
	}
	cases := []struct {
		name     string
		body     map[string]any
		interval time.Duration
		wid      string // "" : the first demo top account
	}{
		{name: "nine events in order, one per interval, for the given Wid", body: map[string]any{"scenario": "onboarding", "interval": "40ms", "Wid": "client-onboarding"}, interval: 40 * time.Millisecond, wid: "client-onboarding"},
		{name: "without a Wid the first demo top account is the client", body: map[string]any{"scenario": "onboarding", "interval": "0s"}},
		{name: "an interval of one minute is allowed", body: map[string]any{"scenario": "onboarding", "interval": "1m"}, interval: time.Minute},
		{name: "without an interval the events are a second apart", body: map[string]any{"scenario": "onboarding"}, interval: time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := newWhReceiver(t, nil)
			f := whOn(whSandbox(t, rc, sandbox.Options{}, true), t)
			wid := tc.wid
			if wid == "" {
				wid, _ = whFirstAccount(f)
			}
			start := time.Now()
			r := whPost(f, tc.body).wantOK(t)
			var ans struct {
				Scenario string            `json:"scenario"`
				Interval string            `json:"interval"`
				Events   []json.RawMessage `json:"events"`
			}
			r.decode(t, &ans)
			if ans.Scenario != "onboarding" || ans.Interval != tc.interval.String() || len(ans.Events) != len(wantTypes) {
				t.Fatalf("answer: scenario %q interval %q with %d events, want onboarding %s with %d", ans.Scenario, ans.Interval, len(ans.Events), tc.interval, len(wantTypes))
			}
			clock := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
			for i, raw := range ans.Events {
				ev := whParse(t, raw)
				if ev.EventType != wantTypes[i] || ev.Wid != wid {
					t.Errorf("event %d is %s for %s, want %s for %s", i, ev.EventType, ev.Wid, wantTypes[i], wid)
				}
				if want := clock.Add(time.Duration(i) * tc.interval); !ev.Timestamp.Equal(want) {
					t.Errorf("event %d is stamped %s, want %s", i, ev.Timestamp, want)
				}
			}
			if tc.interval >= time.Second {
				// Only the first is due now; the rest wait their turn (and Close drops them).
				rc.waitDelivered(t, 1)
				time.Sleep(50 * time.Millisecond)
				if n := len(rc.snapshot()); n != 1 {
					t.Errorf("%d events delivered at once, want 1", n)
				}
				return
			}
			got := rc.waitDelivered(t, len(wantTypes))
			for i, a := range got {
				if !whSameJSON(t, a.body, ans.Events[i]) {
					t.Errorf("delivery %d is %s, want %s", i, a.body, ans.Events[i])
				}
				if due := start.Add(time.Duration(i) * tc.interval); a.at.Before(due) {
					t.Errorf("delivery %d came %s after the request, want at least %s", i, a.at.Sub(start), due.Sub(start))
				}
			}
		})
	}
}

// whDoc is a document to analyse; size < 0 leaves it with no file.
type whDoc struct {
	name, ext string
	size      int64
}

// whZeros is an endless reader of zero bytes, for large uploads without large buffers.
type whZeros struct{}

func (whZeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

var whContentTypes = map[string]string{
	".pdf":  "application/pdf",
	".PDF":  "application/pdf",
	".doc":  "application/msword",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".png":  "image/png",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}

// whAddDoc adds a document to the vault, uploads its file unless size < 0, and returns its
// vault_id.
func whAddDoc(f *fixture, wid string, d whDoc) string {
	f.t.Helper()
	body := pdfDocument(d.name)
	body["extension"] = d.ext
	up := f.addDocument(wid, body)
	vaultID := str(f.t, up, "vault_id")
	if d.size >= 0 {
		req, err := http.NewRequest("PUT", str(f.t, up, "upload_uri"), io.LimitReader(whZeros{}, d.size))
		if err != nil {
			f.t.Fatalf("new request: %v", err)
		}
		req.ContentLength = d.size
		req.Header.Set("Content-Type", whContentTypes[d.ext])
		if r := f.do(req); r.status != http.StatusOK {
			f.t.Fatalf("upload of %s: status %d %s", d.name, r.status, r.body)
		}
	}
	return vaultID
}

func whAnalysisPath(wid, vaultID string) string {
	return "/v2/top-accounts/" + wid + "/documents/" + vaultID + "/analysis"
}

// whStart starts an analysis and returns the correlation_id.
func whStart(f *fixture, wid, vaultID string, body any) string {
	f.t.Helper()
	r := f.v2("POST", whAnalysisPath(wid, vaultID), body).wantOK(f.t)
	obj := r.object(f.t)
	if len(obj) != 1 {
		f.t.Errorf("answer %s, want only correlation_id", r.body)
	}
	id := str(f.t, obj, "correlation_id")
	if id == "" {
		f.t.Error("correlation_id is empty")
	}
	return id
}

func TestAnalysisRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		auth     string // "" : the bearer token; "none": no credentials
		method   string
		path     func(wid, vaultID string) string
		body     any
		ct       string
		status   int
		message  string
		mentions string
	}{
		{name: "no credentials are refused", auth: "none", status: 403, message: "Access Denied"},
		{name: "a wrong bearer token is refused", auth: "Bearer nope", status: 403, message: "Access Denied"},
		{name: "credentials are checked before the document is looked up", auth: "none", path: func(wid, _ string) string { return whAnalysisPath(wid, "no-such-vault") }, status: 403, message: "Access Denied"},
		{name: "an unknown document is not found", path: func(wid, _ string) string { return whAnalysisPath(wid, "no-such-vault") }, status: 404, message: "Vault doesn't exist"},
		{name: "an unknown top account is not found", path: func(_, v string) string { return whAnalysisPath("no-such-wid", v) }, status: 404, message: "Container not found"},
		{name: "a document of another top account is not found", path: func(_, v string) string { return whAnalysisPath("OTHER", v) }, status: 404, message: "Vault doesn't exist"},
		{name: "a start_tax_job that is a string is refused", body: map[string]any{"start_tax_job": "yes"}, status: 400, mentions: "start_tax_job"},
		{name: "a start_tax_job that is a number is refused", body: map[string]any{"start_tax_job": 1}, status: 400, mentions: "start_tax_job"},
		{name: "malformed JSON is refused", body: `{"start_tax_job": true`, status: 400, mentions: "start_tax_job"},
		{name: "an array body is refused", body: `[true]`, status: 400, mentions: "start_tax_job"},
		{name: "a string body is refused", body: `"tax"`, status: 400, mentions: "start_tax_job"},
		{name: "a body that is not JSON is an unsupported media type", body: "start_tax_job=true", ct: "text/plain", status: 415},
		{name: "GET is not allowed", method: "GET", status: 405, message: "Method Not Allowed"},
		{name: "DELETE is not allowed", method: "DELETE", status: 405, message: "Method Not Allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := newWhReceiver(t, nil)
			f := whOn(whSandbox(t, rc, sandbox.Options{}, true), t)
			wid := f.addTopAccount("WH-EXT-1", "Webhook Family")
			vaultID := whAddDoc(f, wid, whDoc{name: "Trust", ext: ".pdf", size: 100})
			path := whAnalysisPath(wid, vaultID)
			if tc.path != nil {
				other := f.addTopAccount("WH-EXT-2", "Other Family")
				path = strings.ReplaceAll(tc.path(wid, vaultID), "/OTHER/", "/"+other+"/")
			}
			req := f.request(cmp.Or(tc.method, "POST"), path, tc.body)
			r := f.do(whHeaders(req, tc.ct, tc.auth))
			if tc.message != "" {
				r.wantError(t, tc.status, tc.message)
			} else {
				if r.status != tc.status {
					t.Errorf("status %d, want %d; body %s", r.status, tc.status, r.body)
				}
				if msg := str(t, r.object(t), "message"); !strings.Contains(msg, tc.mentions) {
					t.Errorf("message %q does not mention %q", msg, tc.mentions)
				}
			}
			if tc.status == 405 && r.header.Get("Allow") != "POST" {
				t.Errorf("Allow %q, want POST", r.header.Get("Allow"))
			}
			if n := len(whVault(f, wid)); n != 1 {
				t.Errorf("the vault holds %d documents after a refused analysis, want 1", n)
			}
			// Nothing was queued: the next analysis is the first event delivered.
			corr := whStart(f, wid, vaultID, nil)
			got := rc.waitAttempts(t, 1)
			if c, _ := whField(whObject(t, got[0].body), "Payload.CorrelationId"); c != corr {
				t.Errorf("the first delivery is %s, want the analysis %s", got[0].body, corr)
			}
		})
	}
}

func TestAnalysisOutcomes(t *testing.T) {
	t.Parallel()
	tax := map[string]any{"start_tax_job": true}
	cases := []struct {
		name   string
		doc    whDoc
		body   any
		typ    advisorspec.EventType
		reason string
		noJob  bool // JobId is empty: no job was started
	}{
		{name: "estate analysis of an uploaded pdf completes with generated documents", doc: whDoc{"Family Trust", ".pdf", 2048}, typ: advisorspec.AssistantJobCompleted},
		{name: "estate analysis of an uploaded doc completes", doc: whDoc{"Will draft", ".doc", 512}, typ: advisorspec.AssistantJobCompleted},
		{name: "estate analysis of an uploaded docx completes", doc: whDoc{"Will draft", ".docx", 512}, typ: advisorspec.AssistantJobCompleted},
		{name: "the extension is matched in any case", doc: whDoc{"Scanned will", ".PDF", 512}, typ: advisorspec.AssistantJobCompleted},
		{name: "start_tax_job false runs estate analysis", doc: whDoc{"Family Trust", ".pdf", 512}, body: map[string]any{"start_tax_job": false}, typ: advisorspec.AssistantJobCompleted},
		{name: "an empty object runs estate analysis", doc: whDoc{"Family Trust", ".pdf", 512}, body: map[string]any{}, typ: advisorspec.AssistantJobCompleted},
		{name: "a file of exactly 50 MiB is analysed", doc: whDoc{"Large trust", ".pdf", 50 * whMiB}, typ: advisorspec.AssistantJobCompleted},
		{name: "a document with no file uploaded fails with UploadTimeout and no job", doc: whDoc{"Family Trust", ".pdf", -1}, typ: advisorspec.AssistantJobFailed, reason: "UploadTimeout", noJob: true},
		{name: "a png fails with DocumentTypeNotSupported", doc: whDoc{"Photo of will", ".png", 512}, typ: advisorspec.AssistantJobFailed, reason: "DocumentTypeNotSupported"},
		{name: "an xlsx fails with DocumentTypeNotSupported", doc: whDoc{"Balance sheet", ".xlsx", 512}, typ: advisorspec.AssistantJobFailed, reason: "DocumentTypeNotSupported"},
		{name: "a file over 50 MiB fails with FileTooLarge", doc: whDoc{"Huge trust", ".pdf", 50*whMiB + 1}, typ: advisorspec.AssistantJobFailed, reason: "FileTooLarge"},
		{name: "a name containing bundle requires review", doc: whDoc{"Estate Bundle 2024", ".pdf", 512}, typ: advisorspec.AssistantMultiDocumentRequiresReview},
		{name: "tax analysis of an uploaded pdf completes", doc: whDoc{"Form 1040", ".pdf", 512}, body: tax, typ: advisorspec.TaxJobCompleted},
		{name: "tax analysis with no file uploaded fails with UploadTimeout and no job", doc: whDoc{"Form 1040", ".pdf", -1}, body: tax, typ: advisorspec.TaxJobFailed, reason: "UploadTimeout", noJob: true},
		{name: "tax analysis of a docx finds no tax return", doc: whDoc{"Tax notes", ".docx", 512}, body: tax, typ: advisorspec.TaxJobFailed, reason: "NoTaxReturnFound"},
		{name: "tax analysis of a png finds no tax return", doc: whDoc{"Photo of return", ".png", 512}, body: tax, typ: advisorspec.TaxJobFailed, reason: "NoTaxReturnFound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := newWhReceiver(t, nil)
			f := whOn(whSandbox(t, rc, sandbox.Options{}, false), t)
			wid := f.addTopAccount("WH-EXT-1", "Webhook Family")
			vaultID := whAddDoc(f, wid, tc.doc)
			corr := whStart(f, wid, vaultID, tc.body)
			got := rc.waitDelivered(t, 1)[0]
			ev := whParse(t, got.body)
			if ev.EventType != tc.typ || ev.Wid != wid {
				t.Fatalf("event %s for %s, want %s for %s: %s", ev.EventType, ev.Wid, tc.typ, wid, got.body)
			}
			body := whObject(t, got.body)
			if body["Timestamp"] != whNow {
				t.Errorf("Timestamp %v, want %s", body["Timestamp"], whNow)
			}
			if body["ExternalId"] != "WH-EXT-1" {
				t.Errorf("ExternalId %v, want the top account's WH-EXT-1", body["ExternalId"])
			}
			payload := body["Payload"].(map[string]any)
			if payload["CorrelationId"] != corr || payload["DocumentWid"] != vaultID {
				t.Errorf("CorrelationId %v and DocumentWid %v, want %q and %q", payload["CorrelationId"], payload["DocumentWid"], corr, vaultID)
			}
			if (payload["JobId"] == "") != tc.noJob {
				t.Errorf("JobId %v, want it empty only when no job started (%v)", payload["JobId"], tc.noJob)
			}
			if tc.reason != "" && payload["Reason"] != tc.reason {
				t.Errorf("Reason %v, want %s", payload["Reason"], tc.reason)
			}
			doc := f.v2("GET", "/v2/top-accounts/"+wid+"/documents/"+vaultID, nil)
			var generated []string
			switch tc.typ {
			case advisorspec.AssistantJobCompleted:
				whWantSource(t, doc, payload["source_document"])
				if payload["category"] != "estate" {
					t.Errorf("category %v, want estate", payload["category"])
				}
				var types []string
				docs, _ := payload["Documents"].([]any)
				for _, item := range docs {
					g, _ := item.(map[string]any)
					vaultID, _ := g["VaultId"].(string)
					types = append(types, fmt.Sprint(g["DocumentType"]))
					generated = append(generated, vaultID)
					if g["Extension"] != "pdf" {
						t.Errorf("generated %v has Extension %v, want pdf", g["DocumentType"], g["Extension"])
					}
					whWantGenerated(t, f, wid, vaultID)
				}
				if !slices.Equal(types, []string{"StandardExecSummary", "Insights"}) {
					t.Errorf("generated %v, want StandardExecSummary and Insights", types)
				}
			case advisorspec.TaxJobCompleted:
				whWantSource(t, doc, payload["source_document"])
				if payload["category"] != "tax" || payload["PresentationStatus"] != "filed" {
					t.Errorf("category %v and PresentationStatus %v, want tax and filed", payload["category"], payload["PresentationStatus"])
				}
				if _, ok := payload["Documents"]; ok {
					t.Error("TaxJobCompleted carries Documents; the specification says it has none")
				}
			case advisorspec.AssistantMultiDocumentRequiresReview:
				if n, _ := payload["DetectedDocumentCount"].(float64); n < 2 {
					t.Errorf("DetectedDocumentCount %v, want more than one", payload["DetectedDocumentCount"])
				}
				if link, _ := payload["VaultLink"].(string); !strings.Contains(link, vaultID) {
					t.Errorf("VaultLink %v, want a path to the document %s", payload["VaultLink"], vaultID)
				}
			case advisorspec.AssistantJobFailed, advisorspec.TaxJobFailed:
				for _, k := range []string{"source_document", "category"} {
					if _, ok := payload[k]; ok {
						t.Errorf("%s carries %s; the specification says it has none", tc.typ, k)
					}
				}
			}
			if vault := whVault(f, wid); !slices.Equal(vault, append([]string{vaultID}, generated...)) {
				t.Errorf("the vault holds %v, want the document and the generated %v", vault, generated)
			}
		})
	}
}

// TestAnalysisEventsSourceDocumentIsUploadedAtItsCreationDateToTheMillisecond follows the
// specification's source_document: "uploaded_at (ISO 8601 date-time, same as Get Document
// creation_date)". The same, milliseconds and all: the document is created at a time that has
// them, and the analysis runs later.
func TestAnalysisEventsSourceDocumentIsUploadedAtItsCreationDateToTheMillisecond(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		body any
	}{
		{"AssistantJobCompleted", nil},
		{"TaxJobCompleted", map[string]any{"start_tax_job": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := newWhReceiver(t, nil)
			f := whOn(whSandbox(t, rc, sandbox.Options{}, false), t)
			wid := f.addTopAccount("WH-EXT-1", "Webhook Family")
			f.clock.Advance(123 * time.Millisecond)
			vaultID := whAddDoc(f, wid, whDoc{"Family Trust", ".pdf", 512})
			f.clock.Advance(time.Minute)
			whStart(f, wid, vaultID, tc.body)
			body := whObject(t, rc.waitDelivered(t, 1)[0].body)
			if body["EventType"] != tc.name {
				t.Fatalf("event %v, want %s", body["EventType"], tc.name)
			}
			src, _ := body["Payload"].(map[string]any)["source_document"].(map[string]any)
			doc := f.v2("GET", "/v2/top-accounts/"+wid+"/documents/"+vaultID, nil).wantOK(t).object(t)
			if want := "2026-11-22T09:30:00.123Z"; doc["creation_date"] != want || src["uploaded_at"] != want {
				t.Errorf("source_document.uploaded_at %v and creation_date %v, want both %s", src["uploaded_at"], doc["creation_date"], want)
			}
		})
	}
}

// whWantSource checks source_document against Get Document of the analysed document.
func whWantSource(t *testing.T, doc *response, source any) {
	t.Helper()
	d := doc.wantOK(t).object(t)
	src, ok := source.(map[string]any)
	if !ok {
		t.Fatalf("source_document %v, want an object", source)
	}
	if src["vault_id"] != d["vault_id"] || src["name"] != d["name"] || src["extension"] != d["extension"] {
		t.Errorf("source_document %v, want the document's vault_id, name and extension %v %v %v", src, d["vault_id"], d["name"], d["extension"])
	}
	created, err := advisorspec.ParseDateTime(str(t, d, "creation_date"))
	uploadedAt, _ := src["uploaded_at"].(string)
	uploaded, uerr := advisorspec.ParseDateTime(uploadedAt)
	if err != nil || uerr != nil || !uploaded.Equal(created) {
		t.Errorf("source_document.uploaded_at %v, want creation_date %v", src["uploaded_at"], d["creation_date"])
	}
}

// whWantGenerated checks that a generated document is in the vault with its file uploaded.
func whWantGenerated(t *testing.T, f *fixture, wid, vaultID string) {
	t.Helper()
	d := f.v2("GET", "/v2/top-accounts/"+wid+"/documents/"+vaultID, nil).wantOK(t).object(t)
	if d["wid"] != wid || d["extension"] != "pdf" || d["file_status"] != "Uploaded" {
		t.Errorf("generated document %v: want wid %s, extension pdf and file_status Uploaded", d, wid)
	}
	r := f.do(f.request("GET", str(t, d, "download_uri"), nil)).wantOK(t)
	if !strings.HasPrefix(string(r.body), "%PDF") || r.header.Get("Content-Type") != "application/pdf" {
		t.Errorf("generated file is %.20q as %s, want a PDF", r.body, r.header.Get("Content-Type"))
	}
}

func TestAnalysisCorrelationIDsAreUniquePerRun(t *testing.T) {
	t.Parallel()
	rc := newWhReceiver(t, nil)
	f := whSandbox(t, rc, sandbox.Options{}, false)
	wid := f.addTopAccount("WH-EXT-1", "Webhook Family")
	vaultID := whAddDoc(f, wid, whDoc{"Form 1040", ".pdf", 100})
	first := whStart(f, wid, vaultID, map[string]any{"start_tax_job": true})
	second := whStart(f, wid, vaultID, map[string]any{"start_tax_job": true})
	if first == second {
		t.Fatalf("both runs have correlation_id %s", first)
	}
	got := rc.waitDelivered(t, 2)
	for i, want := range []string{first, second} {
		if c, _ := whField(whObject(t, got[i].body), "Payload.CorrelationId"); c != want {
			t.Errorf("event %d has CorrelationId %v, want %s", i, c, want)
		}
	}
}

func TestAnalysisProcessingDelayDelaysTheEvent(t *testing.T) {
	t.Parallel()
	const delay = 150 * time.Millisecond
	rc := newWhReceiver(t, nil)
	f := whSandbox(t, rc, sandbox.Options{ProcessingDelay: delay}, false)
	wid := f.addTopAccount("WH-EXT-1", "Webhook Family")
	vaultID := whAddDoc(f, wid, whDoc{"Family Trust", ".pdf", 100})
	start := time.Now()
	whStart(f, wid, vaultID, nil)
	answered := time.Now()
	got := rc.waitDelivered(t, 1)[0]
	if got.at.Before(start.Add(delay)) {
		t.Errorf("event delivered %s after the request, want at least %s", got.at.Sub(start), delay)
	}
	if !got.at.After(answered) {
		t.Error("event delivered before the analysis was answered")
	}
	if ts := whObject(t, got.body)["Timestamp"]; ts != "2026-11-22T09:30:00.150Z" {
		t.Errorf("Timestamp %v, want the clock plus the processing delay", ts)
	}
}

func TestAnalysisWithoutWebhookTargetStillAnswers(t *testing.T) {
	t.Parallel()
	for _, body := range []any{nil, map[string]any{"start_tax_job": true}} {
		f := whSandbox(t, nil, sandbox.Options{}, false)
		wid := f.addTopAccount("WH-EXT-1", "Webhook Family")
		vaultID := whAddDoc(f, wid, whDoc{"Family Trust", ".pdf", 100})
		whStart(f, wid, vaultID, body)
		// POST /sandbox/events is the call that needs a target; analysis is not.
		whPost(f, whAsset("a")).wantError(t, http.StatusConflict, "No webhook target is configured: start the sandbox with -webhook-url and SANDBOX_WEBHOOK_KEY")
	}
}

package gateway_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/clock"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// sandboxed runs the gateway as `go run .` does, with its embedded sandbox sending webhooks to
// it, and returns the gateway and the sandbox's base URL.
func sandboxed(t testing.TB) (*testGateway, string) {
	t.Helper()
	urls := startedURLs(t, nil, map[string]string{"ADDR": "127.0.0.1:0"}, "gateway serving", "embedded Advisor sandbox at")
	return &testGateway{url: urls[0]}, urls[1]
}

// sandboxPost calls a sandbox endpoint with its default token.
func sandboxPost(t testing.TB, url string, body any) map[string]any {
	t.Helper()
	return sandboxJSON(t, http.MethodPost, url, body, func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+sandbox.DefaultAccessToken)
	})
}

func TestTheSandboxScenarioArrivesLiveThroughTheGateway(t *testing.T) {
	t.Parallel()
	gw, sb := sandboxed(t)
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("live", `subscription { events { eventType ... on ClientProgressChanged { completionPercentage } } }`, nil)
	waitSubscribers(t, gw, 1)
	sandboxPost(t, sb+"/sandbox/events", map[string]any{"scenario": "onboarding", "interval": "10ms"})
	want := []string{
		"CLIENT_ACCEPTED_INVITATION", "USER_SUBSCRIPTION_CREATED", "CLIENT_PROGRESS_CHANGED", "DOCUMENT_STARTED",
		"CLIENT_PROGRESS_CHANGED", "DOCUMENT_PENDING_VALIDATION", "CLIENT_PROGRESS_CHANGED", "DOCUMENT_COMPLETED", "CLIENT_PROGRESS_CHANGED",
	}
	var progress []float64
	for i, w := range want {
		ev := c.nextData("live")["events"].(map[string]any)
		if ev["eventType"] != w {
			t.Fatalf("event %d is %v, want %s", i, ev["eventType"], w)
		}
		if p, ok := ev["completionPercentage"].(float64); ok {
			progress = append(progress, p)
		}
	}
	if mustMarshal(progress) != "[10,45,90,100]" {
		t.Errorf("progress went %v, want it to rise to 100", progress)
	}
}

// demoDocument finds an uploaded PDF of the first demo family.
func demoDocument(t testing.TB, gw *testGateway) (wid, vaultID, name string) {
	t.Helper()
	var out struct {
		TopAccounts struct {
			Nodes []struct {
				Wid       string
				Documents struct {
					Nodes []struct{ VaultID, Name, Extension, FileStatus string }
				}
			}
		}
	}
	gw.post(t, `{ topAccounts { nodes { wid documents { nodes { vaultId name extension fileStatus } } } } }`, nil).ok(t, &out)
	for _, ta := range out.TopAccounts.Nodes {
		for _, d := range ta.Documents.Nodes {
			if d.Extension == "pdf" && d.FileStatus == "UPLOADED" {
				return ta.Wid, d.VaultID, d.Name
			}
		}
	}
	t.Fatal("the demo data has no uploaded PDF")
	return "", "", ""
}

func TestAnAnalysisInTheSandboxReachesSubscribersWithItsDocuments(t *testing.T) {
	t.Parallel()
	gw, sb := sandboxed(t)
	wid, vaultID, name := demoDocument(t, gw)
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("a", `subscription($wid: ID!) {
	  events(filter: {wids: [$wid], groups: [ANALYSIS]}) {
	    eventType
	    ... on AssistantJobCompleted {
	      correlationId documentWid document { name }
	      sourceDocument { vaultId document { name } }
	      documents { documentType document { name fileStatus extension } }
	    }
	  }
	}`, map[string]any{"wid": wid})
	waitSubscribers(t, gw, 1)
	started := sandboxPost(t, sb+"/v2/top-accounts/"+wid+"/documents/"+vaultID+"/analysis", nil)
	ev := c.nextData("a")["events"].(map[string]any)
	if ev["eventType"] != "ASSISTANT_JOB_COMPLETED" || ev["correlationId"] != started["correlation_id"] || ev["documentWid"] != vaultID {
		t.Fatalf("event %v, want ASSISTANT_JOB_COMPLETED for %s with correlation %v", ev, vaultID, started["correlation_id"])
	}
	if ev["document"].(map[string]any)["name"] != name || ev["sourceDocument"].(map[string]any)["document"].(map[string]any)["name"] != name {
		t.Errorf("the analysed document did not resolve to %q: %v", name, ev)
	}
	docs := ev["documents"].([]any)
	if len(docs) == 0 {
		t.Fatal("no generated documents")
	}
	for _, d := range docs {
		doc, _ := d.(map[string]any)["document"].(map[string]any)
		if doc == nil || doc["fileStatus"] != "UPLOADED" || doc["extension"] != "pdf" {
			t.Errorf("generated document %v does not resolve to an uploaded PDF in the vault", d)
		}
	}
}

func TestEachSubscriptionEventLoadsItsDocumentsAfresh(t *testing.T) {
	t.Parallel()
	gw, sb := sandboxed(t)
	wid, vaultID, _ := demoDocument(t, gw)
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("f", `subscription($wid: ID!) { events(filter: {wids: [$wid], types: [ASSISTANT_JOB_FAILED]}) { ... on AssistantJobFailed { document { name } } } }`,
		map[string]any{"wid": wid})
	waitSubscribers(t, gw, 1)
	fail := map[string]any{"EventType": "AssistantJobFailed", "Wid": wid, "Payload": map[string]any{"DocumentWid": vaultID}}
	for _, name := range []string{"Before.pdf", "After.pdf"} {
		gw.post(t, `mutation($wid: ID!, $id: ID!, $name: String!) { updateDocument(wid: $wid, vaultId: $id, input: {name: $name}) { document { name } } }`,
			map[string]any{"wid": wid, "id": vaultID, "name": name}).ok(t, nil)
		sandboxPost(t, sb+"/sandbox/events", fail)
		got := c.nextData("f")["events"].(map[string]any)["document"].(map[string]any)["name"]
		if got != name {
			t.Errorf("the event's document is named %v, want %q: the request cache outlived an event", got, name)
		}
	}
}

// TestAnalysisEventsCarryTheDocumentsCreationDateToTheMillisecond follows the specification's
// words for the analysis events' source_document: "uploaded_at (ISO 8601 date-time, same as Get
// Document creation_date)". The sandbox's clock is set to a time with milliseconds, so a format
// or a parse that drops them anywhere between the sandbox's webhook and GraphQL shows.
func TestAnalysisEventsCarryTheDocumentsCreationDateToTheMillisecond(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 22, 9, 30, 5, 123_000_000, time.UTC)
	clk := clock.NewSettable(created)
	// The sandbox's webhooks go through a relay, as the gateway's address is known only once it
	// runs on the sandbox's URL.
	var target atomic.Pointer[string]
	relay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, *target.Load()+"/webhooks", bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(relay.Close)
	up := startUpstream(t, sandbox.Options{Seed: 11, Empty: true, Now: clk.Now, WebhookURL: relay.URL, WebhookKey: webhookKey})
	gw := newGateway(t, up, nil)
	target.Store(&gw.url)

	wid := docTopAccount(t, up, "millis")
	vaultID, uri := docAdd(t, up, wid, map[string]any{"name": "Trust.pdf", "extension": "pdf", "category": "estate_planning", "sub_category": "revocable_trusts_and_supporting_documents"})
	if status := docPut(t, uri, "application/pdf", []byte("%PDF-1.4 trust")); status != http.StatusOK {
		t.Fatalf("upload: status %d", status)
	}
	clk.Advance(time.Minute) // the analysis runs later than the upload: uploaded_at is not "now"
	var doc struct{ Document struct{ CreationDate string } }
	gw.post(t, `query($wid: ID!, $id: ID!) { document(wid: $wid, vaultId: $id) { creationDate } }`,
		map[string]any{"wid": wid, "id": vaultID}).ok(t, &doc)
	if got, err := time.Parse(time.RFC3339Nano, doc.Document.CreationDate); err != nil || !got.Equal(created) {
		t.Fatalf("creationDate is %q, want %s", doc.Document.CreationDate, created.Format(time.RFC3339Nano))
	}

	for _, tc := range []struct {
		name, eventType string
		body            map[string]any
	}{
		{"AssistantJobCompleted", "ASSISTANT_JOB_COMPLETED", nil},
		{"TaxJobCompleted", "TAX_JOB_COMPLETED", map[string]any{"start_tax_job": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.rest(t, "POST", "/v2/top-accounts/"+wid+"/documents/"+vaultID+"/analysis", tc.body)
			var got struct {
				RecentEvents []struct {
					SourceDocument struct{ VaultID, UploadedAt string }
				}
			}
			deadline := time.Now().Add(5 * time.Second)
			for len(got.RecentEvents) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
				gw.post(t, `query($wid: ID!, $type: EventType!) { recentEvents(filter: {wids: [$wid], types: [$type]}) {
				  ... on AssistantJobCompleted { sourceDocument { vaultId uploadedAt } }
				  ... on TaxJobCompleted { sourceDocument { vaultId uploadedAt } }
				} }`, map[string]any{"wid": wid, "type": tc.eventType}).ok(t, &got)
			}
			if len(got.RecentEvents) != 1 {
				t.Fatalf("got %d %s events, want 1", len(got.RecentEvents), tc.eventType)
			}
			src := got.RecentEvents[0].SourceDocument
			uploaded, err := time.Parse(time.RFC3339Nano, src.UploadedAt)
			if src.VaultID != vaultID || err != nil || !uploaded.Equal(created) {
				t.Errorf("sourceDocument is %s uploaded at %q, want %s uploaded at %s (its creationDate %s)",
					src.VaultID, src.UploadedAt, vaultID, created.Format(time.RFC3339Nano), doc.Document.CreationDate)
			}
		})
	}
}

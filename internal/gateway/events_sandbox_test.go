package gateway_test

import (
	"net/http"
	"testing"

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

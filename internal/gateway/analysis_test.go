package gateway_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// The project's decision on the analysis start endpoint: "POST
// {base_url}/v2/top-accounts/{wid}/documents/{vault_id}/analysis with optional
// {"start_tax_job": true}, returns {"correlation_id": "..."}; the sandbox then emits the matching
// analysis events", whose CorrelationId is the "Analysis run id returned as correlation_id".

const startAnalysis = `mutation($wid: ID!, $vaultId: ID!, $tax: Boolean) {
  startDocumentAnalysis(wid: $wid, vaultId: $vaultId, startTaxJob: $tax) {
    correlationId kind state wid vaultId events { eventType } taxArtifact { vaultId }
  }
}`

type startedAnalysis struct {
	CorrelationID       string
	Kind, State         string
	Wid, VaultID        string
	Events, TaxArtifact any
}

func startAnalysisOf(t testing.TB, gw *testGateway, auth, wid, vaultID string, tax any) startedAnalysis {
	t.Helper()
	var out struct{ StartDocumentAnalysis startedAnalysis }
	gw.postVars(t, auth, startAnalysis, map[string]any{"wid": wid, "vaultId": vaultID, "tax": tax}).ok(t, &out)
	return out.StartDocumentAnalysis
}

// awaitCorrelated polls recentEvents filtered by one correlation id until n events carry it.
func awaitCorrelated(t testing.TB, gw *testGateway, auth, correlationID string, n int) []map[string]any {
	t.Helper()
	const q = `query($c: String!) { recentEvents(filter: {correlationIds: [$c]}) {
	  id eventType ... on AnalysisEvent { correlationId documentWid }
	  ... on TaxJobFailed { reason } ... on TaxJobCompleted { presentationStatus }
	} }`
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var got struct{ RecentEvents []map[string]any }
		gw.postVars(t, auth, q, map[string]any{"c": correlationID}).ok(t, &got)
		if len(got.RecentEvents) >= n {
			return got.RecentEvents
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events carry correlation id %s after 20 s, want %d", len(got.RecentEvents), correlationID, n)
		}
	}
}

func TestStartDocumentAnalysisAnswersTheCorrelationIdItsEventsCarry(t *testing.T) {
	t.Parallel()
	gw, _ := sandboxed(t)
	wid, vaultID, _ := demoDocument(t, gw)
	for _, tc := range []struct {
		name  string
		tax   any // startTaxJob as sent
		kind  string
		event string
	}{
		// "AssistantJobCompleted | analysis | estate document analysis completes"
		{"without startTaxJob the estate analysis runs", nil, "ESTATE", "ASSISTANT_JOB_COMPLETED"},
		{"startTaxJob false is the estate analysis", false, "ESTATE", "ASSISTANT_JOB_COMPLETED"},
		// "CorrelationId: Analysis run id returned as correlation_id when the job was started with start_tax_job"
		{"startTaxJob true starts the tax job", true, "TAX", "TAX_JOB_COMPLETED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := startAnalysisOf(t, gw, "", wid, vaultID, tc.tax)
			if got.CorrelationID == "" || got.Kind != tc.kind || got.State != "STARTED" || got.Wid != wid || got.VaultID != vaultID ||
				mustMarshal(got.Events) != "[]" || got.TaxArtifact != nil {
				t.Fatalf("answered %+v, want a STARTED %s analysis of %s with a correlation id and no events yet", got, tc.kind, vaultID)
			}
			evs := awaitCorrelated(t, gw, "", got.CorrelationID, 1)
			if len(evs) != 1 || evs[0]["eventType"] != tc.event || evs[0]["correlationId"] != got.CorrelationID || evs[0]["documentWid"] != vaultID {
				t.Errorf("the events carrying %s are %v, want one %s of %s", got.CorrelationID, evs, tc.event, vaultID)
			}
		})
	}
}

// Subscribers that filter by correlation id hear their analysis's events and not another's,
// from the log (after a cursor) over a WebSocket and live over Server-Sent Events.
func TestEventsFilteredByCorrelationIdAreThoseOfOneAnalysis(t *testing.T) {
	t.Parallel()
	gw, sb := sandboxed(t)
	wid, vaultID, _ := demoDocument(t, gw)
	estate := startAnalysisOf(t, gw, "", wid, vaultID, nil)
	tax := startAnalysisOf(t, gw, "", wid, vaultID, true)
	awaitCorrelated(t, gw, "", estate.CorrelationID, 1)
	awaitCorrelated(t, gw, "", tax.CorrelationID, 1)

	const sub = `subscription($c: [String!], $after: ID) {
	  events(filter: {correlationIds: $c}, after: $after) { eventType ... on AnalysisEvent { correlationId } }
	}`
	// From the log: everything after the log's start, of the tax job only.
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("tax", sub, map[string]any{"c": []string{tax.CorrelationID}, "after": "0-0"})
	ev := c.nextData("tax")["events"].(map[string]any)
	if ev["eventType"] != "TAX_JOB_COMPLETED" || ev["correlationId"] != tax.CorrelationID {
		t.Fatalf("first event %v, want the tax job's TAX_JOB_COMPLETED", ev)
	}
	// Live: an event of each analysis arrives; each subscriber hears its own only. The estate
	// analysis's follows the tax job's, so the tax subscriber, had it been sent the estate
	// analysis's, would have read it before the tax job's own.
	sse := openSSE(t, gw, sub, map[string]any{"c": []string{estate.CorrelationID}})
	waitSubscribers(t, gw, 2)
	for _, a := range []startedAnalysis{estate, tax} {
		typ := map[string]string{"ESTATE": "AssistantJobFailed", "TAX": "TaxJobFailed"}[a.Kind]
		sandboxPost(t, sb+"/sandbox/events", map[string]any{"EventType": typ, "Wid": wid,
			"Payload": map[string]any{"CorrelationId": a.CorrelationID, "DocumentWid": vaultID}})
	}
	if ev := c.nextData("tax")["events"].(map[string]any); ev["eventType"] != "TAX_JOB_FAILED" || ev["correlationId"] != tax.CorrelationID {
		t.Errorf("the tax job's subscriber got %v, want its TAX_JOB_FAILED", ev)
	}
	var live struct {
		Data struct{ Events map[string]any }
	}
	if err := json.Unmarshal([]byte(sse.next().data), &live); err != nil {
		t.Fatal(err)
	}
	if live.Data.Events["eventType"] != "ASSISTANT_JOB_FAILED" || live.Data.Events["correlationId"] != estate.CorrelationID {
		t.Errorf("the estate analysis's subscriber got %v, want its ASSISTANT_JOB_FAILED only", live.Data.Events)
	}
}

const documentAnalyses = `query($wid: ID!, $vaultId: ID!) {
  document(wid: $wid, vaultId: $vaultId) {
    analyses {
      correlationId kind state vaultId document { vaultId }
      events { eventType correlationId ... on TaxJobFailed { reason } ... on AssistantJobCompleted { documents { documentType } } }
      taxArtifact { vaultId name downloadUri }
    }
  }
}`

type readAnalysis struct {
	CorrelationID, Kind, State, VaultID string
	Document                            *struct{ VaultID string }
	Events                              []struct {
		EventType, CorrelationID, Reason string
		Documents                        []struct{ DocumentType string }
	}
	TaxArtifact *struct{ VaultID, Name, DownloadURI string }
}

func analysesOf(t testing.TB, gw *testGateway, auth, wid, vaultID string) []readAnalysis {
	t.Helper()
	var out struct {
		Document *struct{ Analyses []readAnalysis }
	}
	gw.postVars(t, auth, documentAnalyses, map[string]any{"wid": wid, "vaultId": vaultID}).ok(t, &out)
	if out.Document == nil {
		t.Fatalf("document %s of %s is missing", vaultID, wid)
	}
	return out.Document.Analyses
}

func TestADocumentsAnalysesSayWhereEachStandsAndWhereTheTaxArtifactIs(t *testing.T) {
	t.Parallel()
	gw, _ := sandboxed(t)
	wid, vaultID, name := demoDocument(t, gw)
	if got := analysesOf(t, gw, "", wid, vaultID); len(got) != 0 {
		t.Fatalf("a document never analysed has analyses %+v", got)
	}
	estate := startAnalysisOf(t, gw, "", wid, vaultID, nil)
	tax := startAnalysisOf(t, gw, "", wid, vaultID, true)
	awaitCorrelated(t, gw, "", estate.CorrelationID, 1)
	awaitCorrelated(t, gw, "", tax.CorrelationID, 1)

	got := analysesOf(t, gw, "", wid, vaultID)
	if len(got) != 2 {
		t.Fatalf("analyses %+v, want the estate analysis and the tax job", got)
	}
	e, x := got[0], got[1]
	// "AssistantJobCompleted ... Documents: Generated documents ... Each file is retrieved with Get Document."
	if e.CorrelationID != estate.CorrelationID || e.Kind != "ESTATE" || e.State != "COMPLETED" || e.Document == nil || e.Document.VaultID != vaultID ||
		len(e.Events) != 1 || e.Events[0].EventType != "ASSISTANT_JOB_COMPLETED" || len(e.Events[0].Documents) == 0 || e.TaxArtifact != nil {
		t.Errorf("estate analysis %+v, want COMPLETED by its ASSISTANT_JOB_COMPLETED with generated documents, and no tax artifact", e)
	}
	// "TaxJobCompleted (no Documents array; the generated tax artifact stays on the uploaded
	// document and is returned by Get Document)"
	if x.CorrelationID != tax.CorrelationID || x.Kind != "TAX" || x.State != "COMPLETED" || len(x.Events) != 1 || x.Events[0].EventType != "TAX_JOB_COMPLETED" {
		t.Errorf("tax job %+v, want COMPLETED by its TAX_JOB_COMPLETED", x)
	}
	if a := x.TaxArtifact; a == nil || a.VaultID != vaultID || a.Name != name || a.DownloadURI == "" {
		t.Errorf("the tax artifact is %+v, want the uploaded document %s itself, with its download address", a, vaultID)
	}

	// "Reason: UploadTimeout ..." and "JobId: Empty when a job was not started": a document
	// without its file.
	var created struct {
		CreateDocument struct{ Document struct{ VaultID string } }
	}
	gw.post(t, `mutation($wid: ID!) { createDocument(wid: $wid, input: {name: "Return 2025", extension: "pdf", category: TAXES, subCategory: TAX_RETURN_1040}) { document { vaultId } } }`,
		map[string]any{"wid": wid}).ok(t, &created)
	empty := created.CreateDocument.Document.VaultID
	failed := startAnalysisOf(t, gw, "", wid, empty, true)
	awaitCorrelated(t, gw, "", failed.CorrelationID, 1)
	got = analysesOf(t, gw, "", wid, empty)
	if len(got) != 1 || got[0].State != "FAILED" || got[0].Kind != "TAX" || len(got[0].Events) != 1 ||
		got[0].Events[0].Reason != "UPLOAD_TIMEOUT" || got[0].TaxArtifact != nil {
		t.Errorf("analyses of a document without its file: %+v, want one FAILED tax job, UPLOAD_TIMEOUT, with no artifact", got)
	}
	// The other document's analyses are not this one's.
	if got := analysesOf(t, gw, "", wid, vaultID); len(got) != 2 {
		t.Errorf("the first document has %d analyses after another's, want 2", len(got))
	}
}

// Many documents' analyses cost one read of the stored events, not one per document: the
// documents of a page all answer, each with its own. "DocumentWid: Vault id of the uploaded
// document" is what ties an analysis to its document.
func TestTheAnalysesOfAPageOfDocumentsAgreeWithEachDocumentsOwn(t *testing.T) {
	t.Parallel()
	gw, _ := sandboxed(t)
	wid, vaultID, _ := demoDocument(t, gw)
	started := startAnalysisOf(t, gw, "", wid, vaultID, true)
	awaitCorrelated(t, gw, "", started.CorrelationID, 1)
	var page struct {
		TopAccount struct {
			Documents struct {
				Nodes []struct {
					VaultID  string
					Analyses []struct{ CorrelationID string }
				}
			}
		}
	}
	gw.post(t, `query($wid: ID!) { topAccount(wid: $wid) { documents(first: 100) { nodes { vaultId analyses { correlationId } } } } }`,
		map[string]any{"wid": wid}).ok(t, &page)
	seen := 0
	for _, d := range page.TopAccount.Documents.Nodes {
		want := 0
		if d.VaultID == vaultID {
			want = 1
		}
		if len(d.Analyses) != want || want == 1 && d.Analyses[0].CorrelationID != started.CorrelationID {
			t.Errorf("document %s lists analyses %+v, want %d", d.VaultID, d.Analyses, want)
		}
		seen++
	}
	if seen < 2 {
		t.Fatalf("the page has %d documents, want several", seen)
	}
}

func TestStartDocumentAnalysisRefusesWhatIsNotTheCallersDocument(t *testing.T) {
	t.Parallel()
	gw, sb := sandboxed(t)
	wid, vaultID, _ := demoDocument(t, gw)
	second := "Bearer " + sandboxToken(t, sb, sandbox.SecondAccessToken, sandbox.SecondAdvisorID, sandbox.SecondFirmID)
	for _, tc := range []struct {
		name, auth, wid, vaultID string
		code, message            string
	}{
		// "404 Container not found, Vault doesn't exist" (Get Document's, as the start names a document)
		{"an absent document is NOT_FOUND", "", wid, "no-such-document", "NOT_FOUND", "Document not found"},
		{"an absent top account is NOT_FOUND", "", "no-such-family", vaultID, "NOT_FOUND", "Top account not found"},
		// "404 Container not found when the top account does not exist": another firm's family
		// does not exist for the caller's firm, whose credentials the gateway calls with.
		{"another firm's document is absent for the caller", second, wid, vaultID, "NOT_FOUND", "Top account not found"},
		// "400 missing required path parameter"
		{"an empty vaultId is BAD_USER_INPUT", "", wid, "", "BAD_USER_INPUT", "vaultId must not be empty"},
		{"a vaultId that is a dot-segment is BAD_USER_INPUT", "", wid, "..", "BAD_USER_INPUT", `vaultId cannot be "." or ".."`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := gw.postVars(t, tc.auth, startAnalysis, map[string]any{"wid": tc.wid, "vaultId": tc.vaultID}).wantError(t, tc.code, tc.message)
			if tc.code == "BAD_USER_INPUT" && e.Extensions["field"] != "vaultId" {
				t.Errorf("the error names field %v, want vaultId", e.Extensions["field"])
			}
		})
	}

	// Another firm hears nothing of the first firm's analysis, by its correlation id or at all.
	started := startAnalysisOf(t, gw, "", wid, vaultID, nil)
	awaitCorrelated(t, gw, "", started.CorrelationID, 1)
	var got struct{ RecentEvents []any }
	gw.postVars(t, second, `query($c: String!) { recentEvents(filter: {correlationIds: [$c]}) { id } }`,
		map[string]any{"c": started.CorrelationID}).ok(t, &got)
	if len(got.RecentEvents) != 0 {
		t.Errorf("the second firm reads the first firm's analysis events: %v", got.RecentEvents)
	}
}

// "CorrelationId ... empty when the document was not started through the upload API": an empty
// id names no start, so a filter holding one is refused rather than selecting every analysis
// the API did not start.
func TestACorrelationIdFilterMustNameAnalyses(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("c-%d", i)
	}
	for _, tc := range []struct {
		name    string
		ids     []string
		field   string
		message string
	}{
		{"an empty id", []string{"c-1", ""}, "filter.correlationIds[1]", "filter.correlationIds must not hold an empty id"},
		{"more than 100 ids", many, "filter.correlationIds", "filter.correlationIds can hold at most 100 ids, got 101"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]any{"f": map[string]any{"correlationIds": tc.ids}}
			e := gw.post(t, `query($f: EventFilter) { recentEvents(filter: $f) { id } }`, vars).wantError(t, "BAD_USER_INPUT", "")
			if e.Extensions["field"] != tc.field || !strings.HasPrefix(e.Message, tc.message) {
				t.Errorf("recentEvents: %q on %v, want %q on %s", e.Message, e.Extensions["field"], tc.message, tc.field)
			}
			c := dialWS(t, gw, "graphql-transport-ws", nil)
			c.init()
			c.subscribe("bad", `subscription($f: EventFilter) { events(filter: $f) { id } }`, vars)
			if m := mustMarshal(c.read()); !strings.Contains(m, `"BAD_USER_INPUT"`) || !strings.Contains(m, tc.message) {
				t.Errorf("events over a WebSocket answered %s, want BAD_USER_INPUT %q", m, tc.message)
			}
		})
	}
}

// docs/events.md's three analysis examples run as written, with variables: the start, the
// subscription to its outcome, and the document's analyses.
func TestTheDocsAnalysisExamplesRun(t *testing.T) {
	t.Parallel()
	gw, sb := sandboxed(t)
	wid, vaultID, name := demoDocument(t, gw)
	var started struct {
		StartDocumentAnalysis struct{ CorrelationID, Kind, State string }
	}
	gw.post(t, markedGraphQL(t, "analysis start example"), map[string]any{"wid": wid, "vaultId": vaultID}).ok(t, &started)
	correlation := started.StartDocumentAnalysis.CorrelationID
	if correlation == "" || started.StartDocumentAnalysis.Kind != "TAX" || started.StartDocumentAnalysis.State != "STARTED" {
		t.Fatalf("the start example answered %+v, want a STARTED tax job", started.StartDocumentAnalysis)
	}
	first := awaitCorrelated(t, gw, "", correlation, 1)

	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("outcome", markedGraphQL(t, "analysis outcome example"), map[string]any{"correlationId": correlation})
	waitSubscribers(t, gw, 1)
	// The service reports the job again (a redelivery is the same event; this is another).
	sandboxPost(t, sb+"/sandbox/events", map[string]any{"EventType": "TaxJobCompleted", "Wid": wid,
		"Payload": map[string]any{"CorrelationId": correlation, "DocumentWid": vaultID, "PresentationStatus": "insightsUnavailable"}})
	ev := c.nextData("outcome")["events"].(map[string]any)
	if ev["eventType"] != "TAX_JOB_COMPLETED" || ev["presentationStatus"] != "INSIGHTS_UNAVAILABLE" || ev["id"] == first[0]["id"] {
		t.Errorf("the outcome example got %v, want the second TAX_JOB_COMPLETED", ev)
	}

	var doc struct {
		Document struct {
			Name     string
			Analyses []struct {
				CorrelationID, Kind, State string
				Events                     []struct{ EventType string }
				TaxArtifact                *struct{ Name, DownloadURI string }
			}
		}
	}
	gw.post(t, markedGraphQL(t, "document analyses example"), map[string]any{"wid": wid, "vaultId": vaultID}).ok(t, &doc)
	as := doc.Document.Analyses
	if len(as) != 1 || as[0].CorrelationID != correlation || as[0].State != "COMPLETED" || len(as[0].Events) != 2 ||
		as[0].TaxArtifact == nil || as[0].TaxArtifact.Name != name || as[0].TaxArtifact.DownloadURI == "" {
		t.Errorf("the analyses example answered %+v, want one COMPLETED tax job of two events, its artifact on %q", as, name)
	}
}

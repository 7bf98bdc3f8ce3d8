package analysis_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/analysis"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/vault"
)

// ev makes a stored analysis event of typ, with id, for document doc of top account wid.
func ev(t *testing.T, id string, typ event.EventType, wid, doc, correlation, job string) event.Event {
	t.Helper()
	extra := map[event.EventType]string{
		event.TypeAssistantJobCompleted:                `,"source_document":{"vault_id":"` + doc + `"},"category":"estate","Documents":[]`,
		event.TypeAssistantJobFailed:                   `,"Reason":"ProcessingFailed"`,
		event.TypeAssistantMultiDocumentRequiresReview: `,"VaultLink":"/vault/x","DetectedDocumentCount":2`,
		event.TypeTaxJobCompleted:                      `,"source_document":{"vault_id":"` + doc + `"},"category":"tax","PresentationStatus":"filed"`,
		event.TypeTaxJobFailed:                         `,"Reason":"NoTaxReturnFound"`,
	}[typ]
	e, err := event.Parse(fmt.Appendf(nil, `{"EventType":%q,"Wid":%q,"Timestamp":"2026-11-22T10:00:00Z","ExternalId":null,
		"Payload":{"CorrelationId":%q,"JobId":%q,"DocumentWid":%q%s}}`, typ, wid, correlation, job, doc, extra))
	if err != nil {
		t.Fatal(err)
	}
	e.Header().ID = id
	return e
}

// describe prints analyses as "kind state correlation [event ids]" per line.
func describe(as []*analysis.DocumentAnalysis) string {
	var b strings.Builder
	for _, a := range as {
		var ids []string
		for _, e := range a.Events {
			ids = append(ids, e.Header().ID)
		}
		fmt.Fprintf(&b, "%s/%s %s %s %q %v\n", a.Wid, a.VaultID, a.Kind, a.State, a.CorrelationID, ids)
	}
	return b.String()
}

func TestDeriveTellsEachAnalysisAndWhereItStandsFromItsEvents(t *testing.T) {
	progress := &event.ClientProgressChanged{Envelope: event.Envelope{ID: "9-0", Wid: "w", EventType: event.TypeClientProgressChanged}}
	for _, tc := range []struct {
		name   string
		events []event.Event
		want   string
	}{
		{"no events, no analyses", nil, ""},
		// "AssistantJobCompleted | analysis | estate document analysis completes"
		{"an estate analysis that completed", []event.Event{ev(t, "1-0", event.TypeAssistantJobCompleted, "w", "d", "c1", "j1")},
			"w/d ESTATE COMPLETED \"c1\" [1-0]\n"},
		// "TaxJobFailed | analysis | tax document analysis fails"
		{"a tax job that failed", []event.Event{ev(t, "1-0", event.TypeTaxJobFailed, "w", "d", "c1", "")},
			"w/d TAX FAILED \"c1\" [1-0]\n"},
		// "AssistantMultiDocumentRequiresReview | an uploaded file holds more than one estate
		// document and needs review"
		{"an estate analysis whose file needs review", []event.Event{ev(t, "1-0", event.TypeAssistantMultiDocumentRequiresReview, "w", "d", "c1", "j1")},
			"w/d ESTATE REQUIRES_REVIEW \"c1\" [1-0]\n"},
		{"the latest event says where an analysis stands", []event.Event{
			ev(t, "1-0", event.TypeAssistantMultiDocumentRequiresReview, "w", "d", "c1", "j1"),
			ev(t, "2-0", event.TypeAssistantJobCompleted, "w", "d", "c1", "j1"),
		}, "w/d ESTATE COMPLETED \"c1\" [1-0 2-0]\n"},
		{"a failure after a completion is a failure", []event.Event{
			ev(t, "1-0", event.TypeTaxJobCompleted, "w", "d", "c1", "j1"),
			ev(t, "2-0", event.TypeTaxJobFailed, "w", "d", "c1", "j1"),
		}, "w/d TAX FAILED \"c1\" [1-0 2-0]\n"},
		{"two correlation ids are two analyses, in the order of their first events", []event.Event{
			ev(t, "1-0", event.TypeTaxJobCompleted, "w", "d", "c2", "j2"),
			ev(t, "2-0", event.TypeAssistantJobFailed, "w", "d", "c1", "j1"),
		}, "w/d TAX COMPLETED \"c2\" [1-0]\nw/d ESTATE FAILED \"c1\" [2-0]\n"},
		{"the same correlation id on two documents is two analyses", []event.Event{
			ev(t, "1-0", event.TypeTaxJobCompleted, "w", "d1", "c1", "j1"),
			ev(t, "2-0", event.TypeTaxJobCompleted, "w", "d2", "c1", "j1"),
		}, "w/d1 TAX COMPLETED \"c1\" [1-0]\nw/d2 TAX COMPLETED \"c1\" [2-0]\n"},
		// "CorrelationId ... empty when the document was not started through the upload API":
		// such events are told apart by their job, or, with none ("JobId: Empty when a job was
		// not started"), each is an analysis of its own.
		{"without a correlation id, the job id tells an analysis", []event.Event{
			ev(t, "1-0", event.TypeAssistantMultiDocumentRequiresReview, "w", "d", "", "j1"),
			ev(t, "2-0", event.TypeAssistantJobCompleted, "w", "d", "", "j1"),
			ev(t, "3-0", event.TypeAssistantJobCompleted, "w", "d", "", "j2"),
		}, "w/d ESTATE COMPLETED \"\" [1-0 2-0]\nw/d ESTATE COMPLETED \"\" [3-0]\n"},
		{"without a correlation id or a job, each event is an analysis", []event.Event{
			ev(t, "1-0", event.TypeTaxJobFailed, "w", "d", "", ""),
			ev(t, "2-0", event.TypeTaxJobFailed, "w", "d", "", ""),
		}, "w/d TAX FAILED \"\" [1-0]\nw/d TAX FAILED \"\" [2-0]\n"},
		{"events of other groups are left out", []event.Event{progress, ev(t, "1-0", event.TypeTaxJobFailed, "w", "d", "c1", "")},
			"w/d TAX FAILED \"c1\" [1-0]\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describe(analysis.Derive(tc.events)); got != tc.want {
				t.Errorf("Derive:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// "TaxJobCompleted (no Documents array; the generated tax artifact stays on the uploaded
// document and is returned by Get Document)": only a completed tax job has an artifact, and it
// is the analysed document.
func TestOnlyACompletedTaxJobHasItsArtifactOnTheDocument(t *testing.T) {
	for _, tc := range []struct {
		kind  analysis.Kind
		state analysis.State
		want  bool
	}{
		{analysis.KindTax, analysis.StateCompleted, true},
		{analysis.KindTax, analysis.StateFailed, false},
		{analysis.KindTax, analysis.StateStarted, false},
		{analysis.KindEstate, analysis.StateCompleted, false},
		{analysis.KindEstate, analysis.StateRequiresReview, false},
	} {
		a := &analysis.DocumentAnalysis{Kind: tc.kind, State: tc.state}
		if got := a.TaxArtifactOnDocument(); got != tc.want {
			t.Errorf("%s %s: TaxArtifactOnDocument() = %v, want %v", tc.kind, tc.state, got, tc.want)
		}
	}
}

type fakeEvents struct {
	reads  int
	events []event.Event
}

func (f *fakeEvents) Recent(_ context.Context, firm string, filter *event.Filter, n int) ([]event.Event, error) {
	f.reads++
	var out []event.Event
	for _, e := range f.events {
		if e.Header().Firm == firm && filter.Match(e) {
			out = append(out, e)
		}
	}
	return out[max(0, len(out)-n):], nil
}

type noAPI struct{}

func (noAPI) StartAnalysis(context.Context, string, string, bool) (advisorspec.AnalysisStarted, error) {
	return advisorspec.AnalysisStarted{CorrelationID: "c-new"}, nil
}

type noDocs struct{}

func (noDocs) Get(context.Context, string, string) (*vault.Document, error) { return nil, nil }

// Keep it cheap: the analyses of every document of a request come from one read of the firm's
// stored events, and a firm's analyses are only its own.
func TestADocumentsAnalysesReadTheFirmsEventsOncePerRequest(t *testing.T) {
	mine := ev(t, "1-0", event.TypeTaxJobCompleted, "w", "d1", "c1", "j1")
	mine.Header().Firm = "firm-a"
	other := ev(t, "2-0", event.TypeTaxJobCompleted, "w", "d1", "c2", "j2")
	other.Header().Firm = "firm-b"
	second := ev(t, "3-0", event.TypeAssistantJobFailed, "w", "d2", "c3", "")
	second.Header().Firm = "firm-a"
	events := &fakeEvents{events: []event.Event{mine, other, second}}
	s := analysis.NewService(noAPI{}, events, noDocs{}, 1000)

	ctx := advisor.WithCache(context.Background())
	got := map[string]string{}
	for _, doc := range []string{"d1", "d2", "d3", "d1"} {
		as, err := s.ForDocument(ctx, "firm-a", "w", doc)
		if err != nil {
			t.Fatal(err)
		}
		got[doc] = describe(as)
	}
	want := map[string]string{"d1": "w/d1 TAX COMPLETED \"c1\" [1-0]\n", "d2": "w/d2 ESTATE FAILED \"c3\" [3-0]\n", "d3": ""}
	for doc, w := range want {
		if got[doc] != w {
			t.Errorf("analyses of %s: %q, want %q", doc, got[doc], w)
		}
	}
	if events.reads != 1 {
		t.Errorf("the stored events were read %d times for four documents, want once", events.reads)
	}
	if as, _ := s.ForDocument(advisor.WithCache(context.Background()), "", "w", "d1"); len(as) != 0 {
		t.Errorf("a caller of no firm sees analyses %s", describe(as))
	}
	// A start answers STARTED, with the correlation id and no events yet.
	a, err := s.Start(ctx, "w", "d1", true)
	if err != nil || describe([]*analysis.DocumentAnalysis{a}) != "w/d1 TAX STARTED \"c-new\" []\n" || a.Events == nil {
		t.Errorf("Start = %s, %v; want a STARTED tax job with correlation id c-new and an empty list of events", describe([]*analysis.DocumentAnalysis{a}), err)
	}
}

// Package analysis is the analysis of vault documents: starting one (the analysis start
// endpoint, which answers a correlation id) and reading, from the stored webhook events, the
// analyses a document has had and where each stands. The service reports an analysis only by
// its outcome events (AssistantJob*, TaxJob*), each carrying the correlation id of the start, so
// an analysis is the events that share one; the gateway keeps nothing else about it.
package analysis

import (
	"fmt"
	"io"
	"strconv"

	"github.com/advisorhq/gateway/internal/event"
)

// Kind is which analysis ran: the estate analysis, or the tax job.
type Kind string

// The kinds, as the schema names them.
const (
	// KindEstate is the estate document analysis: the AssistantJob* events.
	KindEstate Kind = "ESTATE"
	// KindTax is the tax job that start_tax_job starts: the TaxJob* events.
	KindTax Kind = "TAX"
)

func (k Kind) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(k))) }

func (k *Kind) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	switch Kind(s) {
	case KindEstate, KindTax:
		*k = Kind(s)
		return nil
	}
	return fmt.Errorf("%v is not a DocumentAnalysisKind: ESTATE or TAX", v)
}

// State is where an analysis stands, as its events tell.
type State string

// The states, as the schema names them.
const (
	// StateStarted is an analysis the service has accepted and reported nothing of yet: only
	// startDocumentAnalysis's answer is in it, since no stored event tells of such an analysis.
	StateStarted State = "STARTED"
	// StateRequiresReview is an estate analysis whose file holds more than one estate document
	// (AssistantMultiDocumentRequiresReview).
	StateRequiresReview State = "REQUIRES_REVIEW"
	// StateCompleted is an analysis whose latest event is AssistantJobCompleted or TaxJobCompleted.
	StateCompleted State = "COMPLETED"
	// StateFailed is an analysis whose latest event is AssistantJobFailed or TaxJobFailed.
	StateFailed State = "FAILED"
)

func (s State) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(string(s))) }

func (s *State) UnmarshalGQL(v any) error {
	str, _ := v.(string)
	switch State(str) {
	case StateStarted, StateRequiresReview, StateCompleted, StateFailed:
		*s = State(str)
		return nil
	}
	return fmt.Errorf("%v is not a DocumentAnalysisState: STARTED, REQUIRES_REVIEW, COMPLETED or FAILED", v)
}

// DocumentAnalysis is one analysis of one document: the start's correlation id and the events
// that carry it.
type DocumentAnalysis struct {
	// CorrelationID is the id the start answered with, which each of its events carries; ""
	// for an analysis the service ran without the API starting it.
	CorrelationID string
	Kind          Kind
	State         State
	// Wid is the top account's wid (the events' Wid) and VaultID the analysed document's.
	Wid     string
	VaultID string
	// Events are the outcome events, oldest first; none while the analysis is STARTED.
	Events []event.AnalysisEvent
}

// TaxArtifactOnDocument reports whether the analysis produced a tax artifact: a tax job that
// completed. The specification's TaxJobCompleted has no Documents array: "the generated tax
// artifact stays on the uploaded document and is returned by Get Document", so the artifact is
// the analysed document itself.
func (a *DocumentAnalysis) TaxArtifactOnDocument() bool {
	return a.Kind == KindTax && a.State == StateCompleted
}

// stateOf is the state an outcome event puts its analysis in, and the kind of analysis it
// reports; ok is false for an event of no analysis.
func stateOf(ev event.AnalysisEvent) (kind Kind, state State, ok bool) {
	switch ev.(type) {
	case *event.AssistantJobCompleted:
		return KindEstate, StateCompleted, true
	case *event.AssistantJobFailed:
		return KindEstate, StateFailed, true
	case *event.AssistantMultiDocumentRequiresReview:
		return KindEstate, StateRequiresReview, true
	case *event.TaxJobCompleted:
		return KindTax, StateCompleted, true
	case *event.TaxJobFailed:
		return KindTax, StateFailed, true
	}
	return "", "", false
}

// runKey names one analysis: its document, its kind and its correlation id, or, for an
// analysis not started through the API (an empty correlation id), its job id, or else the event
// alone.
type runKey struct {
	wid, vaultID string
	kind         Kind
	id           string
}

// Derive groups analysis events, oldest first, into the analyses they report, in the order of
// each analysis's first event. An analysis's state is its latest event's: a failure the service
// reports after a review request, or a completion after a failure (a job run again under the
// same correlation id), is where the analysis stands now. Events of other groups are left out.
func Derive(events []event.Event) []*DocumentAnalysis {
	var out []*DocumentAnalysis
	runs := map[runKey]*DocumentAnalysis{}
	for _, ev := range events {
		a, ok := ev.(event.AnalysisEvent)
		if !ok {
			continue
		}
		kind, state, ok := stateOf(a)
		if !ok {
			continue
		}
		p := a.Payload()
		key := runKey{wid: a.Header().Wid, vaultID: p.DocumentWid, kind: kind, id: "correlation:" + p.CorrelationID}
		switch {
		case p.CorrelationID != "":
		case p.JobID != "":
			key.id = "job:" + p.JobID
		default:
			key.id = "event:" + a.Header().ID
		}
		run := runs[key]
		if run == nil {
			run = &DocumentAnalysis{CorrelationID: p.CorrelationID, Kind: kind, Wid: key.wid, VaultID: key.vaultID}
			runs[key] = run
			out = append(out, run)
		}
		run.Events = append(run.Events, a)
		run.State = state
	}
	return out
}

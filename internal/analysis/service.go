package analysis

import (
	"context"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/vault"
)

// API is what starting an analysis needs of the Advisor service.
type API interface {
	StartAnalysis(ctx context.Context, wid, vaultID string, tax bool) (advisorspec.AnalysisStarted, error)
}

// Events is the firm's stored events (the event hub): the latest n of firm's matching filter,
// oldest first.
type Events interface {
	Recent(ctx context.Context, firm string, filter *event.Filter, n int) ([]event.Event, error)
}

// Documents loads a vault document, nil when there is none.
type Documents interface {
	Get(ctx context.Context, wid, vaultID string) (*vault.Document, error)
}

// Service starts analyses and tells a document's.
type Service struct {
	api    API
	events Events
	docs   Documents
	// scan is how many of a firm's latest analysis events a request reads.
	scan int
}

// NewService returns the analyses over api, the stored events and the vault. scan is how many
// of a firm's latest analysis events a request reads to tell documents' analyses.
func NewService(api API, events Events, docs Documents, scan int) *Service {
	return &Service{api: api, events: events, docs: docs, scan: scan}
}

// Start starts the analysis of a document, the tax job when tax is set, and returns it STARTED
// with the correlation id its events will carry.
func (s *Service) Start(ctx context.Context, wid, vaultID string, tax bool) (*DocumentAnalysis, error) {
	started, err := s.api.StartAnalysis(ctx, wid, vaultID, tax)
	if err != nil {
		return nil, err
	}
	kind := KindEstate
	if tax {
		kind = KindTax
	}
	return &DocumentAnalysis{CorrelationID: started.CorrelationID, Kind: kind, State: StateStarted, Wid: wid, VaultID: vaultID,
		Events: []event.AnalysisEvent{}}, nil
}

// indexKey is the firm's analyses by document in the request's cache (advisor.Cache).
type indexKey struct{ firm string }

type docKey struct{ wid, vaultID string }

// ForDocument returns the analyses of a document that firm's stored events tell of, in the
// order of their first events. The firm's analysis events are read once per request (per
// subscription event), whichever documents ask.
func (s *Service) ForDocument(ctx context.Context, firm, wid, vaultID string) ([]*DocumentAnalysis, error) {
	if firm == "" {
		return []*DocumentAnalysis{}, nil
	}
	index, err := advisor.Memo(ctx, indexKey{firm}, func() (map[docKey][]*DocumentAnalysis, error) {
		evs, err := s.events.Recent(ctx, firm, &event.Filter{Groups: []event.EventGroup{event.GroupAnalysis}}, s.scan)
		if err != nil {
			return nil, err
		}
		out := map[docKey][]*DocumentAnalysis{}
		for _, a := range Derive(evs) {
			k := docKey{a.Wid, a.VaultID}
			out[k] = append(out[k], a)
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	if found := index[docKey{wid, vaultID}]; found != nil {
		return found, nil
	}
	return []*DocumentAnalysis{}, nil
}

// Document is the analysed document, nil when it no longer exists.
func (s *Service) Document(ctx context.Context, a *DocumentAnalysis) (*vault.Document, error) {
	return s.docs.Get(ctx, a.Wid, a.VaultID)
}

// TaxArtifact is the document that holds a completed tax job's artifact: the analysed document
// itself, as Get Document returns it (its downloadUri serves it); nil for any other analysis,
// or when the document no longer exists.
func (s *Service) TaxArtifact(ctx context.Context, a *DocumentAnalysis) (*vault.Document, error) {
	if !a.TaxArtifactOnDocument() {
		return nil, nil
	}
	return s.docs.Get(ctx, a.Wid, a.VaultID)
}

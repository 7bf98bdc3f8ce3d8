package event

import (
	"fmt"
	"slices"

	"github.com/advisorhq/gateway/internal/apperr"
)

// Filter selects events; an empty list selects everything on that axis, and the axes combine
// with AND. TypeUnknown and GroupUnknown select the events of every type the specification does
// not have.
type Filter struct {
	Wids   []string     `json:"wids"`
	Types  []EventType  `json:"types"`
	Groups []EventGroup `json:"groups"`
	// CorrelationIDs selects analysis events by their CorrelationId, the id the analysis start
	// endpoint answered with; events of the other groups carry none, so match none.
	CorrelationIDs []string `json:"correlationIds"`
}

// MaxCorrelationIDs bounds Filter.CorrelationIDs: each is compared with every analysis event a
// subscriber is offered, and a screen follows a handful of analyses at once, not thousands.
const MaxCorrelationIDs = 100

// Check refuses a filter whose correlation ids would not select what a caller means: an empty
// id would select every analysis not started through the API, which no start answered with.
func (f *Filter) Check() error {
	if f == nil {
		return nil
	}
	if n := len(f.CorrelationIDs); n > MaxCorrelationIDs {
		return apperr.Input("filter.correlationIds", fmt.Sprintf("filter.correlationIds can hold at most %d ids, got %d", MaxCorrelationIDs, n))
	}
	for i, id := range f.CorrelationIDs {
		if id == "" {
			return apperr.Input(fmt.Sprintf("filter.correlationIds[%d]", i),
				"filter.correlationIds must not hold an empty id: pass the correlationId startDocumentAnalysis answered")
		}
	}
	return nil
}

// Match reports whether ev passes the filter.
func (f *Filter) Match(ev Event) bool {
	if f == nil {
		return true
	}
	h := ev.Header()
	return (len(f.Wids) == 0 || slices.Contains(f.Wids, h.Wid)) &&
		(len(f.Types) == 0 || slices.Contains(f.Types, h.EventType.Known())) &&
		(len(f.Groups) == 0 || slices.Contains(f.Groups, h.EventType.Group())) &&
		(len(f.CorrelationIDs) == 0 || f.matchCorrelation(ev))
}

func (f *Filter) matchCorrelation(ev Event) bool {
	a, ok := ev.(AnalysisEvent)
	return ok && slices.Contains(f.CorrelationIDs, a.Payload().CorrelationID)
}

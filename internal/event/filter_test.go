package event_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/event"
)

// "CorrelationId: Analysis run id returned as correlation_id on upload": an analysis's events
// carry the id its start answered with, and only analysis events carry one.
func TestCorrelationIdsSelectTheAnalysisEventsThatCarryThem(t *testing.T) {
	analysis := func(typ event.EventType, wid, correlation string) event.Event {
		ev, err := event.Parse(fmt.Appendf(nil, `{"EventType":%q,"Wid":%q,"Timestamp":"2026-11-22T10:00:00Z","ExternalId":null,
			"Payload":{"CorrelationId":%q,"JobId":"","DocumentWid":"d1","Reason":"UploadTimeout"}}`, typ, wid, correlation))
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	estate := analysis(event.TypeAssistantJobFailed, "w1", "c-estate")
	tax := analysis(event.TypeTaxJobFailed, "w1", "c-tax")
	unstarted := analysis(event.TypeTaxJobFailed, "w2", "")
	progress := &event.ClientProgressChanged{Envelope: event.Envelope{Wid: "w1", EventType: event.TypeClientProgressChanged}}
	all := []event.Event{estate, tax, unstarted, progress}
	for _, tc := range []struct {
		name   string
		filter *event.Filter
		want   []event.Event
	}{
		{"no correlation ids select every event", &event.Filter{CorrelationIDs: []string{}}, all},
		{"one id selects its analysis's events", &event.Filter{CorrelationIDs: []string{"c-tax"}}, []event.Event{tax}},
		{"several ids are OR", &event.Filter{CorrelationIDs: []string{"c-estate", "c-tax"}}, []event.Event{estate, tax}},
		{"an id no event carries selects nothing", &event.Filter{CorrelationIDs: []string{"c-other"}}, nil},
		{"ids AND types", &event.Filter{CorrelationIDs: []string{"c-estate", "c-tax"}, Types: []event.EventType{event.TypeTaxJobFailed}}, []event.Event{tax}},
		{"ids AND wids", &event.Filter{CorrelationIDs: []string{"c-tax"}, Wids: []string{"w2"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, ev := range all {
				if got, want := tc.filter.Match(ev), slices.Contains(tc.want, ev); got != want {
					t.Errorf("Match(%s of %s) = %v, want %v", ev.Header().EventType, ev.Header().Wid, got, want)
				}
			}
		})
	}
}

func TestAFilterRefusesCorrelationIdsThatNameNoStart(t *testing.T) {
	many := make([]string, event.MaxCorrelationIDs+1)
	for i := range many {
		many[i] = fmt.Sprint("c-", i)
	}
	for _, tc := range []struct {
		name   string
		filter *event.Filter
		field  string // "" when the filter is fine
	}{
		{"no filter", nil, ""},
		{"no ids", &event.Filter{}, ""},
		{"the most ids allowed", &event.Filter{CorrelationIDs: many[:event.MaxCorrelationIDs]}, ""},
		{"an empty id, which no start answers with", &event.Filter{CorrelationIDs: []string{"c-1", ""}}, "filter.correlationIds[1]"},
		{"one id too many", &event.Filter{CorrelationIDs: many}, "filter.correlationIds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.filter.Check()
			e, _ := apperr.As(err)
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("Check() = %v, want nil", err)
			case tc.field != "" && (e == nil || e.Code != apperr.BadUserInput || e.Field != tc.field):
				t.Errorf("Check() = %v, want BAD_USER_INPUT on %s", err, tc.field)
			}
		})
	}
}

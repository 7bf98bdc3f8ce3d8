package event_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/event"
)

// A type the service added after this gateway was built is stored as it came, unmarked, and read
// back as an UnknownEvent keeping its name and every field; a gateway that knows the type checks
// the unmarked delivery in full when it reads it.
func TestAnEventOfAnUnknownTypeIsStoredAsItCameAndReadBackWhole(t *testing.T) {
	body := `{"EventType": "ClientMovedHouse", "Wid": "w1", "Timestamp": "2026-11-22T09:30:00Z", "City": "Lyon"}`
	w, bad := advisorspec.ParseWebhook([]byte(body))
	if bad != nil {
		t.Fatal(bad)
	}
	rec := event.Record(w)
	if bytes.HasPrefix(rec, []byte(`{"GatewayRecord"`)) {
		t.Errorf("the record %s is marked as checked, want the delivery as it came", rec)
	}
	for _, tc := range []struct{ name, rec string }{
		{"a delivery stored as it came", string(rec)},
		{"a record a newer gateway made", `{"GatewayRecord":1,"EventType":"ClientMovedHouse","Wid":"w1","Timestamp":"2026-11-22T09:30:00Z","City":"Lyon"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := event.Decode([]byte(tc.rec))
			if err != nil {
				t.Fatal(err)
			}
			u, ok := ev.(*event.UnknownEvent)
			if !ok || u.RawType() != "ClientMovedHouse" || u.Wid != "w1" || u.Timestamp.IsZero() || u.Group() != event.GroupUnknown {
				t.Fatalf("got %+v, want an UnknownEvent of ClientMovedHouse for w1", ev)
			}
			var fields map[string]any
			if err := json.Unmarshal(u.Delivery, &fields); err != nil || fields["City"] != "Lyon" || fields["GatewayRecord"] != nil {
				t.Errorf("got body %s, want the delivery's fields without the record's mark", u.Body())
			}
		})
	}
}

// Each enumeration converts a value it does not know to UNKNOWN at the GraphQL boundary, and the
// raw field beside it keeps the value as the service sent it.
func TestAValueTheGatewayDoesNotKnowIsUnknownBesideItsRawValue(t *testing.T) {
	gql := func(m interface{ MarshalGQL(io.Writer) }) string {
		var b strings.Builder
		m.MarshalGQL(&b)
		return b.String()
	}
	for _, tc := range []struct {
		name, got, raw, wantRaw string
	}{
		{"an AssistantJobFailed Reason", gql(event.AssistantFailureReason("ModelOverloaded")), (&event.AssistantJobFailed{Reason: "ModelOverloaded"}).RawReason(), "ModelOverloaded"},
		{"a TaxJobFailed Reason", gql(event.TaxFailureReason("AuditPending")), (&event.TaxJobFailed{Reason: "AuditPending"}).RawReason(), "AuditPending"},
		{"an EstateStatus", gql(event.EstateStatus("Archived")), (&event.ClientProgressChanged{EstateStatus: "Archived"}).RawEstateStatus(), "Archived"},
		{"a DocumentName", gql(event.DocumentName("Living Will")), (&event.Progress{DocumentName: "Living Will"}).RawDocumentName(), "Living Will"},
		{"a GeneratedDocumentType", gql(event.GeneratedDocumentType("Flowchart")), (&event.GeneratedDocument{DocumentType: "Flowchart"}).RawDocumentType(), "Flowchart"},
		{"a PresentationStatus", gql(event.PresentationStatus("Amended")), *(&event.TaxJobCompleted{PresentationStatus: ptr(event.PresentationStatus("Amended"))}).RawPresentationStatus(), "Amended"},
		{"an EventType", gql(event.EventType("ClientMovedHouse")), (&event.UnknownEvent{Envelope: event.Envelope{EventType: "ClientMovedHouse"}}).RawType(), "ClientMovedHouse"},
		{"an EventGroup", gql(event.EventType("ClientMovedHouse").Group()), "", ""},
	} {
		if tc.got != `"UNKNOWN"` || tc.raw != tc.wantRaw {
			t.Errorf("%s: got %s beside %q, want \"UNKNOWN\" beside %q", tc.name, tc.got, tc.raw, tc.wantRaw)
		}
	}
	owner := &event.DocumentOwnerInfo{RawContactType: ptr("Robot")}
	if owner.ContactType() != nil {
		t.Errorf("got contact type %v for Robot, want none (rawContactType holds it)", *owner.ContactType())
	}
	if known := (&event.DocumentOwnerInfo{RawContactType: ptr("Individual")}).ContactType(); known == nil || *known != "Individual" {
		t.Errorf("got %v for Individual, want it", known)
	}
}

// UNKNOWN selects, in a filter, every event of a type the specification does not have, by type
// and by group; the known types still select only themselves.
func TestAFilterSelectsUnknownTypesAsUnknown(t *testing.T) {
	moved, err := event.Parse([]byte(`{"EventType": "ClientMovedHouse", "Wid": "w1", "Timestamp": "2026-11-22T09:30:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	progress := mustParse(t, bodies[event.TypeClientProgressChanged])
	var unknownType event.EventType
	var unknownGroup event.EventGroup
	if unknownType.UnmarshalGQL("UNKNOWN") != nil || unknownGroup.UnmarshalGQL("UNKNOWN") != nil {
		t.Fatal("UNKNOWN is not a value of EventType and EventGroup")
	}
	for _, tc := range []struct {
		name         string
		filter       event.Filter
		moved, known bool
	}{
		{"types UNKNOWN", event.Filter{Types: []event.EventType{unknownType}}, true, false},
		{"groups UNKNOWN", event.Filter{Groups: []event.EventGroup{unknownGroup}}, true, false},
		{"a known type", event.Filter{Types: []event.EventType{event.TypeClientProgressChanged}}, false, true},
		{"a known group", event.Filter{Groups: []event.EventGroup{event.GroupClient}}, false, true},
		{"no filter", event.Filter{}, true, true},
	} {
		if got, gotKnown := tc.filter.Match(moved), tc.filter.Match(progress); got != tc.moved || gotKnown != tc.known {
			t.Errorf("%s: matches ClientMovedHouse %v and ClientProgressChanged %v, want %v and %v", tc.name, got, gotKnown, tc.moved, tc.known)
		}
	}
}

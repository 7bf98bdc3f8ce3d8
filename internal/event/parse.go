package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// recordMark starts every record Record makes. A delivery as it arrived (what the gateway stored
// before its records were canonical) has not been through the checks in this form, so Decode
// checks a record that lacks the mark; it is compared byte for byte, never decoded, so that no
// spelling of it in a delivery's own fields can pass for it once the delivery is canonical.
var recordMark = []byte(`{"GatewayRecord":1,`)

// recordType starts the canonical form after the mark: EventType is its first field, so a
// record says its type before anything else, and Decode reads it there rather than decoding the
// record once for the type and again for the event.
var recordType = []byte(`"EventType":"`)

// Record is what the gateway stores for a delivery that passed the checks: its canonical form
// (advisorspec.Webhook.Canonical), marked, so that Decode reads it back with encoding/json
// alone. The mark is one more field, which the checks ignore: a record is still a delivery that
// Parse, and a gateway from before records were canonical, accepts.
//
// A delivery of a type the specification does not have is stored as it came, without the mark:
// only its envelope was checked, so a gateway that knows the type checks the rest when it reads
// it (Decode).
func Record(w *advisorspec.Webhook) []byte {
	if !w.Known() {
		return w.Canonical
	}
	// Canonical is a non-empty object: it always holds the envelope.
	return append(slices.Clip(recordMark), w.Canonical[1:]...)
}

// Parse checks a webhook body against the specification and returns its event. A delivery that
// breaks a rule is an *advisorspec.Error naming the field (see advisorspec.ParseWebhook).
func Parse(body []byte) (Event, error) {
	w, err := advisorspec.ParseWebhook(body)
	if err != nil {
		return nil, err
	}
	return decode(EventType(w.EventType), w.Canonical)
}

// Decode reads a stored record. A record that Record made is decoded as it is, since it was
// checked when it arrived; one stored before records were canonical is checked as a delivery.
func Decode(rec []byte) (Event, error) {
	if !bytes.HasPrefix(rec, recordMark) {
		return Parse(rec)
	}
	// The type is a name of the specification's, quoted without escapes (see Record).
	rest, ok := bytes.CutPrefix(rec[len(recordMark):], recordType)
	end := bytes.IndexByte(rest, '"')
	if !ok || end < 0 {
		return nil, fmt.Errorf("decode an event: the record does not start with its EventType")
	}
	return decode(EventType(rest[:end]), rec)
}

// analysisRecord is an analysis event as its canonical form lays it out: the envelope and
// ExternalId beside Payload, which holds the event's own fields. Each member points into the
// one event, so a single json.Unmarshal fills all of it.
type analysisRecord struct {
	*Envelope
	ExternalID **string `json:"ExternalId"`
	// Payload holds a pointer to the event: encoding/json decodes into the value an interface
	// points to when there is one.
	Payload AnalysisEvent `json:"Payload"`
}

// decode reads an event of type t in canonical form with one json.Unmarshal into the event's
// type, whose JSON names are the canonical ones.
func decode(t EventType, canonical []byte) (Event, error) {
	ev := newEvent(t)
	if ev == nil {
		// A type the service added since this gateway was built: a delivery of it as it came,
		// or a record a newer gateway made of it.
		return decodeUnknown(canonical)
	}
	var into any = ev
	if a, ok := ev.(AnalysisEvent); ok {
		into = &analysisRecord{Envelope: ev.Header(), ExternalID: &a.Payload().ExternalID, Payload: a}
	}
	if err := json.Unmarshal(canonical, into); err != nil {
		return nil, fmt.Errorf("decode the %s event: %w", t, err)
	}
	fill(ev)
	return ev, nil
}

// decodeUnknown reads an event of a type this gateway does not know: its envelope, and the
// whole of it, without the record's mark, as the body subscribers see.
func decodeUnknown(rec []byte) (Event, error) {
	body := rec
	if rest, ok := bytes.CutPrefix(rec, recordMark); ok {
		body = append([]byte{'{'}, rest...)
	}
	ev := &UnknownEvent{Delivery: body}
	var env struct {
		Wid       string `json:"Wid"`
		EventType string `json:"EventType"`
		Timestamp string `json:"Timestamp"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("decode an event of unknown type: %w", err)
	}
	stamp, err := advisorspec.ParseDateTime(env.Timestamp)
	if err != nil {
		return nil, fmt.Errorf("decode the %s event: Timestamp: %w", env.EventType, err)
	}
	ev.Wid, ev.EventType, ev.Timestamp = env.Wid, EventType(env.EventType), stamp
	return ev, nil
}

func newEvent(t EventType) Event {
	switch t {
	case TypeAssistantJobCompleted:
		return &AssistantJobCompleted{}
	case TypeAssistantJobFailed:
		return &AssistantJobFailed{}
	case TypeAssistantMultiDocumentRequiresReview:
		return &AssistantMultiDocumentRequiresReview{}
	case TypeTaxJobCompleted:
		return &TaxJobCompleted{}
	case TypeTaxJobFailed:
		return &TaxJobFailed{}
	case TypeClientAcceptedInvitation:
		return &ClientAcceptedInvitation{}
	case TypeClientDeclinedInvitation:
		return &ClientDeclinedInvitation{}
	case TypeUserSubscriptionCreated:
		return &UserSubscriptionCreated{}
	case TypeUserSubscriptionCanceled:
		return &UserSubscriptionCanceled{}
	case TypeUserSubscriptionChanged:
		return &UserSubscriptionChanged{}
	case TypeUserSubscriptionReactivated:
		return &UserSubscriptionReactivated{}
	case TypeClientProgressChanged:
		return &ClientProgressChanged{}
	case TypeAssetAdded:
		return &AssetAdded{}
	case TypeAssetDeleted:
		return &AssetDeleted{}
	case TypeAssetBeneficiaryAdded:
		return &AssetBeneficiaryAdded{}
	case TypeAssetBeneficiaryDeleted:
		return &AssetBeneficiaryDeleted{}
	case TypeAssetOwnershipAdded:
		return &AssetOwnershipAdded{}
	case TypeAssetOwnershipDeleted:
		return &AssetOwnershipDeleted{}
	case TypeDocumentStarted:
		return &DocumentStarted{}
	case TypeDocumentPendingValidation:
		return &DocumentPendingValidation{}
	case TypeDocumentCompleted:
		return &DocumentCompleted{}
	}
	return nil
}

// fill gives the documents an analysis event names the client's wid, so their document
// fields can load them from the client's vault.
func fill(ev Event) {
	wid := ev.Header().Wid
	var source *SourceDocument
	switch e := ev.(type) {
	case *AssistantJobCompleted:
		source = e.SourceDocument
		for _, d := range e.Documents {
			d.Wid = wid
		}
	case *TaxJobCompleted:
		source = e.SourceDocument
	}
	if source != nil {
		source.Wid = wid
	}
}

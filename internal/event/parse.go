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

// Record is what the gateway stores for a delivery that passed the checks: its canonical form
// (advisorspec.Webhook.Canonical), marked, so that Decode reads it back with encoding/json
// alone. The mark is one more field, which the checks ignore: a record is still a delivery that
// Parse, and a gateway from before records were canonical, accepts.
func Record(w *advisorspec.Webhook) []byte {
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
	return decode(w.Canonical)
}

// Decode reads a stored record. A record that Record made is decoded as it is, since it was
// checked when it arrived; one stored before records were canonical is checked as a delivery.
func Decode(rec []byte) (Event, error) {
	if !bytes.HasPrefix(rec, recordMark) {
		return Parse(rec)
	}
	return decode(rec)
}

// decode reads an event in canonical form: the envelope, and the Payload of an analysis event,
// are each one json.Unmarshal into the event's type, whose JSON names are the canonical ones.
func decode(canonical []byte) (Event, error) {
	var head struct {
		EventType EventType       `json:"EventType"`
		Payload   json.RawMessage `json:"Payload"`
	}
	if err := json.Unmarshal(canonical, &head); err != nil {
		return nil, fmt.Errorf("decode an event: %w", err)
	}
	ev := newEvent(head.EventType)
	if ev == nil {
		// A record of a type this gateway does not know, written by a newer one.
		return nil, fmt.Errorf("decode an event: unknown event type %q", head.EventType)
	}
	if err := json.Unmarshal(canonical, ev); err != nil {
		return nil, fmt.Errorf("decode the %s event: %w", head.EventType, err)
	}
	if head.Payload != nil {
		if err := json.Unmarshal(head.Payload, ev); err != nil {
			return nil, fmt.Errorf("decode the payload of a %s event: %w", head.EventType, err)
		}
	}
	fill(ev)
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

package event_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/family"
)

func ptr[T any](v T) *T { return &v }

// The sample client and the instant most bodies carry.
const wid = "c-7f3a9b2e-41d0-4c1e-9a55-0b6d2f8e1c34"

var stamp = time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)

func env(t event.EventType) event.Envelope {
	return event.Envelope{Wid: wid, EventType: t, Timestamp: stamp}
}

// bodies are full webhook bodies of every event type, with the specification's fields.
var bodies = map[event.EventType]string{
	event.TypeAssistantJobCompleted: `{
		"Wid": "` + wid + `", "EventType": "AssistantJobCompleted", "Timestamp": "2026-11-22T09:30:00Z",
		"ExternalId": "crm-4711",
		"Payload": {
			"CorrelationId": "corr-8d1e", "JobId": "job-5521", "DocumentWid": "vault-doc-001",
			"source_document": {"vault_id": "vault-doc-001", "name": "Smith Family Trust", "extension": "pdf", "uploaded_at": "2026-11-21T18:05:12Z"},
			"category": "estate",
			"Documents": [
				{"DocumentType": "StandardExecSummary", "VaultId": "vault-gen-001", "Extension": "pdf"},
				{"DocumentType": "AdvancedExecSummary", "VaultId": "vault-gen-002", "Extension": "pdf"},
				{"DocumentType": "Insights", "VaultId": "vault-gen-003", "Extension": "json"}
			]
		}
	}`,
	event.TypeAssistantJobFailed: `{
		"Wid": "` + wid + `", "EventType": "AssistantJobFailed", "Timestamp": "2026-11-22T09:30:00Z",
		"ExternalId": null,
		"Payload": {"CorrelationId": "corr-8d1f", "JobId": "", "DocumentWid": "vault-doc-002", "Reason": "FileTooLarge"}
	}`,
	event.TypeAssistantMultiDocumentRequiresReview: `{
		"Wid": "` + wid + `", "EventType": "AssistantMultiDocumentRequiresReview", "Timestamp": "2026-11-22T09:30:00Z",
		"ExternalId": "crm-4711",
		"Payload": {
			"CorrelationId": "", "JobId": "job-5522", "DocumentWid": "vault-doc-003",
			"VaultLink": "/vault/documents/vault-doc-003", "DetectedDocumentCount": 3
		}
	}`,
	event.TypeTaxJobCompleted: `{
		"Wid": "` + wid + `", "EventType": "TaxJobCompleted", "Timestamp": "2026-11-22T09:30:00Z",
		"ExternalId": "crm-4711",
		"Payload": {
			"CorrelationId": "corr-tax-1", "JobId": "job-tax-1", "DocumentWid": "vault-doc-004",
			"source_document": {"vault_id": "vault-doc-004", "name": "2025 Form 1040", "extension": "pdf", "uploaded_at": "2026-11-21T18:05:12"},
			"category": "tax",
			"PresentationStatus": "insightsUnavailable"
		}
	}`,
	event.TypeTaxJobFailed: `{
		"Wid": "` + wid + `", "EventType": "TaxJobFailed", "Timestamp": "2026-11-22T09:30:00Z",
		"Payload": {"CorrelationId": "corr-tax-2", "JobId": "job-tax-2", "DocumentWid": "vault-doc-005", "Reason": "NoTaxReturnFound"}
	}`,
	event.TypeClientAcceptedInvitation: `{
		"Wid": "` + wid + `", "EventType": "ClientAcceptedInvitation", "Timestamp": "2026-11-22T09:30:00Z",
		"AdvisorWid": "adv-001", "TeamId": "team-001", "CompanyId": "co-001", "RegistrationEmail": "jane.smith@example.com"
	}`,
	event.TypeClientDeclinedInvitation: `{
		"Wid": "u-5510", "EventType": "ClientDeclinedInvitation", "Timestamp": "2026-11-22T09:30:00Z",
		"AdvisorWid": "adv-002", "TeamId": "team-002", "CompanyId": "co-002", "RegistrationEmail": "john.doe@example.com"
	}`,
	event.TypeUserSubscriptionCreated: `{
		"Wid": "` + wid + `", "EventType": "UserSubscriptionCreated", "Timestamp": "2026-11-22T09:30:00Z",
		"NewPlan": "individual_will"
	}`,
	event.TypeUserSubscriptionCanceled: `{
		"Wid": "` + wid + `", "EventType": "UserSubscriptionCanceled", "Timestamp": "2026-11-22T09:30:00Z",
		"OldPlan": "couples_trust"
	}`,
	event.TypeUserSubscriptionChanged: `{
		"Wid": "` + wid + `", "EventType": "UserSubscriptionChanged", "Timestamp": "2026-11-22T09:30:00Z",
		"OldPlan": "individual_will", "NewPlan": "joint_will"
	}`,
	event.TypeUserSubscriptionReactivated: `{
		"Wid": "` + wid + `", "EventType": "UserSubscriptionReactivated", "Timestamp": "2026-11-22T09:30:00Z",
		"OldPlan": "couples_trust"
	}`,
	event.TypeClientProgressChanged: `{
		"Wid": "` + wid + `", "EventType": "ClientProgressChanged", "Timestamp": "2026-11-22T09:30:00Z",
		"EstateStatus": "InProgress", "CompletionPercentage": 40
	}`,
	event.TypeAssetAdded: `{
		"Wid": "` + wid + `", "EventType": "AssetAdded", "Timestamp": "2026-11-22T09:30:00Z",
		"AssetName": "Lake House", "DollarAmount": 850000
	}`,
	event.TypeAssetDeleted: `{
		"Wid": "` + wid + `", "EventType": "AssetDeleted", "Timestamp": "2026-11-22T09:30:00Z",
		"AssetName": "Old Sedan"
	}`,
	event.TypeAssetBeneficiaryAdded: `{
		"Wid": "` + wid + `", "EventType": "AssetBeneficiaryAdded", "Timestamp": "2026-11-22T09:30:00Z",
		"AssetName": "Lake House", "BeneficiaryAdded": [{"Name": "Emma Smith"}, {"Name": "Liam Smith"}]
	}`,
	event.TypeAssetBeneficiaryDeleted: `{
		"Wid": "` + wid + `", "EventType": "AssetBeneficiaryDeleted", "Timestamp": "2026-11-22T09:30:00Z",
		"AssetName": "Lake House", "BeneficiaryDeleted": [{"Name": "Liam Smith"}]
	}`,
	event.TypeAssetOwnershipAdded: `{
		"Wid": "` + wid + `", "EventType": "AssetOwnershipAdded", "Timestamp": "2026-11-22T09:30:00Z",
		"AssetName": "Brokerage Account", "OwnershipAdded": [{"Name": "Jane Smith"}, {"Name": "John Smith"}]
	}`,
	event.TypeAssetOwnershipDeleted: `{
		"Wid": "` + wid + `", "EventType": "AssetOwnershipDeleted", "Timestamp": "2026-11-22T09:30:00Z",
		"AssetName": "Brokerage Account", "OwnerDeleted": [{"Name": "John Smith"}]
	}`,
	event.TypeDocumentStarted: `{
		"Wid": "` + wid + `", "EventType": "DocumentStarted", "Timestamp": "2026-11-22T09:30:00Z",
		"IsRecommendedDocument": true, "DocumentName": "Last Will and Testament", "DocumentProgressPercentage": 0,
		"UserTier": "individual_will", "WasCompletedBefore": false,
		"DocumentOwnerInfo": {"FirstName": "Jane", "LastName": "Smith", "LegalName": "Jane A. Smith", "ContactType": "Individual", "IsPrimary": true}
	}`,
	event.TypeDocumentPendingValidation: `{
		"Wid": "` + wid + `", "EventType": "DocumentPendingValidation", "Timestamp": "2026-11-22T09:30:00Z",
		"IsRecommendedDocument": false, "DocumentName": "Financial Power of Attorney", "DocumentProgressPercentage": 99,
		"UserTier": "couples_trust",
		"DocumentOwnerInfo": {"FirstName": "John", "LastName": "Smith", "LegalName": "John B. Smith", "ContactType": "Individual", "IsPrimary": false}
	}`,
	event.TypeDocumentCompleted: `{
		"Wid": "` + wid + `", "EventType": "DocumentCompleted", "Timestamp": "2026-11-22T09:30:00Z",
		"IsRecommendedDocument": true, "DocumentName": "Joint Revocable Trust", "DocumentProgressPercentage": 100,
		"UserTier": "couples_trust",
		"DocumentOwnerInfo": {"FirstName": "Jane", "LastName": "Smith", "LegalName": "Jane A. Smith", "ContactType": "Individual", "IsPrimary": true}
	}`,
}

// absent, as with's value, removes the field.
var absent = &struct{ absent bool }{}

// with returns body with the field at path set to value (marshalled; a json.RawMessage is
// taken as is), or removed when value is absent. Path segments are separated by dots; a number
// indexes an array.
func with(body, path string, value any) string {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		panic(fmt.Sprintf("with: the base body is not JSON: %v", err))
	}
	segs := strings.Split(path, ".")
	cur := root
	for _, seg := range segs[:len(segs)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil {
				panic("with: " + path + ": not an index: " + seg)
			}
			cur = c[i]
		default:
			panic("with: " + path + ": cannot descend into " + seg)
		}
	}
	last := segs[len(segs)-1]
	switch c := cur.(type) {
	case map[string]any:
		if value == absent {
			delete(c, last)
		} else {
			c[last] = value
		}
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || value == absent {
			panic("with: " + path + ": cannot set or remove an array item that way")
		}
		c[i] = value
	default:
		panic("with: " + path + ": cannot set a field of a non-object")
	}
	b, err := json.Marshal(root)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// dump renders a value with what its pointers point at, for failure messages.
func dump(v any) string {
	var b strings.Builder
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			if v.Kind() == reflect.Pointer {
				b.WriteString("&")
			}
			walk(v.Elem())
		case reflect.Struct:
			if t, ok := v.Interface().(time.Time); ok {
				b.WriteString(t.Format(time.RFC3339Nano) + "(" + t.Location().String() + ")")
				return
			}
			b.WriteString(v.Type().Name() + "{")
			for i := range v.NumField() {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(v.Type().Field(i).Name + ": ")
				walk(v.Field(i))
			}
			b.WriteString("}")
		case reflect.Slice:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			b.WriteString("[")
			for i := range v.Len() {
				if i > 0 {
					b.WriteString(", ")
				}
				walk(v.Index(i))
			}
			b.WriteString("]")
		default:
			fmt.Fprintf(&b, "%#v", v.Interface())
		}
	}
	walk(reflect.ValueOf(v))
	return b.String()
}

// sameEvent is reflect.DeepEqual, but compares times by instant and location name, so how a
// time.Time stores UTC does not matter.
func sameEvent(a, b any) bool {
	return reflect.DeepEqual(normalise(reflect.ValueOf(a)), normalise(reflect.ValueOf(b)))
}

func normalise(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.Type() == reflect.TypeFor[time.Time]() {
		t := v.Interface().(time.Time)
		return t.Format(time.RFC3339Nano) + "@" + t.Location().String()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return []any{"ptr", normalise(v.Elem())}
	case reflect.Struct:
		out := []any{v.Type().String()}
		for i := range v.NumField() {
			out = append(out, normalise(v.Field(i)))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		out := []any{"slice"}
		for i := range v.Len() {
			out = append(out, normalise(v.Index(i)))
		}
		return out
	}
	return v.Interface()
}

// Every event type parses into its Go type with every field as sent.
func TestParseFillsEveryFieldOfEachEventType(t *testing.T) {
	uploaded := time.Date(2026, 11, 21, 18, 5, 12, 0, time.UTC)
	owners := []*event.Name{{Name: "Jane Smith"}, {Name: "John Smith"}}
	jane := &event.DocumentOwnerInfo{
		FirstName: ptr("Jane"), LastName: ptr("Smith"), LegalName: ptr("Jane A. Smith"),
		ContactType: ptr(family.ContactType("Individual")), IsPrimary: ptr(true),
	}
	tests := []struct {
		name  string
		body  string
		want  event.Event
		group event.EventGroup
	}{
		{
			name: "AssistantJobCompleted: payload, external id, source document with uploaded_at and generated documents carry the event's Wid",
			body: bodies[event.TypeAssistantJobCompleted],
			want: &event.AssistantJobCompleted{
				Envelope: env(event.TypeAssistantJobCompleted),
				Analysis: event.Analysis{ExternalID: ptr("crm-4711"), CorrelationID: "corr-8d1e", JobID: "job-5521", DocumentWid: "vault-doc-001"},
				SourceDocument: &event.SourceDocument{
					Wid: wid, VaultID: "vault-doc-001", Name: ptr("Smith Family Trust"), Extension: ptr("pdf"), UploadedAt: &uploaded,
				},
				Category: ptr("estate"),
				Documents: []*event.GeneratedDocument{
					{Wid: wid, DocumentType: "StandardExecSummary", VaultID: "vault-gen-001", Extension: ptr("pdf")},
					{Wid: wid, DocumentType: "AdvancedExecSummary", VaultID: "vault-gen-002", Extension: ptr("pdf")},
					{Wid: wid, DocumentType: "Insights", VaultID: "vault-gen-003", Extension: ptr("json")},
				},
			},
			group: event.GroupAnalysis,
		},
		{
			name: "AssistantJobCompleted: an empty Documents array and no source_document or category",
			body: with(with(with(bodies[event.TypeAssistantJobCompleted], "Payload.Documents", []any{}), "Payload.source_document", absent), "Payload.category", absent),
			want: &event.AssistantJobCompleted{
				Envelope:  env(event.TypeAssistantJobCompleted),
				Analysis:  event.Analysis{ExternalID: ptr("crm-4711"), CorrelationID: "corr-8d1e", JobID: "job-5521", DocumentWid: "vault-doc-001"},
				Documents: []*event.GeneratedDocument{},
			},
			group: event.GroupAnalysis,
		},
		{
			name: "AssistantJobFailed: null ExternalId is nil, empty JobId accepted, Reason typed",
			body: bodies[event.TypeAssistantJobFailed],
			want: &event.AssistantJobFailed{
				Envelope: env(event.TypeAssistantJobFailed),
				Analysis: event.Analysis{ExternalID: nil, CorrelationID: "corr-8d1f", JobID: "", DocumentWid: "vault-doc-002"},
				Reason:   "FileTooLarge",
			},
			group: event.GroupAnalysis,
		},
		{
			name: "AssistantMultiDocumentRequiresReview: empty CorrelationId accepted, VaultLink and DetectedDocumentCount",
			body: bodies[event.TypeAssistantMultiDocumentRequiresReview],
			want: &event.AssistantMultiDocumentRequiresReview{
				Envelope:              env(event.TypeAssistantMultiDocumentRequiresReview),
				Analysis:              event.Analysis{ExternalID: ptr("crm-4711"), CorrelationID: "", JobID: "job-5522", DocumentWid: "vault-doc-003"},
				VaultLink:             ptr("/vault/documents/vault-doc-003"),
				DetectedDocumentCount: ptr(3),
			},
			group: event.GroupAnalysis,
		},
		{
			name: "AssistantMultiDocumentRequiresReview: DetectedDocumentCount 0 is allowed",
			body: with(bodies[event.TypeAssistantMultiDocumentRequiresReview], "Payload.DetectedDocumentCount", 0),
			want: &event.AssistantMultiDocumentRequiresReview{
				Envelope:              env(event.TypeAssistantMultiDocumentRequiresReview),
				Analysis:              event.Analysis{ExternalID: ptr("crm-4711"), CorrelationID: "", JobID: "job-5522", DocumentWid: "vault-doc-003"},
				VaultLink:             ptr("/vault/documents/vault-doc-003"),
				DetectedDocumentCount: ptr(0),
			},
			group: event.GroupAnalysis,
		},
		{
			name: "TaxJobCompleted: category tax, PresentationStatus typed, uploaded_at without offset is UTC",
			body: bodies[event.TypeTaxJobCompleted],
			want: &event.TaxJobCompleted{
				Envelope: env(event.TypeTaxJobCompleted),
				Analysis: event.Analysis{ExternalID: ptr("crm-4711"), CorrelationID: "corr-tax-1", JobID: "job-tax-1", DocumentWid: "vault-doc-004"},
				SourceDocument: &event.SourceDocument{
					Wid: wid, VaultID: "vault-doc-004", Name: ptr("2025 Form 1040"), Extension: ptr("pdf"), UploadedAt: &uploaded,
				},
				Category:           ptr("tax"),
				PresentationStatus: ptr(event.PresentationStatus("insightsUnavailable")),
			},
			group: event.GroupAnalysis,
		},
		{
			name: "TaxJobFailed: absent ExternalId is nil",
			body: bodies[event.TypeTaxJobFailed],
			want: &event.TaxJobFailed{
				Envelope: env(event.TypeTaxJobFailed),
				Analysis: event.Analysis{CorrelationID: "corr-tax-2", JobID: "job-tax-2", DocumentWid: "vault-doc-005"},
				Reason:   "NoTaxReturnFound",
			},
			group: event.GroupAnalysis,
		},
		{
			name: "TaxJobFailed: a string ExternalId is set",
			body: with(bodies[event.TypeTaxJobFailed], "ExternalId", "crm-9"),
			want: &event.TaxJobFailed{
				Envelope: env(event.TypeTaxJobFailed),
				Analysis: event.Analysis{ExternalID: ptr("crm-9"), CorrelationID: "corr-tax-2", JobID: "job-tax-2", DocumentWid: "vault-doc-005"},
				Reason:   "NoTaxReturnFound",
			},
			group: event.GroupAnalysis,
		},
		{
			name: "ClientAcceptedInvitation: the advisor's ids and the registration email",
			body: bodies[event.TypeClientAcceptedInvitation],
			want: &event.ClientAcceptedInvitation{
				Envelope: env(event.TypeClientAcceptedInvitation),
				Invitation: event.Invitation{
					AdvisorWid: ptr("adv-001"), TeamID: ptr("team-001"), CompanyID: ptr("co-001"), RegistrationEmail: ptr("jane.smith@example.com"),
				},
			},
			group: event.GroupClient,
		},
		{
			name: "ClientDeclinedInvitation: Wid is the user's",
			body: bodies[event.TypeClientDeclinedInvitation],
			want: &event.ClientDeclinedInvitation{
				Envelope: event.Envelope{Wid: "u-5510", EventType: event.TypeClientDeclinedInvitation, Timestamp: stamp},
				Invitation: event.Invitation{
					AdvisorWid: ptr("adv-002"), TeamID: ptr("team-002"), CompanyID: ptr("co-002"), RegistrationEmail: ptr("john.doe@example.com"),
				},
			},
			group: event.GroupClient,
		},
		{
			name:  "UserSubscriptionCreated: NewPlan",
			body:  bodies[event.TypeUserSubscriptionCreated],
			want:  &event.UserSubscriptionCreated{Envelope: env(event.TypeUserSubscriptionCreated), NewPlan: "individual_will"},
			group: event.GroupClient,
		},
		{
			name:  "UserSubscriptionCanceled: OldPlan",
			body:  bodies[event.TypeUserSubscriptionCanceled],
			want:  &event.UserSubscriptionCanceled{Envelope: env(event.TypeUserSubscriptionCanceled), OldPlan: "couples_trust"},
			group: event.GroupClient,
		},
		{
			name:  "UserSubscriptionChanged: OldPlan and NewPlan",
			body:  bodies[event.TypeUserSubscriptionChanged],
			want:  &event.UserSubscriptionChanged{Envelope: env(event.TypeUserSubscriptionChanged), OldPlan: "individual_will", NewPlan: "joint_will"},
			group: event.GroupClient,
		},
		{
			name:  "UserSubscriptionReactivated: OldPlan",
			body:  bodies[event.TypeUserSubscriptionReactivated],
			want:  &event.UserSubscriptionReactivated{Envelope: env(event.TypeUserSubscriptionReactivated), OldPlan: "couples_trust"},
			group: event.GroupClient,
		},
		{
			name:  "ClientProgressChanged: EstateStatus InProgress and CompletionPercentage",
			body:  bodies[event.TypeClientProgressChanged],
			want:  &event.ClientProgressChanged{Envelope: env(event.TypeClientProgressChanged), EstateStatus: "InProgress", CompletionPercentage: 40},
			group: event.GroupClient,
		},
		{
			name:  "ClientProgressChanged: CompletionPercentage 100 is the upper bound",
			body:  with(with(bodies[event.TypeClientProgressChanged], "CompletionPercentage", 100), "EstateStatus", "Completed"),
			want:  &event.ClientProgressChanged{Envelope: env(event.TypeClientProgressChanged), EstateStatus: "Completed", CompletionPercentage: 100},
			group: event.GroupClient,
		},
		{
			name:  "ClientProgressChanged: CompletionPercentage 0 is the lower bound",
			body:  with(with(bodies[event.TypeClientProgressChanged], "CompletionPercentage", 0), "EstateStatus", "NotStarted"),
			want:  &event.ClientProgressChanged{Envelope: env(event.TypeClientProgressChanged), EstateStatus: "NotStarted", CompletionPercentage: 0},
			group: event.GroupClient,
		},
		{
			name:  "AssetAdded: AssetName and DollarAmount",
			body:  bodies[event.TypeAssetAdded],
			want:  &event.AssetAdded{Envelope: env(event.TypeAssetAdded), Asset: event.Asset{AssetName: "Lake House"}, DollarAmount: ptr(850000)},
			group: event.GroupAsset,
		},
		{
			name:  "AssetDeleted: AssetName",
			body:  bodies[event.TypeAssetDeleted],
			want:  &event.AssetDeleted{Envelope: env(event.TypeAssetDeleted), Asset: event.Asset{AssetName: "Old Sedan"}},
			group: event.GroupAsset,
		},
		{
			name: "AssetBeneficiaryAdded: the names in order",
			body: bodies[event.TypeAssetBeneficiaryAdded],
			want: &event.AssetBeneficiaryAdded{
				Envelope: env(event.TypeAssetBeneficiaryAdded), Asset: event.Asset{AssetName: "Lake House"},
				BeneficiaryAdded: []*event.Name{{Name: "Emma Smith"}, {Name: "Liam Smith"}},
			},
			group: event.GroupAsset,
		},
		{
			name: "AssetBeneficiaryDeleted: the names",
			body: bodies[event.TypeAssetBeneficiaryDeleted],
			want: &event.AssetBeneficiaryDeleted{
				Envelope: env(event.TypeAssetBeneficiaryDeleted), Asset: event.Asset{AssetName: "Lake House"},
				BeneficiaryDeleted: []*event.Name{{Name: "Liam Smith"}},
			},
			group: event.GroupAsset,
		},
		{
			name: "AssetOwnershipAdded: owners under OwnershipAdded (the sample's name)",
			body: bodies[event.TypeAssetOwnershipAdded],
			want: &event.AssetOwnershipAdded{
				Envelope: env(event.TypeAssetOwnershipAdded), Asset: event.Asset{AssetName: "Brokerage Account"}, OwnershipAdded: owners,
			},
			group: event.GroupAsset,
		},
		{
			name: "AssetOwnershipAdded: owners under OwnerAdded (the field table's name) fill OwnershipAdded",
			body: `{"Wid": "` + wid + `", "EventType": "AssetOwnershipAdded", "Timestamp": "2026-11-22T09:30:00Z",
				"AssetName": "Brokerage Account", "OwnerAdded": [{"Name": "Jane Smith"}, {"Name": "John Smith"}]}`,
			want: &event.AssetOwnershipAdded{
				Envelope: env(event.TypeAssetOwnershipAdded), Asset: event.Asset{AssetName: "Brokerage Account"}, OwnershipAdded: owners,
			},
			group: event.GroupAsset,
		},
		{
			name: "AssetOwnershipDeleted: OwnerDeleted",
			body: bodies[event.TypeAssetOwnershipDeleted],
			want: &event.AssetOwnershipDeleted{
				Envelope: env(event.TypeAssetOwnershipDeleted), Asset: event.Asset{AssetName: "Brokerage Account"},
				OwnerDeleted: []*event.Name{{Name: "John Smith"}},
			},
			group: event.GroupAsset,
		},
		{
			name: "DocumentStarted: progress 0, owner info, WasCompletedBefore",
			body: bodies[event.TypeDocumentStarted],
			want: &event.DocumentStarted{
				Envelope: env(event.TypeDocumentStarted),
				Progress: event.Progress{
					IsRecommendedDocument: ptr(true), DocumentName: "Last Will and Testament", DocumentProgressPercentage: 0,
					UserTier: ptr("individual_will"), DocumentOwnerInfo: jane,
				},
				WasCompletedBefore: ptr(false),
			},
			group: event.GroupDocument,
		},
		{
			name: "DocumentPendingValidation: progress 99, an owner who is not the client",
			body: bodies[event.TypeDocumentPendingValidation],
			want: &event.DocumentPendingValidation{
				Envelope: env(event.TypeDocumentPendingValidation),
				Progress: event.Progress{
					IsRecommendedDocument: ptr(false), DocumentName: "Financial Power of Attorney", DocumentProgressPercentage: 99,
					UserTier: ptr("couples_trust"),
					DocumentOwnerInfo: &event.DocumentOwnerInfo{
						FirstName: ptr("John"), LastName: ptr("Smith"), LegalName: ptr("John B. Smith"),
						ContactType: ptr(family.ContactType("Individual")), IsPrimary: ptr(false),
					},
				},
			},
			group: event.GroupDocument,
		},
		{
			name: "DocumentCompleted: progress 100",
			body: bodies[event.TypeDocumentCompleted],
			want: &event.DocumentCompleted{
				Envelope: env(event.TypeDocumentCompleted),
				Progress: event.Progress{
					IsRecommendedDocument: ptr(true), DocumentName: "Joint Revocable Trust", DocumentProgressPercentage: 100,
					UserTier: ptr("couples_trust"), DocumentOwnerInfo: jane,
				},
			},
			group: event.GroupDocument,
		},
	}
	seen := map[event.EventType]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := event.Parse([]byte(tc.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if reflect.TypeOf(got) != reflect.TypeOf(tc.want) {
				t.Fatalf("Parse returned a %T, want a %T", got, tc.want)
			}
			if !sameEvent(got, tc.want) {
				t.Errorf("Parse:\n got  %s\n want %s", dump(got), dump(tc.want))
			}
			if g := got.Header().Group(); g != tc.group {
				t.Errorf("Header().Group() = %q, want %q", g, tc.group)
			}
			if got.Header().ID != "" {
				t.Errorf("Header().ID = %q; Parse must leave the log id to the log", got.Header().ID)
			}
			_, isAnalysis := got.(event.AnalysisEvent)
			if isAnalysis != (tc.group == event.GroupAnalysis) {
				t.Errorf("%T implements AnalysisEvent: %v, in group %s", got, isAnalysis, tc.group)
			}
		})
		seen[tc.want.Header().EventType] = true
	}
	for _, typ := range event.Types {
		if !seen[typ] {
			t.Errorf("no case parses a %s event", typ)
		}
		if _, ok := bodies[typ]; !ok {
			t.Errorf("no sample body for %s", typ)
		}
	}
	if len(event.Types) != 21 {
		t.Errorf("event.Types has %d types, the specification 21", len(event.Types))
	}
}

// Each type's group is the specification's, through the envelope and through the type.
func TestEveryEventTypeBelongsToTheSpecificationsGroup(t *testing.T) {
	want := map[string]event.EventGroup{
		"AssistantJobCompleted": event.GroupAnalysis, "AssistantJobFailed": event.GroupAnalysis,
		"AssistantMultiDocumentRequiresReview": event.GroupAnalysis, "TaxJobCompleted": event.GroupAnalysis,
		"TaxJobFailed":             event.GroupAnalysis,
		"ClientAcceptedInvitation": event.GroupClient, "ClientDeclinedInvitation": event.GroupClient,
		"UserSubscriptionCreated": event.GroupClient, "UserSubscriptionCanceled": event.GroupClient,
		"UserSubscriptionChanged": event.GroupClient, "UserSubscriptionReactivated": event.GroupClient,
		"ClientProgressChanged": event.GroupClient,
		"AssetAdded":            event.GroupAsset, "AssetDeleted": event.GroupAsset, "AssetBeneficiaryAdded": event.GroupAsset,
		"AssetBeneficiaryDeleted": event.GroupAsset, "AssetOwnershipAdded": event.GroupAsset, "AssetOwnershipDeleted": event.GroupAsset,
		"DocumentStarted": event.GroupDocument, "DocumentPendingValidation": event.GroupDocument, "DocumentCompleted": event.GroupDocument,
	}
	for name, group := range want {
		t.Run(name, func(t *testing.T) {
			typ := event.EventType(name)
			if !slices.Contains(event.Types, typ) {
				t.Errorf("event.Types lacks %s", name)
			}
			if g := typ.Group(); g != group {
				t.Errorf("EventType(%s).Group() = %q, want %q", name, g, group)
			}
			ev, err := event.Parse([]byte(bodies[typ]))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if g := ev.Header().Group(); g != group {
				t.Errorf("Header().Group() = %q, want %q", g, group)
			}
			if ev.Header().EventType != typ {
				t.Errorf("Header().EventType = %q, want %q", ev.Header().EventType, typ)
			}
		})
	}
	if len(event.Types) != len(want) {
		t.Errorf("event.Types has %d types, want %d", len(event.Types), len(want))
	}
	if g := event.EventType("ClientWaved").Group(); g != "" {
		t.Errorf("an unknown type's group is %q, want empty", g)
	}
}

// Timestamp is an ISO 8601 date-time: RFC 3339 with an offset, or without one, taken as UTC.
func TestParseReadsTheTimestamp(t *testing.T) {
	tests := []struct {
		name, stamp string
		want        time.Time
	}{
		{"RFC 3339 in UTC", "2026-11-22T09:30:00Z", stamp},
		{"RFC 3339 with an offset is converted to UTC", "2026-11-22T10:30:00+01:00", stamp},
		{"RFC 3339 with a negative offset and fractional seconds", "2026-11-22T04:30:00.25-05:00", stamp.Add(250 * time.Millisecond)},
		{"ISO date-time without an offset is UTC", "2026-11-22T09:30:00", stamp},
		{"ISO date-time without an offset, seven fractional digits", "2026-11-22T09:30:00.1234567", stamp.Add(123456700 * time.Nanosecond)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := event.Parse([]byte(with(bodies[event.TypeClientProgressChanged], "Timestamp", tc.stamp)))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := ev.Header().Timestamp
			if !got.Equal(tc.want) {
				t.Errorf("Timestamp = %s, want %s", got, tc.want)
			}
			if got.Location() != time.UTC {
				t.Errorf("Timestamp is in %s, want UTC", got.Location())
			}
			direct, err := event.ParseTime(tc.stamp)
			if err != nil || !direct.Equal(tc.want) {
				t.Errorf("ParseTime(%q) = %s, %v; want %s", tc.stamp, direct, err, tc.want)
			}
		})
	}
}

// Every value of each enumeration the specification lists is accepted and kept as sent.
func TestParseAcceptsEveryValueOfTheSpecificationsEnumerations(t *testing.T) {
	for _, v := range []string{"NotStarted", "InProgress", "PendingValidation", "Completed"} {
		t.Run("EstateStatus "+v, func(t *testing.T) {
			ev := mustParse(t, with(bodies[event.TypeClientProgressChanged], "EstateStatus", v))
			if got := ev.(*event.ClientProgressChanged).EstateStatus; string(got) != v {
				t.Errorf("EstateStatus = %q", got)
			}
		})
	}
	for _, v := range []string{"UploadTimeout", "ProcessingFailed", "DocumentTypeNotSupported", "FileTooLarge", "InvalidDocument"} {
		t.Run("AssistantJobFailed Reason "+v, func(t *testing.T) {
			ev := mustParse(t, with(bodies[event.TypeAssistantJobFailed], "Payload.Reason", v))
			if got := ev.(*event.AssistantJobFailed).Reason; string(got) != v {
				t.Errorf("Reason = %q", got)
			}
		})
	}
	for _, v := range []string{"UploadTimeout", "VaultFailed", "NoTaxReturnFound", "IncompleteReturn", "ProcessingFailed", "ReportUnavailable", "TimedOut"} {
		t.Run("TaxJobFailed Reason "+v, func(t *testing.T) {
			ev := mustParse(t, with(bodies[event.TypeTaxJobFailed], "Payload.Reason", v))
			if got := ev.(*event.TaxJobFailed).Reason; string(got) != v {
				t.Errorf("Reason = %q", got)
			}
		})
	}
	for _, v := range []string{"Individual Revocable Trust", "Advance Health Care Directive", "Financial Power of Attorney", "Last Will and Testament", "Joint Revocable Trust", "Nomination of Guardianship"} {
		t.Run("DocumentName "+v, func(t *testing.T) {
			ev := mustParse(t, with(bodies[event.TypeDocumentCompleted], "DocumentName", v))
			if got := ev.(*event.DocumentCompleted).DocumentName; string(got) != v {
				t.Errorf("DocumentName = %q", got)
			}
		})
	}
	for _, v := range []string{"filed", "insightsUnavailable"} {
		t.Run("PresentationStatus "+v, func(t *testing.T) {
			ev := mustParse(t, with(bodies[event.TypeTaxJobCompleted], "Payload.PresentationStatus", v))
			if got := ev.(*event.TaxJobCompleted).PresentationStatus; got == nil || string(*got) != v {
				t.Errorf("PresentationStatus = %v", got)
			}
		})
	}
	for _, v := range []string{"StandardExecSummary", "AdvancedExecSummary", "Insights"} {
		t.Run("Documents DocumentType "+v, func(t *testing.T) {
			ev := mustParse(t, with(bodies[event.TypeAssistantJobCompleted], "Payload.Documents.0.DocumentType", v))
			if got := ev.(*event.AssistantJobCompleted).Documents[0].DocumentType; string(got) != v {
				t.Errorf("DocumentType = %q", got)
			}
		})
	}
}

func mustParse(t *testing.T, body string) event.Event {
	t.Helper()
	ev, err := event.Parse([]byte(body))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return ev
}

// A body that breaks the specification is refused with an *InvalidError naming the field's
// path in the body.
func TestParseRefusesWithTheFieldsPath(t *testing.T) {
	var (
		ajc      = bodies[event.TypeAssistantJobCompleted]
		ajf      = bodies[event.TypeAssistantJobFailed]
		review   = bodies[event.TypeAssistantMultiDocumentRequiresReview]
		tjc      = bodies[event.TypeTaxJobCompleted]
		tjf      = bodies[event.TypeTaxJobFailed]
		accepted = bodies[event.TypeClientAcceptedInvitation]
		declined = bodies[event.TypeClientDeclinedInvitation]
		progress = bodies[event.TypeClientProgressChanged]
		added    = bodies[event.TypeAssetAdded]
		benAdded = bodies[event.TypeAssetBeneficiaryAdded]
		benDel   = bodies[event.TypeAssetBeneficiaryDeleted]
		ownAdded = bodies[event.TypeAssetOwnershipAdded]
		ownDel   = bodies[event.TypeAssetOwnershipDeleted]
		started  = bodies[event.TypeDocumentStarted]
		pending  = bodies[event.TypeDocumentPendingValidation]
		done     = bodies[event.TypeDocumentCompleted]
		raw      = func(s string) json.RawMessage { return json.RawMessage(s) }
	)
	tests := []struct {
		name  string
		body  string
		field string
		// message, when set, must occur in the error's Message.
		message string
	}{
		// The body.
		{name: "body is a JSON array", body: `[{"EventType": "AssetDeleted"}]`, field: ""},
		{name: "body is a JSON string", body: `"AssetDeleted"`, field: ""},
		{name: "body is JSON null", body: `null`, field: ""},
		{name: "body is a number", body: `42`, field: ""},
		{name: "body is empty", body: ``, field: ""},
		{name: "body is not JSON", body: `{"Wid": `, field: ""},
		{name: "body holds two JSON objects", body: bodies[event.TypeAssetDeleted] + ` {}`, field: ""},

		// The envelope.
		{name: "EventType missing", body: with(progress, "EventType", absent), field: "EventType", message: "required"},
		{name: "EventType null", body: with(progress, "EventType", nil), field: "EventType", message: "required"},
		{name: "EventType empty", body: with(progress, "EventType", ""), field: "EventType"},
		{name: "EventType not a string", body: with(progress, "EventType", 7), field: "EventType"},
		{name: "EventType unknown, named in the message", body: with(progress, "EventType", "ClientWaved"), field: "EventType", message: `"ClientWaved"`},
		{name: "EventType in the wrong case is unknown", body: with(progress, "EventType", "clientProgressChanged"), field: "EventType", message: "clientProgressChanged"},
		{name: "EventType in GraphQL's spelling is unknown", body: with(progress, "EventType", "CLIENT_PROGRESS_CHANGED"), field: "EventType", message: "CLIENT_PROGRESS_CHANGED"},
		{name: "Wid missing", body: with(progress, "Wid", absent), field: "Wid", message: "required"},
		{name: "Wid empty", body: with(progress, "Wid", ""), field: "Wid"},
		{name: "Wid blank", body: with(progress, "Wid", "   "), field: "Wid"},
		{name: "Wid over 64 characters", body: with(progress, "Wid", strings.Repeat("w", 65)), field: "Wid", message: "64"},
		{name: "Wid not a string", body: with(progress, "Wid", 12345), field: "Wid"},
		{name: "Wid missing on an analysis event", body: with(ajf, "Wid", absent), field: "Wid"},
		{name: "Timestamp missing", body: with(progress, "Timestamp", absent), field: "Timestamp"},
		{name: "Timestamp empty", body: with(progress, "Timestamp", ""), field: "Timestamp"},
		{name: "Timestamp not a date-time", body: with(progress, "Timestamp", "yesterday"), field: "Timestamp"},
		{name: "Timestamp a date without a time", body: with(progress, "Timestamp", "2026-11-22"), field: "Timestamp"},
		{name: "Timestamp with an impossible month", body: with(progress, "Timestamp", "2026-13-22T09:30:00Z"), field: "Timestamp"},
		{name: "Timestamp a Unix time number", body: with(progress, "Timestamp", 1795340000), field: "Timestamp"},

		// The analysis envelope.
		{name: "AssistantJobCompleted without Payload", body: with(ajc, "Payload", absent), field: "Payload", message: "required"},
		{name: "AssistantJobFailed without Payload", body: with(ajf, "Payload", absent), field: "Payload"},
		{name: "AssistantMultiDocumentRequiresReview without Payload", body: with(review, "Payload", absent), field: "Payload"},
		{name: "TaxJobCompleted without Payload", body: with(tjc, "Payload", absent), field: "Payload"},
		{name: "TaxJobFailed without Payload", body: with(tjf, "Payload", absent), field: "Payload"},
		{name: "analysis Payload null", body: with(tjf, "Payload", nil), field: "Payload"},
		{name: "analysis Payload a string", body: with(tjf, "Payload", "{}"), field: "Payload"},
		{name: "analysis Payload an array", body: with(tjf, "Payload", []any{}), field: "Payload"},
		{name: "analysis fields at the top level instead of in Payload",
			body:  `{"Wid": "w1", "EventType": "TaxJobFailed", "Timestamp": "2026-11-22T09:30:00Z", "CorrelationId": "c", "JobId": "j", "DocumentWid": "d", "Reason": "TimedOut"}`,
			field: "Payload"},
		{name: "ExternalId a number", body: with(ajc, "ExternalId", 4711), field: "ExternalId"},
		{name: "ExternalId a boolean", body: with(tjf, "ExternalId", true), field: "ExternalId"},
		{name: "ExternalId an object", body: with(review, "ExternalId", map[string]any{"id": "crm-1"}), field: "ExternalId"},

		// Analysis payloads: required fields and types.
		{name: "Payload.CorrelationId missing", body: with(ajc, "Payload.CorrelationId", absent), field: "Payload.CorrelationId"},
		{name: "Payload.CorrelationId not a string", body: with(ajf, "Payload.CorrelationId", 5), field: "Payload.CorrelationId"},
		{name: "Payload.JobId missing", body: with(tjf, "Payload.JobId", absent), field: "Payload.JobId"},
		{name: "Payload.DocumentWid missing", body: with(review, "Payload.DocumentWid", absent), field: "Payload.DocumentWid"},
		{name: "Payload.DocumentWid empty", body: with(tjc, "Payload.DocumentWid", ""), field: "Payload.DocumentWid"},
		{name: "AssistantJobCompleted Payload.Documents missing", body: with(ajc, "Payload.Documents", absent), field: "Payload.Documents"},
		{name: "AssistantJobCompleted Payload.Documents not an array", body: with(ajc, "Payload.Documents", map[string]any{}), field: "Payload.Documents"},
		{name: "AssistantJobCompleted Documents item not an object", body: with(ajc, "Payload.Documents.1", "vault-gen-002"), field: "Payload.Documents[1]"},
		{name: "AssistantJobCompleted Documents item without DocumentType", body: with(ajc, "Payload.Documents.1.DocumentType", absent), field: "Payload.Documents[1].DocumentType"},
		{name: "AssistantJobCompleted Documents item without VaultId", body: with(ajc, "Payload.Documents.0.VaultId", absent), field: "Payload.Documents[0].VaultId"},
		{name: "AssistantJobCompleted Documents DocumentType outside the enumeration (flowchart)", body: with(ajc, "Payload.Documents.2.DocumentType", "Flowchart"), field: "Payload.Documents[2].DocumentType", message: "Flowchart"},
		{name: "AssistantJobCompleted Documents DocumentType in GraphQL's spelling", body: with(ajc, "Payload.Documents.0.DocumentType", "STANDARD_EXEC_SUMMARY"), field: "Payload.Documents[0].DocumentType"},
		{name: "AssistantJobCompleted category not estate", body: with(ajc, "Payload.category", "tax"), field: "Payload.category", message: "estate"},
		{name: "AssistantJobCompleted category not a string", body: with(ajc, "Payload.category", 1), field: "Payload.category"},
		{name: "TaxJobCompleted category not tax", body: with(tjc, "Payload.category", "estate"), field: "Payload.category", message: "tax"},
		{name: "TaxJobCompleted category in another case", body: with(tjc, "Payload.category", "Tax"), field: "Payload.category"},
		{name: "source_document not an object", body: with(ajc, "Payload.source_document", "vault-doc-001"), field: "Payload.source_document"},
		{name: "source_document without vault_id", body: with(tjc, "Payload.source_document.vault_id", absent), field: "Payload.source_document.vault_id"},
		{name: "source_document uploaded_at not a date-time", body: with(ajc, "Payload.source_document.uploaded_at", "last Tuesday"), field: "Payload.source_document.uploaded_at"},
		{name: "source_document uploaded_at not a string", body: with(tjc, "Payload.source_document.uploaded_at", 1795340000), field: "Payload.source_document.uploaded_at"},
		{name: "source_document name not a string", body: with(ajc, "Payload.source_document.name", []any{"a"}), field: "Payload.source_document.name"},
		{name: "AssistantJobFailed Reason missing", body: with(ajf, "Payload.Reason", absent), field: "Payload.Reason"},
		{name: "AssistantJobFailed Reason outside its values", body: with(ajf, "Payload.Reason", "OutOfCoffee"), field: "Payload.Reason", message: "OutOfCoffee"},
		{name: "AssistantJobFailed Reason of the tax set only (VaultFailed)", body: with(ajf, "Payload.Reason", "VaultFailed"), field: "Payload.Reason"},
		{name: "AssistantJobFailed Reason of the tax set only (TimedOut)", body: with(ajf, "Payload.Reason", "TimedOut"), field: "Payload.Reason"},
		{name: "TaxJobFailed Reason missing", body: with(tjf, "Payload.Reason", absent), field: "Payload.Reason"},
		{name: "TaxJobFailed Reason of the estate set only (FileTooLarge)", body: with(tjf, "Payload.Reason", "FileTooLarge"), field: "Payload.Reason"},
		{name: "TaxJobFailed Reason of the estate set only (DocumentTypeNotSupported)", body: with(tjf, "Payload.Reason", "DocumentTypeNotSupported"), field: "Payload.Reason"},
		{name: "TaxJobFailed Reason in another case", body: with(tjf, "Payload.Reason", "timedOut"), field: "Payload.Reason"},
		{name: "TaxJobCompleted PresentationStatus outside its values", body: with(tjc, "Payload.PresentationStatus", "Filed"), field: "Payload.PresentationStatus", message: "Filed"},
		{name: "TaxJobCompleted PresentationStatus not a string", body: with(tjc, "Payload.PresentationStatus", true), field: "Payload.PresentationStatus"},
		{name: "DetectedDocumentCount negative", body: with(review, "Payload.DetectedDocumentCount", -1), field: "Payload.DetectedDocumentCount"},
		{name: "DetectedDocumentCount a string", body: with(review, "Payload.DetectedDocumentCount", "3"), field: "Payload.DetectedDocumentCount"},
		{name: "DetectedDocumentCount 1.5 is not an integer", body: with(review, "Payload.DetectedDocumentCount", raw("1.5")), field: "Payload.DetectedDocumentCount"},
		{name: "VaultLink not a string", body: with(review, "Payload.VaultLink", 3), field: "Payload.VaultLink"},

		// Client events.
		{name: "ClientAcceptedInvitation RegistrationEmail over 320 characters", body: with(accepted, "RegistrationEmail", strings.Repeat("a", 309)+"@example.com"), field: "RegistrationEmail", message: "320"},
		{name: "ClientDeclinedInvitation RegistrationEmail over 320 characters", body: with(declined, "RegistrationEmail", strings.Repeat("a", 309)+"@example.com"), field: "RegistrationEmail"},
		{name: "ClientAcceptedInvitation RegistrationEmail not a string", body: with(accepted, "RegistrationEmail", 1), field: "RegistrationEmail"},
		{name: "ClientAcceptedInvitation AdvisorWid over 64 characters", body: with(accepted, "AdvisorWid", strings.Repeat("a", 65)), field: "AdvisorWid"},
		{name: "ClientDeclinedInvitation TeamId over 64 characters", body: with(declined, "TeamId", strings.Repeat("t", 65)), field: "TeamId"},
		{name: "ClientAcceptedInvitation CompanyId over 64 characters", body: with(accepted, "CompanyId", strings.Repeat("c", 65)), field: "CompanyId"},
		{name: "UserSubscriptionCreated NewPlan missing", body: with(bodies[event.TypeUserSubscriptionCreated], "NewPlan", absent), field: "NewPlan"},
		{name: "UserSubscriptionCreated NewPlan empty", body: with(bodies[event.TypeUserSubscriptionCreated], "NewPlan", ""), field: "NewPlan"},
		{name: "UserSubscriptionCanceled OldPlan missing", body: with(bodies[event.TypeUserSubscriptionCanceled], "OldPlan", absent), field: "OldPlan"},
		{name: "UserSubscriptionChanged OldPlan missing", body: with(bodies[event.TypeUserSubscriptionChanged], "OldPlan", absent), field: "OldPlan"},
		{name: "UserSubscriptionChanged NewPlan missing", body: with(bodies[event.TypeUserSubscriptionChanged], "NewPlan", absent), field: "NewPlan"},
		{name: "UserSubscriptionReactivated OldPlan missing", body: with(bodies[event.TypeUserSubscriptionReactivated], "OldPlan", absent), field: "OldPlan"},
		{name: "UserSubscriptionReactivated OldPlan not a string", body: with(bodies[event.TypeUserSubscriptionReactivated], "OldPlan", 3), field: "OldPlan"},
		{name: "ClientProgressChanged EstateStatus missing", body: with(progress, "EstateStatus", absent), field: "EstateStatus"},
		{name: "ClientProgressChanged EstateStatus outside its values", body: with(progress, "EstateStatus", "Started"), field: "EstateStatus", message: "Started"},
		{name: "ClientProgressChanged EstateStatus in another case", body: with(progress, "EstateStatus", "inProgress"), field: "EstateStatus"},
		{name: "ClientProgressChanged EstateStatus in GraphQL's spelling", body: with(progress, "EstateStatus", "IN_PROGRESS"), field: "EstateStatus"},
		{name: "ClientProgressChanged CompletionPercentage missing", body: with(progress, "CompletionPercentage", absent), field: "CompletionPercentage"},
		{name: "ClientProgressChanged CompletionPercentage above 100", body: with(progress, "CompletionPercentage", 101), field: "CompletionPercentage", message: "101"},
		{name: "ClientProgressChanged CompletionPercentage below 0", body: with(progress, "CompletionPercentage", -1), field: "CompletionPercentage"},
		{name: `ClientProgressChanged CompletionPercentage "50" is a string`, body: with(progress, "CompletionPercentage", "50"), field: "CompletionPercentage"},
		{name: "ClientProgressChanged CompletionPercentage 1.5 is not an integer", body: with(progress, "CompletionPercentage", raw("1.5")), field: "CompletionPercentage"},
		{name: "ClientProgressChanged CompletionPercentage a boolean", body: with(progress, "CompletionPercentage", true), field: "CompletionPercentage"},

		// Asset events.
		{name: "AssetAdded AssetName missing", body: with(added, "AssetName", absent), field: "AssetName"},
		{name: "AssetDeleted AssetName missing", body: with(bodies[event.TypeAssetDeleted], "AssetName", absent), field: "AssetName"},
		{name: "AssetDeleted AssetName empty", body: with(bodies[event.TypeAssetDeleted], "AssetName", ""), field: "AssetName"},
		{name: "AssetOwnershipDeleted AssetName not a string", body: with(ownDel, "AssetName", 1), field: "AssetName"},
		{name: `AssetAdded DollarAmount "850000" is a string`, body: with(added, "DollarAmount", "850000"), field: "DollarAmount"},
		{name: "AssetAdded DollarAmount 1.5 is not an integer", body: with(added, "DollarAmount", raw("1.5")), field: "DollarAmount"},
		{name: "AssetBeneficiaryAdded BeneficiaryAdded missing", body: with(benAdded, "BeneficiaryAdded", absent), field: "BeneficiaryAdded"},
		{name: "AssetBeneficiaryAdded BeneficiaryAdded not an array", body: with(benAdded, "BeneficiaryAdded", "Emma Smith"), field: "BeneficiaryAdded"},
		{name: "AssetBeneficiaryAdded names item not an object", body: with(benAdded, "BeneficiaryAdded.1", "Liam Smith"), field: "BeneficiaryAdded[1]"},
		{name: "AssetBeneficiaryAdded names item without Name", body: with(benAdded, "BeneficiaryAdded.1.Name", absent), field: "BeneficiaryAdded[1].Name"},
		{name: "AssetBeneficiaryAdded names item with an empty Name", body: with(benAdded, "BeneficiaryAdded.0.Name", ""), field: "BeneficiaryAdded[0].Name"},
		{name: "AssetBeneficiaryAdded names item with a Name not a string", body: with(benAdded, "BeneficiaryAdded.0.Name", 7), field: "BeneficiaryAdded[0].Name"},
		{name: "AssetBeneficiaryDeleted BeneficiaryDeleted missing", body: with(benDel, "BeneficiaryDeleted", absent), field: "BeneficiaryDeleted"},
		{name: "AssetBeneficiaryDeleted names item not an object", body: with(benDel, "BeneficiaryDeleted.0", []any{"Liam"}), field: "BeneficiaryDeleted[0]"},
		{name: "AssetOwnershipAdded without OwnershipAdded or OwnerAdded", body: with(ownAdded, "OwnershipAdded", absent), field: "OwnershipAdded"},
		{name: "AssetOwnershipAdded OwnershipAdded item without Name", body: with(ownAdded, "OwnershipAdded.0", map[string]any{"FullName": "Jane"}), field: "OwnershipAdded[0].Name"},
		{name: "AssetOwnershipAdded OwnerAdded item not an object",
			body:  `{"Wid": "w1", "EventType": "AssetOwnershipAdded", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat", "OwnerAdded": ["Jane Smith"]}`,
			field: "OwnerAdded[0]"},
		{name: "AssetOwnershipAdded OwnerAdded not an array",
			body:  `{"Wid": "w1", "EventType": "AssetOwnershipAdded", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat", "OwnerAdded": {"Name": "Jane Smith"}}`,
			field: "OwnerAdded"},
		{name: "AssetOwnershipDeleted OwnerDeleted missing", body: with(ownDel, "OwnerDeleted", absent), field: "OwnerDeleted"},
		{name: "AssetOwnershipDeleted names item without Name", body: with(ownDel, "OwnerDeleted.0", map[string]any{}), field: "OwnerDeleted[0].Name"},

		// Document events.
		{name: "DocumentStarted DocumentName missing", body: with(started, "DocumentName", absent), field: "DocumentName"},
		{name: "DocumentStarted DocumentName outside the supported names", body: with(started, "DocumentName", "Living Will"), field: "DocumentName", message: "Living Will"},
		{name: "DocumentCompleted DocumentName without spaces", body: with(done, "DocumentName", "JointRevocableTrust"), field: "DocumentName"},
		{name: "DocumentPendingValidation DocumentName in another case", body: with(pending, "DocumentName", "last will and testament"), field: "DocumentName"},
		{name: "DocumentStarted DocumentProgressPercentage missing", body: with(started, "DocumentProgressPercentage", absent), field: "DocumentProgressPercentage"},
		{name: "DocumentPendingValidation DocumentProgressPercentage above 100", body: with(pending, "DocumentProgressPercentage", 101), field: "DocumentProgressPercentage"},
		{name: "DocumentCompleted DocumentProgressPercentage below 0", body: with(done, "DocumentProgressPercentage", -5), field: "DocumentProgressPercentage"},
		{name: `DocumentCompleted DocumentProgressPercentage "50" is a string`, body: with(done, "DocumentProgressPercentage", "50"), field: "DocumentProgressPercentage"},
		{name: "DocumentStarted DocumentProgressPercentage 1.5 is not an integer", body: with(started, "DocumentProgressPercentage", raw("1.5")), field: "DocumentProgressPercentage"},
		{name: "DocumentStarted IsRecommendedDocument a string", body: with(started, "IsRecommendedDocument", "true"), field: "IsRecommendedDocument"},
		{name: "DocumentStarted WasCompletedBefore a number", body: with(started, "WasCompletedBefore", 1), field: "WasCompletedBefore"},
		{name: "DocumentCompleted UserTier not a string", body: with(done, "UserTier", 2), field: "UserTier"},
		{name: "DocumentOwnerInfo not an object", body: with(started, "DocumentOwnerInfo", "Jane Smith"), field: "DocumentOwnerInfo"},
		{name: "DocumentOwnerInfo ContactType outside its values", body: with(started, "DocumentOwnerInfo.ContactType", "Trust"), field: "DocumentOwnerInfo.ContactType", message: "Trust"},
		{name: "DocumentOwnerInfo ContactType in GraphQL's spelling", body: with(pending, "DocumentOwnerInfo.ContactType", "INDIVIDUAL"), field: "DocumentOwnerInfo.ContactType"},
		{name: "DocumentOwnerInfo IsPrimary a string", body: with(done, "DocumentOwnerInfo.IsPrimary", "yes"), field: "DocumentOwnerInfo.IsPrimary"},
		{name: "DocumentOwnerInfo FirstName not a string", body: with(done, "DocumentOwnerInfo.FirstName", false), field: "DocumentOwnerInfo.FirstName"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := event.Parse([]byte(tc.body))
			if err == nil {
				t.Fatalf("Parse accepted the body as %s", dump(ev))
			}
			if ev != nil {
				t.Errorf("Parse returned an event with its error: %s", dump(ev))
			}
			var inv *event.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("Parse error %v (%T) is not an *event.InvalidError", err, err)
			}
			if inv.Field != tc.field {
				t.Errorf("Field = %q, want %q (error: %v)", inv.Field, tc.field, err)
			}
			if inv.Message == "" {
				t.Error("the error has no message")
			}
			if tc.message != "" && !strings.Contains(inv.Message, tc.message) {
				t.Errorf("Message %q does not mention %q", inv.Message, tc.message)
			}
			if tc.field != "" && !strings.HasPrefix(err.Error(), tc.field+": ") {
				t.Errorf("Error() = %q, want it to start with the field", err.Error())
			}
		})
	}
}

// Limits are inclusive: a value exactly at the limit is accepted.
func TestParseAcceptsValuesAtTheLimits(t *testing.T) {
	tests := []struct{ name, body string }{
		{"Wid of 64 characters", with(bodies[event.TypeAssetDeleted], "Wid", strings.Repeat("w", 64))},
		{"Wid of 64 non-ASCII characters", with(bodies[event.TypeAssetDeleted], "Wid", strings.Repeat("é", 64))},
		{"RegistrationEmail of 320 characters", with(bodies[event.TypeClientAcceptedInvitation], "RegistrationEmail", strings.Repeat("a", 308)+"@example.com")},
		{"AdvisorWid of 64 characters", with(bodies[event.TypeClientDeclinedInvitation], "AdvisorWid", strings.Repeat("a", 64))},
		{"invitation ids absent", `{"Wid": "w1", "EventType": "ClientAcceptedInvitation", "Timestamp": "2026-11-22T09:30:00Z"}`},
		{"DocumentProgressPercentage 0", with(bodies[event.TypeDocumentCompleted], "DocumentProgressPercentage", 0)},
		{"DocumentProgressPercentage 100", with(bodies[event.TypeDocumentStarted], "DocumentProgressPercentage", 100)},
		{"an empty names array", with(bodies[event.TypeAssetBeneficiaryAdded], "BeneficiaryAdded", []any{})},
		{"AssetAdded without DollarAmount", with(bodies[event.TypeAssetAdded], "DollarAmount", absent)},
		{"a document event without DocumentOwnerInfo", with(bodies[event.TypeDocumentPendingValidation], "DocumentOwnerInfo", absent)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { mustParse(t, tc.body) })
	}
	ev := mustParse(t, with(bodies[event.TypeAssetDeleted], "Wid", strings.Repeat("w", 64)))
	if got := ev.Header().Wid; got != strings.Repeat("w", 64) {
		t.Errorf("Wid = %q", got)
	}
}

// Fields the specification does not name are ignored, at every level, so the service can add
// fields without breaking the receiver.
func TestParseIgnoresUnknownFields(t *testing.T) {
	extra := map[string]any{"Nested": []any{1, "two", nil}, "Flag": true}
	tests := []struct {
		name  string
		typ   event.EventType
		paths []string
	}{
		{"top level of a flat event", event.TypeClientProgressChanged, []string{"Region", "Source"}},
		{"top level and Payload of an analysis event", event.TypeAssistantJobCompleted, []string{"Region", "Payload.Extra"}},
		{"inside source_document and a generated document", event.TypeAssistantJobCompleted, []string{"Payload.source_document.size_bytes", "Payload.Documents.0.Pages"}},
		{"inside source_document of a tax event", event.TypeTaxJobCompleted, []string{"Payload.source_document.checksum", "Payload.TaxYear"}},
		{"inside a name object", event.TypeAssetBeneficiaryAdded, []string{"BeneficiaryAdded.0.Relationship", "Percentage"}},
		{"inside DocumentOwnerInfo", event.TypeDocumentStarted, []string{"DocumentOwnerInfo.MiddleName", "DocumentId"}},
		{"Payload and ExternalId on a flat event", event.TypeAssetAdded, []string{"Payload", "ExternalId"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := bodies[tc.typ]
			body := base
			for _, p := range tc.paths {
				body = with(body, p, extra)
			}
			want := mustParse(t, base)
			got := mustParse(t, body)
			if !sameEvent(got, want) {
				t.Errorf("extra fields changed the event:\n got  %s\n want %s", dump(got), dump(want))
			}
		})
	}
}

// A field whose name differs from one of the specification's only in letter case is a
// different, unknown field: it must neither replace the checked value nor slip past the
// checks.
func TestParseIgnoresFieldsThatDifferOnlyInCase(t *testing.T) {
	tests := []struct {
		name string
		base string
		path string
		val  any
	}{
		{"completionpercentage beside CompletionPercentage", bodies[event.TypeClientProgressChanged], "completionpercentage", 500},
		{"estateStatus beside EstateStatus", bodies[event.TypeClientProgressChanged], "estateStatus", "Bogus"},
		{"assetname beside AssetName", bodies[event.TypeAssetAdded], "assetname", ""},
		{"payload reason beside Reason", bodies[event.TypeTaxJobFailed], "Payload.reason", "Bogus"},
		{"documentname beside DocumentName", bodies[event.TypeDocumentCompleted], "documentname", "Living Will"},
		{"name beside Name in a name object", bodies[event.TypeAssetBeneficiaryAdded], "BeneficiaryAdded.0.name", ""},
		{"contacttype beside ContactType", bodies[event.TypeDocumentStarted], "DocumentOwnerInfo.contacttype", "Trust"},
		{"documenttype beside DocumentType", bodies[event.TypeAssistantJobCompleted], "Payload.Documents.0.documenttype", "Flowchart"},
		{"presentationstatus on its own", with(bodies[event.TypeTaxJobCompleted], "Payload.PresentationStatus", absent), "Payload.presentationstatus", "Bogus"},
		{"dollaramount of the wrong type on its own", with(bodies[event.TypeAssetAdded], "DollarAmount", absent), "dollaramount", "lots"},
		{"Uploaded_At beside uploaded_at", bodies[event.TypeAssistantJobCompleted], "Payload.source_document.Uploaded_At", "not a date"},
		{"name beside Name in an OwnerAdded item",
			`{"Wid": "w1", "EventType": "AssetOwnershipAdded", "Timestamp": "2026-11-22T09:30:00Z", "AssetName": "Boat", "OwnerAdded": [{"Name": "Jane Smith"}]}`,
			"OwnerAdded.0.name", ""},
		{"documentownerinfo on its own", with(bodies[event.TypeDocumentCompleted], "DocumentOwnerInfo", absent), "documentOwnerInfo", map[string]any{"ContactType": "Trust"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := mustParse(t, tc.base)
			got := mustParse(t, with(tc.base, tc.path, tc.val))
			if !sameEvent(got, want) {
				t.Errorf("the field changed the event:\n got  %s\n want %s", dump(got), dump(want))
			}
		})
	}
}

func TestFilterMatch(t *testing.T) {
	progress := &event.ClientProgressChanged{Envelope: event.Envelope{Wid: "w1", EventType: event.TypeClientProgressChanged}}
	asset := &event.AssetAdded{Envelope: event.Envelope{Wid: "w2", EventType: event.TypeAssetAdded}}
	taxFailed := &event.TaxJobFailed{Envelope: event.Envelope{Wid: "w1", EventType: event.TypeTaxJobFailed}}
	started := &event.DocumentStarted{Envelope: event.Envelope{Wid: "w3", EventType: event.TypeDocumentStarted}}
	all := []event.Event{progress, asset, taxFailed, started}
	tests := []struct {
		name   string
		filter *event.Filter
		want   []event.Event
	}{
		{"a nil filter matches every event", nil, all},
		{"an empty filter matches every event", &event.Filter{}, all},
		{"empty lists match every event", &event.Filter{Wids: []string{}, Types: []event.EventType{}, Groups: []event.EventGroup{}}, all},
		{"wids select by the envelope's Wid", &event.Filter{Wids: []string{"w1"}}, []event.Event{progress, taxFailed}},
		{"several wids are OR", &event.Filter{Wids: []string{"w2", "w3"}}, []event.Event{asset, started}},
		{"an unknown wid matches nothing", &event.Filter{Wids: []string{"w9"}}, nil},
		{"types select by EventType", &event.Filter{Types: []event.EventType{event.TypeAssetAdded}}, []event.Event{asset}},
		{"several types are OR", &event.Filter{Types: []event.EventType{event.TypeTaxJobFailed, event.TypeDocumentStarted}}, []event.Event{taxFailed, started}},
		{"groups select by the type's group", &event.Filter{Groups: []event.EventGroup{event.GroupAnalysis}}, []event.Event{taxFailed}},
		{"several groups are OR", &event.Filter{Groups: []event.EventGroup{event.GroupClient, event.GroupDocument}}, []event.Event{progress, started}},
		{"wids AND types", &event.Filter{Wids: []string{"w1"}, Types: []event.EventType{event.TypeTaxJobFailed, event.TypeAssetAdded}}, []event.Event{taxFailed}},
		{"wids AND groups", &event.Filter{Wids: []string{"w1", "w2"}, Groups: []event.EventGroup{event.GroupClient, event.GroupAsset}}, []event.Event{progress, asset}},
		{"types AND groups that exclude each other match nothing", &event.Filter{Types: []event.EventType{event.TypeAssetAdded}, Groups: []event.EventGroup{event.GroupClient}}, nil},
		{"all three axes AND", &event.Filter{Wids: []string{"w1"}, Types: []event.EventType{event.TypeClientProgressChanged, event.TypeTaxJobFailed}, Groups: []event.EventGroup{event.GroupClient}}, []event.Event{progress}},
		{"all three axes with a wid that fails", &event.Filter{Wids: []string{"w2"}, Types: []event.EventType{event.TypeClientProgressChanged}, Groups: []event.EventGroup{event.GroupClient}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, ev := range all {
				want := slices.Contains(tc.want, ev)
				if got := tc.filter.Match(ev); got != want {
					t.Errorf("Match(%s of %s) = %v, want %v", ev.Header().EventType, ev.Header().Wid, got, want)
				}
			}
		})
	}
	t.Run("groups match every analysis type", func(t *testing.T) {
		f := &event.Filter{Groups: []event.EventGroup{event.GroupAnalysis}}
		for _, typ := range event.Types {
			ev := mustParse(t, bodies[typ])
			if got, want := f.Match(ev), typ.Group() == event.GroupAnalysis; got != want {
				t.Errorf("Match(%s) = %v, want %v", typ, got, want)
			}
		}
	})
}

// The GraphQL enums of schema/event.graphqls hold exactly the values of the package's
// enumeration tables, in the same order, so every value converts at the boundary.
func TestEnumTablesMatchTheSchema(t *testing.T) {
	const path = "../../schema/event.graphqls"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parser.ParseSchema(&ast.Source{Name: path, Input: string(src)})
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	schemaEnums := map[string][]string{}
	for _, def := range doc.Definitions {
		if def.Kind != ast.Enum {
			continue
		}
		var values []string
		for _, v := range def.EnumValues {
			values = append(values, v.Name)
		}
		schemaEnums[def.Name] = values
	}
	tables := event.EnumTables()
	for name, want := range tables {
		got, ok := schemaEnums[name]
		if !ok {
			t.Errorf("%s declares no enum %s", path, name)
			continue
		}
		if !slices.Equal(got, want) {
			t.Errorf("enum %s:\n schema %v\n tables %v", name, got, want)
		}
	}
	for name := range schemaEnums {
		if _, ok := tables[name]; !ok {
			t.Errorf("%s declares enum %s, which event.EnumTables lacks", path, name)
		}
	}
	// The tables are the specification's values, spelled for GraphQL.
	spec := map[string][]string{
		"EventType":              {"ASSISTANT_JOB_COMPLETED", "ASSISTANT_JOB_FAILED", "ASSISTANT_MULTI_DOCUMENT_REQUIRES_REVIEW", "TAX_JOB_COMPLETED", "TAX_JOB_FAILED", "CLIENT_ACCEPTED_INVITATION", "CLIENT_DECLINED_INVITATION", "USER_SUBSCRIPTION_CREATED", "USER_SUBSCRIPTION_CANCELED", "USER_SUBSCRIPTION_CHANGED", "USER_SUBSCRIPTION_REACTIVATED", "CLIENT_PROGRESS_CHANGED", "ASSET_ADDED", "ASSET_DELETED", "ASSET_BENEFICIARY_ADDED", "ASSET_BENEFICIARY_DELETED", "ASSET_OWNERSHIP_ADDED", "ASSET_OWNERSHIP_DELETED", "DOCUMENT_STARTED", "DOCUMENT_PENDING_VALIDATION", "DOCUMENT_COMPLETED"},
		"EventGroup":             {"ANALYSIS", "CLIENT", "ASSET", "DOCUMENT"},
		"EstateStatus":           {"NOT_STARTED", "IN_PROGRESS", "PENDING_VALIDATION", "COMPLETED"},
		"AssistantFailureReason": {"UPLOAD_TIMEOUT", "PROCESSING_FAILED", "DOCUMENT_TYPE_NOT_SUPPORTED", "FILE_TOO_LARGE", "INVALID_DOCUMENT"},
		"TaxFailureReason":       {"UPLOAD_TIMEOUT", "VAULT_FAILED", "NO_TAX_RETURN_FOUND", "INCOMPLETE_RETURN", "PROCESSING_FAILED", "REPORT_UNAVAILABLE", "TIMED_OUT"},
		"DocumentName":           {"INDIVIDUAL_REVOCABLE_TRUST", "ADVANCE_HEALTH_CARE_DIRECTIVE", "FINANCIAL_POWER_OF_ATTORNEY", "LAST_WILL_AND_TESTAMENT", "JOINT_REVOCABLE_TRUST", "NOMINATION_OF_GUARDIANSHIP"},
		"PresentationStatus":     {"FILED", "INSIGHTS_UNAVAILABLE"},
		"GeneratedDocumentType":  {"STANDARD_EXEC_SUMMARY", "ADVANCED_EXEC_SUMMARY", "INSIGHTS"},
	}
	for name, want := range spec {
		if got := tables[name]; !slices.Equal(got, want) {
			t.Errorf("table %s:\n got  %v\n want %v", name, got, want)
		}
	}
	if len(tables) != len(spec) {
		t.Errorf("event.EnumTables has %d tables, want %d", len(tables), len(spec))
	}
}

// Each GraphQL enum value converts to the specification's spelling and back.
func TestEnumsRoundTripThroughGraphQL(t *testing.T) {
	for _, typ := range event.Types {
		var b bytes.Buffer
		typ.MarshalGQL(&b)
		var back event.EventType
		if err := back.UnmarshalGQL(strings.Trim(b.String(), `"`)); err != nil || back != typ {
			t.Errorf("%s marshals to %s and back to %q, %v", typ, b.String(), back, err)
		}
	}
	var s event.EstateStatus
	if err := s.UnmarshalGQL("IN_PROGRESS"); err != nil || s != "InProgress" {
		t.Errorf("IN_PROGRESS unmarshals to %q, %v", s, err)
	}
	if err := s.UnmarshalGQL("InProgress"); err == nil {
		t.Error("the specification's spelling must not be accepted as a GraphQL name")
	}
	var n event.DocumentName
	if err := n.UnmarshalGQL("LAST_WILL_AND_TESTAMENT"); err != nil || n != "Last Will and Testament" {
		t.Errorf("LAST_WILL_AND_TESTAMENT unmarshals to %q, %v", n, err)
	}
	var p event.PresentationStatus
	if err := p.UnmarshalGQL("INSIGHTS_UNAVAILABLE"); err != nil || p != "insightsUnavailable" {
		t.Errorf("INSIGHTS_UNAVAILABLE unmarshals to %q, %v", p, err)
	}
}

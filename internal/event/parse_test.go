package event_test

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/advisorhq/gateway/internal/advisorspec/webhooktest"
	"github.com/advisorhq/gateway/internal/event"
)

func ptr[T any](v T) *T { return &v }

// The sample client and the instant most bodies carry.
const wid = webhooktest.Wid

var stamp = time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)

func env(t event.EventType) event.Envelope {
	return event.Envelope{Wid: wid, EventType: t, Timestamp: stamp}
}

// bodies are full webhook bodies of every event type, with the specification's fields. They
// live once, in webhooktest's testdata, for every test that needs them.
var bodies = webhooktest.Bodies[event.EventType]()

// with returns a body with one field set or, given absent, removed (webhooktest.With).
var (
	with   = webhooktest.With
	absent = webhooktest.Absent
)

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
		RawContactType: ptr("Individual"), IsPrimary: ptr(true),
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
			want:  &event.AssetAdded{Envelope: env(event.TypeAssetAdded), Asset: event.Asset{AssetName: "Lake House"}, DollarAmount: ptr(int64(850000))},
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
						RawContactType: ptr("Individual"), IsPrimary: ptr(false),
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
	// The tables are the specification's values, spelled for GraphQL, then UNKNOWN for a value
	// the service added since.
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
		if got := tables[name]; !slices.Equal(got, append(want, "UNKNOWN")) {
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

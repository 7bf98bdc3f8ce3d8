// Package event is the gateway's side of the Advisor service's webhook events: the 21 types as
// typed values the GraphQL schema binds to (and UnknownEvent, for a type the service added since), the records the gateway stores them as, and the
// filters that select them. What the specification says about events (their names, fields and
// rules) is advisorspec's; this package checks a delivery there once, when it arrives (Parse),
// and reads stored records back without checking again (Decode). Go values keep the
// specification's spelling; enumerations convert to GraphQL's SCREAMING_SNAKE_CASE only at the
// GraphQL boundary.
package event

import (
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/cursor"
	"github.com/advisorhq/gateway/internal/enumcase"
	"github.com/advisorhq/gateway/internal/family"
)

// EventType is an event's EventType, such as ClientProgressChanged: advisorspec's, with its
// GraphQL spelling.
type EventType string

// The event types of the specification, by group.
const (
	TypeAssistantJobCompleted                = EventType(advisorspec.AssistantJobCompleted)
	TypeAssistantJobFailed                   = EventType(advisorspec.AssistantJobFailed)
	TypeAssistantMultiDocumentRequiresReview = EventType(advisorspec.AssistantMultiDocumentRequiresReview)
	TypeTaxJobCompleted                      = EventType(advisorspec.TaxJobCompleted)
	TypeTaxJobFailed                         = EventType(advisorspec.TaxJobFailed)

	TypeClientAcceptedInvitation    = EventType(advisorspec.ClientAcceptedInvitation)
	TypeClientDeclinedInvitation    = EventType(advisorspec.ClientDeclinedInvitation)
	TypeUserSubscriptionCreated     = EventType(advisorspec.UserSubscriptionCreated)
	TypeUserSubscriptionCanceled    = EventType(advisorspec.UserSubscriptionCanceled)
	TypeUserSubscriptionChanged     = EventType(advisorspec.UserSubscriptionChanged)
	TypeUserSubscriptionReactivated = EventType(advisorspec.UserSubscriptionReactivated)
	TypeClientProgressChanged       = EventType(advisorspec.ClientProgressChanged)

	TypeAssetAdded              = EventType(advisorspec.AssetAdded)
	TypeAssetDeleted            = EventType(advisorspec.AssetDeleted)
	TypeAssetBeneficiaryAdded   = EventType(advisorspec.AssetBeneficiaryAdded)
	TypeAssetBeneficiaryDeleted = EventType(advisorspec.AssetBeneficiaryDeleted)
	TypeAssetOwnershipAdded     = EventType(advisorspec.AssetOwnershipAdded)
	TypeAssetOwnershipDeleted   = EventType(advisorspec.AssetOwnershipDeleted)

	TypeDocumentStarted           = EventType(advisorspec.DocumentStarted)
	TypeDocumentPendingValidation = EventType(advisorspec.DocumentPendingValidation)
	TypeDocumentCompleted         = EventType(advisorspec.DocumentCompleted)
)

// TypeUnknown stands, in a filter and at the GraphQL boundary, for every type the specification
// does not have: an event keeps the type's own name, which Known maps to TypeUnknown.
const TypeUnknown EventType = "Unknown"

// Known is t when it is one of the specification's types, TypeUnknown otherwise.
func (t EventType) Known() EventType {
	if advisorspec.EventType(t).Group() == "" {
		return TypeUnknown
	}
	return t
}

// EventGroup is one of the specification's four groups of events: advisorspec's, with its
// GraphQL spelling.
type EventGroup string

// The groups.
const (
	GroupAnalysis = EventGroup(advisorspec.GroupAnalysis)
	GroupClient   = EventGroup(advisorspec.GroupClient)
	GroupAsset    = EventGroup(advisorspec.GroupAsset)
	GroupDocument = EventGroup(advisorspec.GroupDocument)
	// GroupUnknown is the group of every type the specification does not have.
	GroupUnknown EventGroup = "Unknown"
)

// Types lists every event type in the specification's order.
var Types = convert[EventType](advisorspec.EventTypes)

// Groups lists the groups in the specification's order.
var Groups = convert[EventGroup](advisorspec.EventGroups)

func convert[T, S ~string](in []S) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = T(v)
	}
	return out
}

// Group is the group t belongs to; GroupUnknown for a type the specification does not have.
func (t EventType) Group() EventGroup {
	if g := advisorspec.EventType(t).Group(); g != "" {
		return EventGroup(g)
	}
	return GroupUnknown
}

// unknownName is the GraphQL value every enumeration of events has beside the specification's:
// what a value the service added since, which this gateway cannot name, converts to.
const unknownName = "UNKNOWN"

// enum converts one enumeration at the GraphQL boundary, a value it does not know to UNKNOWN.
type enum struct{ enumcase.Table }

func newEnum(name string, specValues ...string) enum {
	return enum{enumcase.NewTable(name, specValues...)}
}

// known reports whether v is one of the specification's values.
func (e enum) known(v string) bool { return slices.Contains(e.Values(), v) }

func (e enum) marshal(w io.Writer, v string) {
	if !e.known(v) {
		_, _ = io.WriteString(w, `"`+unknownName+`"`)
		return
	}
	e.Marshal(w, v)
}

// graphQLNames are the enumeration's names in the schema: the specification's, then UNKNOWN.
func (e enum) graphQLNames() []string { return append(slices.Clone(e.GraphQLNames()), unknownName) }

var (
	typeTable        = newEnum("EventType", convert[string](advisorspec.EventTypes)...)
	groupTable       = newEnum("EventGroup", convert[string](advisorspec.EventGroups)...)
	estateTable      = newEnum("EstateStatus", advisorspec.EstateStatuses...)
	assistantReasons = newEnum("AssistantFailureReason", advisorspec.AssistantFailureReasons...)
	taxReasons       = newEnum("TaxFailureReason", advisorspec.TaxFailureReasons...)
	documentNames    = newEnum("DocumentName", advisorspec.EstateDocumentNames...)
	presentations    = newEnum("PresentationStatus", advisorspec.PresentationStatuses...)
	generatedTypes   = newEnum("GeneratedDocumentType", advisorspec.GeneratedDocumentTypes...)
)

// EnumTables lists the GraphQL names of each enumeration this package converts, by schema type
// name, so a test can hold the schema to the specification.
func EnumTables() map[string][]string {
	return map[string][]string{
		"EventType":              typeTable.graphQLNames(),
		"EventGroup":             groupTable.graphQLNames(),
		"EstateStatus":           estateTable.graphQLNames(),
		"AssistantFailureReason": assistantReasons.graphQLNames(),
		"TaxFailureReason":       taxReasons.graphQLNames(),
		"DocumentName":           documentNames.graphQLNames(),
		"PresentationStatus":     presentations.graphQLNames(),
		"GeneratedDocumentType":  generatedTypes.graphQLNames(),
	}
}

func (t EventType) MarshalGQL(w io.Writer) { typeTable.marshal(w, string(t)) }

func (t *EventType) UnmarshalGQL(v any) error {
	if v == unknownName {
		*t = TypeUnknown
		return nil
	}
	s, err := typeTable.Unmarshal(v)
	*t = EventType(s)
	return err
}

func (g EventGroup) MarshalGQL(w io.Writer) { groupTable.marshal(w, string(g)) }

func (g *EventGroup) UnmarshalGQL(v any) error {
	if v == unknownName {
		*g = GroupUnknown
		return nil
	}
	s, err := groupTable.Unmarshal(v)
	*g = EventGroup(s)
	return err
}

// EstateStatus is a client's progress through the estate plan, such as InProgress.
type EstateStatus string

func (s EstateStatus) MarshalGQL(w io.Writer) { estateTable.marshal(w, string(s)) }

func (s *EstateStatus) UnmarshalGQL(v any) error {
	x, err := estateTable.Unmarshal(v)
	*s = EstateStatus(x)
	return err
}

// AssistantFailureReason is why an estate document analysis failed.
type AssistantFailureReason string

func (r AssistantFailureReason) MarshalGQL(w io.Writer) { assistantReasons.marshal(w, string(r)) }

func (r *AssistantFailureReason) UnmarshalGQL(v any) error {
	x, err := assistantReasons.Unmarshal(v)
	*r = AssistantFailureReason(x)
	return err
}

// TaxFailureReason is why a tax document analysis failed.
type TaxFailureReason string

func (r TaxFailureReason) MarshalGQL(w io.Writer) { taxReasons.marshal(w, string(r)) }

func (r *TaxFailureReason) UnmarshalGQL(v any) error {
	x, err := taxReasons.Unmarshal(v)
	*r = TaxFailureReason(x)
	return err
}

// DocumentName is one of the estate documents a client fills, such as Last Will and Testament.
type DocumentName string

func (n DocumentName) MarshalGQL(w io.Writer) { documentNames.marshal(w, string(n)) }

func (n *DocumentName) UnmarshalGQL(v any) error {
	x, err := documentNames.Unmarshal(v)
	*n = DocumentName(x)
	return err
}

// PresentationStatus is the outcome of a tax analysis: filed or insightsUnavailable.
type PresentationStatus string

func (s PresentationStatus) MarshalGQL(w io.Writer) { presentations.marshal(w, string(s)) }

func (s *PresentationStatus) UnmarshalGQL(v any) error {
	x, err := presentations.Unmarshal(v)
	*s = PresentationStatus(x)
	return err
}

// GeneratedDocumentType is what an estate analysis generated, such as StandardExecSummary.
type GeneratedDocumentType string

func (t GeneratedDocumentType) MarshalGQL(w io.Writer) { generatedTypes.marshal(w, string(t)) }

func (t *GeneratedDocumentType) UnmarshalGQL(v any) error {
	x, err := generatedTypes.Unmarshal(v)
	*t = GeneratedDocumentType(x)
	return err
}

// Event is any of the 21 event types, or an UnknownEvent.
type Event interface {
	// Header is the envelope every event carries.
	Header() *Envelope
}

// AnalysisEvent is any of the five analysis events.
type AnalysisEvent interface {
	Event
	Payload() *Analysis
}

// UnknownEvent is an event of a type the specification does not have, one the service added
// after this gateway was built: its envelope, and the delivery whole, as the service sent it.
type UnknownEvent struct {
	Envelope
	// Delivery is the delivery as stored: a JSON object, the envelope and every other field.
	Delivery json.RawMessage `json:"-"`
}

// Body is Delivery as text, as the schema gives it.
func (e *UnknownEvent) Body() string { return string(e.Delivery) }

// RawType is the event's EventType as the service named it.
func (e *UnknownEvent) RawType() string { return string(e.EventType) }

// Envelope is what every event carries, plus the id the gateway gave it.
//
// The JSON names of the event types are those of advisorspec's canonical form of a delivery,
// which is what a stored record holds: Decode reads a record into these types with
// encoding/json alone. A field that a record does not hold is tagged "-" and filled by Decode.
type Envelope struct {
	// ID is the event's position in the gateway's event log: ordered, stable, and the cursor a
	// subscriber resumes after.
	ID string `json:"-"`
	// Firm is the firm the event belongs to, the tenant whose Advisor service delivered it: set
	// by whoever reads it from the log (the hub), never from the delivery's body, and not in the
	// schema. Callers of other firms never see the event.
	Firm string `json:"-"`
	// Wid is the client's (for TypeClientDeclinedInvitation, the user's) service identifier.
	Wid       string    `json:"Wid"`
	EventType EventType `json:"EventType"`
	Timestamp time.Time `json:"Timestamp"`
}

// Header returns the envelope, so every event type satisfies Event through embedding.
func (e *Envelope) Header() *Envelope { return e }

// EventGroup is the event's group.
func (e *Envelope) Group() EventGroup { return e.EventType.Group() }

// Analysis is what the five analysis events share: their Payload's ids and the client's
// external id.
type Analysis struct {
	// ExternalID is the client's external id, nil when it has none. It is in the delivery's
	// envelope, beside Payload, where the other fields are.
	ExternalID    *string `json:"ExternalId"`
	CorrelationID string  `json:"CorrelationId"`
	JobID         string  `json:"JobId"`
	DocumentWid   string  `json:"DocumentWid"`
}

// Payload returns the analysis fields, so the analysis types satisfy AnalysisEvent.
func (a *Analysis) Payload() *Analysis { return a }

// SourceDocument is the uploaded document an analysis ran on.
type SourceDocument struct {
	// Wid is the event's, so the document can be loaded from the client's vault.
	Wid        string     `json:"-"`
	VaultID    string     `json:"vault_id"`
	Name       *string    `json:"name"`
	Extension  *string    `json:"extension"`
	UploadedAt *time.Time `json:"uploaded_at"`
}

// GeneratedDocument is a document an estate analysis produced, kept in the vault.
type GeneratedDocument struct {
	// Wid is the event's, so the document can be loaded from the client's vault.
	Wid          string                `json:"-"`
	DocumentType GeneratedDocumentType `json:"DocumentType"`
	VaultID      string                `json:"VaultId"`
	Extension    *string               `json:"Extension"`
}

// RawDocumentType is DocumentType as the service spelled it.
func (d *GeneratedDocument) RawDocumentType() string { return string(d.DocumentType) }

// Name is the specification's name object, used in arrays of beneficiaries and owners.
type Name struct {
	Name string `json:"Name"`
}

// DocumentOwnerInfo describes who an estate document is for.
type DocumentOwnerInfo struct {
	FirstName *string `json:"FirstName"`
	LastName  *string `json:"LastName"`
	LegalName *string `json:"LegalName"`
	// RawContactType is the ContactType as the service spelled it, nil when it has none.
	RawContactType *string `json:"ContactType"`
	IsPrimary      *bool   `json:"IsPrimary"`
}

// ContactType is the owner's contact type; nil when there is none or it is one the gateway's
// ContactType cannot name (RawContactType holds it then).
func (o *DocumentOwnerInfo) ContactType() *family.ContactType {
	if o.RawContactType == nil || !slices.Contains(advisorspec.ContactTypes, advisorspec.ContactType(*o.RawContactType)) {
		return nil
	}
	t := family.ContactType(*o.RawContactType)
	return &t
}

type AssistantJobCompleted struct {
	Envelope
	Analysis
	SourceDocument *SourceDocument      `json:"source_document"`
	Category       *string              `json:"category"`
	Documents      []*GeneratedDocument `json:"Documents"`
}

type AssistantJobFailed struct {
	Envelope
	Analysis
	Reason AssistantFailureReason `json:"Reason"`
}

// RawReason is Reason as the service spelled it, which the schema gives beside the enumeration
// so that a reason added since reads as UNKNOWN without being lost.
func (e *AssistantJobFailed) RawReason() string { return string(e.Reason) }

type AssistantMultiDocumentRequiresReview struct {
	Envelope
	Analysis
	VaultLink             *string `json:"VaultLink"`
	DetectedDocumentCount *int    `json:"DetectedDocumentCount"`
}

type TaxJobCompleted struct {
	Envelope
	Analysis
	SourceDocument     *SourceDocument     `json:"source_document"`
	Category           *string             `json:"category"`
	PresentationStatus *PresentationStatus `json:"PresentationStatus"`
}

// RawPresentationStatus is PresentationStatus as the service spelled it, nil when it has none.
func (e *TaxJobCompleted) RawPresentationStatus() *string { return (*string)(e.PresentationStatus) }

type TaxJobFailed struct {
	Envelope
	Analysis
	Reason TaxFailureReason `json:"Reason"`
}

// RawReason is Reason as the service spelled it (see AssistantJobFailed.RawReason).
func (e *TaxJobFailed) RawReason() string { return string(e.Reason) }

// Invitation is what both invitation events carry: the inviting advisor's ids and the email
// the client registered with.
type Invitation struct {
	AdvisorWid        *string `json:"AdvisorWid"`
	TeamID            *string `json:"TeamId"`
	CompanyID         *string `json:"CompanyId"`
	RegistrationEmail *string `json:"RegistrationEmail"`
}

type ClientAcceptedInvitation struct {
	Envelope
	Invitation
}

type ClientDeclinedInvitation struct {
	Envelope
	Invitation
}

type UserSubscriptionCreated struct {
	Envelope
	NewPlan string `json:"NewPlan"`
}

type UserSubscriptionCanceled struct {
	Envelope
	OldPlan string `json:"OldPlan"`
}

type UserSubscriptionChanged struct {
	Envelope
	OldPlan string `json:"OldPlan"`
	NewPlan string `json:"NewPlan"`
}

type UserSubscriptionReactivated struct {
	Envelope
	OldPlan string `json:"OldPlan"`
}

type ClientProgressChanged struct {
	Envelope
	EstateStatus         EstateStatus `json:"EstateStatus"`
	CompletionPercentage int          `json:"CompletionPercentage"`
}

// RawEstateStatus is EstateStatus as the service spelled it.
func (e *ClientProgressChanged) RawEstateStatus() string { return string(e.EstateStatus) }

// Asset is what every asset event carries.
type Asset struct {
	AssetName string `json:"AssetName"`
}

type AssetAdded struct {
	Envelope
	Asset
	DollarAmount *int64 `json:"DollarAmount"`
}

type AssetDeleted struct {
	Envelope
	Asset
}

type AssetBeneficiaryAdded struct {
	Envelope
	Asset
	BeneficiaryAdded []*Name `json:"BeneficiaryAdded"`
}

type AssetBeneficiaryDeleted struct {
	Envelope
	Asset
	BeneficiaryDeleted []*Name `json:"BeneficiaryDeleted"`
}

// AssetOwnershipAdded arrives with the owners under OwnershipAdded (the specification's
// sample) or OwnerAdded (its field table); both fill OwnershipAdded.
type AssetOwnershipAdded struct {
	Envelope
	Asset
	OwnershipAdded []*Name `json:"OwnershipAdded"`
}

// OwnerAdded is OwnershipAdded under the field table's name.
func (e *AssetOwnershipAdded) OwnerAdded() []*Name { return e.OwnershipAdded }

type AssetOwnershipDeleted struct {
	Envelope
	Asset
	OwnerDeleted []*Name `json:"OwnerDeleted"`
}

// Progress is what every document event carries.
type Progress struct {
	IsRecommendedDocument      *bool              `json:"IsRecommendedDocument"`
	DocumentName               DocumentName       `json:"DocumentName"`
	DocumentProgressPercentage int                `json:"DocumentProgressPercentage"`
	UserTier                   *string            `json:"UserTier"`
	DocumentOwnerInfo          *DocumentOwnerInfo `json:"DocumentOwnerInfo"`
}

// RawDocumentName is DocumentName as the service spelled it.
func (p *Progress) RawDocumentName() string { return string(p.DocumentName) }

type DocumentStarted struct {
	Envelope
	Progress
	WasCompletedBefore *bool `json:"WasCompletedBefore"`
}

type DocumentPendingValidation struct {
	Envelope
	Progress
}

type DocumentCompleted struct {
	Envelope
	Progress
}

// Connection is a page of stored events, with the cursors of Query.eventHistory.
type Connection struct {
	Nodes    []Event
	PageInfo cursor.PageInfo
	// Scope is the list the page's cursors are bound to (the firm).
	Scope string
}

// Edges are the page's events with their cursors, made only when a query selects them, in one piece.
func (c *Connection) Edges() []*Edge {
	return cursor.Edges(len(c.Nodes), func(i int, e *Edge) {
		*e = Edge{Cursor: cursor.Encode(cursor.Events, c.Scope, c.Nodes[i].Header().ID), Node: c.Nodes[i]}
	})
}

// Edge is an event and its cursor.
type Edge struct {
	Cursor string
	Node   Event
}

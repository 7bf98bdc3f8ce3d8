package advisorspec

// The webhook events of the specification (webhook-events.md): what the service POSTs to a
// receiver, in 21 types and four groups. The sandbox builds and sends them from this vocabulary
// and the gateway checks what it receives against it (ParseWebhook), so both hold the same rules.

// EventType is an event's EventType, such as ClientProgressChanged.
type EventType string

// The event types, by group, in the specification's order.
const (
	AssistantJobCompleted                EventType = "AssistantJobCompleted"
	AssistantJobFailed                   EventType = "AssistantJobFailed"
	AssistantMultiDocumentRequiresReview EventType = "AssistantMultiDocumentRequiresReview"
	TaxJobCompleted                      EventType = "TaxJobCompleted"
	TaxJobFailed                         EventType = "TaxJobFailed"

	ClientAcceptedInvitation    EventType = "ClientAcceptedInvitation"
	ClientDeclinedInvitation    EventType = "ClientDeclinedInvitation"
	UserSubscriptionCreated     EventType = "UserSubscriptionCreated"
	UserSubscriptionCanceled    EventType = "UserSubscriptionCanceled"
	UserSubscriptionChanged     EventType = "UserSubscriptionChanged"
	UserSubscriptionReactivated EventType = "UserSubscriptionReactivated"
	ClientProgressChanged       EventType = "ClientProgressChanged"

	AssetAdded              EventType = "AssetAdded"
	AssetDeleted            EventType = "AssetDeleted"
	AssetBeneficiaryAdded   EventType = "AssetBeneficiaryAdded"
	AssetBeneficiaryDeleted EventType = "AssetBeneficiaryDeleted"
	AssetOwnershipAdded     EventType = "AssetOwnershipAdded"
	AssetOwnershipDeleted   EventType = "AssetOwnershipDeleted"

	DocumentStarted           EventType = "DocumentStarted"
	DocumentPendingValidation EventType = "DocumentPendingValidation"
	DocumentCompleted         EventType = "DocumentCompleted"
)

// EventTypes lists every event type in the specification's order.
var EventTypes = []EventType{
	AssistantJobCompleted, AssistantJobFailed, AssistantMultiDocumentRequiresReview, TaxJobCompleted, TaxJobFailed,
	ClientAcceptedInvitation, ClientDeclinedInvitation, UserSubscriptionCreated, UserSubscriptionCanceled,
	UserSubscriptionChanged, UserSubscriptionReactivated, ClientProgressChanged,
	AssetAdded, AssetDeleted, AssetBeneficiaryAdded, AssetBeneficiaryDeleted, AssetOwnershipAdded, AssetOwnershipDeleted,
	DocumentStarted, DocumentPendingValidation, DocumentCompleted,
}

// EventGroup is one of the specification's four groups of events.
type EventGroup string

// The groups, in the specification's order.
const (
	GroupAnalysis EventGroup = "analysis"
	GroupClient   EventGroup = "client"
	GroupAsset    EventGroup = "asset"
	GroupDocument EventGroup = "document"
)

// EventGroups lists the groups in the specification's order.
var EventGroups = []EventGroup{GroupAnalysis, GroupClient, GroupAsset, GroupDocument}

// Group is the group t belongs to; "" for a type the specification does not have.
func (t EventType) Group() EventGroup {
	switch t {
	case AssistantJobCompleted, AssistantJobFailed, AssistantMultiDocumentRequiresReview, TaxJobCompleted, TaxJobFailed:
		return GroupAnalysis
	case ClientAcceptedInvitation, ClientDeclinedInvitation, UserSubscriptionCreated, UserSubscriptionCanceled,
		UserSubscriptionChanged, UserSubscriptionReactivated, ClientProgressChanged:
		return GroupClient
	case AssetAdded, AssetDeleted, AssetBeneficiaryAdded, AssetBeneficiaryDeleted, AssetOwnershipAdded, AssetOwnershipDeleted:
		return GroupAsset
	case DocumentStarted, DocumentPendingValidation, DocumentCompleted:
		return GroupDocument
	}
	return ""
}

// Values of the enumerations that events carry, in the specification's order.
var (
	// EstateStatuses are the values of ClientProgressChanged's EstateStatus.
	EstateStatuses = []string{"NotStarted", "InProgress", "PendingValidation", "Completed"}
	// AssistantFailureReasons are the values of AssistantJobFailed's Reason.
	AssistantFailureReasons = []string{"UploadTimeout", "ProcessingFailed", "DocumentTypeNotSupported", "FileTooLarge", "InvalidDocument"}
	// TaxFailureReasons are the values of TaxJobFailed's Reason.
	TaxFailureReasons = []string{"UploadTimeout", "VaultFailed", "NoTaxReturnFound", "IncompleteReturn", "ProcessingFailed", "ReportUnavailable", "TimedOut"}
	// EstateDocumentNames are the values of a document event's DocumentName: the estate
	// documents a client fills in (not the names of vault documents, which are free text).
	EstateDocumentNames = []string{"Individual Revocable Trust", "Advance Health Care Directive", "Financial Power of Attorney", "Last Will and Testament", "Joint Revocable Trust", "Nomination of Guardianship"}
	// PresentationStatuses are the values of TaxJobCompleted's PresentationStatus.
	PresentationStatuses = []string{"filed", "insightsUnavailable"}
	// GeneratedDocumentTypes are the values of the DocumentType of AssistantJobCompleted's
	// Documents.
	GeneratedDocumentTypes = []string{"StandardExecSummary", "AdvancedExecSummary", "Insights"}
	// OwnerContactTypes are the values of DocumentOwnerInfo's ContactType: an estate document
	// is always for a person.
	OwnerContactTypes = []string{string(Individual)}
)

// Limits of event fields, in characters, beyond MaxWID and MaxVaultID.
const (
	// MaxEventID bounds the other identifiers events carry: AdvisorWid, TeamId, CompanyId.
	MaxEventID = 64
	// MaxEventEmail bounds RegistrationEmail, as RFC 5321 bounds an address.
	MaxEventEmail = 320
)

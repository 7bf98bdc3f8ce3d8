package advisorspec

// The request and response bodies of the REST API, as the specification shapes them. Every
// optional field is a pointer or a slice with omitempty: the service returns a field only
// when it is present, and a client must tell absent from empty.

// TopAccount is a top account: Get, each item of List, and the answer of Add and Update.
type TopAccount struct {
	WID        string `json:"wid"`
	ExternalID string `json:"external_id"`
	Name       string `json:"name"`
}

// TopAccountPage is the answer of List Top Accounts.
type TopAccountPage struct {
	TopAccounts []TopAccount `json:"top_accounts"`
	Pagination  Pagination   `json:"pagination"`
}

// Pagination is the page information of List Top Accounts.
type Pagination struct {
	Page       int `json:"page"`
	Limit      int `json:"limit"`
	TotalCount int `json:"total_count"`
	TotalPages int `json:"total_pages"`
}

// Contact is a contact card: Get, and each item of List.
type Contact struct {
	ID                 string          `json:"id"`
	ExternalID         string          `json:"external_id,omitempty"`
	Type               string          `json:"type"`
	FirstName          *string         `json:"first_name,omitempty"`
	MiddleName         *string         `json:"middle_name,omitempty"`
	LastName           *string         `json:"last_name,omitempty"`
	Dob                *string         `json:"dob,omitempty"`
	LegalName          *string         `json:"legal_name,omitempty"`
	TrustType          *string         `json:"trust_type,omitempty"`
	TrustCreator       []string        `json:"trust_creator,omitempty"`
	InitialTrustee     []string        `json:"initial_trustee,omitempty"`
	GoverningState     *string         `json:"governing_state,omitempty"`
	TrustCreationDate  *string         `json:"trust_creation_date,omitempty"`
	IncorporationState *string         `json:"incorporation_state,omitempty"`
	IncorporationForm  *string         `json:"incorporation_form,omitempty"`
	Ownership          []Ownership     `json:"ownership,omitempty"`
	EIN                *int64          `json:"ein,omitempty"`
	City               *string         `json:"city,omitempty"`
	State              *string         `json:"state,omitempty"`
	AddressFormatted   *string         `json:"address_formatted,omitempty"`
	Notes              *string         `json:"notes,omitempty"`
	WillType           *string         `json:"will_type,omitempty"`
	WillCreationDate   *string         `json:"will_creation_date,omitempty"`
	Testator           []string        `json:"testator,omitempty"`
	Executor           []string        `json:"executor,omitempty"`
	CurrentParties     *CurrentParties `json:"current_parties,omitempty"`
}

// Ownership is one entry of an Entity's ownership: OwnerID for a single owner, Subowners for
// joint owners.
type Ownership struct {
	Percentage float64  `json:"percentage"`
	OwnerID    string   `json:"owner_id,omitempty"`
	Subowners  []string `json:"subowners,omitempty"`
}

// CurrentParties is a Class's current parties.
type CurrentParties struct {
	IsDistributedEvenly *bool   `json:"is_distributed_evenly,omitempty"`
	ShareAmount         *string `json:"share_amount,omitempty"`
	Parties             []Party `json:"parties"`
}

// Party is one party of a Class.
type Party struct {
	ContactID              string    `json:"contact_id"`
	DistributionPercentage *float64  `json:"distribution_percentage,omitempty"`
	Fraction               *Fraction `json:"fraction,omitempty"`
}

// Fraction is a party's share as numerator over a non-zero denominator.
type Fraction struct {
	Numerator   int64 `json:"numerator"`
	Denominator int64 `json:"denominator"`
}

// ContactList is the answer of List Contacts.
type ContactList struct {
	Contacts []Contact `json:"contacts"`
}

// ContactID is the answer of Add and Update Contact.
type ContactID struct {
	ID string `json:"id"`
}

// Document is a vault document. Which of FileStatus, DownloadURI and UploadURI are present
// depends on the operation: Get carries the first two, Update the last, List none.
type Document struct {
	WID              string   `json:"wid"`
	VaultID          string   `json:"vault_id"`
	Name             string   `json:"name"`
	Extension        string   `json:"extension"`
	Description      string   `json:"description,omitempty"`
	Category         string   `json:"category"`
	SubCategory      string   `json:"sub_category"`
	Type             string   `json:"type,omitempty"`
	Tags             []string `json:"tags,omitempty"`
	CreationDate     string   `json:"creation_date"`
	ModificationDate string   `json:"modification_date"`
	FileStatus       string   `json:"file_status,omitempty"`
	DownloadURI      string   `json:"download_uri,omitempty"`
	UploadURI        string   `json:"upload_uri,omitempty"`
}

// DocumentList is the answer of List Documents.
type DocumentList struct {
	Documents  []Document `json:"documents"`
	Pagination struct {
		TotalCount int `json:"total_count"`
	} `json:"pagination"`
}

// NewDocument is the answer of Upload Document.
type NewDocument struct {
	WID       string `json:"wid"`
	VaultID   string `json:"vault_id"`
	UploadURI string `json:"upload_uri"`
}

// ErrorBody is the body of an error answer; WID is set only on the top-account 409.
type ErrorBody struct {
	Message string `json:"message"`
	WID     string `json:"wid,omitempty"`
}

// AnalysisStarted answers the analysis start endpoint the project's README decides:
// POST /v2/top-accounts/{wid}/documents/{vault_id}/analysis.
type AnalysisStarted struct {
	CorrelationID string `json:"correlation_id"`
}

// Client is the answer of Add Client, the endpoint the project's README decides
// (POST /v1/clients): the client as the service keeps it. The specification shows no answer;
// this one carries the service's wid, the caller's id as external_id, the advisor and team the
// client belongs to, the ids of the contact cards made for it, whether the invitation has been
// sent, and the row's fields with the values in effect (subscription_start_date always set).
type Client struct {
	WID              string `json:"wid"`
	ExternalID       string `json:"external_id"`
	AdvisorID        string `json:"advisor_id"`
	TeamID           string `json:"team_id"`
	PrimaryContactID string `json:"primary_contact_id"`
	SpouseContactID  string `json:"spouse_contact_id,omitempty"`
	InvitationSent   bool   `json:"invitation_sent"`
	ClientFields
}

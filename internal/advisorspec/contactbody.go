package advisorspec

// ContactBody is the body of Add Contact and of Update Contact, for a card of any type: each type
// sets only its own fields (see ContactFields). A field is sent when it is set, and left out when
// it is nil, so that an update changes only what it names; an empty list is still sent, since it
// clears a role. Type and ExternalID are a new card's: an update may change neither, so it
// leaves both unset.
//
// The fields are in the specification's table order, but for will_type, which comes before
// governing_state as a Will's own fields are listed, so each type's fields keep one order.
type ContactBody struct {
	Type       ContactType `json:"type,omitzero"`
	ExternalID *string     `json:"external_id,omitzero"`

	// Individual
	FirstName  *string `json:"first_name,omitzero"`
	MiddleName *string `json:"middle_name,omitzero"`
	LastName   *string `json:"last_name,omitzero"`
	Dob        *string `json:"dob,omitzero"`

	// Every type but Individual
	LegalName *string `json:"legal_name,omitzero"`

	// Trust; WillType and GoverningState are a Will's
	TrustType         *string  `json:"trust_type,omitzero"`
	TrustCreator      []string `json:"trust_creator,omitzero"`
	InitialTrustee    []string `json:"initial_trustee,omitzero"`
	WillType          *string  `json:"will_type,omitzero"`
	GoverningState    *string  `json:"governing_state,omitzero"`
	TrustCreationDate *string  `json:"trust_creation_date,omitzero"`

	// Entity
	IncorporationState *string         `json:"incorporation_state,omitzero"`
	IncorporationForm  *string         `json:"incorporation_form,omitzero"`
	Ownership          []OwnershipBody `json:"ownership,omitzero"`

	// Charity; Notes is a Class's too
	EIN              *int64  `json:"ein,omitzero"`
	City             *string `json:"city,omitzero"`
	State            *string `json:"state,omitzero"`
	AddressFormatted *string `json:"address_formatted,omitzero"`
	Notes            *string `json:"notes,omitzero"`

	// Will
	WillCreationDate *string  `json:"will_creation_date,omitzero"`
	Testator         []string `json:"testator,omitzero"`
	Executor         []string `json:"executor,omitzero"`

	// Class
	CurrentParties *CurrentParties `json:"current_parties,omitzero"`
}

// OwnershipBody is one entry of a ContactBody's ownership: OwnerID for a single owner, Subowners
// for joint owners. Unlike Ownership, the entry as the service answers it, it sends Subowners
// even when empty, so that a joint share with no owners gets the service's message for that.
type OwnershipBody struct {
	Percentage float64  `json:"percentage"`
	OwnerID    *string  `json:"owner_id,omitzero"`
	Subowners  []string `json:"subowners,omitzero"`
}

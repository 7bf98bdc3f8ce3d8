package family

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
)

// Inputs are the request bodies of the service: each field carries the service's name as its
// JSON tag, so a checked input is encoded as it is. omitzero leaves out what the caller did not
// send, while an empty list (which clears a role) is still sent. The GraphQL names are the
// outputs': a reference is set by the external ids under the name of the output field that reads
// it back (trustCreators, owners, party), and advisor.SchemaPath maps the service's names to
// these for messages.

// CreateTopAccountInput is the body of Add Top Account.
type CreateTopAccountInput struct {
	ExternalID string `json:"external_id"`
	Name       string `json:"name"`
}

func (in CreateTopAccountInput) check() error {
	body, _ := json.Marshal(in)
	_, _, err := advisorspec.CheckNewTopAccount(body)
	if err != nil && err.Field == "" && err.Kind == advisorspec.Invalid {
		// The service's "Missing required parameters" for both: through GraphQL, both blank.
		return apperr.Input("input", "externalId and name must not be blank")
	}
	return inputError("input", err)
}

// UpdateTopAccountInput is the body of Update Top Account.
type UpdateTopAccountInput struct {
	ExternalID *string `json:"external_id,omitzero"`
	Name       *string `json:"name,omitzero"`
}

func (in UpdateTopAccountInput) check() error {
	body, _ := json.Marshal(in)
	_, err := advisorspec.CheckTopAccountUpdate(body)
	return inputError("input", err)
}

// IndividualInput is a new Individual.
type IndividualInput struct {
	ExternalID string  `json:"external_id"`
	FirstName  *string `json:"first_name,omitzero"`
	MiddleName *string `json:"middle_name,omitzero"`
	LastName   *string `json:"last_name,omitzero"`
	Dob        *string `json:"dob,omitzero"`
}

// TrustInput is a new Trust.
type TrustInput struct {
	ExternalID        string     `json:"external_id"`
	LegalName         string     `json:"legal_name"`
	TrustType         *TrustType `json:"trust_type,omitzero"`
	TrustCreators     []string   `json:"trust_creator,omitzero"`
	InitialTrustees   []string   `json:"initial_trustee,omitzero"`
	GoverningState    *string    `json:"governing_state,omitzero"`
	TrustCreationDate *string    `json:"trust_creation_date,omitzero"`
}

// EntityInput is a new Entity.
type EntityInput struct {
	ExternalID         string             `json:"external_id"`
	LegalName          string             `json:"legal_name"`
	IncorporationState *string            `json:"incorporation_state,omitzero"`
	IncorporationForm  *IncorporationForm `json:"incorporation_form,omitzero"`
	Ownership          []*OwnershipInput  `json:"ownership,omitzero"`
}

// OwnershipInput is one share of an entity: its owners, and whether they hold it jointly (nil:
// when there is more than one). The service keeps a single owner in owner_id and joint owners in
// subowners; MarshalJSON writes the one that applies.
type OwnershipInput struct {
	Percentage float64
	Owners     []string
	Joint      *bool
}

func (o OwnershipInput) joint() bool {
	if o.Joint != nil {
		return *o.Joint
	}
	return len(o.Owners) != 1
}

// MarshalJSON writes the share as the service's ownership entry.
func (o OwnershipInput) MarshalJSON() ([]byte, error) {
	type entry struct {
		Percentage float64  `json:"percentage"`
		OwnerID    *string  `json:"owner_id,omitzero"`
		Subowners  []string `json:"subowners,omitzero"`
	}
	e := entry{Percentage: o.Percentage}
	switch {
	case o.joint():
		e.Subowners = append([]string{}, o.Owners...) // sent even when empty, for the service's message
	case len(o.Owners) == 1:
		e.OwnerID = &o.Owners[0]
	default:
		return nil, fmt.Errorf("a share that is not joint has %d owners", len(o.Owners))
	}
	return json.Marshal(e)
}

// checkOwnership refuses what the service's ownership entry cannot say: a share that is said
// not to be joint but has several owners (or none).
func checkOwnership(prefix string, shares []*OwnershipInput) error {
	for i, o := range shares {
		if o != nil && !o.joint() && len(o.Owners) != 1 {
			at := fmt.Sprintf("ownership[%d]", i)
			return apperr.Input(fmt.Sprintf("%s.%s.owners", prefix, at),
				at+".owners must name exactly one contact card when joint is false")
		}
	}
	return nil
}

// CharityInput is a new Charity.
type CharityInput struct {
	ExternalID       string  `json:"external_id"`
	LegalName        string  `json:"legal_name"`
	Ein              *int64  `json:"ein,omitzero"`
	City             string  `json:"city"`
	State            string  `json:"state"`
	AddressFormatted *string `json:"address_formatted,omitzero"`
	Notes            *string `json:"notes,omitzero"`
}

// WillInput is a new Will.
type WillInput struct {
	ExternalID       string   `json:"external_id"`
	LegalName        string   `json:"legal_name"`
	WillType         WillType `json:"will_type"`
	GoverningState   *string  `json:"governing_state,omitzero"`
	WillCreationDate *string  `json:"will_creation_date,omitzero"`
	Testators        []string `json:"testator,omitzero"`
	Executors        []string `json:"executor,omitzero"`
}

// ClassInput is a new Class.
type ClassInput struct {
	ExternalID     string             `json:"external_id"`
	LegalName      string             `json:"legal_name"`
	Notes          *string            `json:"notes,omitzero"`
	CurrentParties *ClassPartiesInput `json:"current_parties,omitzero"`
}

// ClassPartiesInput is a class's current parties.
type ClassPartiesInput struct {
	IsDistributedEvenly *bool              `json:"is_distributed_evenly,omitzero"`
	ShareAmount         *string            `json:"share_amount,omitzero"`
	Parties             []*ClassPartyInput `json:"parties"`
}

// ClassPartyInput is one party of a class.
type ClassPartyInput struct {
	Party                  string         `json:"contact_id"`
	DistributionPercentage *float64       `json:"distribution_percentage,omitzero"`
	Fraction               *FractionInput `json:"fraction,omitzero"`
}

// FractionInput is a share as numerator over denominator.
type FractionInput struct {
	Numerator   int64 `json:"numerator"`
	Denominator int64 `json:"denominator"`
}

// IndividualPatch changes an Individual.
type IndividualPatch struct {
	FirstName  *string `json:"first_name,omitzero"`
	MiddleName *string `json:"middle_name,omitzero"`
	LastName   *string `json:"last_name,omitzero"`
	Dob        *string `json:"dob,omitzero"`
}

// TrustPatch changes a Trust.
type TrustPatch struct {
	LegalName         *string    `json:"legal_name,omitzero"`
	TrustType         *TrustType `json:"trust_type,omitzero"`
	TrustCreators     []string   `json:"trust_creator,omitzero"`
	InitialTrustees   []string   `json:"initial_trustee,omitzero"`
	GoverningState    *string    `json:"governing_state,omitzero"`
	TrustCreationDate *string    `json:"trust_creation_date,omitzero"`
}

// EntityPatch changes an Entity.
type EntityPatch struct {
	LegalName          *string            `json:"legal_name,omitzero"`
	IncorporationState *string            `json:"incorporation_state,omitzero"`
	IncorporationForm  *IncorporationForm `json:"incorporation_form,omitzero"`
	Ownership          []*OwnershipInput  `json:"ownership,omitzero"`
}

// CharityPatch changes a Charity.
type CharityPatch struct {
	LegalName        *string `json:"legal_name,omitzero"`
	Ein              *int64  `json:"ein,omitzero"`
	City             *string `json:"city,omitzero"`
	State            *string `json:"state,omitzero"`
	AddressFormatted *string `json:"address_formatted,omitzero"`
	Notes            *string `json:"notes,omitzero"`
}

// WillPatch changes a Will.
type WillPatch struct {
	LegalName        *string   `json:"legal_name,omitzero"`
	WillType         *WillType `json:"will_type,omitzero"`
	GoverningState   *string   `json:"governing_state,omitzero"`
	WillCreationDate *string   `json:"will_creation_date,omitzero"`
	Testators        []string  `json:"testator,omitzero"`
	Executors        []string  `json:"executor,omitzero"`
}

// ClassPatch changes a Class.
type ClassPatch struct {
	LegalName      *string            `json:"legal_name,omitzero"`
	Notes          *string            `json:"notes,omitzero"`
	CurrentParties *ClassPartiesInput `json:"current_parties,omitzero"`
}

// ContactInput is a new card: exactly one member, named for its type.
type ContactInput struct {
	Individual *IndividualInput
	Trust      *TrustInput
	Entity     *EntityInput
	Charity    *CharityInput
	Will       *WillInput
	Class      *ClassInput
}

// ContactPatch changes a card: exactly one member, for the card's type.
type ContactPatch struct {
	Individual *IndividualPatch
	Trust      *TrustPatch
	Entity     *EntityPatch
	Charity    *CharityPatch
	Will       *WillPatch
	Class      *ClassPatch
}

// member is the member of a @oneOf input that was given.
type member struct {
	name  string // the GraphQL member name
	typ   advisorspec.ContactType
	value any
}

// given returns the one member of a @oneOf input that is set. GraphQL validation holds a literal
// to @oneOf and the gateway's variable check a variable, so exactly one is: anything else is the
// gateway's bug, not the caller's mistake.
func given(input string, candidates []member) (member, error) {
	var set []member
	for _, m := range candidates {
		// Each member is a typed pointer in an interface: nil inside is "not given".
		if v := reflect.ValueOf(m.value); v.IsValid() && !v.IsNil() {
			set = append(set, m)
		}
	}
	if len(set) != 1 {
		return member{}, apperr.Wrap(apperr.Internal, "Internal error",
			fmt.Errorf("%s reached the family service with %d members: @oneOf was not enforced", input, len(set)))
	}
	return set[0], nil
}

// body is the Add Contact body of the input, checked as the service checks it (all but the
// references, which need the owner's cards and are the service's to check).
func (in ContactInput) body(scope advisorspec.Scope) ([]byte, string, error) {
	m, err := given("ContactInput", []member{
		{"individual", advisorspec.Individual, in.Individual},
		{"trust", advisorspec.Trust, in.Trust},
		{"entity", advisorspec.Entity, in.Entity},
		{"charity", advisorspec.Charity, in.Charity},
		{"will", advisorspec.Will, in.Will},
		{"class", advisorspec.Class, in.Class},
	})
	if err != nil {
		return nil, "", err
	}
	prefix := "input." + m.name
	if in.Entity != nil {
		if err := checkOwnership(prefix, in.Entity.Ownership); err != nil {
			return nil, "", err
		}
	}
	body, err := withType(m.typ, m.value)
	if err != nil {
		return nil, "", err
	}
	_, _, verr := advisorspec.CheckNewContact(body, scope, nil)
	return body, prefix, inputError(prefix, verr)
}

// body is the Update Contact body of the patch, checked as the service checks it against a
// card of the member's type.
func (p ContactPatch) body(scope advisorspec.Scope) ([]byte, string, error) {
	m, err := given("ContactPatch", []member{
		{"individual", advisorspec.Individual, p.Individual},
		{"trust", advisorspec.Trust, p.Trust},
		{"entity", advisorspec.Entity, p.Entity},
		{"charity", advisorspec.Charity, p.Charity},
		{"will", advisorspec.Will, p.Will},
		{"class", advisorspec.Class, p.Class},
	})
	if err != nil {
		return nil, "", err
	}
	prefix := "input." + m.name
	if p.Entity != nil {
		if err := checkOwnership(prefix, p.Entity.Ownership); err != nil {
			return nil, "", err
		}
	}
	body, err := json.Marshal(m.value)
	if err != nil {
		return nil, "", fmt.Errorf("encode the contact patch: %w", err)
	}
	return body, prefix, inputError(prefix, advisorspec.CheckContactUpdate(body, scope, m.typ, "", nil))
}

// withType encodes a member and adds the card's type to it.
func withType(typ advisorspec.ContactType, v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the contact: %w", err)
	}
	head := fmt.Sprintf(`{"type":%q`, typ)
	if rest := bytes.TrimPrefix(body, []byte("{")); len(bytes.TrimSpace(rest)) > 1 {
		return append([]byte(head+","), rest...), nil
	}
	return []byte(head + "}"), nil
}

// inputError turns a broken rule into BAD_USER_INPUT naming the GraphQL field at fault, in the
// schema's words: the service's field path under prefix (ownership[0].owner_id under
// input.entity is input.entity.ownership[0].owners), and its message translated likewise.
func inputError(prefix string, err *advisorspec.Error) error {
	if err == nil {
		return nil
	}
	field := prefix
	if err.Field != "" {
		field += "." + advisor.SchemaPath(err.Field)
	}
	return apperr.Input(field, advisor.SchemaMessage(err.Field, err.Message))
}

// upstreamInputError names the input field the service's BAD_USER_INPUT is about, when its own
// message starts with the field's path (trust_creator references contact "x", which does not
// exist), so clients can point at the field in a form.
func upstreamInputError(prefix string, err error) error {
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.BadUserInput || e.Field != "" || e.Upstream == nil {
		return err
	}
	first, _, _ := strings.Cut(e.Upstream.Message, " ")
	path, ok := advisor.SpecField(first)
	if !ok {
		return err
	}
	named := *e
	named.Field = prefix + "." + path
	return &named
}

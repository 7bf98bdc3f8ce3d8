package family

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
)

// Inputs are the request bodies of the service: each field carries the service's name as its
// JSON tag, so a checked input is encoded as it is. omitzero leaves out what the caller did not
// send, while an empty list (which clears a role) is still sent.

// CreateTopAccountInput is the body of Add Top Account.
type CreateTopAccountInput struct {
	ExternalID string `json:"external_id"`
	Name       string `json:"name"`
}

func (in CreateTopAccountInput) check() error {
	body, _ := json.Marshal(in)
	_, _, err := advisorspec.CheckNewTopAccount(body)
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
	TrustCreator      []string   `json:"trust_creator,omitzero"`
	InitialTrustee    []string   `json:"initial_trustee,omitzero"`
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

// OwnershipInput is one share of an entity.
type OwnershipInput struct {
	Percentage float64  `json:"percentage"`
	OwnerID    *string  `json:"owner_id,omitzero"`
	Subowners  []string `json:"subowners,omitzero"`
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
	Testator         []string `json:"testator,omitzero"`
	Executor         []string `json:"executor,omitzero"`
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
	ContactID              string         `json:"contact_id"`
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
	TrustCreator      []string   `json:"trust_creator,omitzero"`
	InitialTrustee    []string   `json:"initial_trustee,omitzero"`
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
	Testator         []string  `json:"testator,omitzero"`
	Executor         []string  `json:"executor,omitzero"`
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

// member is the one member of a @oneOf input that was given.
type member struct {
	name  string // the GraphQL member name
	typ   advisorspec.ContactType
	value any
}

// oneOf picks the member of a @oneOf input. GraphQL validation enforces @oneOf only for
// literals; inputs sent as variables arrive here unchecked.
func oneOf(input string, candidates []member) (member, error) {
	var given []member
	for _, m := range candidates {
		// Each member is a typed pointer in an interface: nil inside is "not given".
		if v := reflect.ValueOf(m.value); v.IsValid() && !v.IsNil() {
			given = append(given, m)
		}
	}
	if len(given) != 1 {
		names := make([]string, len(candidates))
		for i, m := range candidates {
			names[i] = m.name
		}
		return member{}, apperr.Input("input", fmt.Sprintf("%s must have exactly one of %s", input, strings.Join(names, ", ")))
	}
	return given[0], nil
}

// body is the Add Contact body of the input, checked as the service checks it (all but the
// references, which need the owner's cards and are the service's to check).
func (in ContactInput) body(scope advisorspec.Scope) ([]byte, string, error) {
	m, err := oneOf("ContactInput", []member{
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
	body, err := withType(m.typ, m.value)
	if err != nil {
		return nil, "", err
	}
	_, _, verr := advisorspec.CheckNewContact(body, scope, nil)
	return body, "input." + m.name, inputError("input."+m.name, verr)
}

// body is the Update Contact body of the patch, checked as the service checks it against a
// card of the member's type.
func (p ContactPatch) body(scope advisorspec.Scope) ([]byte, string, error) {
	m, err := oneOf("ContactPatch", []member{
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
	body, err := json.Marshal(m.value)
	if err != nil {
		return nil, "", fmt.Errorf("encode the contact patch: %w", err)
	}
	return body, "input." + m.name, inputError("input."+m.name, advisorspec.CheckContactUpdate(body, scope, m.typ, "", nil))
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

// inputError turns a broken rule into BAD_USER_INPUT naming the GraphQL field at fault: the
// service's field path under prefix, in camelCase (ownership[0].owner_id under input.entity is
// input.entity.ownership[0].ownerId). The message stays the service's.
func inputError(prefix string, err *advisorspec.Error) error {
	if err == nil {
		return nil
	}
	field := prefix
	if err.Field != "" {
		field += "." + camelPath(err.Field)
	}
	return apperr.Input(field, err.Message)
}

// wirePath is how the service's messages start when one field is at fault:
// trust_creator, ownership[0].owner_id, current_parties.parties[1].contact_id.
var wirePath = regexp.MustCompile(`^[a-z][a-z0-9_]*(\[\d+\])?(\.[a-z][a-z0-9_]*(\[\d+\])?)*$`)

// upstreamInputError names the input field the service's BAD_USER_INPUT is about, when its
// message starts with the field's path, so clients can point at the field in a form.
func upstreamInputError(prefix string, err error) error {
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.BadUserInput || e.Field != "" {
		return err
	}
	first, _, _ := strings.Cut(e.Message, " ")
	if !wirePath.MatchString(first) || !strings.ContainsAny(first, "_.[") && !knownField[first] {
		return err
	}
	named := *e
	named.Field = prefix + "." + camelPath(first)
	return &named
}

// knownField lists the one-word fields whose name can open a message, so that a message like
// "Invalid ..." or "Contact ..." is not taken for a field.
var knownField = map[string]bool{"name": true, "executor": true, "testator": true, "ownership": true, "ein": true, "notes": true, "email": true, "phone": true, "state": true, "city": true}

var snakeWord = regexp.MustCompile(`_([a-z0-9])`)

func camelPath(path string) string {
	return snakeWord.ReplaceAllStringFunc(path, func(m string) string { return strings.ToUpper(m[1:]) })
}

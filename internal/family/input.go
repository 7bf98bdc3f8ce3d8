package family

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
)

// Inputs are the GraphQL inputs of the family graph's mutations. Each converts to the request
// body advisorspec shapes (a ContactBody or a TopAccountUpdate), which is what is checked and
// sent. The GraphQL names are the outputs': a reference is set by the external ids under the
// name of the output field that reads it back (trustCreators, owners, party), and
// advisor.SchemaPath maps the service's names to these for messages.

// CreateTopAccountInput is a new top account.
type CreateTopAccountInput struct {
	ExternalID string
	Name       string
}

func (in CreateTopAccountInput) check() error {
	body, _ := json.Marshal(advisorspec.TopAccountUpdate{ExternalID: &in.ExternalID, Name: &in.Name})
	_, _, err := advisorspec.CheckNewTopAccount(body)
	if err != nil && err.Field == "" && err.Kind == advisorspec.Invalid {
		// The service's "Missing required parameters" for both: through GraphQL, both blank.
		return apperr.Input("input", "input.externalId and input.name must not be blank")
	}
	return inputError("input", err)
}

// UpdateTopAccountInput changes a top account; nil leaves a field as it is.
type UpdateTopAccountInput struct {
	ExternalID *string
	Name       *string
}

func (in UpdateTopAccountInput) check() error {
	body, _ := json.Marshal(advisorspec.TopAccountUpdate{ExternalID: in.ExternalID, Name: in.Name})
	_, err := advisorspec.CheckTopAccountUpdate(body)
	return inputError("input", err)
}

// IndividualInput is a new Individual.
type IndividualInput struct {
	ExternalID string
	FirstName  *string
	MiddleName *string
	LastName   *string
	Dob        *string
}

// TrustInput is a new Trust.
type TrustInput struct {
	ExternalID        string
	LegalName         string
	TrustType         *TrustType
	TrustCreators     []string
	InitialTrustees   []string
	GoverningState    *string
	TrustCreationDate *string
}

// EntityInput is a new Entity.
type EntityInput struct {
	ExternalID         string
	LegalName          string
	IncorporationState *string
	IncorporationForm  *IncorporationForm
	Ownership          []*OwnershipInput
}

// OwnershipInput is one share of an entity: its owners, and whether they hold it jointly (nil:
// when there is more than one). The service keeps a single owner in owner_id and joint owners in
// subowners; spec writes the one that applies.
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

// checkOwnership refuses what the service's ownership entry cannot say: a share that is said
// not to be joint but has several owners (or none).
func checkOwnership(prefix string, shares []*OwnershipInput) error {
	for i, o := range shares {
		if o != nil && !o.joint() && len(o.Owners) != 1 {
			at := fmt.Sprintf("ownership[%d]", i)
			field := fmt.Sprintf("%s.%s.owners", prefix, at)
			return apperr.Input(field, field+" must name exactly one contact card when joint is false")
		}
	}
	return nil
}

// CharityInput is a new Charity.
type CharityInput struct {
	ExternalID       string
	LegalName        string
	Ein              *string // as written; body parses it (parseEIN)
	City             string
	State            string
	AddressFormatted *string
	Notes            *string
}

// WillInput is a new Will.
type WillInput struct {
	ExternalID       string
	LegalName        string
	WillType         WillType
	GoverningState   *string
	WillCreationDate *string
	Testators        []string
	Executors        []string
}

// ClassInput is a new Class.
type ClassInput struct {
	ExternalID     string
	LegalName      string
	Notes          *string
	CurrentParties *ClassPartiesInput
}

// ClassPartiesInput is a class's current parties.
type ClassPartiesInput struct {
	IsDistributedEvenly *bool
	ShareAmount         *string
	Parties             []*ClassPartyInput
}

// ClassPartyInput is one party of a class.
type ClassPartyInput struct {
	Party                  string
	DistributionPercentage *float64
	Fraction               *FractionInput
}

// FractionInput is a share as numerator over denominator.
type FractionInput struct {
	Numerator   int64
	Denominator int64
}

// IndividualPatch changes an Individual.
type IndividualPatch struct {
	FirstName  *string
	MiddleName *string
	LastName   *string
	Dob        *string
}

// TrustPatch changes a Trust.
type TrustPatch struct {
	LegalName         *string
	TrustType         *TrustType
	TrustCreators     []string
	InitialTrustees   []string
	GoverningState    *string
	TrustCreationDate *string
}

// EntityPatch changes an Entity.
type EntityPatch struct {
	LegalName          *string
	IncorporationState *string
	IncorporationForm  *IncorporationForm
	Ownership          []*OwnershipInput
}

// CharityPatch changes a Charity.
type CharityPatch struct {
	LegalName        *string
	Ein              *string // as written; body parses it (parseEIN)
	City             *string
	State            *string
	AddressFormatted *string
	Notes            *string
}

// WillPatch changes a Will.
type WillPatch struct {
	LegalName        *string
	WillType         *WillType
	GoverningState   *string
	WillCreationDate *string
	Testators        []string
	Executors        []string
}

// ClassPatch changes a Class.
type ClassPatch struct {
	LegalName      *string
	Notes          *string
	CurrentParties *ClassPartiesInput
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
	value contactBody
}

// contactBody is a member of ContactInput or ContactPatch: a typed pointer, which says itself
// as the service's body.
type contactBody interface {
	spec() advisorspec.ContactBody
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
	b := m.value.spec()
	b.Type = m.typ
	if in.Charity != nil {
		if b.EIN, err = parseEIN(prefix+".ein", in.Charity.Ein); err != nil {
			return nil, "", err
		}
	}
	body, err := json.Marshal(b)
	if err != nil {
		return nil, "", fmt.Errorf("encode the contact: %w", err)
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
	b := m.value.spec()
	if p.Charity != nil {
		if b.EIN, err = parseEIN(prefix+".ein", p.Charity.Ein); err != nil {
			return nil, "", err
		}
	}
	body, err := json.Marshal(b)
	if err != nil {
		return nil, "", fmt.Errorf("encode the contact patch: %w", err)
	}
	return body, prefix, inputError(prefix, advisorspec.CheckContactUpdate(body, scope, m.typ, "", nil))
}

// inputError turns a broken rule into BAD_USER_INPUT naming the GraphQL field at fault, in the
// schema's words: the service's field path under prefix (ownership[0].owner_id under
// input.entity is input.entity.ownership[0].owners), in extensions.field and in the message,
// which is translated likewise.
func inputError(prefix string, err *advisorspec.Error) error {
	if err == nil {
		return nil
	}
	msg := advisor.SchemaMessage(err.Field, err.Message)
	if err.Field == "" {
		return apperr.InputAt(prefix, "", msg)
	}
	short := advisor.SchemaPath(err.Field)
	return apperr.InputAt(prefix+"."+short, short, msg)
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
	field := prefix + "." + path
	if path == "advisorId" || path == "teamId" {
		// The v1 query parameters, which the mutations take as arguments of their own.
		field = path
	}
	named := *e
	at := apperr.InputAt(field, path, e.Message)
	named.Field, named.Message = at.Field, at.Message
	return &named
}

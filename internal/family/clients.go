package family

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/enumcase"
)

// The Clients file's enumerations, as GraphQL spells them (SCREAMING_SNAKE_CASE) and the
// service does (its spelling, spaces included for a primary document).
var (
	maritalStatuses  = enumcase.NewTable("MaritalStatus", advisorspec.MaritalStatuses...)
	estatePlans      = enumcase.NewTable("EstatePlan", advisorspec.EstatePlans...)
	primaryDocuments = enumcase.NewTable("PrimaryDocument", advisorspec.PrimaryDocuments...)
)

// MaritalStatus is a client's marital status, such as DomesticPartnership.
type MaritalStatus string

func (m MaritalStatus) MarshalGQL(w io.Writer) { maritalStatuses.Marshal(w, string(m)) }

func (m *MaritalStatus) UnmarshalGQL(v any) error {
	s, err := maritalStatuses.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("MaritalStatus", v, maritalStatuses.GraphQLNames())
	}
	*m = MaritalStatus(s)
	return nil
}

// EstatePlan is the estate plan a client already has, such as JointTrust.
type EstatePlan string

func (p EstatePlan) MarshalGQL(w io.Writer) { estatePlans.Marshal(w, string(p)) }

func (p *EstatePlan) UnmarshalGQL(v any) error {
	s, err := estatePlans.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("EstatePlan", v, estatePlans.GraphQLNames())
	}
	*p = EstatePlan(s)
	return nil
}

// PrimaryDocument is the estate document a client chose, such as "One Joint Revocable Trust".
type PrimaryDocument string

func (d PrimaryDocument) MarshalGQL(w io.Writer) { primaryDocuments.Marshal(w, string(d)) }

func (d *PrimaryDocument) UnmarshalGQL(v any) error {
	s, err := primaryDocuments.Unmarshal(v)
	if err != nil {
		return apperr.BadEnumValue("PrimaryDocument", v, primaryDocuments.GraphQLNames())
	}
	*d = PrimaryDocument(s)
	return nil
}

// ClientInput is addClient's input: a Clients-file row with GraphQL's names.
type ClientInput struct {
	ID                      string
	PrimaryID               *string
	Email                   *string
	FirstName               string
	LastName                string
	SendInvitationEmail     *bool
	SubscriptionStartDate   *time.Time
	MaritalStatus           *MaritalStatus
	SpouseFirstName         *string
	SpouseLastName          *string
	SpouseID                *string
	Address                 *ClientAddressInput
	HasChildren             *bool
	HasPets                 *bool
	OwnProperty             *bool
	ExistingEstatePlan      *EstatePlan
	SelectedPrimaryDocument *PrimaryDocument
}

// ClientAddressInput is a client's address; every member is optional.
type ClientAddressInput struct {
	Line1, Line2, City, State, Zip *string
}

// ClientAddress is a client's address as the service keeps it.
type ClientAddress = advisorspec.ClientAddress

// ClientDetails is what the service answered Add Client with.
type ClientDetails struct {
	Wid                     string
	ID                      string
	PrimaryID               *string
	SpouseID                *string
	SendInvitationEmail     *bool
	AdvisorID               string
	TeamID                  string
	PrimaryContactID        string
	SpouseContactID         *string
	InvitationSent          bool
	FirstName               string
	LastName                string
	Email                   *string
	MaritalStatus           *MaritalStatus
	SpouseFirstName         *string
	SpouseLastName          *string
	Address                 *ClientAddress
	SubscriptionStartDate   *time.Time
	HasChildren             *bool
	HasPets                 *bool
	OwnProperty             *bool
	ExistingEstatePlan      *EstatePlan
	SelectedPrimaryDocument *PrimaryDocument
}

// DeleteClientPayload is what deleteClient answers.
type DeleteClientPayload struct {
	ExternalID string
	Deleted    bool
	// ref is the client as deleted: by its external id, as the gateway acted for.
	ref advisor.ClientRef
}

// DeletedID is the deleted client's global id: the one client(ref:) and addClient answer for
// the same external id, advisor and team.
func (p *DeleteClientPayload) DeletedID() string { return clientOf(p.ref).ID() }

// row is the input as the Clients file spells it.
func (in ClientInput) row() ([]byte, error) {
	r := advisorspec.ClientRow{ID: in.ID, ClientFields: advisorspec.ClientFields{
		PrimaryID: in.PrimaryID, Email: in.Email, FirstName: in.FirstName, LastName: in.LastName,
		SendInvitationEmail: in.SendInvitationEmail, SubscriptionStartDate: in.SubscriptionStartDate,
		MaritalStatus: (*string)(in.MaritalStatus), SpouseFirstName: in.SpouseFirstName, SpouseLastName: in.SpouseLastName,
		SpouseID: in.SpouseID, HasChildren: in.HasChildren, HasPets: in.HasPets, OwnProperty: in.OwnProperty,
		ExistingEstatePlan: (*string)(in.ExistingEstatePlan), SelectedPrimaryDocument: (*string)(in.SelectedPrimaryDocument),
	}}
	if a := in.Address; a != nil {
		r.Address = &advisorspec.ClientAddress{Line1: a.Line1, Line2: a.Line2, City: a.City, State: a.State, Zip: a.Zip}
	}
	return json.Marshal(r)
}

// AddClient adds a client or, when one with the input's id exists, updates it. The input is
// checked against the Clients table first, so a bad one costs no request; the error then
// names the field as the caller wrote it (input.address.zip).
func (s *Service) AddClient(ctx context.Context, in ClientInput, advisorID, teamID *string) (*Client, error) {
	row, err := in.row()
	if err != nil {
		return nil, fmt.Errorf("encode client %s: %w", in.ID, err)
	}
	if _, errs := advisorspec.CheckClientRow(row); len(errs) > 0 {
		return nil, inputError("input", errs[0])
	}
	ref := advisor.ClientRef{Ref: in.ID, AdvisorID: deref(advisorID), TeamID: deref(teamID)}
	got, added, err := s.api.AddClient(ctx, ref, row)
	if err != nil {
		return nil, err
	}
	// The client is named as client(ref:) names it, by its external id and as the gateway
	// acted for, not by the advisor and team the service answered (which details keep): so it
	// has the same global id, and its cards theirs, however it was reached.
	c := clientOf(advisor.ClientRef{Ref: got.ExternalID, AdvisorID: ref.AdvisorID, TeamID: ref.TeamID})
	c.Added, c.Details = &added, clientDetails(got)
	return c, nil
}

// DeleteClient revokes access to a client; its cards are kept.
func (s *Service) DeleteClient(ctx context.Context, ref advisor.ClientRef) (*DeleteClientPayload, error) {
	if err := s.api.DeleteClient(ctx, ref); err != nil {
		return nil, err
	}
	return &DeleteClientPayload{ExternalID: ref.Ref, Deleted: true, ref: ref}, nil
}

func clientDetails(c advisorspec.Client) *ClientDetails {
	start := c.SubscriptionStartDate
	return &ClientDetails{
		Wid: c.WID, ID: c.ExternalID, PrimaryID: c.PrimaryID, SpouseID: c.SpouseID, SendInvitationEmail: c.SendInvitationEmail,
		AdvisorID: c.AdvisorID, TeamID: c.TeamID,
		PrimaryContactID: c.PrimaryContactID, SpouseContactID: nonEmpty(c.SpouseContactID), InvitationSent: c.InvitationSent,
		FirstName: c.FirstName, LastName: c.LastName, Email: c.Email,
		MaritalStatus: (*MaritalStatus)(c.MaritalStatus), SpouseFirstName: c.SpouseFirstName, SpouseLastName: c.SpouseLastName,
		Address: c.Address, SubscriptionStartDate: start, HasChildren: c.HasChildren, HasPets: c.HasPets,
		OwnProperty: c.OwnProperty, ExistingEstatePlan: (*EstatePlan)(c.ExistingEstatePlan),
		SelectedPrimaryDocument: (*PrimaryDocument)(c.SelectedPrimaryDocument),
	}
}

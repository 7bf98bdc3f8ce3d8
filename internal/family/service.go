package family

import (
	"context"
	"fmt"
	"slices"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
)

// API is what the family graph needs of the Advisor service.
type API interface {
	TopAccount(ctx context.Context, wid string) (advisorspec.TopAccount, error)
	TopAccounts(ctx context.Context, page, limit int) (advisorspec.TopAccountPage, error)
	CreateTopAccount(ctx context.Context, externalID, name string) (advisorspec.TopAccount, error)
	UpdateTopAccount(ctx context.Context, wid string, externalID, name *string) (advisorspec.TopAccount, error)
	LendContacts(ctx context.Context, wid string, use func([]advisorspec.Contact) error) error
	Contact(ctx context.Context, wid, id string) (advisorspec.Contact, error)
	CreateContact(ctx context.Context, wid string, body []byte) (string, error)
	UpdateContact(ctx context.Context, wid, id string, body []byte) (string, error)
	LendClientContacts(ctx context.Context, ref advisor.ClientRef, use func([]advisorspec.Contact) error) error
	ClientContact(ctx context.Context, ref advisor.ClientRef, id string) (advisorspec.Contact, error)
	CreateClientContact(ctx context.Context, ref advisor.ClientRef, body []byte) (string, error)
	UpdateClientContact(ctx context.Context, ref advisor.ClientRef, id string, body []byte) (string, error)
	AddClient(ctx context.Context, ref advisor.ClientRef, row []byte) (advisorspec.Client, bool, error)
	DeleteClient(ctx context.Context, ref advisor.ClientRef) error
}

// Service answers the family graph's queries and mutations.
type Service struct {
	api API
}

// NewService returns the family graph over api.
func NewService(api API) *Service { return &Service{api: api} }

// TopAccounts returns one page of top accounts. The page and limit are checked as the service
// checks them, with its messages.
//
// scope is the caller's firm, which the page's cursors are bound to.
func (s *Service) TopAccounts(ctx context.Context, scope string, page, limit int) (*TopAccountConnection, error) {
	switch {
	case page < 1:
		return nil, apperr.Input("page", "page must be a positive integer")
	case limit > advisorspec.MaxTopPageLimit:
		return nil, apperr.Input("limit", fmt.Sprintf("Limit can't be more than %d", advisorspec.MaxTopPageLimit))
	case limit < 1:
		return nil, apperr.Input("limit", fmt.Sprintf("limit must be an integer from 1 to %d", advisorspec.MaxTopPageLimit))
	}
	p, err := s.api.TopAccounts(ctx, page, limit)
	if err != nil {
		return nil, err
	}
	start := (page - 1) * limit
	return topAccountConnection(p, start, start+len(p.TopAccounts), topAccountOffsets(scope)), nil
}

// TopAccount returns a top account, or nil when there is none.
func (s *Service) TopAccount(ctx context.Context, wid string) (*TopAccount, error) {
	t, err := s.api.TopAccount(ctx, wid)
	if apperr.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return topAccountFrom(t), nil
}

// Contacts returns an owner's cards, oldest first, keeping only the given types if any.
func (s *Service) Contacts(ctx context.Context, owner Owner, types []ContactType) ([]Contact, error) {
	r, err := s.roster(ctx, owner)
	if err != nil {
		return nil, err
	}
	if len(types) == 0 {
		return r.cards, nil
	}
	out := []Contact{}
	for _, c := range r.cards {
		if slices.Contains(types, c.card().Type) {
			out = append(out, c)
		}
	}
	return out, nil
}

// ContactByID returns one of an owner's cards by its service id, or nil when there is none.
// With graph (the query reaches the card's relationships or the cards its references name), the
// card comes with its owner's roster, listed once per request; without, it is read alone.
//
// id is the card's service id (contactId) or its global id (ContactIDOf).
func (s *Service) ContactByID(ctx context.Context, owner Owner, id string, graph bool) (Contact, error) {
	id, err := ContactIDOf("id", id)
	if err != nil {
		return nil, err
	}
	var c advisorspec.Contact
	if owner.isClient() {
		c, err = s.api.ClientContact(ctx, owner.Client, id)
	} else {
		c, err = s.api.Contact(ctx, owner.TopAccount, id)
	}
	if apperr.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	contact, err := s.contactFrom(owner, c)
	if err != nil || !graph {
		return contact, err
	}
	r, err := s.roster(ctx, owner)
	if err != nil {
		return nil, err
	}
	r.place(contact.card())
	return contact, nil
}

// ContactByExternalID returns one of an owner's cards by its external id, or nil when there
// is none: a look-up in the owner's roster, listed the first time the request asks.
func (s *Service) ContactByExternalID(ctx context.Context, owner Owner, externalID string) (Contact, error) {
	r, err := s.roster(ctx, owner)
	if apperr.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r.lookup(externalID), nil
}

// FindContact returns a card by its id or its external id, exactly one of which must be given;
// graph is as for ContactByID.
func (s *Service) FindContact(ctx context.Context, owner Owner, id, externalID *string, graph bool) (Contact, error) {
	switch {
	case (id == nil) == (externalID == nil):
		return nil, apperr.Input("id", "Give exactly one of id and externalId")
	case id != nil:
		return s.ContactByID(ctx, owner, *id, graph)
	default:
		return s.ContactByExternalID(ctx, owner, *externalID)
	}
}

// Graph returns every relationship among an owner's cards.
func (s *Service) Graph(ctx context.Context, owner Owner) ([]*Relationship, error) {
	r, err := s.roster(ctx, owner)
	if err != nil {
		return nil, err
	}
	return r.edges, nil
}

// Client returns a v1 client, or nil when there is none. It lists the client's cards to find
// out, and keeps them for the rest of the request.
func (s *Service) Client(ctx context.Context, ref advisor.ClientRef) (*Client, error) {
	c := clientOf(ref)
	_, err := s.roster(ctx, c.owner())
	if apperr.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ClientContacts returns a client's cards, keeping only the given types if any.
func (s *Service) ClientContacts(ctx context.Context, c *Client, types []ContactType) ([]Contact, error) {
	return s.Contacts(ctx, c.owner(), types)
}

// ClientContact returns one of a client's cards, or nil when there is none; graph is as for
// ContactByID.
func (s *Service) ClientContact(ctx context.Context, c *Client, id string, graph bool) (Contact, error) {
	return s.ContactByID(ctx, c.owner(), id, graph)
}

func (s *Service) lendContacts(ctx context.Context, owner Owner, use func([]advisorspec.Contact) error) error {
	if owner.isClient() {
		return s.api.LendClientContacts(ctx, owner.Client, use)
	}
	return s.api.LendContacts(ctx, owner.TopAccount, use)
}

// CreateTopAccount adds a top account.
func (s *Service) CreateTopAccount(ctx context.Context, in CreateTopAccountInput) (*TopAccount, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	t, err := s.api.CreateTopAccount(ctx, in.ExternalID, in.Name)
	if err != nil {
		return nil, err
	}
	return topAccountFrom(t), nil
}

// UpdateTopAccount changes a top account's external id or name.
func (s *Service) UpdateTopAccount(ctx context.Context, wid string, in UpdateTopAccountInput) (*TopAccount, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	t, err := s.api.UpdateTopAccount(ctx, wid, in.ExternalID, in.Name)
	if err != nil {
		return nil, err
	}
	return topAccountFrom(t), nil
}

// CreateContact adds a card to an owner and returns it as the service stored it; graph is as
// for ContactByID.
func (s *Service) CreateContact(ctx context.Context, owner Owner, in ContactInput, graph bool) (Contact, error) {
	body, prefix, err := in.body(scopeOf(owner))
	if err != nil {
		return nil, err
	}
	var id string
	if owner.isClient() {
		id, err = s.api.CreateClientContact(ctx, owner.Client, body)
	} else {
		id, err = s.api.CreateContact(ctx, owner.TopAccount, body)
	}
	if err != nil {
		return nil, upstreamInputError(prefix, err)
	}
	return s.written(ctx, owner, id, graph)
}

// UpdateContact changes one of an owner's cards and returns it as the service stored it; id and
// graph are as for ContactByID.
func (s *Service) UpdateContact(ctx context.Context, owner Owner, id string, in ContactPatch, graph bool) (Contact, error) {
	id, err := ContactIDOf("id", id)
	if err != nil {
		return nil, err
	}
	body, prefix, err := in.body(scopeOf(owner))
	if err != nil {
		return nil, err
	}
	if owner.isClient() {
		_, err = s.api.UpdateClientContact(ctx, owner.Client, id, body)
	} else {
		_, err = s.api.UpdateContact(ctx, owner.TopAccount, id, body)
	}
	if err != nil {
		return nil, upstreamInputError(prefix, err)
	}
	return s.written(ctx, owner, id, graph)
}

// written reads back a card after a write. The write cleared the request's cache (the client
// does, for every write), so the card, its relationships and its references are read afresh.
func (s *Service) written(ctx context.Context, owner Owner, id string, graph bool) (Contact, error) {
	c, err := s.ContactByID(ctx, owner, id, graph)
	if err == nil && c == nil {
		err = apperr.New(apperr.NotFound, "Contact card not found")
	}
	return c, err
}

func scopeOf(owner Owner) advisorspec.Scope {
	if owner.isClient() {
		return advisorspec.ClientScope
	}
	return advisorspec.TopAccountScope
}

package family

import (
	"context"
	"errors"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/apperr"
)

// rosterKey is an owner's roster in the request's cache (advisor.Cache), beside the raw reads
// it is worked out from; a write through the client clears both at once.
type rosterKey struct{ owner Owner }

// roster returns an owner's cards and their graph: listed and worked out the first time the
// request asks, and from memory after that. Without the request's cache it fails (INTERNAL).
func (s *Service) roster(ctx context.Context, owner Owner) (*roster, error) {
	return advisor.Memo(ctx, rosterKey{owner}, func() (*roster, error) { return s.listRoster(ctx, owner) })
}

// listRoster lists an owner's cards from the upstream.
func (s *Service) listRoster(ctx context.Context, owner Owner) (*roster, error) {
	list, err := s.listContacts(ctx, owner)
	if err != nil {
		return nil, err
	}
	cards, err := s.contactsFrom(owner, list)
	if err != nil {
		return nil, err
	}
	return newRoster(cards), nil
}

// errNoService is a reference made outside the service, which has no roster to look in.
var errNoService = apperr.Wrap(apperr.Internal, "Internal error", errors.New("a contact reference was made without the family service"))

// Contact is the card the reference names, or nil when it dangles: a look-up in the owner's
// roster, which the request lists once. It is a method rather than a resolver so gqlgen calls
// it inline: nearly every reference is answered from memory, and a goroutine per reference
// would cost more than the answer.
func (r *ContactRef) Contact(ctx context.Context) (Contact, error) {
	if r.looked {
		return r.resolved, nil
	}
	if r.svc == nil {
		return nil, errNoService
	}
	return r.svc.ContactByExternalID(ctx, r.Owner, r.ExternalID)
}

// Relationships are the card's relationships in both directions, from its owner's roster (a
// method, inline, for the same reason as ContactRef.Contact).
func (c *Card) Relationships(ctx context.Context) ([]*Relationship, error) {
	if c.svc == nil {
		return nil, errNoService
	}
	r, err := c.svc.roster(ctx, c.Owner)
	if err != nil {
		return nil, err
	}
	return r.touching(c), nil
}

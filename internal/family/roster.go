package family

import (
	"context"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
)

// rosterKey is an owner's roster in the request's cache (advisor.Cache), beside the raw reads
// it is worked out from; a write through the client clears both at once.
type rosterKey struct{ owner Owner }

// roster returns an owner's cards and their graph: listed and worked out the first time the
// request asks, and from memory after that. Without the request's cache it fails (INTERNAL).
func (s *Service) roster(ctx context.Context, owner Owner) (*roster, error) {
	return advisor.Memo(ctx, rosterKey{owner}, func() (*roster, error) { return s.listRoster(ctx, owner) })
}

// listRoster lists an owner's cards from the upstream. The list is lent (advisor's
// LendContacts): the cards made of it are all that is kept.
func (s *Service) listRoster(ctx context.Context, owner Owner) (*roster, error) {
	var cards []Contact
	err := s.lendContacts(ctx, owner, func(list []advisorspec.Contact) (err error) {
		cards, err = s.contactsFrom(owner, list)
		return err
	})
	if err != nil {
		return nil, err
	}
	return newRoster(cards), nil
}

// Relationships are the card's relationships in both directions, from its owner's roster: in
// memory, so a method without a context that gqlgen calls inline.
func (c *Card) Relationships() []*Relationship { return c.graph.touching(c) }

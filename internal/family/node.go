package family

import (
	"context"
	"slices"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/nodeid"
)

// The GraphQL types whose global ids this package makes, beside the card types (ContactType's
// values, which are spelled as the GraphQL types are).
const (
	NodeTopAccount = "TopAccount"
	NodeClient     = "Client"
)

// A card's key says whose it is, as its first part: a top account's cards and a client's are
// read through different endpoints.
const (
	ownerTopAccount = "t"
	ownerClient     = "c"
)

func (t ContactType) typeName() string { return string(t) }

// IsCardType reports whether typ names a contact card's GraphQL type.
func IsCardType(typ string) bool {
	return slices.Contains(advisorspec.ContactTypes, advisorspec.ContactType(typ))
}

// CardKey is what a card's global id names.
type CardKey struct {
	Type      ContactType
	Owner     Owner
	ContactID string
}

// ParseCardKey reads a card's global id from its decoded key; false when the key is not one a
// card's id has.
func ParseCardKey(k nodeid.Key) (CardKey, bool) {
	if !IsCardType(k.Type) {
		return CardKey{}, false
	}
	p := k.Parts
	switch {
	case len(p) == 3 && p[0] == ownerTopAccount && p[1] != "" && p[2] != "":
		return CardKey{Type: ContactType(k.Type), Owner: OfTopAccount(p[1]), ContactID: p[2]}, true
	case len(p) == 5 && p[0] == ownerClient && p[1] != "" && p[4] != "":
		ref := advisor.ClientRef{Ref: p[1], AdvisorID: p[2], TeamID: p[3]}
		return CardKey{Type: ContactType(k.Type), Owner: OfClient(ref), ContactID: p[4]}, true
	}
	return CardKey{}, false
}

// ContactIDOf reads a card argument that takes either the card's service id (what `id` was
// before cards had global ids) or its global id, and gives the service id. It is read under
// the owner the other arguments name, as a service id is: a card of another top account is not
// found there. Another object's global id is refused, naming arg.
func ContactIDOf(arg, id string) (string, error) {
	k, err := nodeid.Decode(id)
	if err != nil {
		return id, nil // a service id: the upstream's ids are never a key's spelling
	}
	c, ok := ParseCardKey(k)
	if !ok {
		return "", apperr.Input(arg, arg+" is the global id of another object than a contact card")
	}
	return c.ContactID, nil
}

// CardNode returns the card a global id names, or nil when there is none of its type: one
// upstream call (two with graph, as for ContactByID).
func (s *Service) CardNode(ctx context.Context, k CardKey, graph bool) (Contact, error) {
	c, err := s.ContactByID(ctx, k.Owner, k.ContactID, graph)
	if err != nil || c == nil || c.card().Type != k.Type {
		return nil, err
	}
	return c, nil
}

// CardNodes returns the cards of one owner that keys name, aligned with them, nil where there
// is none: from the owner's roster, one list call however many there are.
func (s *Service) CardNodes(ctx context.Context, owner Owner, keys []CardKey) ([]Contact, error) {
	out := make([]Contact, len(keys))
	r, err := s.roster(ctx, owner)
	if apperr.IsNotFound(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	byID := make(map[string]Contact, len(r.cards))
	for _, c := range r.cards {
		byID[c.card().ContactID] = c
	}
	for i, k := range keys {
		if c := byID[k.ContactID]; c != nil && c.card().Type == k.Type {
			out[i] = c
		}
	}
	return out, nil
}

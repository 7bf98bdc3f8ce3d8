package family

import (
	"context"
	"slices"
	"strconv"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/nodeid"
)

// The GraphQL types whose global ids this package makes, beside the card types (ContactType's
// values, which are spelled as the GraphQL types are).
const (
	NodeTopAccount   = "TopAccount"
	NodeClient       = "Client"
	NodeRelationship = "Relationship"
	NodeContactRef   = "ContactRef"
)

// A card's key says whose it is, as its first part: a top account's cards and a client's are
// read through different endpoints.
const (
	ownerTopAccount = "t"
	ownerClient     = "c"
)

func (t ContactType) typeName() string { return string(t) }

// keyParts are the parts of an id that name the owner, first in the key of each of its cards,
// relationships and references.
func (o Owner) keyParts() []string {
	if o.isClient() {
		c := o.Client
		return []string{ownerClient, c.Ref, c.AdvisorID, c.TeamID}
	}
	return []string{ownerTopAccount, o.TopAccount}
}

// parseOwner reads the owner that keyParts wrote at the start of p, and gives the parts after it.
func parseOwner(p []string) (o Owner, rest []string, ok bool) {
	switch {
	case len(p) >= 2 && p[0] == ownerTopAccount && p[1] != "":
		return OfTopAccount(p[1]), p[2:], true
	case len(p) >= 4 && p[0] == ownerClient && p[1] != "":
		return OfClient(advisor.ClientRef{Ref: p[1], AdvisorID: p[2], TeamID: p[3]}), p[4:], true
	}
	return Owner{}, nil, false
}

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
	o, p, ok := parseOwner(k.Parts)
	if !ok || len(p) != 1 || p[0] == "" {
		return CardKey{}, false
	}
	return CardKey{Type: ContactType(k.Type), Owner: o, ContactID: p[0]}, true
}

// RelationshipKey is what a relationship's global id names.
type RelationshipKey struct {
	Owner Owner
	// Source is the service id of the card that holds the reference.
	Source string
	Role   RelationshipRole
	// Target is the external id the reference names.
	Target string
	nth    int
}

// ParseRelationshipKey reads a relationship's global id from its decoded key; false when the
// key is not one a relationship's id has.
func ParseRelationshipKey(k nodeid.Key) (RelationshipKey, bool) {
	if k.Type != NodeRelationship {
		return RelationshipKey{}, false
	}
	o, p, ok := parseOwner(k.Parts)
	if !ok || len(p) != 4 || p[0] == "" || !slices.Contains(Roles, RelationshipRole(p[1])) {
		return RelationshipKey{}, false
	}
	nth, err := strconv.Atoi(p[3])
	if err != nil || nth < 0 || strconv.Itoa(nth) != p[3] {
		return RelationshipKey{}, false
	}
	return RelationshipKey{Owner: o, Source: p[0], Role: RelationshipRole(p[1]), Target: p[2], nth: nth}, true
}

// ContactRefKey is what a reference's global id names.
type ContactRefKey struct {
	Owner      Owner
	ExternalID string
	// ContactID is the service id of the card referred to when it has no external id; "" else.
	ContactID string
}

// ParseContactRefKey reads a reference's global id from its decoded key; false when the key is
// not one a reference's id has.
func ParseContactRefKey(k nodeid.Key) (ContactRefKey, bool) {
	if k.Type != NodeContactRef {
		return ContactRefKey{}, false
	}
	o, p, ok := parseOwner(k.Parts)
	if !ok || len(p) != 2 || (p[0] == "") == (p[1] == "") {
		return ContactRefKey{}, false
	}
	return ContactRefKey{Owner: o, ExternalID: p[0], ContactID: p[1]}, true
}

// OwnerOf is the owner of the cards, relationships and references whose key k is, and whether
// k is such a key.
func OwnerOf(k nodeid.Key) (Owner, bool) {
	switch {
	case IsCardType(k.Type) || k.Type == NodeRelationship || k.Type == NodeContactRef:
		o, _, ok := parseOwner(k.Parts)
		return o, ok
	}
	return Owner{}, false
}

// RelationshipNode returns the relationship a global id names, or nil when its owner's graph
// no longer has it: one list of the owner's cards.
func (s *Service) RelationshipNode(ctx context.Context, k RelationshipKey) (*Relationship, error) {
	r, err := s.roster(ctx, k.Owner)
	if err != nil {
		return nil, err
	}
	for _, e := range r.edges {
		if e.Source.Contact.card().ContactID == k.Source && e.Role == k.Role && e.Target.ExternalID == k.Target && e.nth == k.nth {
			return e, nil
		}
	}
	return nil, nil
}

// ContactRefNode returns the reference a global id names, or nil when none of its owner's
// cards has or names its external id any longer (or, for a card without one, the card is
// gone or has one now): one list of the owner's cards.
func (s *Service) ContactRefNode(ctx context.Context, k ContactRefKey) (*ContactRef, error) {
	r, err := s.roster(ctx, k.Owner)
	if err != nil {
		return nil, err
	}
	if k.ContactID != "" {
		for _, c := range r.cards {
			if cc := c.card(); cc.ContactID == k.ContactID && deref(cc.ExternalID) == "" {
				return &ContactRef{owner: &k.Owner, Contact: c}, nil
			}
		}
		return nil, nil
	}
	ref := &ContactRef{owner: &k.Owner, ExternalID: k.ExternalID, Contact: r.lookup(k.ExternalID)}
	if ref.Contact != nil {
		return ref, nil
	}
	for _, e := range r.edges {
		if e.Target.ExternalID == k.ExternalID {
			return ref, nil
		}
	}
	return nil, nil
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

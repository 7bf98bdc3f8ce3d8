package family

import (
	"fmt"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
)

func topAccountFrom(t advisorspec.TopAccount) *TopAccount {
	return &TopAccount{WID: t.WID, ExternalID: t.ExternalID, Name: t.Name}
}

// contactFrom maps an upstream contact card. A card of a type the gateway does not know (the
// service added one) is an error: the schema has to learn the type first.
func (s *Service) contactFrom(owner Owner, c advisorspec.Contact) (Contact, error) {
	cards, err := s.contactsFrom(owner, []advisorspec.Contact{c})
	if err != nil {
		return nil, err
	}
	return cards[0], nil
}

// contactsFrom maps a list of upstream cards, failing (as contactFrom) on the first of a type
// the gateway does not know. The cards, and what they hold by pointer, are cut from arrays
// allocated once each at the sizes a first pass counts: a list of any length costs a dozen
// allocations rather than a few for every card.
func (s *Service) contactsFrom(owner Owner, list []advisorspec.Contact) ([]Contact, error) {
	var n cardSizes
	for i := range list {
		if err := n.count(&list[i]); err != nil {
			return nil, err
		}
	}
	ch := newCardChunks(n, list)
	out := make([]Contact, len(list))
	for i := range list {
		out[i] = ch.contact(owner, &list[i])
	}
	return out, nil
}

// cardSizes is what a list of cards holds, counted.
type cardSizes struct {
	individuals, trusts, entities, charities, wills, classes int
	strings                                                  int // external ids, owner ids, EINs
	ownerships, partySets, parties, fractions                int
	einText                                                  int // the bytes of the EINs, written
}

func (n *cardSizes) count(c *advisorspec.Contact) error {
	if c.ExternalID != "" {
		n.strings++
	}
	switch advisorspec.ContactType(c.Type) {
	case advisorspec.Individual:
		n.individuals++
	case advisorspec.Trust:
		n.trusts++
	case advisorspec.Entity:
		n.entities++
		n.ownerships += len(c.Ownership)
		for _, o := range c.Ownership {
			if o.OwnerID != "" {
				n.strings++
			}
		}
	case advisorspec.Charity:
		n.charities++
		if c.EIN != nil {
			n.strings++
			n.einText += einLen(*c.EIN)
		}
	case advisorspec.Will:
		n.wills++
	case advisorspec.Class:
		n.classes++
		if cp := c.CurrentParties; cp != nil {
			n.partySets++
			n.parties += len(cp.Parties)
			for _, p := range cp.Parties {
				if p.Fraction != nil {
					n.fractions++
				}
			}
		}
	default:
		return apperr.Wrap(apperr.Internal, "Internal error",
			fmt.Errorf("contact %s has type %q, which the gateway does not know", c.ID, c.Type))
	}
	return nil
}

// cardChunks are the arrays a list's cards are cut from, front first.
type cardChunks struct {
	individuals []Individual
	trusts      []Trust
	entities    []Entity
	charities   []Charity
	wills       []Will
	classes     []Class
	strings     []string // what the cards' *string fields made here point at
	ownerships  []Ownership
	ownershipOf []*Ownership // the entities' lists of them
	partySets   []ClassParties
	parties     []ClassParty
	partyOf     []*ClassParty // the classes' lists of them
	fractions   []Fraction
	einText     string // every EIN of the list, written one after the other
}

func newCardChunks(n cardSizes, list []advisorspec.Contact) *cardChunks {
	ch := &cardChunks{
		individuals: make([]Individual, n.individuals),
		trusts:      make([]Trust, n.trusts),
		entities:    make([]Entity, n.entities),
		charities:   make([]Charity, n.charities),
		wills:       make([]Will, n.wills),
		classes:     make([]Class, n.classes),
		strings:     make([]string, n.strings),
		ownerships:  make([]Ownership, n.ownerships),
		ownershipOf: make([]*Ownership, n.ownerships),
		partySets:   make([]ClassParties, n.partySets),
		parties:     make([]ClassParty, n.parties),
		partyOf:     make([]*ClassParty, n.parties),
		fractions:   make([]Fraction, n.fractions),
	}
	if n.einText > 0 {
		text := make([]byte, 0, n.einText)
		for i := range list {
			if c := &list[i]; c.EIN != nil && advisorspec.ContactType(c.Type) == advisorspec.Charity {
				text = appendEIN(text, *c.EIN)
			}
		}
		ch.einText = string(text)
	}
	return ch
}

// next takes a chunk's first element.
func next[T any](chunk *[]T) *T {
	p := &(*chunk)[0]
	*chunk = (*chunk)[1:]
	return p
}

// take takes a chunk's first n elements, capped at n so that an append to them never reaches
// the next ones.
func take[T any](chunk *[]T, n int) []T {
	s := (*chunk)[:n:n]
	*chunk = (*chunk)[n:]
	return s
}

// str points at s, or is nil for "" (as nonEmpty).
func (ch *cardChunks) str(s string) *string {
	if s == "" {
		return nil
	}
	p := next(&ch.strings)
	*p = s
	return p
}

// ein is the next EIN of the list, written as formatEIN writes it.
func (ch *cardChunks) ein(v *int64) *string {
	if v == nil {
		return nil
	}
	n := einLen(*v)
	p := next(&ch.strings)
	*p, ch.einText = ch.einText[:n], ch.einText[n:]
	return p
}

// contact maps one card, whose type count has taken.
func (ch *cardChunks) contact(owner Owner, c *advisorspec.Contact) Contact {
	card := Card{Owner: owner, ContactID: c.ID, ExternalID: ch.str(c.ExternalID), Type: ContactType(c.Type)}
	switch advisorspec.ContactType(c.Type) {
	case advisorspec.Individual:
		i := next(&ch.individuals)
		*i = Individual{Card: card, FirstName: c.FirstName, MiddleName: c.MiddleName, LastName: c.LastName, Dob: c.Dob}
		return i
	case advisorspec.Trust:
		t := next(&ch.trusts)
		*t = Trust{
			Card: card, LegalName: deref(c.LegalName), TrustType: (*TrustType)(c.TrustType),
			TrustCreator: orEmpty(c.TrustCreator), InitialTrustee: orEmpty(c.InitialTrustee),
			GoverningState: c.GoverningState, TrustCreationDate: c.TrustCreationDate,
		}
		return t
	case advisorspec.Entity:
		e := next(&ch.entities)
		*e = Entity{
			Card: card, LegalName: deref(c.LegalName), IncorporationState: c.IncorporationState,
			IncorporationForm: (*IncorporationForm)(c.IncorporationForm), Ownership: take(&ch.ownershipOf, len(c.Ownership)),
		}
		at := 0
		for k, o := range c.Ownership {
			own := next(&ch.ownerships)
			*own = Ownership{of: &e.Card, at: at, Percentage: o.Percentage, OwnerID: ch.str(o.OwnerID), Subowners: o.Subowners}
			e.Ownership[k] = own
			at += own.ownerCount()
		}
		return e
	case advisorspec.Charity:
		ca := next(&ch.charities)
		*ca = Charity{
			Card: card, LegalName: deref(c.LegalName), Ein: ch.ein(c.EIN), City: deref(c.City), State: deref(c.State),
			AddressFormatted: c.AddressFormatted, Notes: c.Notes,
		}
		return ca
	case advisorspec.Will:
		w := next(&ch.wills)
		*w = Will{
			Card: card, LegalName: deref(c.LegalName), WillType: WillType(deref(c.WillType)),
			GoverningState: c.GoverningState, WillCreationDate: c.WillCreationDate,
			Testator: orEmpty(c.Testator), Executor: orEmpty(c.Executor),
		}
		return w
	case advisorspec.Class:
		cl := next(&ch.classes)
		*cl = Class{Card: card, LegalName: deref(c.LegalName), Notes: c.Notes}
		if cp := c.CurrentParties; cp != nil {
			set := next(&ch.partySets)
			*set = ClassParties{IsDistributedEvenly: cp.IsDistributedEvenly, ShareAmount: cp.ShareAmount, Parties: take(&ch.partyOf, len(cp.Parties))}
			for k, p := range cp.Parties {
				party := next(&ch.parties)
				*party = ClassParty{of: &cl.Card, at: k, ContactID: p.ContactID, DistributionPercentage: p.DistributionPercentage}
				if p.Fraction != nil {
					f := next(&ch.fractions)
					*f = Fraction{Numerator: p.Fraction.Numerator, Denominator: p.Fraction.Denominator}
					party.Fraction = f
				}
				set.Parties[k] = party
			}
			cl.CurrentParties = set
		}
		return cl
	}
	panic("family: a card of a type cardSizes.count refuses: " + c.Type)
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// orEmpty gives a list field the service left out as empty, as the schema's non-null lists are.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

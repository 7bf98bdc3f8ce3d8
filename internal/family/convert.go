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
	card := Card{Owner: owner, ContactID: c.ID, ExternalID: nonEmpty(c.ExternalID), Type: ContactType(c.Type)}
	switch advisorspec.ContactType(c.Type) {
	case advisorspec.Individual:
		return &Individual{Card: card, FirstName: c.FirstName, MiddleName: c.MiddleName, LastName: c.LastName, Dob: c.Dob}, nil
	case advisorspec.Trust:
		return &Trust{
			Card: card, LegalName: deref(c.LegalName), TrustType: (*TrustType)(c.TrustType),
			TrustCreator: orEmpty(c.TrustCreator), InitialTrustee: orEmpty(c.InitialTrustee),
			GoverningState: c.GoverningState, TrustCreationDate: c.TrustCreationDate,
		}, nil
	case advisorspec.Entity:
		e := &Entity{
			Card: card, LegalName: deref(c.LegalName), IncorporationState: c.IncorporationState,
			IncorporationForm: (*IncorporationForm)(c.IncorporationForm), Ownership: []*Ownership{},
		}
		for _, o := range c.Ownership {
			e.Ownership = append(e.Ownership, &Ownership{of: &e.Card, Percentage: o.Percentage, OwnerID: nonEmpty(o.OwnerID), Subowners: o.Subowners})
		}
		return e, nil
	case advisorspec.Charity:
		return &Charity{
			Card: card, LegalName: deref(c.LegalName), Ein: formatEIN(c.EIN), City: deref(c.City), State: deref(c.State),
			AddressFormatted: c.AddressFormatted, Notes: c.Notes,
		}, nil
	case advisorspec.Will:
		return &Will{
			Card: card, LegalName: deref(c.LegalName), WillType: WillType(deref(c.WillType)),
			GoverningState: c.GoverningState, WillCreationDate: c.WillCreationDate,
			Testator: orEmpty(c.Testator), Executor: orEmpty(c.Executor),
		}, nil
	case advisorspec.Class:
		cl := &Class{Card: card, LegalName: deref(c.LegalName), Notes: c.Notes}
		if cp := c.CurrentParties; cp != nil {
			cl.CurrentParties = &ClassParties{IsDistributedEvenly: cp.IsDistributedEvenly, ShareAmount: cp.ShareAmount, Parties: []*ClassParty{}}
			for _, p := range cp.Parties {
				party := &ClassParty{of: &cl.Card, ContactID: p.ContactID, DistributionPercentage: p.DistributionPercentage}
				if p.Fraction != nil {
					party.Fraction = &Fraction{Numerator: p.Fraction.Numerator, Denominator: p.Fraction.Denominator}
				}
				cl.CurrentParties.Parties = append(cl.CurrentParties.Parties, party)
			}
		}
		return cl, nil
	}
	return nil, apperr.Wrap(apperr.Internal, "Internal error",
		fmt.Errorf("contact %s has type %q, which the gateway does not know", c.ID, c.Type))
}

func (s *Service) contactsFrom(owner Owner, list []advisorspec.Contact) ([]Contact, error) {
	out := make([]Contact, 0, len(list))
	for _, c := range list {
		contact, err := s.contactFrom(owner, c)
		if err != nil {
			return nil, err
		}
		out = append(out, contact)
	}
	return out, nil
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

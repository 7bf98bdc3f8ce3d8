package family

import "github.com/advisorhq/gateway/internal/advisorspec"

// Each input of a card as the body advisorspec shapes: its fields under the service's names,
// those the caller left out left nil.

func (in *IndividualInput) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{ExternalID: &in.ExternalID, FirstName: in.FirstName, MiddleName: in.MiddleName,
		LastName: in.LastName, Dob: in.Dob}
}

func (p *IndividualPatch) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{FirstName: p.FirstName, MiddleName: p.MiddleName, LastName: p.LastName, Dob: p.Dob}
}

func (in *TrustInput) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{ExternalID: &in.ExternalID, LegalName: &in.LegalName, TrustType: (*string)(in.TrustType),
		TrustCreator: in.TrustCreators, InitialTrustee: in.InitialTrustees, GoverningState: in.GoverningState,
		TrustCreationDate: in.TrustCreationDate}
}

func (p *TrustPatch) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{LegalName: p.LegalName, TrustType: (*string)(p.TrustType), TrustCreator: p.TrustCreators,
		InitialTrustee: p.InitialTrustees, GoverningState: p.GoverningState, TrustCreationDate: p.TrustCreationDate}
}

func (in *EntityInput) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{ExternalID: &in.ExternalID, LegalName: &in.LegalName, IncorporationState: in.IncorporationState,
		IncorporationForm: (*string)(in.IncorporationForm), Ownership: specs(in.Ownership, (*OwnershipInput).spec)}
}

func (p *EntityPatch) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{LegalName: p.LegalName, IncorporationState: p.IncorporationState,
		IncorporationForm: (*string)(p.IncorporationForm), Ownership: specs(p.Ownership, (*OwnershipInput).spec)}
}

// A charity's ein is left to body, which parses it and may refuse it.

func (in *CharityInput) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{ExternalID: &in.ExternalID, LegalName: &in.LegalName, City: &in.City,
		State: &in.State, AddressFormatted: in.AddressFormatted, Notes: in.Notes}
}

func (p *CharityPatch) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{LegalName: p.LegalName, City: p.City, State: p.State,
		AddressFormatted: p.AddressFormatted, Notes: p.Notes}
}

func (in *WillInput) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{ExternalID: &in.ExternalID, LegalName: &in.LegalName, WillType: (*string)(&in.WillType),
		GoverningState: in.GoverningState, WillCreationDate: in.WillCreationDate, Testator: in.Testators, Executor: in.Executors}
}

func (p *WillPatch) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{LegalName: p.LegalName, WillType: (*string)(p.WillType), GoverningState: p.GoverningState,
		WillCreationDate: p.WillCreationDate, Testator: p.Testators, Executor: p.Executors}
}

func (in *ClassInput) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{ExternalID: &in.ExternalID, LegalName: &in.LegalName, Notes: in.Notes,
		CurrentParties: in.CurrentParties.spec()}
}

func (p *ClassPatch) spec() advisorspec.ContactBody {
	return advisorspec.ContactBody{LegalName: p.LegalName, Notes: p.Notes, CurrentParties: p.CurrentParties.spec()}
}

// spec is the ownership entry of a share that checkOwnership let through: one owner in owner_id
// unless the share is joint.
func (o *OwnershipInput) spec() advisorspec.OwnershipBody {
	if !o.joint() && len(o.Owners) == 1 {
		return advisorspec.OwnershipBody{Percentage: o.Percentage, OwnerID: &o.Owners[0]}
	}
	// Sent even when empty, for the service's message.
	return advisorspec.OwnershipBody{Percentage: o.Percentage, Subowners: append([]string{}, o.Owners...)}
}

func (p *ClassPartiesInput) spec() *advisorspec.CurrentParties {
	if p == nil {
		return nil
	}
	return &advisorspec.CurrentParties{IsDistributedEvenly: p.IsDistributedEvenly, ShareAmount: p.ShareAmount,
		Parties: specs(p.Parties, (*ClassPartyInput).spec)}
}

func (p *ClassPartyInput) spec() advisorspec.Party {
	// FractionInput and advisorspec.Fraction are the same fields.
	return advisorspec.Party{ContactID: p.Party, DistributionPercentage: p.DistributionPercentage,
		Fraction: (*advisorspec.Fraction)(p.Fraction)}
}

// specs converts the items of a list, keeping a nil list nil (left out) and an empty one empty
// (sent). A null item, which GraphQL's non-null items keep out, goes as an empty one, for the
// service's check to refuse.
func specs[In, Out any](in []*In, spec func(*In) Out) []Out {
	if in == nil {
		return nil
	}
	out := make([]Out, len(in))
	for i, v := range in {
		if v == nil {
			v = new(In)
		}
		out[i] = spec(v)
	}
	return out
}

package family

// index finds an owner's cards by external id.
type index map[string]Contact

func indexOf(cards []Contact) index {
	ix := make(index, len(cards))
	for _, c := range cards {
		if id := c.card().ExternalID; id != nil {
			ix[*id] = c
		}
	}
	return ix
}

// ref is a reference to one of the owner's cards, looked up in the index.
func (ix index) ref(owner Owner, externalID string) *ContactRef {
	return &ContactRef{Owner: owner, ExternalID: externalID, Contact: ix[externalID]}
}

// edgesOf returns the relationships a card holds, in the order of its fields.
func (ix index) edgesOf(c Contact) []*Relationship {
	card := c.card()
	source := &ContactRef{Owner: card.Owner, ExternalID: deref(card.ExternalID), Contact: c}
	var out []*Relationship
	add := func(role RelationshipRole, targets []string, pct *float64) {
		for _, t := range targets {
			nth := 0
			for _, e := range out {
				if e.Role == role && e.Target.ExternalID == t {
					nth++
				}
			}
			out = append(out, &Relationship{Role: role, Source: source, Target: ix.ref(card.Owner, t), Percentage: pct, nth: nth})
		}
	}
	switch v := c.(type) {
	case *Trust:
		add(RoleTrustCreator, v.TrustCreator, nil)
		add(RoleInitialTrustee, v.InitialTrustee, nil)
	case *Entity:
		for _, o := range v.Ownership {
			pct := o.Percentage
			if o.OwnerID != nil {
				add(RoleOwner, []string{*o.OwnerID}, &pct)
			} else {
				add(RoleJointOwner, o.Subowners, &pct)
			}
		}
	case *Will:
		add(RoleTestator, v.Testator, nil)
		add(RoleExecutor, v.Executor, nil)
	case *Class:
		if v.CurrentParties != nil {
			for _, p := range v.CurrentParties.Parties {
				add(RoleClassParty, []string{p.ContactID}, p.DistributionPercentage)
			}
		}
	}
	return out
}

// roster is an owner's cards with their graph worked out once: the whole graph, and each
// card's relationships in both directions. A request computes it once per owner, and every
// card in it points back to it.
type roster struct {
	cards  []Contact
	index  index
	edges  []*Relationship
	byCard map[string][]*Relationship // by card id
}

func newRoster(cards []Contact) *roster {
	r := &roster{cards: cards, index: indexOf(cards), edges: []*Relationship{}, byCard: map[string][]*Relationship{}}
	for _, c := range cards {
		c.card().graph = r
		r.edges = append(r.edges, r.index.edgesOf(c)...)
	}
	for _, e := range r.edges {
		source := e.Source.Contact.card().ContactID
		r.byCard[source] = append(r.byCard[source], e)
		if target := e.Target.Contact; target != nil && target.card().ContactID != source {
			r.byCard[target.card().ContactID] = append(r.byCard[target.card().ContactID], e)
		}
	}
	return r
}

// touching returns the relationships a card holds and those that name it, in graph order;
// none without a roster.
func (r *roster) touching(c *Card) []*Relationship {
	if r != nil {
		if edges := r.byCard[c.ContactID]; edges != nil {
			return edges
		}
	}
	return []*Relationship{}
}

// lookup returns the card with this external id, or nil when there is none (or no roster).
func (r *roster) lookup(externalID string) Contact {
	if r == nil {
		return nil
	}
	return r.index[externalID]
}

// refs are references to cards of owner, each with the card it names when the roster has it.
func (r *roster) refs(owner Owner, externalIDs []string) []*ContactRef {
	refs := make([]ContactRef, len(externalIDs))
	out := make([]*ContactRef, len(externalIDs))
	for i, id := range externalIDs {
		refs[i] = ContactRef{Owner: owner, ExternalID: id, Contact: r.lookup(id)}
		out[i] = &refs[i]
	}
	return out
}

package family

import "slices"

// roster is an owner's cards with their graph worked out once: the whole graph, each card's
// relationships in both directions, and the references of its lists. A request computes it once
// per owner, and every card in it points back to it.
//
// Its parts are arrays indexed by a card's place in cards (Card.at) rather than maps, each
// allocated once at its size: the family query reads every card's relationships and
// references, and a roster of any size costs a dozen allocations (and its index's).
type roster struct {
	cards []Contact
	index map[string]Contact // by external id
	edges []*Relationship
	// refs are the targets of edges, in their order: a card's references, in the order of its
	// fields, are refs[refsAt[i]:refsAt[i+1]] for the card at place i.
	refs   []*ContactRef
	refsAt []int32
	// touch holds each card's relationships in both directions, in graph order: those of the
	// card at place i are touch[touchAt[i]:touchAt[i+1]].
	touch   []*Relationship
	touchAt []int32
}

func newRoster(cards []Contact) *roster {
	r := &roster{cards: cards, index: make(map[string]Contact, len(cards))}
	// First the index, and the size of everything: each card's references, so its edges.
	r.refsAt = make([]int32, len(cards)+1)
	for i, c := range cards {
		card := c.card()
		card.graph, card.at = r, int32(i+1)
		if id := card.ExternalID; id != nil {
			r.index[*id] = c // of two cards with the same id, the later
		}
		r.refsAt[i+1] = r.refsAt[i] + int32(refCount(c))
	}
	encodeIDs(cards)
	n := int(r.refsAt[len(cards)])
	rels := make([]Relationship, n)
	targets := make([]ContactRef, n)
	sources := make([]ContactRef, len(cards))
	r.edges = make([]*Relationship, n)
	r.refs = make([]*ContactRef, n)
	for i, c := range cards {
		card := c.card()
		at := int(r.refsAt[i])
		if at == int(r.refsAt[i+1]) {
			continue
		}
		source := &sources[i]
		*source = ContactRef{owner: &card.Owner, ExternalID: deref(card.ExternalID), Contact: c}
		first := at
		eachRef(c, func(role RelationshipRole, target string, pct *float64) {
			nth := 0 // the card's earlier references to the same target in the same role
			for j := first; j < at; j++ {
				if rels[j].Role == role && targets[j].ExternalID == target {
					nth++
				}
			}
			targets[at] = ContactRef{owner: &card.Owner, ExternalID: target, Contact: r.lookup(target)}
			rels[at] = Relationship{Role: role, Source: source, Target: &targets[at], Percentage: pct, nth: nth}
			r.refs[at], r.edges[at] = &targets[at], &rels[at]
			at++
		})
	}
	// Then each card's relationships: those it holds and those that name it (once, when it
	// names itself), counted, then placed in graph order.
	r.touchAt = make([]int32, len(cards)+1)
	for _, e := range r.edges {
		source, target := e.Source.Contact.card().at, r.placeOf(e.Target.Contact)
		r.touchAt[source]++
		if target != 0 && target != source {
			r.touchAt[target]++
		}
	}
	// touchAt[i+1] counts the card at place i; the running sums make it where that card's
	// relationships end, and each edge placed below moves its cards' start up to it.
	for i := 1; i < len(r.touchAt); i++ {
		r.touchAt[i] += r.touchAt[i-1]
	}
	r.touch = make([]*Relationship, r.touchAt[len(cards)])
	next := slices.Clone(r.touchAt[:len(cards)])
	for _, e := range r.edges {
		source, target := e.Source.Contact.card().at, r.placeOf(e.Target.Contact)
		r.touch[next[source-1]] = e
		next[source-1]++
		if target != 0 && target != source {
			r.touch[next[target-1]] = e
			next[target-1]++
		}
	}
	return r
}

// encodeIDs encodes the cards' global ids into one buffer, each once. It runs before the
// roster is shared, so no card's id is written while another goroutine reads it.
func encodeIDs(cards []Contact) {
	// Sized exactly: a buffer that grew would leave the ids before it in the old one, which
	// then stays alive beside it.
	n := 0
	for _, c := range cards {
		id := c.card().NodeID()
		n += id.Len()
	}
	buf := make([]byte, 0, n)
	for _, c := range cards {
		card := c.card()
		id := card.NodeID()
		start := len(buf)
		buf = id.Append(buf)
		card.gid = buf[start:len(buf):len(buf)]
	}
}

// placeOf is the place of one of the roster's cards (Card.at), 0 for nil.
func (r *roster) placeOf(c Contact) int32 {
	if c == nil {
		return 0
	}
	return c.card().at
}

// refCount is how many references a card holds: one per external id in its reference fields.
func refCount(c Contact) int {
	switch v := c.(type) {
	case *Trust:
		return len(v.TrustCreator) + len(v.InitialTrustee)
	case *Entity:
		n := 0
		for _, o := range v.Ownership {
			n += o.ownerCount()
		}
		return n
	case *Will:
		return len(v.Testator) + len(v.Executor)
	case *Class:
		if v.CurrentParties != nil {
			return len(v.CurrentParties.Parties)
		}
	}
	return 0
}

// eachRef calls add with each reference a card holds, in the order of its fields: the edges
// of the graph it is the source of.
func eachRef(c Contact, add func(role RelationshipRole, target string, pct *float64)) {
	each := func(role RelationshipRole, targets []string, pct *float64) {
		for _, t := range targets {
			add(role, t, pct)
		}
	}
	switch v := c.(type) {
	case *Trust:
		each(RoleTrustCreator, v.TrustCreator, nil)
		each(RoleInitialTrustee, v.InitialTrustee, nil)
	case *Entity:
		for _, o := range v.Ownership {
			// The share's own field: a card is not changed once read.
			if o.OwnerID != nil {
				add(RoleOwner, *o.OwnerID, &o.Percentage)
			} else {
				each(RoleJointOwner, o.Subowners, &o.Percentage)
			}
		}
	case *Will:
		each(RoleTestator, v.Testator, nil)
		each(RoleExecutor, v.Executor, nil)
	case *Class:
		if v.CurrentParties != nil {
			for _, p := range v.CurrentParties.Parties {
				add(RoleClassParty, p.ContactID, p.DistributionPercentage)
			}
		}
	}
}

// touching returns the relationships a card holds and those that name it, in graph order;
// none without a roster or a place in it.
func (r *roster) touching(c *Card) []*Relationship {
	if r == nil || c.at == 0 {
		return []*Relationship{}
	}
	from, to := r.touchAt[c.at-1], r.touchAt[c.at]
	return r.touch[from:to:to]
}

// place gives a card read alone the place of the roster's card with its id, so that it has
// that card's relationships; none when the roster has no such card.
func (r *roster) place(c *Card) {
	c.graph, c.at = r, 0
	for i, rc := range r.cards {
		if rc.card().ContactID == c.ContactID {
			c.at = int32(i + 1)
			return
		}
	}
}

// lookup returns the card with this external id, or nil when there is none (or no roster).
func (r *roster) lookup(externalID string) Contact {
	if r == nil {
		return nil
	}
	return r.index[externalID]
}

// refsOf are the references of ids, a reference list of c that starts at from among all the
// references c holds. A card of the roster has them made already, with its edges; one read
// alone (or without a roster) has them looked up.
func (r *roster) refsOf(c *Card, from int, ids []string) []*ContactRef {
	if r != nil && c.at != 0 && r.cards[c.at-1].card() == c {
		start := int(r.refsAt[c.at-1]) + from
		return r.refs[start : start+len(ids) : start+len(ids)]
	}
	return r.refsFor(&c.Owner, ids)
}

// refOf is the reference of id, c's reference at from among all those it holds (as refsOf).
func (r *roster) refOf(c *Card, from int, id string) *ContactRef {
	if r != nil && c.at != 0 && r.cards[c.at-1].card() == c {
		return r.refs[int(r.refsAt[c.at-1])+from]
	}
	return &ContactRef{owner: &c.Owner, ExternalID: id, Contact: r.lookup(id)}
}

// refsFor are references to cards of owner, each with the card it names when the roster has it.
func (r *roster) refsFor(owner *Owner, externalIDs []string) []*ContactRef {
	refs := make([]ContactRef, len(externalIDs))
	out := make([]*ContactRef, len(externalIDs))
	for i, id := range externalIDs {
		refs[i] = ContactRef{owner: owner, ExternalID: id, Contact: r.lookup(id)}
		out[i] = &refs[i]
	}
	return out
}

package bulkfile

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"math"
	"slices"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// A reference to a person, trust or entity is good when its row's owner has a card the id
// names, or when the id is a row of the file, anywhere in it, of the same owner and itself
// valid. A row naming an invalid row is invalid in turn, and so are the rows naming it: what
// they name would not exist once the file is applied. Rows that name each other in a circle,
// each valid on its own, are valid. A card that exists is good whatever the file says of its
// row, as an invalid row leaves its card as it was ("a record missing from a file is left
// unchanged").
//
// Most rows name rows above them, already decided, and are decided at once. A row naming a row
// not read yet, or one not decided yet, waits: it joins a group with the rows it depends on, and
// the group is decided as a whole when no member waits on a row still to come. Invalidity then
// spreads through the group from the rows invalid on their own, breadth first, so that each
// row learns its shortest chain to one (see distance).

// An id's entry packs the fingerprint of its row's owner in the high 32 bits, the row's state
// in the next two and its line in the rest, so that a million ids cost about 27 MiB (see
// idTable). Ids are hashed to 64 bits with maphash rather than kept: by the birthday bound, n
// ids collide with probability about n²/2⁶⁵, 3·10⁻⁸ for a million-row file and 3·10⁻⁶ for ten
// million. A collision would report a false duplicate (with both lines, for a person to see) or
// resolve a reference to the wrong row; at those odds that is an accepted cost of memory that
// stays flat. Owners are fingerprinted to 32 bits: two owners sharing one only let a reference
// from one to a row of the other pass, as every such reference passed before owners were
// compared, and the service still refuses it.
type entry uint64

// The states of a row an id names.
const (
	stateValid = 0 // valid, and every card it names exists or is a valid row
	stateOwn   = 1 // invalid for what it says itself: its distance is 0
	stateVia   = 2 // invalid only for naming invalid rows: its distance is in refs.dists
	stateHeld  = 3 // not decided: it waits on rows
)

const (
	maxLine    = 1<<30 - 1 // the line takes the low 30 bits of an entry
	stateShift = 30
	ownerShift = 32
	noDistance = math.MaxUint32 // the distance of a valid row
)

func makeEntry(line, state, owner uint32) uint64 {
	return uint64(owner)<<ownerShift | uint64(state)<<stateShift | uint64(line)
}

func (e entry) line() uint32  { return uint32(e) & maxLine }
func (e entry) state() uint32 { return uint32(e) >> stateShift & 3 }
func (e entry) owner() uint32 { return uint32(e >> ownerShift) }

// refState is what a reference to a card is known to name.
type refState uint8

const (
	refGood     refState = iota // a card of the row's owner, or a valid row of it
	refWaiting                  // an id no row has defined yet, and no card
	refHeld                     // a row read but not decided yet, of the same owner
	refInvalid                  // an invalid row, and no card
	refDangling                 // no row of the file, and no card
	refForeign                  // a row of another owner, and no card of the row's own
)

// cardRef is one reference of a row to a person, trust or entity.
type cardRef struct {
	field, id string
	state     refState
	to        *node  // refHeld: the row named
	line      uint32 // refInvalid: the line of the row named
	dist      uint32 // refInvalid: its distance
	asked     bool   // whether Options.Card has been asked, and said no
}

// node is a row that waits, or whose errors wait, on rows not read or not decided. Nodes are
// joined in groups (a union-find forest) with the rows they depend on; the root holds the group.
type node struct {
	line    uint32
	id      string
	idHash  uint64
	owner   advisorspec.RowRef
	ownerFP uint32
	own     bool // invalid for what it says itself
	refs    []cardRef
	text    []byte // kept only when writing valid rows

	parent  *node
	members []*node // the root's: every node of the group
	unread  int     // the root's: references of its members to ids not read yet
	decided bool

	dist uint32 // while its group is decided
	idx  int
}

func (n *node) root() *node {
	r := n
	for r.parent != nil {
		r = r.parent
	}
	for n.parent != nil && n.parent != r {
		n, n.parent = n.parent, r
	}
	return r
}

// join merges the groups of a and b and returns the root.
func join(a, b *node) *node {
	ra, rb := a.root(), b.root()
	if ra == rb {
		return ra
	}
	if len(ra.members) < len(rb.members) {
		ra, rb = rb, ra
	}
	rb.parent = ra
	ra.members = append(ra.members, rb.members...)
	ra.unread += rb.unread
	rb.members, rb.unread = nil, 0
	return ra
}

// waiter is a reference of a node to an id not read yet.
type waiter struct {
	n   *node
	ref int
}

// refs is what one file's rows have said of the rows they name.
type refs struct {
	pending map[uint64][]waiter // by the hash of the id waited for
	held    map[uint64]*node    // the rows not decided, by their id's hash
	dists   map[uint64]uint32   // the distance of each row invalid only for naming invalid rows
	heldLen int
	scratch []cardRef
}

func (r *refs) init() {
	r.pending, r.held, r.dists = map[uint64][]waiter{}, map[uint64]*node{}, map[uint64]uint32{}
}

func (f *file) ownerFP(owner advisorspec.RowRef) uint32 {
	if owner.ID == "" {
		return 0
	}
	return uint32(maphash.String(f.u.seed, owner.ID))
}

// row resolves the card references of a row whose other checks gave errs, and decides it, or
// makes it wait.
func (f *file) row(lineNo uint32, text []byte, l Line, idHash uint64, errs []LineError) error {
	own := len(errs) > 0
	ownerFP := f.ownerFP(l.Owner)
	crefs := f.scratch[:0]
	waits, held := 0, false
	for _, ref := range l.Refs {
		if ref.Kind != f.format.IDKind || ref.ID == l.ID {
			continue // a row naming itself is the Format's error to report
		}
		c := cardRef{field: ref.Field, id: ref.ID}
		h := f.u.hash(ref.ID)
		if e, found := f.u.ids[ref.Kind].get(h); found {
			f.named(&c, l.Owner, ownerFP, entry(e), h)
		} else if _, ok := f.card(l.Owner, ref.ID); ok {
			c.state = refGood
		} else {
			c.state, c.asked = refWaiting, true
		}
		switch c.state {
		case refWaiting:
			waits++
		case refHeld:
			held = true
		case refForeign:
			own = true
		}
		crefs = append(crefs, c)
	}
	f.scratch = crefs
	ids := f.u.ids[f.format.IDKind]

	if waits == 0 && !held {
		dist := distance(own, crefs)
		if dist == noDistance {
			if l.ID != "" {
				ids.set(idHash, makeEntry(lineNo, stateValid, ownerFP))
			}
			if err := f.accept(text); err != nil {
				return err
			}
		} else {
			f.rep.InvalidRows++
			f.report(lineNo, l.ID, errs...)
			f.reportRefs(lineNo, l.ID, l.Owner, dist, crefs)
			f.setInvalid(lineNo, idHash, l.ID, ownerFP, dist)
		}
		return f.settle(idHash, l.ID)
	}

	n := &node{line: lineNo, id: l.ID, idHash: idHash, owner: l.Owner, ownerFP: ownerFP, own: own,
		refs: slices.Clone(crefs), unread: waits}
	n.members = []*node{n}
	f.report(lineNo, l.ID, errs...)
	if !own && f.valid != nil {
		if f.heldLen+len(text) > f.u.opts.MaxHeldBytes {
			return fmt.Errorf("%s file line %d: %w", f.format.Name, lineNo, ErrTooManyHeld)
		}
		n.text = slices.Clone(text)
		f.heldLen += len(text)
	}
	for i, c := range n.refs {
		switch c.state {
		case refWaiting:
			h := f.u.hash(c.id)
			f.pending[h] = append(f.pending[h], waiter{n, i})
		case refHeld:
			join(n, c.to)
		}
	}
	if l.ID != "" {
		// A row invalid on its own is decided for the rows naming it: only its errors wait.
		state := uint32(stateHeld)
		if own {
			state = stateOwn
		} else {
			f.held[idHash] = n
		}
		ids.set(idHash, makeEntry(lineNo, state, ownerFP))
	}
	return f.settle(idHash, l.ID)
}

// named decides what a reference names, given the entry e of the row (read already) with its
// id, whose hash is h.
func (f *file) named(c *cardRef, owner advisorspec.RowRef, ownerFP uint32, e entry, h uint64) {
	if e.owner() != ownerFP {
		// Another owner's row, whatever its state: the service looks the id up among the
		// cards of the row's own client.
		if c.asked {
			c.state = refForeign
		} else if _, ok := f.card(owner, c.id); ok {
			c.state = refGood
		} else {
			c.state, c.asked = refForeign, true
		}
		return
	}
	switch e.state() {
	case stateValid:
		c.state = refGood
	case stateHeld:
		c.state, c.to = refHeld, f.held[h]
	default:
		if !c.asked {
			if _, ok := f.card(owner, c.id); ok {
				c.state = refGood
				return
			}
			c.asked = true
		}
		c.state, c.line, c.dist = refInvalid, e.line(), 0
		if e.state() == stateVia {
			c.dist = f.dists[h]
		}
	}
}

// distance is how far a row is, in references, from a row invalid on its own: 0 for such a
// row, 1 for a row naming one, and so on; noDistance for a valid row. A row reports the
// references that make its distance, so that a row invalid only for naming a row that names a
// row that is invalid names the one in the middle, and no row is told that a row is invalid
// only because of it, round a circle.
func distance(own bool, refs []cardRef) uint32 {
	if own {
		return 0
	}
	d := uint32(noDistance)
	for _, c := range refs {
		if c.state == refInvalid {
			d = min(d, c.dist+1)
		}
	}
	return d
}

// reportRefs reports the errors of a decided row's card references.
func (f *file) reportRefs(lineNo uint32, id string, owner advisorspec.RowRef, dist uint32, refs []cardRef) {
	for _, c := range refs {
		switch c.state {
		case refInvalid:
			if c.dist == 0 || c.dist+1 == dist {
				f.report(lineNo, id, LineError{Field: c.field, Message: fmt.Sprintf(
					"%s %q names the row on line %d, which is invalid", c.field, c.id, c.line)})
			}
		case refDangling:
			f.report(lineNo, id, LineError{Field: c.field, Message: fmt.Sprintf(
				"%s %q names no row of this file and no existing %s", c.field, c.id, f.format.IDKind)})
		case refForeign:
			f.report(lineNo, id, LineError{Field: c.field, Message: fmt.Sprintf(
				"%s %q names no person, trust or entity of %s %q", c.field, c.id, owner.Field, owner.ID)})
		}
	}
}

func (f *file) setInvalid(lineNo uint32, idHash uint64, id string, ownerFP, dist uint32) {
	if id == "" {
		return
	}
	state := uint32(stateOwn)
	if dist > 0 {
		state = stateVia
		f.dists[idHash] = dist
	}
	f.u.ids[f.format.IDKind].set(idHash, makeEntry(lineNo, state, ownerFP))
}

// settle tells the rows waiting on id, whose row has just been read, what it is, and decides
// the groups that wait on nothing more.
func (f *file) settle(idHash uint64, id string) error {
	if id == "" {
		return nil
	}
	waiters, ok := f.pending[idHash]
	if !ok {
		return nil
	}
	delete(f.pending, idHash)
	e, _ := f.u.ids[f.format.IDKind].get(idHash)
	for _, w := range waiters {
		c := &w.n.refs[w.ref]
		f.named(c, w.n.owner, w.n.ownerFP, entry(e), idHash)
		w.n.root().unread--
		switch c.state {
		case refHeld:
			join(w.n, c.to)
		case refForeign:
			w.n.own = true
		}
	}
	for _, w := range waiters {
		if root := w.n.root(); !root.decided && root.unread == 0 {
			if err := f.decide(root); err != nil {
				return err
			}
		}
	}
	return nil
}

// finish decides what still waits at the end of the file: every id still waited for names no
// row of the file, nor a card, so its references dangle.
func (f *file) finish() error {
	var roots []*node
	for _, waiters := range f.pending {
		for _, w := range waiters {
			w.n.refs[w.ref].state = refDangling
			w.n.own = true
			root := w.n.root()
			if root.unread--; root.unread == 0 {
				roots = append(roots, root)
			}
		}
	}
	clear(f.pending)
	// In line order, so that the report and the rows written do not depend on map iteration.
	firstLine := func(r *node) uint32 {
		return slices.MinFunc(r.members, func(a, b *node) int { return cmp.Compare(a.line, b.line) }).line
	}
	slices.SortFunc(roots, func(a, b *node) int { return cmp.Compare(firstLine(a), firstLine(b)) })
	for _, r := range roots {
		if err := f.decide(r); err != nil {
			return err
		}
	}
	return nil
}

// decide decides a group that waits on nothing more: every row its members name is read and
// either decided or in the group. Distances spread from the rows invalid on their own and from
// the rows naming decided invalid rows, breadth first along the references, backwards: a row
// learns its shortest chain.
func (f *file) decide(root *node) error {
	members := root.members
	slices.SortFunc(members, func(a, b *node) int { return cmp.Compare(a.line, b.line) })
	type namer struct{ from, ref int }
	namers := make([][]namer, len(members))
	type item struct {
		idx  int
		dist uint32
	}
	var starts []item
	for i, m := range members {
		m.idx, m.decided = i, true
		m.dist = distance(m.own, m.refs)
		if m.dist != noDistance {
			starts = append(starts, item{i, m.dist})
		}
	}
	for i, m := range members {
		for j, c := range m.refs {
			if c.state == refHeld {
				namers[c.to.idx] = append(namers[c.to.idx], namer{i, j})
			}
		}
	}
	slices.SortStableFunc(starts, func(a, b item) int { return cmp.Compare(a.dist, b.dist) })
	// Breadth first from several sources at several distances: the next row is the nearer of
	// the next start and the head of the queue, whose distances both only grow.
	var queue []item
	done := make([]bool, len(members))
	for len(starts) > 0 || len(queue) > 0 {
		var it item
		if len(queue) == 0 || len(starts) > 0 && starts[0].dist < queue[0].dist {
			it, starts = starts[0], starts[1:]
		} else {
			it, queue = queue[0], queue[1:]
		}
		if done[it.idx] || members[it.idx].dist != it.dist {
			continue
		}
		done[it.idx] = true
		to := members[it.idx]
		for _, nm := range namers[it.idx] {
			m := members[nm.from]
			if m.dist <= to.dist+1 || !f.namesNoCard(m, &m.refs[nm.ref]) {
				continue
			}
			m.dist = to.dist + 1
			queue = append(queue, item{nm.from, m.dist})
		}
	}

	for _, m := range members {
		for j := range m.refs {
			c := &m.refs[j]
			if c.state != refHeld {
				continue
			}
			to := c.to
			switch {
			case to.dist == noDistance:
				c.state = refGood
			case (to.dist == 0 || to.dist+1 == m.dist) && !f.namesNoCard(m, c):
				c.state = refGood
			default:
				c.state, c.line, c.dist = refInvalid, to.line, to.dist
			}
		}
		if m.dist == noDistance {
			if m.id != "" {
				f.u.ids[f.format.IDKind].set(m.idHash, makeEntry(m.line, stateValid, m.ownerFP))
			}
		} else {
			f.rep.InvalidRows++
			f.reportRefs(m.line, m.id, m.owner, m.dist, m.refs)
			f.setInvalid(m.line, m.idHash, m.id, m.ownerFP, m.dist)
		}
		if m.id != "" {
			delete(f.held, m.idHash)
		}
	}
	// Valid rows are written in line order, once every error above is known.
	for _, m := range members {
		f.heldLen -= len(m.text)
		if m.dist == noDistance {
			if err := f.accept(m.text); err != nil {
				return err
			}
		}
		m.text, m.refs, m.members, m.parent = nil, nil, nil, nil
	}
	return nil
}

// namesNoCard reports whether a reference of m to a row of the group names no card of m's
// owner, asking Options.Card once.
func (f *file) namesNoCard(m *node, c *cardRef) bool {
	if c.state == refGood {
		return false
	}
	if !c.asked {
		c.asked = true
		if _, ok := f.card(m.owner, c.id); ok {
			c.state = refGood
			return false
		}
	}
	return true
}

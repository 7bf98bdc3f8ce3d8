// Package family is the family graph: top accounts, their contact cards, and the relationships
// the cards' external_id references make. It maps the upstream's records to the GraphQL types,
// follows references through each owner's roster, listed once per request, and checks writes against the
// specification's rules before they reach the upstream.
package family

import (
	"strconv"
	"strings"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/cursor"
	"github.com/advisorhq/gateway/internal/nodeid"
)

// Owner is whom a contact card belongs to: a top account (the v2 endpoints) or a client (the v1
// endpoints). A card's references name other cards of the same owner.
type Owner struct {
	// TopAccount is the wid of the top account, for a v2 card.
	TopAccount string
	// Client is the client, for a v1 card; its Ref is empty otherwise.
	Client advisor.ClientRef
}

// OfTopAccount is the owner of a top account's cards.
func OfTopAccount(wid string) Owner { return Owner{TopAccount: wid} }

// OfClient is the owner of a client's cards.
func OfClient(ref advisor.ClientRef) Owner { return Owner{Client: ref} }

func (o Owner) isClient() bool { return o.Client.Ref != "" }

// TopAccount is a family in the largest sense.
type TopAccount struct {
	WID        string
	ExternalID string
	Name       string
}

// ID is the top account's global id (nodeid), made from its wid.
func (t *TopAccount) ID() string { return t.NodeID().String() }

// NodeID is ID not yet encoded, which the executor writes without a string of its own.
func (t *TopAccount) NodeID() nodeid.ID { return nodeid.New(NodeTopAccount, t.WID) }

// TopAccountConnection is one page of top accounts: a connection, numbered too.
type TopAccountConnection struct {
	Nodes    []*TopAccount
	PageInfo OffsetPageInfo
	// offsets makes the cursors of the page, whose first item is at offset start.
	offsets cursor.Offsets
	start   int
}

// Edges are the page's top accounts with their cursors, made only when a query selects them, in one piece.
func (p *TopAccountConnection) Edges() []*TopAccountEdge {
	return cursor.Edges(len(p.Nodes), func(i int, e *TopAccountEdge) {
		*e = TopAccountEdge{Cursor: p.offsets.Cursor(p.start + i), Node: p.Nodes[i]}
	})
}

// TopAccountEdge is a top account and its cursor.
type TopAccountEdge struct {
	Cursor string
	Node   *TopAccount
}

// OffsetPageInfo says where a page stands, by cursors and by number.
type OffsetPageInfo struct {
	// As cursor.PageInfo's, spelled out: the executor answers a struct's own fields in place.
	HasNextPage, HasPreviousPage bool
	StartCursor, EndCursor       *string
	Page                         int
	Limit                        int
	TotalCount                   int
	TotalPages                   int
}

// ContactConnection is one page of an owner's cards.
type ContactConnection struct {
	Nodes      []Contact
	TotalCount int
	PageInfo   cursor.PageInfo
	offsets    cursor.Offsets
	start      int
}

// Edges are the page's cards with their cursors, made only when a query selects them, in one piece.
func (c *ContactConnection) Edges() []*ContactEdge {
	return cursor.Edges(len(c.Nodes), func(i int, e *ContactEdge) {
		*e = ContactEdge{Cursor: c.offsets.Cursor(c.start + i), Node: c.Nodes[i]}
	})
}

// ContactEdge is a card and its cursor.
type ContactEdge struct {
	Cursor string
	Node   Contact
}

// Client is a client of the v1 contact endpoints.
type Client struct {
	Ref       string
	AdvisorID *string
	TeamID    *string
	// Added and Details are what Add Client answered, when the client comes from addClient;
	// nil when it was read, as the service has no call that shows a client.
	Added   *bool
	Details *ClientDetails
}

// ID is the client's global id (nodeid): the ref it was read by and whom the gateway acted
// for, which together name it (the service has no call that shows a client's other ids).
func (c *Client) ID() string { return c.NodeID().String() }

// NodeID is ID not yet encoded, which the executor writes without a string of its own.
func (c *Client) NodeID() nodeid.ID {
	return nodeid.New(NodeClient, c.Ref, deref(c.AdvisorID), deref(c.TeamID))
}

// clientOf is the client ref names, as every path that answers a client makes it.
func clientOf(ref advisor.ClientRef) *Client {
	return &Client{Ref: ref.Ref, AdvisorID: nonEmpty(ref.AdvisorID), TeamID: nonEmpty(ref.TeamID)}
}

func (c *Client) owner() Owner {
	return OfClient(advisor.ClientRef{Ref: c.Ref, AdvisorID: deref(c.AdvisorID), TeamID: deref(c.TeamID)})
}

// Card is what every contact card has.
type Card struct {
	// graph is the owner's roster, where the card's references and relationships are found: a
	// card listed with its owner's cards has it, and so does one read alone for a query that
	// reaches into the graph. Without it the card has no relationships and its references
	// resolve to nothing.
	graph *roster
	// at is 1 + the card's place in graph.cards, or, for a card read alone, the place of the
	// roster's card with its id; 0 when it has none.
	at    int32
	Owner Owner
	// ContactID is the service's id of the card, unique within its owner.
	ContactID  string
	ExternalID *string
	Type       ContactType
	// gid is the card's global id encoded, for a card of a roster: the family query selects a
	// card's id wherever the graph names it, five times a card, and the roster encodes each once.
	gid []byte
}

// ID is the card's global id (nodeid): its type, its owner and its service id, so that the card
// is read again with one call. Computed when a query selects it, as most do not.
func (c *Card) ID() string { return c.NodeID().String() }

// NodeID is ID not yet encoded, which the executor writes without a string of its own.
func (c *Card) NodeID() nodeid.ID {
	if c.gid != nil {
		return nodeid.Encoded(c.gid)
	}
	typ := c.Type.typeName()
	if c.Owner.isClient() {
		o := c.Owner.Client
		return nodeid.New(typ, ownerClient, o.Ref, o.AdvisorID, o.TeamID, c.ContactID)
	}
	return nodeid.New(typ, ownerTopAccount, c.Owner.TopAccount, c.ContactID)
}

// card gives the common part of any contact.
func (c *Card) card() *Card { return c }

// Contact is a contact card of any type: *Individual, *Trust, *Entity, *Charity, *Will or *Class.
type Contact interface {
	card() *Card
	DisplayName() string
	ID() string
}

// ContactCard is the GraphQL interface every contact type implements; in Go it is the same as
// Contact.
type ContactCard interface {
	card() *Card
	DisplayName() string
	ID() string
}

// CardOf returns the common part of a contact.
func CardOf(c Contact) *Card { return c.card() }

// Individual is a person.
type Individual struct {
	Card
	FirstName  *string
	MiddleName *string
	LastName   *string
	Dob        *string
}

// DisplayName is the person's names, or the external id when the card has none.
func (i *Individual) DisplayName() string {
	// On the stack, and a single name as it is: every reference's card is named by it.
	var parts [3]string
	n := 0
	for _, p := range [...]*string{i.FirstName, i.MiddleName, i.LastName} {
		if p == nil {
			continue
		}
		if t := strings.TrimSpace(*p); t != "" {
			parts[n] = t
			n++
		}
	}
	switch n {
	case 0:
		return deref(i.ExternalID)
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:n], " ")
}

// Trust is a trust.
type Trust struct {
	Card
	LegalName         string
	TrustType         *TrustType
	TrustCreator      []string
	InitialTrustee    []string
	GoverningState    *string
	TrustCreationDate *string
}

func (t *Trust) DisplayName() string { return t.LegalName }

// TrustCreators are the references to the trust's creators.
func (t *Trust) TrustCreators() []*ContactRef { return t.graph.refsOf(&t.Card, 0, t.TrustCreator) }

// InitialTrustees are the references to the trust's initial trustees.
func (t *Trust) InitialTrustees() []*ContactRef {
	return t.graph.refsOf(&t.Card, len(t.TrustCreator), t.InitialTrustee)
}

// Entity is a company, partnership, foundation or the like.
type Entity struct {
	Card
	LegalName          string
	IncorporationState *string
	IncorporationForm  *IncorporationForm
	Ownership          []*Ownership
}

func (e *Entity) DisplayName() string { return e.LegalName }

// Ownership is one share of an entity.
type Ownership struct {
	of         *Card // the entity's card, whose roster the owners are found in
	at         int   // where its owners start among the references the entity holds
	Percentage float64
	OwnerID    *string
	Subowners  []string
}

// Joint reports whether the share is held jointly by several owners.
func (o *Ownership) Joint() bool { return o.OwnerID == nil }

// Owners are the references to the single owner or the joint owners.
func (o *Ownership) Owners() []*ContactRef {
	if o.OwnerID != nil {
		return o.of.graph.refsOf(o.of, o.at, []string{*o.OwnerID})
	}
	return o.of.graph.refsOf(o.of, o.at, o.Subowners)
}

// ownerCount is how many owners the share names.
func (o *Ownership) ownerCount() int {
	if o.OwnerID != nil {
		return 1
	}
	return len(o.Subowners)
}

// Charity is a charitable organisation.
type Charity struct {
	Card
	LegalName        string
	Ein              *string // 12-3456789; see formatEIN
	City             string
	State            string
	AddressFormatted *string
	Notes            *string
}

func (c *Charity) DisplayName() string { return c.LegalName }

// Will is a will.
type Will struct {
	Card
	LegalName        string
	WillType         WillType
	GoverningState   *string
	WillCreationDate *string
	Testator         []string
	Executor         []string
}

func (w *Will) DisplayName() string { return w.LegalName }

// Testators are the references to whose will it is.
func (w *Will) Testators() []*ContactRef { return w.graph.refsOf(&w.Card, 0, w.Testator) }

// Executors are the references to the will's executors.
func (w *Will) Executors() []*ContactRef {
	return w.graph.refsOf(&w.Card, len(w.Testator), w.Executor)
}

// Class is a group of beneficiaries.
type Class struct {
	Card
	LegalName      string
	Notes          *string
	CurrentParties *ClassParties
}

func (c *Class) DisplayName() string { return c.LegalName }

// ClassParties are a class's current parties.
type ClassParties struct {
	IsDistributedEvenly *bool
	ShareAmount         *string
	Parties             []*ClassParty
}

// ClassParty is one party of a class.
type ClassParty struct {
	of                     *Card // the class's card, whose roster the party is found in
	at                     int   // the party's place among the class's parties
	ContactID              string
	DistributionPercentage *float64
	Fraction               *Fraction
}

// Party is the reference to the party's card.
func (p *ClassParty) Party() *ContactRef {
	return p.of.graph.refOf(p.of, p.at, p.ContactID)
}

// Fraction is a share as numerator over denominator.
type Fraction struct {
	Numerator   int64
	Denominator int64
}

// ContactRef is a reference by external id to a card of the same owner.
type ContactRef struct {
	// owner is the owner of the card that holds the reference (and so of the one it names):
	// that card's own Owner, shared, since a roster makes a reference for every edge and a
	// copy of an Owner is four strings.
	owner      *Owner
	ExternalID string
	// Contact is the card referred to, found in the owner's roster when the reference was made;
	// nil when it dangles (or the card was read without its graph). A field, not a resolver: it
	// is in memory, so gqlgen marshals it inline rather than in a goroutine of its own.
	Contact Contact
}

// ID is the reference's global id (nodeid): its owner and the external id it names, so that
// every reference to one external id is one object in a client's cache, whichever card holds
// it and whether or not the card was read with its graph. A card without an external id is
// referred to only as a relationship's source, by its own id.
func (r *ContactRef) ID() string {
	var contactID string
	if r.ExternalID == "" && r.Contact != nil {
		contactID = r.Contact.card().ContactID
	}
	return nodeid.Encode(NodeContactRef, append(r.owner.keyParts(), r.ExternalID, contactID)...)
}

// Relationship is an edge of the family graph: Source holds the reference, Target is named by it.
type Relationship struct {
	Role       RelationshipRole
	Source     *ContactRef
	Target     *ContactRef
	Percentage *float64
	// nth counts the source's earlier references to the same target in the same role (an owner
	// of two joint shares): with the rest, it tells the relationship from every other.
	nth int
}

// ID is the relationship's global id (nodeid): its source card, role, target external id and
// nth, which name it within its owner's graph.
func (r *Relationship) ID() string {
	key := append(r.Source.owner.keyParts(), r.Source.Contact.card().ContactID, string(r.Role), r.Target.ExternalID, strconv.Itoa(r.nth))
	return nodeid.Encode(NodeRelationship, key...)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

package sandbox

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// store is the sandbox's state. One mutex guards it all: the sandbox serves a handful of
// developers, and a single lock keeps every rule that spans records (unique external_ids,
// references) trivially atomic.
//
// Records are values that are never changed once stored: an update stores a new record. A
// handler may therefore keep a record it read and encode it after the lock is released.
type store struct {
	mu          sync.RWMutex
	ids         *idSource
	topAccounts []*topAccount // in creation order, the order List Top Accounts pages through
	byWID       map[string]*topAccount
	clients     []*client
	uploads     map[string]uploadState // by nonce of a presigned upload address
}

type topAccount struct {
	info       accountInfo // replaced, never changed in place, so a copy read under the lock stays whole
	contacts   contactSet
	documents  map[string]*document // by vault_id
	docSeq     map[string]int       // vault_id to position in the vault, kept after delete
	nextSeq    int
	customTags []string
}

// accountInfo is a top account as the API returns it.
type accountInfo = advisorspec.TopAccount

// client is a client of the v1 contact endpoints, addressed by wid or by the caller's external_id
// and visible to the advisor and team it belongs to.
type client struct {
	Client
	WID      string
	contacts contactSet
	// fields is the client's record from Add Client rows, merged row by row; nil for a client
	// made by AddClient until a row names it.
	fields *advisorspec.ClientFields
	// primaryCard and spouseCard are the ids of the cards Add Client made from the row's names;
	// primaryLink and spouseLink the People-row ids those cards answer to ("" when unlinked).
	primaryCard, spouseCard string
	primaryLink, spouseLink string
	invited                 bool
	// revoked is set by Delete Client, which takes the advisor's access away without erasing
	// anything, so that adding the client again gives it back whole.
	revoked bool
}

// linkedCard finds the card a People row with this id updates: the card Add Client linked to
// the id through primary_id or spouse_id, else the card whose external_id it is.
func (c *client) linkedCard(peopleID string) (*contact, bool) {
	switch {
	case peopleID == "":
		return nil, false
	case peopleID == c.primaryLink:
		return c.contacts.get(c.primaryCard)
	case peopleID == c.spouseLink:
		return c.contacts.get(c.spouseCard)
	}
	i, ok := c.contacts.byExternalID[peopleID]
	if !ok {
		return nil, false
	}
	return c.contacts.list[i], true
}

// contactSet holds the contact cards of one top account or client.
type contactSet struct {
	list         []*contact // creation order
	byID         map[string]int
	byExternalID map[string]int
}

func (s *contactSet) get(id string) (*contact, bool) {
	i, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	return s.list[i], true
}

func (s *contactSet) hasExternalID(externalID string) bool {
	_, ok := s.byExternalID[externalID]
	return ok
}

func (s *contactSet) put(c *contact) {
	if s.byID == nil {
		s.byID, s.byExternalID = map[string]int{}, map[string]int{}
	}
	if i, ok := s.byID[c.ID]; ok {
		// An update: an external_id never changes once set, but a card Add Client made before
		// primary_id or spouse_id linked it takes the People-row id when a row reaches it.
		if s.list[i].ExternalID == "" && c.ExternalID != "" {
			s.byExternalID[c.ExternalID] = i
		}
		s.list[i] = c
		return
	}
	s.byID[c.ID] = len(s.list)
	if c.ExternalID != "" { // a card Add Client made unlinked has none, and "" names nothing
		s.byExternalID[c.ExternalID] = len(s.list)
	}
	s.list = append(s.list, c)
}

// contact is a contact card as the API returns it.
type contact = advisorspec.Contact

// merged returns a copy of c with every field the patch sets replaced. An empty array in the
// patch clears the field, which is how an update removes every holder of a role.
func merged(c, patch *contact) *contact {
	out := *c
	dst, src := reflect.ValueOf(&out).Elem(), reflect.ValueOf(patch).Elem()
	for i := range dst.NumField() {
		f := src.Field(i)
		if f.Kind() != reflect.Pointer && f.Kind() != reflect.Slice || f.IsNil() {
			continue
		}
		if f.Kind() == reflect.Slice && f.Len() == 0 {
			dst.Field(i).SetZero()
			continue
		}
		dst.Field(i).Set(f)
	}
	return &out
}

// document is a vault document and what the sandbox knows of its file.
type document struct {
	advisorspec.DocumentFields
	WID              string
	VaultID          string
	CreationDate     time.Time
	ModificationDate time.Time
	Uploaded         bool
	Size             int64
	ReadyAt          time.Time // an uploaded file is "not ready" until then
}

// uploadState is where a presigned upload address stands. Each address takes one successful
// PUT; while one is streaming, another to the same address is refused.
type uploadState struct {
	expires time.Time
	done    bool
}

// newStore returns an empty store whose ids come from seed, or from the system's randomness when
// seed is zero.
func newStore(seed uint64) *store {
	return &store{ids: newIDSource(seed), byWID: map[string]*topAccount{}, uploads: map[string]uploadState{}}
}

// idSource makes ids and nonces. It has its own lock so that an address can be signed without
// the store's.
type idSource struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func newIDSource(seed uint64) *idSource {
	var key [32]byte
	if seed == 0 {
		_, _ = crand.Read(key[:]) // never fails on supported platforms
	} else {
		binary.LittleEndian.PutUint64(key[:], seed)
	}
	return &idSource{rng: rand.New(rand.NewChaCha8(key))}
}

// bytes returns n random bytes; with a seed the sequence is the same on every run.
func (g *idSource) bytes(n int) []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.rng.Uint32())
	}
	return b
}

// newID returns a random UUID (version 4).
func (g *idSource) newID() string {
	b := g.bytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return fmt.Sprintf("%s-%s-%s-%s-%s", h[0:8], h[8:12], h[12:16], h[16:20], h[20:32])
}

// hex returns n random bytes in hex.
func (g *idSource) hex(n int) string { return hex.EncodeToString(g.bytes(n)) }

func (s *store) topAccountByExternalID(externalID string) *topAccount {
	for _, ta := range s.topAccounts {
		if ta.info.ExternalID == externalID {
			return ta
		}
	}
	return nil
}

// clientByRef finds a client the advisor has access to by its wid or, failing that, by the
// caller's external_id. A deleted client is not found.
func (s *store) clientByRef(ref string) *client {
	for _, c := range s.clients {
		if c.WID == ref && !c.revoked {
			return c
		}
	}
	if c := s.clientByExternalID(ref); c != nil && !c.revoked {
		return c
	}
	return nil
}

// clientByExternalID finds a client by the caller's id, deleted or not: external_ids stay
// taken after Delete Client, which only revokes access.
func (s *store) clientByExternalID(externalID string) *client {
	for _, c := range s.clients {
		if c.ExternalID == externalID {
			return c
		}
	}
	return nil
}

// linkedCard finds the contact card of client clientID (its external_id) that a People-file row
// with id peopleID updates in place: the primary or spouse card Add Client linked to that id,
// else the card with that external_id. Cards of a deleted client are found too: a file may
// update them, and adding the client again shows them. The caller holds the lock.
func (s *store) linkedCard(clientID, peopleID string) (*client, *contact, bool) {
	c := s.clientByExternalID(clientID)
	if c == nil {
		return nil, nil, false
	}
	card, ok := c.linkedCard(peopleID)
	return c, card, ok
}

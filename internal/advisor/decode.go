package advisor

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// decode reads an answer into out. The answers every family query reads (a top account, and
// a contact list, the bulk of it) are read by the decoder below, which walks the bytes once
// and allocates little; encoding/json reads everything else, and those two too whenever the
// answer holds anything the decoder does not take on (an escape in a name, a key in another
// case, a key sent twice, a value of the wrong kind, invalid JSON...). The decoder gives up
// rather than guess, so what an answer decodes to, and the error an unreadable one gives, are
// encoding/json's in every case.
func decode(body []byte, out any) error {
	switch v := out.(type) {
	case *advisorspec.ContactList:
		if d := newWireDecoder(body); document(d, d.contactList, v) {
			return nil
		}
		*v = advisorspec.ContactList{}
	case *advisorspec.Contact:
		if d := newWireDecoder(body); document(d, d.contact, v) {
			return nil
		}
		*v = advisorspec.Contact{}
	case *advisorspec.TopAccount:
		if d := newWireDecoder(body); document(d, d.topAccount, v) {
			return nil
		}
		*v = advisorspec.TopAccount{}
	case *contactLoan:
		return decodeLoan(body, v)
	}
	return json.Unmarshal(body, out)
}

// wireDecoder reads one answer. Its strings are substrings of the answer's bytes, so a contact
// list costs no allocation for its names and ids; the bytes live as long as any value read
// from them, which is the request that read it. They are never written after readBody has
// read them (the request's Cache hands the same bytes to every read of them), which is what
// makes sharing them with strings sound.
type wireDecoder struct {
	b     []byte
	s     string // b, shared
	i     int
	list  []string // scratch: the list being read
	depth int
	// The backing of the pointers and lists an answer's values hold: the *string and []string
	// fields, an entity's shares, a class's parties, percentages and fractions, a charity's EIN.
	strs      slab[string]
	lists     slab[string]
	shares    slab[advisorspec.Ownership]
	partyVals slab[advisorspec.Party]
	partySets slab[advisorspec.CurrentParties]
	fractions slab[advisorspec.Fraction]
	floats    slab[float64]
	ints      slab[int64]
	bools     slab[bool]
	shareList []advisorspec.Ownership // scratch: the shares being read
	partyList []advisorspec.Party     // scratch: the parties being read
	// lending makes contactList leave its list in the pooled scratch, lent, rather than copy
	// it (contactLoan).
	lending bool
	lent    *[]advisorspec.Contact
}

// slab hands out values of arrays allocated a chunk at a time, each chunk twice the last (up
// to a bound): an answer of n values costs about log n allocations, a small one small chunks.
type slab[T any] struct {
	free []T
	size int
}

func (s *slab[T]) grow(n int) {
	s.size = min(max(2*s.size, 8), 1024)
	s.free = make([]T, max(n, s.size))
}

// one is a pointer to v's copy.
func (s *slab[T]) one(v T) *T {
	if len(s.free) == 0 {
		s.grow(1)
	}
	p := &s.free[0]
	*p = v
	s.free = s.free[1:]
	return p
}

// copyOf is list's copy (list is a scratch), capped at its length so that an append to one
// list never writes over the next; empty, not nil, for none, as encoding/json reads [].
func (s *slab[T]) copyOf(list []T) []T {
	n := len(list)
	if n == 0 {
		return []T{}
	}
	if len(s.free) < n {
		s.grow(n)
	}
	out := s.free[:n:n]
	s.free = s.free[n:]
	copy(out, list)
	return out
}

func newWireDecoder(body []byte) *wireDecoder {
	return &wireDecoder{b: body, s: unsafe.String(unsafe.SliceData(body), len(body))}
}

// maxSkipDepth bounds the nesting of a value the decoder skips; deeper ones are left to
// encoding/json, which has its own limit and error.
const maxSkipDepth = 1000

// document reads a whole answer: one object, read by object, and nothing after it.
func document[T any](d *wireDecoder, object func(*T) bool, out *T) bool {
	d.space()
	if !object(out) {
		return false
	}
	d.space()
	return d.i == len(d.b)
}

func (d *wireDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// consume takes c, after any whitespace.
func (d *wireDecoder) consume(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// peek is the next byte after any whitespace, or 0 at the end.
func (d *wireDecoder) peek() byte {
	d.space()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// null takes a null, if one comes next.
func (d *wireDecoder) null() bool {
	if d.peek() == 'n' && strings.HasPrefix(d.s[d.i:], "null") {
		d.i += 4
		return true
	}
	return false
}

// object reads an object's members, calling member with each key (positioned at its value).
// member returns false to give up. A key sent twice gives up too: encoding/json merges some
// values and replaces others. seen has a bit per field, which member returns.
func (d *wireDecoder) object(member func(key string) (bit uint32, ok bool)) bool {
	if !d.consume('{') {
		return false
	}
	if d.consume('}') {
		return true
	}
	var seen uint32
	for {
		key, ok := d.key()
		if !ok || !d.consume(':') {
			return false
		}
		bit, ok := member(key)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.consume('}') {
			return true
		}
		if !d.consume(',') {
			return false
		}
	}
}

// elements reads a JSON array, calling each once per element with the reader at it; each
// reads the element. An empty array calls it never.
func (d *wireDecoder) elements(each func() bool) bool {
	if !d.consume('[') {
		return false
	}
	if d.consume(']') {
		return true
	}
	for {
		if !each() {
			return false
		}
		if d.consume(']') {
			return true
		}
		if !d.consume(',') {
			return false
		}
	}
}

// key reads a member's name: plain ASCII only, the only keys matched here as encoding/json
// matches them (exactly, or case-folded: see unknown).
func (d *wireDecoder) key() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		c := d.b[j]
		if c == '"' {
			d.i = j + 1
			return d.s[start:j], true
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return "", false
		}
	}
	return "", false
}

// unknown skips the value of a key that is no field of names. A key that differs from one
// only in case is one encoding/json would take, so the decoder gives up on it.
func (d *wireDecoder) unknown(key string, names []string) (uint32, bool) {
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return 0, false
		}
	}
	return 0, d.skip()
}

// str reads a string. One with an escape is unquoted by encoding/json, whose handling of bad
// escapes and surrogates is the one to match; one with invalid UTF-8 is left to it whole.
func (d *wireDecoder) str() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	start := d.i + 1
	ascii := true
	for j := start; j < len(d.b); j++ {
		c := d.b[j]
		switch {
		case c == '"':
			d.i = j + 1
			s := d.s[start:j]
			if !ascii && !utf8.ValidString(s) {
				return "", false
			}
			return s, true
		case c == '\\':
			return d.escaped(start - 1)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

func (d *wireDecoder) escaped(quote int) (string, bool) {
	d.i = quote
	if !d.skipString() {
		return "", false
	}
	var s string
	if json.Unmarshal(d.b[quote:d.i], &s) != nil {
		return "", false
	}
	return s, true
}

// strPtr reads a string into a pointer (nil for null), from the decoder's slab.
func (d *wireDecoder) strPtr(p **string) bool {
	if d.null() {
		*p = nil
		return true
	}
	s, ok := d.str()
	if !ok {
		return false
	}
	*p = d.strs.one(s)
	return true
}

// strInto reads a string into a string field; null leaves it as it is, as encoding/json does.
func (d *wireDecoder) strInto(p *string) bool {
	if d.null() {
		return true
	}
	s, ok := d.str()
	*p = s
	return ok
}

// strings reads an array of strings (nil for null; empty, not nil, for []).
func (d *wireDecoder) strings(p *[]string) bool {
	if d.null() {
		*p = nil
		return true
	}
	d.list = d.list[:0]
	if !d.elements(func() bool {
		s, ok := d.str()
		d.list = append(d.list, s)
		return ok
	}) {
		return false
	}
	*p = d.lists.copyOf(d.list)
	return true
}

// number reads a number's text, checked against JSON's grammar (strconv takes more).
func (d *wireDecoder) number() (string, bool) {
	d.space()
	start := d.i
	b := d.b
	i := start
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return "", false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return "", false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return "", false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	d.i = i
	return d.s[start:i], true
}

// float reads a number as encoding/json reads it into a float64.
func (d *wireDecoder) float() (float64, bool) {
	s, ok := d.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// int reads a number as encoding/json reads it into an int64: an integer, in range.
func (d *wireDecoder) int() (int64, bool) {
	s, ok := d.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// skip reads over any valid value.
func (d *wireDecoder) skip() bool {
	switch d.peek() {
	case '"':
		return d.skipString()
	case '{', '[':
		d.depth++
		defer func() { d.depth-- }()
		if d.depth > maxSkipDepth {
			return false
		}
		if d.b[d.i] == '[' {
			d.i++
			if d.consume(']') {
				return true
			}
			for {
				if !d.skip() {
					return false
				}
				if d.consume(']') {
					return true
				}
				if !d.consume(',') {
					return false
				}
			}
		}
		d.i++
		if d.consume('}') {
			return true
		}
		for {
			if d.peek() != '"' || !d.skipString() || !d.consume(':') || !d.skip() {
				return false
			}
			if d.consume('}') {
				return true
			}
			if !d.consume(',') {
				return false
			}
		}
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	default:
		_, ok := d.number()
		return ok
	}
}

func (d *wireDecoder) literal(word string) bool {
	if strings.HasPrefix(d.s[d.i:], word) {
		d.i += len(word)
		return true
	}
	return false
}

// skipString reads over the string at d.i, checking its escapes as JSON defines them.
func (d *wireDecoder) skipString() bool {
	b := d.b
	for i := d.i + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			d.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			i++
			if i >= len(b) {
				return false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return false
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return false
					}
				}
				i += 4
			default:
				return false
			}
		}
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

var topAccountKeys = []string{"wid", "external_id", "name"}

func (d *wireDecoder) topAccount(t *advisorspec.TopAccount) bool {
	return d.object(func(key string) (uint32, bool) {
		switch key {
		case "wid":
			return 1 << 0, d.strInto(&t.WID)
		case "external_id":
			return 1 << 1, d.strInto(&t.ExternalID)
		case "name":
			return 1 << 2, d.strInto(&t.Name)
		}
		return d.unknown(key, topAccountKeys)
	})
}

func (d *wireDecoder) contactList(l *advisorspec.ContactList) bool {
	return d.object(func(key string) (uint32, bool) {
		if key != "contacts" {
			return d.unknown(key, []string{"contacts"})
		}
		if d.null() {
			l.Contacts = nil
			return 1, true
		}
		if d.lent != nil { // a second "contacts": encoding/json's to settle
			return 1, false
		}
		scratch := contactScratch.Get().(*[]advisorspec.Contact)
		out := (*scratch)[:0]
		ok := d.elements(func() bool {
			out = append(out, advisorspec.Contact{})
			// null would leave the element zero in encoding/json; too rare to take on.
			return d.peek() == '{' && d.contact(&out[len(out)-1])
		})
		switch {
		case ok && d.lending:
			if out == nil { // a scratch new from the pool, and no contact: [] is empty, not null
				out = []advisorspec.Contact{}
			}
			l.Contacts, d.lent = out, scratch
			return 1, true
		case ok:
			l.Contacts = make([]advisorspec.Contact, len(out))
			copy(l.Contacts, out)
		}
		putContactScratch(scratch, out)
		return 1, ok
	})
}

// contactLoan is a contact list decode lends to use rather than returns: read into the pooled
// scratch, handed to use, and given back when use returns, so that a list mapped at once into
// something else (a family query's cards) is never copied. What its contacts hold (strings,
// lists, pointers) is not in the scratch and stays valid after use; the list's own array does
// not. use's error is err, apart from decode's, which is the answer's.
type contactLoan struct {
	use func([]advisorspec.Contact) error
	err error
}

// decodeLoan is decode for a contactLoan.
func decodeLoan(body []byte, loan *contactLoan) error {
	d := newWireDecoder(body)
	d.lending = true
	var l advisorspec.ContactList
	ok := document(d, d.contactList, &l)
	if d.lent != nil {
		if ok {
			loan.err = loan.use(l.Contacts)
		}
		putContactScratch(d.lent, l.Contacts)
	}
	if ok {
		return nil
	}
	l = advisorspec.ContactList{}
	if err := json.Unmarshal(body, &l); err != nil {
		return err
	}
	loan.err = loan.use(l.Contacts)
	return nil
}

// contactScratch holds the contacts of a list while it is read, so that the list is then
// allocated once, at its length: a contact is 300 bytes, and counting the contacts first (a
// search of the answer for their "id" keys) cost a fortieth of a family query.
var contactScratch = sync.Pool{New: func() any { return new([]advisorspec.Contact) }}

// maxScratchContacts bounds what the pool keeps: a list of thousands may be read again, but a
// huge one once should not stay in memory.
const maxScratchContacts = 4096

// putContactScratch gives the pool the scratch used, cleared: it holds strings of an answer that
// must not stay alive with it.
func putContactScratch(scratch *[]advisorspec.Contact, used []advisorspec.Contact) {
	clear(used)
	if cap(used) > maxScratchContacts {
		return
	}
	*scratch = used[:0]
	contactScratch.Put(scratch)
}

var contactKeys = []string{"id", "external_id", "type", "first_name", "middle_name", "last_name",
	"dob", "legal_name", "trust_type", "trust_creator", "initial_trustee", "governing_state",
	"trust_creation_date", "incorporation_state", "incorporation_form", "ownership", "ein", "city",
	"state", "address_formatted", "notes", "will_type", "will_creation_date", "testator",
	"executor", "current_parties"}

func (d *wireDecoder) contact(c *advisorspec.Contact) bool {
	return d.object(func(key string) (uint32, bool) {
		switch key {
		case "id":
			return 1 << 0, d.strInto(&c.ID)
		case "external_id":
			return 1 << 1, d.strInto(&c.ExternalID)
		case "type":
			return 1 << 2, d.strInto(&c.Type)
		case "first_name":
			return 1 << 3, d.strPtr(&c.FirstName)
		case "middle_name":
			return 1 << 4, d.strPtr(&c.MiddleName)
		case "last_name":
			return 1 << 5, d.strPtr(&c.LastName)
		case "dob":
			return 1 << 6, d.strPtr(&c.Dob)
		case "legal_name":
			return 1 << 7, d.strPtr(&c.LegalName)
		case "trust_type":
			return 1 << 8, d.strPtr(&c.TrustType)
		case "trust_creator":
			return 1 << 9, d.strings(&c.TrustCreator)
		case "initial_trustee":
			return 1 << 10, d.strings(&c.InitialTrustee)
		case "governing_state":
			return 1 << 11, d.strPtr(&c.GoverningState)
		case "trust_creation_date":
			return 1 << 12, d.strPtr(&c.TrustCreationDate)
		case "incorporation_state":
			return 1 << 13, d.strPtr(&c.IncorporationState)
		case "incorporation_form":
			return 1 << 14, d.strPtr(&c.IncorporationForm)
		case "ownership":
			return 1 << 15, d.ownership(&c.Ownership)
		case "ein":
			return 1 << 16, d.ein(&c.EIN)
		case "city":
			return 1 << 17, d.strPtr(&c.City)
		case "state":
			return 1 << 18, d.strPtr(&c.State)
		case "address_formatted":
			return 1 << 19, d.strPtr(&c.AddressFormatted)
		case "notes":
			return 1 << 20, d.strPtr(&c.Notes)
		case "will_type":
			return 1 << 21, d.strPtr(&c.WillType)
		case "will_creation_date":
			return 1 << 22, d.strPtr(&c.WillCreationDate)
		case "testator":
			return 1 << 23, d.strings(&c.Testator)
		case "executor":
			return 1 << 24, d.strings(&c.Executor)
		case "current_parties":
			return 1 << 25, d.currentParties(&c.CurrentParties)
		}
		return d.unknown(key, contactKeys)
	})
}

func (d *wireDecoder) ein(p **int64) bool {
	if d.null() {
		*p = nil
		return true
	}
	n, ok := d.int()
	if ok {
		*p = d.ints.one(n)
	}
	return ok
}

var ownershipKeys = []string{"percentage", "owner_id", "subowners"}

func (d *wireDecoder) ownership(p *[]advisorspec.Ownership) bool {
	if d.null() {
		*p = nil
		return true
	}
	d.shareList = d.shareList[:0]
	ok := d.elements(func() bool {
		d.shareList = append(d.shareList, advisorspec.Ownership{})
		o := &d.shareList[len(d.shareList)-1]
		return d.peek() == '{' && d.object(func(key string) (uint32, bool) {
			switch key {
			case "percentage":
				if d.null() {
					return 1 << 0, true
				}
				f, ok := d.float()
				o.Percentage = f
				return 1 << 0, ok
			case "owner_id":
				return 1 << 1, d.strInto(&o.OwnerID)
			case "subowners":
				return 1 << 2, d.strings(&o.Subowners)
			}
			return d.unknown(key, ownershipKeys)
		})
	})
	if ok {
		*p = d.shares.copyOf(d.shareList)
	}
	return ok
}

var currentPartiesKeys = []string{"is_distributed_evenly", "share_amount", "parties"}
var partyKeys = []string{"contact_id", "distribution_percentage", "fraction"}
var fractionKeys = []string{"numerator", "denominator"}

func (d *wireDecoder) currentParties(p **advisorspec.CurrentParties) bool {
	if d.null() {
		*p = nil
		return true
	}
	var cp advisorspec.CurrentParties
	ok := d.peek() == '{' && d.object(func(key string) (uint32, bool) {
		switch key {
		case "is_distributed_evenly":
			if d.null() {
				cp.IsDistributedEvenly = nil
				return 1 << 0, true
			}
			var v bool
			switch {
			case d.literal("true"):
				v = true
			case d.literal("false"):
			default:
				return 0, false
			}
			cp.IsDistributedEvenly = d.bools.one(v)
			return 1 << 0, true
		case "share_amount":
			return 1 << 1, d.strPtr(&cp.ShareAmount)
		case "parties":
			return 1 << 2, d.parties(&cp.Parties)
		}
		return d.unknown(key, currentPartiesKeys)
	})
	if ok {
		*p = d.partySets.one(cp)
	}
	return ok
}

func (d *wireDecoder) parties(p *[]advisorspec.Party) bool {
	if d.null() {
		*p = nil
		return true
	}
	d.partyList = d.partyList[:0]
	ok := d.elements(func() bool {
		d.partyList = append(d.partyList, advisorspec.Party{})
		pt := &d.partyList[len(d.partyList)-1]
		return d.peek() == '{' && d.object(func(key string) (uint32, bool) {
			switch key {
			case "contact_id":
				return 1 << 0, d.strInto(&pt.ContactID)
			case "distribution_percentage":
				if d.null() {
					pt.DistributionPercentage = nil
					return 1 << 1, true
				}
				f, ok := d.float()
				if ok {
					pt.DistributionPercentage = d.floats.one(f)
				}
				return 1 << 1, ok
			case "fraction":
				return 1 << 2, d.fraction(&pt.Fraction)
			}
			return d.unknown(key, partyKeys)
		})
	})
	if ok {
		*p = d.partyVals.copyOf(d.partyList)
	}
	return ok
}

func (d *wireDecoder) fraction(p **advisorspec.Fraction) bool {
	if d.null() {
		*p = nil
		return true
	}
	var f advisorspec.Fraction
	ok := d.peek() == '{' && d.object(func(key string) (uint32, bool) {
		var dst *int64
		var bit uint32
		switch key {
		case "numerator":
			dst, bit = &f.Numerator, 1<<0
		case "denominator":
			dst, bit = &f.Denominator, 1<<1
		default:
			return d.unknown(key, fractionKeys)
		}
		if d.null() {
			return bit, true
		}
		n, ok := d.int()
		*dst = n
		return bit, ok
	})
	if ok {
		*p = d.fractions.one(f)
	}
	return ok
}

package advisorspec

import (
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// BulkModel is which of the specification's two bulk-file models a file follows ("Versioning",
// point 3): the current Clients-based model, whose rows reference client_id, or the deprecated
// container model, whose rows reference top_account_id.
type BulkModel int

const (
	// ClientModel is the current model: People rows carry client_id; trust_creator,
	// initial_trustee and owner_id are a string or an array of strings.
	ClientModel BulkModel = iota
	// TopAccountModel is the deprecated container model: rows carry top_account_id in place of
	// client_id, and trust_creator, initial_trustee and owner_id are arrays of strings only.
	TopAccountModel
)

// Limits of the bulk files, in characters ("Limits").
const (
	MaxBulkID             = 255 // client id, person/trust/entity ids, client_id, top_account_id
	MaxBulkText           = 255 // names and entity legal_name
	MaxBulkTrustLegalName = 500
)

// BulkIncorporationForms are the values of an Entity row's incorporation_form. The bulk file's
// list is not the REST API's (IncorporationForms): it has no LimitedPartnership, and the
// container-model variant keeps "the one above", so both models use this list.
var BulkIncorporationForms = []string{
	"CCorporation", "SCorporation", "DonorAdvisorFund", "LimitedLiabilityCompany",
	"PrivateFoundation", "SoleProprietorship", "Other",
}

// PeopleRowTypes are the values of a People row's type, which selects the row's kind.
var PeopleRowTypes = []ContactType{Individual, Trust, Entity}

var peopleRowTypeNames = []string{string(Individual), string(Trust), string(Entity)}

// PeopleRow is one row of the People/Trusts/Entities file, decoded and checked. Only the fields
// of its Type are set; ClientID or TopAccountID is set as the file's model says.
type PeopleRow struct {
	Type         ContactType
	ID           string
	ClientID     string // ClientModel
	TopAccountID string // TopAccountModel

	// Individual
	FirstName, MiddleName, LastName string

	// Trust and Entity
	LegalName string

	// Trust
	TrustType      string
	TrustCreator   []string
	InitialTrustee []string
	GoverningState string
	CreationDate   string // YYYY-MM-DD

	// Entity
	IncorporationState string
	IncorporationForm  string
	Ownership          []BulkOwnership
}

// BulkOwnership is one entry of an Entity row's ownership.
type BulkOwnership struct {
	Percentage float64
	// OwnerID names the owner: a person, trust or entity. Several ids are joint owners with
	// right of survivorship; other shared ownership is several entries.
	OwnerID []string
}

// Joint reports whether the entry is joint ownership with right of survivorship, which the
// specification spells as several ids in one owner_id array.
func (o BulkOwnership) Joint() bool { return len(o.OwnerID) > 1 }

// RefKind is the namespace a reference's id is looked up in.
type RefKind int

const (
	RefClient     RefKind = iota + 1 // a client: the Clients file's id, or an existing client
	RefTopAccount                    // a top account, in the deprecated model
	RefCard                          // a person, trust or entity: a People row id or an existing card
)

func (k RefKind) String() string {
	switch k {
	case RefClient:
		return "client"
	case RefTopAccount:
		return "top account"
	case RefCard:
		return "card"
	}
	return "RefKind(" + strconv.Itoa(int(k)) + ")"
}

// RowRef is an id a row names, and the field that names it.
type RowRef struct {
	Kind  RefKind
	Field string // e.g. "ownership[1].owner_id"
	ID    string
}

// References yields every id the row names, its client or top account first and then the cards
// of its creators, trustees and owners, so that a file-level checker can resolve them without
// knowing the row's kinds.
func (r *PeopleRow) References() iter.Seq[RowRef] {
	return func(yield func(RowRef) bool) {
		switch {
		case r.ClientID != "":
			if !yield(RowRef{RefClient, "client_id", r.ClientID}) {
				return
			}
		case r.TopAccountID != "":
			if !yield(RowRef{RefTopAccount, "top_account_id", r.TopAccountID}) {
				return
			}
		}
		for _, id := range r.TrustCreator {
			if !yield(RowRef{RefCard, "trust_creator", id}) {
				return
			}
		}
		for _, id := range r.InitialTrustee {
			if !yield(RowRef{RefCard, "initial_trustee", id}) {
				return
			}
		}
		for i, o := range r.Ownership {
			_, field := ownershipAt(i)
			for _, id := range o.OwnerID {
				if !yield(RowRef{RefCard, field, id}) {
					return
				}
			}
		}
	}
}

func indexed(field string, i int) string { return field + "[" + strconv.Itoa(i) + "]" }

// ownershipNames holds "ownership[i]" and "ownership[i].owner_id" for the first entries, which
// every Entity row names, so that a million rows do not build them a million times.
var ownershipNames = func() (names [16][2]string) {
	for i := range names {
		names[i] = [2]string{indexed("ownership", i), indexed("ownership", i) + ".owner_id"}
	}
	return names
}()

func ownershipAt(i int) (entry, ownerID string) {
	if i < len(ownershipNames) {
		return ownershipNames[i][0], ownershipNames[i][1]
	}
	return indexed("ownership", i), indexed("ownership", i) + ".owner_id"
}

// The fields a People row may carry, with the kinds that have them. Checks run in this order so
// that a row's errors always come in the same order.
type peopleField int

const (
	pfType peopleField = iota
	pfID
	pfClientID
	pfTopAccountID
	pfFirstName
	pfMiddleName
	pfLastName
	pfLegalName
	pfTrustType
	pfTrustCreator
	pfInitialTrustee
	pfGoverningState
	pfCreationDate
	pfIncorporationState
	pfIncorporationForm
	pfOwnership
	numPeopleFields
)

var peopleFieldNames = [numPeopleFields]string{
	"type", "id", "client_id", "top_account_id", "first_name", "middle_name", "last_name",
	"legal_name", "trust_type", "trust_creator", "initial_trustee", "governing_state",
	"creation_date", "incorporation_state", "incorporation_form", "ownership",
}

func findPeopleField(key string) (peopleField, bool) {
	for f, name := range peopleFieldNames {
		if name == key {
			return peopleField(f), true
		}
	}
	return 0, false
}

// peopleFieldTypes says which row kinds have a field; fields of every kind are absent.
var peopleFieldTypes = map[peopleField][]ContactType{
	pfFirstName:          {Individual},
	pfMiddleName:         {Individual},
	pfLastName:           {Individual},
	pfLegalName:          {Trust, Entity},
	pfTrustType:          {Trust},
	pfTrustCreator:       {Trust},
	pfInitialTrustee:     {Trust},
	pfGoverningState:     {Trust},
	pfCreationDate:       {Trust},
	pfIncorporationState: {Entity},
	pfIncorporationForm:  {Entity},
	pfOwnership:          {Entity},
}

// peopleCheck collects a row's errors; every rule is checked, so one pass over a file shows
// every mistake of a line, not only the first.
type peopleCheck struct {
	model BulkModel
	row   *PeopleRow
	errs  []*Error
}

func (c *peopleCheck) fail(field, format string, args ...any) {
	c.errs = append(c.errs, invalid(field, format, args...))
}

// DecodePeopleRow decodes and checks one line of the People/Trusts/Entities file in the given
// model. It returns the row and every rule the line breaks; the row's ID is set whenever the line
// carries a usable id, even when other fields are wrong, so that errors can name the row. A null
// optional field is taken as absent; a null required field as missing.
func DecodePeopleRow(line []byte, model BulkModel) (PeopleRow, []*Error) {
	var row PeopleRow
	errs := row.Decode(line, model)
	return row, errs
}

// Decode is DecodePeopleRow into r, which it resets first; a caller decoding a file reuses one
// row for every line.
func (r *PeopleRow) Decode(line []byte, model BulkModel) []*Error {
	*r = PeopleRow{}
	c := peopleCheck{model: model, row: r}
	if !json.Valid(line) {
		var v struct{}
		err := json.Unmarshal(line, &v)
		msg := "row is not valid JSON"
		if se, ok := err.(*json.SyntaxError); ok {
			msg = fmt.Sprintf("row is not valid JSON: %s at byte %d", se.Error(), se.Offset)
		}
		return []*Error{{Kind: Malformed, Message: msg}}
	}
	var raw [numPeopleFields][]byte
	isObject := eachMember(line, func(key string, val []byte) {
		f, known := findPeopleField(key)
		switch {
		case !known:
			c.fail(key, "%s is not a field of a People/Trusts/Entities row", key)
		case raw[f] != nil:
			c.fail(key, "%s is given more than once", key)
		case !scannedNull(val):
			raw[f] = val
		}
	})
	if !isObject {
		return []*Error{{Kind: Malformed, Message: "row must be a JSON object"}}
	}
	c.check(&raw)
	return c.errs
}

func (c *peopleCheck) check(raw *[numPeopleFields][]byte) {
	r := c.row
	// The id first, so that every other error can name the row.
	if s, ok := c.text(pfID, raw[pfID], MaxBulkID, true); ok {
		r.ID = s
	}
	typeKnown := false
	if v := raw[pfType]; v == nil {
		c.fail("type", "type is required")
	} else if s, ok := constant(v, peopleRowTypeNames); ok {
		r.Type, typeKnown = ContactType(s), true
	} else {
		c.fail("type", "type must be one of Individual, Trust, Entity")
	}

	own, other := pfClientID, pfTopAccountID
	if c.model == TopAccountModel {
		own, other = other, own
	}
	if raw[other] != nil {
		c.fail(peopleFieldNames[other], "%s belongs to the %s; this file's rows carry %s",
			peopleFieldNames[other], otherModelName(c.model), peopleFieldNames[own])
	}
	if s, ok := c.text(own, raw[own], MaxBulkID, true); ok {
		if own == pfClientID {
			r.ClientID = s
		} else {
			r.TopAccountID = s
		}
	}
	if !typeKnown {
		return // which fields belong, and which are required, depends on the type
	}
	for f := pfFirstName; f < numPeopleFields; f++ {
		if raw[f] != nil && !slices.Contains(peopleFieldTypes[f], r.Type) {
			name := peopleFieldNames[f]
			c.fail(name, "%s is not a field of %s rows", name, r.Type)
			raw[f] = nil
		}
	}
	switch r.Type {
	case Individual:
		r.FirstName, _ = c.text(pfFirstName, raw[pfFirstName], MaxBulkText, true)
		r.MiddleName, _ = c.text(pfMiddleName, raw[pfMiddleName], MaxBulkText, false)
		r.LastName, _ = c.text(pfLastName, raw[pfLastName], MaxBulkText, true)
	case Trust:
		r.LegalName, _ = c.text(pfLegalName, raw[pfLegalName], MaxBulkTrustLegalName, true)
		r.TrustType = c.enum(pfTrustType, raw[pfTrustType], TrustTypes, true)
		r.TrustCreator = c.ids("trust_creator", raw[pfTrustCreator], false)
		r.InitialTrustee = c.ids("initial_trustee", raw[pfInitialTrustee], false)
		r.GoverningState = c.state(pfGoverningState, raw[pfGoverningState])
		if v := raw[pfCreationDate]; v != nil {
			if s, ok := scannedString(v); ok && IsDate(s) {
				r.CreationDate = s
			} else {
				c.fail("creation_date", "creation_date must be a valid date in YYYY-MM-DD format")
			}
		}
	case Entity:
		r.LegalName, _ = c.text(pfLegalName, raw[pfLegalName], MaxBulkText, true)
		r.IncorporationState = c.state(pfIncorporationState, raw[pfIncorporationState])
		r.IncorporationForm = c.enum(pfIncorporationForm, raw[pfIncorporationForm], BulkIncorporationForms, false)
		if v := raw[pfOwnership]; v != nil {
			c.ownership(v)
		}
	}
	c.selfReferences()
}

func otherModelName(m BulkModel) string {
	if m == TopAccountModel {
		return "Clients-based model"
	}
	return "deprecated top-account model"
}

// text checks a string field: a string, not blank, at most max characters.
func (c *peopleCheck) text(f peopleField, raw []byte, max int, required bool) (string, bool) {
	return c.textAt(peopleFieldNames[f], raw, max, required)
}

func (c *peopleCheck) textAt(name string, raw []byte, max int, required bool) (string, bool) {
	if raw == nil {
		if required {
			c.fail(name, "%s is required", name)
		}
		return "", false
	}
	s, ok := scannedString(raw)
	switch {
	case !ok:
		c.fail(name, "%s must be a string, not %s", name, jsonType(raw))
	case isBlank(s):
		c.fail(name, "%s must not be blank", name)
	case utf8.RuneCountInString(s) > max:
		c.fail(name, "%s must be at most %d characters", name, max)
	default:
		return s, true
	}
	return "", false
}

// element checks one id of an array of ids. Its field name is built only for an error, as
// nearly every row has none.
func (c *peopleCheck) element(name string, i int, raw []byte) (string, bool) {
	if s, ok := scannedString(raw); ok && !isBlank(s) && utf8.RuneCountInString(s) <= MaxBulkID {
		return s, true
	}
	return c.textAt(indexed(name, i), raw, MaxBulkID, true)
}

// constant returns the value of values that raw spells, without copying it: enumerations and
// states are kept as the package's own strings.
func constant(raw []byte, values []string) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if end, escaped := scanString(raw, 0); !escaped && end == len(raw) {
		for _, v := range values {
			if v == string(raw[1:len(raw)-1]) {
				return v, true
			}
		}
		return "", false
	}
	s, _ := scannedString(raw)
	i := slices.Index(values, s)
	if i < 0 {
		return "", false
	}
	return values[i], true
}

func (c *peopleCheck) enum(f peopleField, raw []byte, values []string, required bool) string {
	name := peopleFieldNames[f]
	if raw == nil {
		if required {
			c.fail(name, "%s is required", name)
		}
		return ""
	}
	// Exactly as spelled: the specification's values are case-sensitive.
	if s, ok := constant(raw, values); ok {
		return s
	}
	c.fail(name, "%s must be one of %s", name, strings.Join(values, ", "))
	return ""
}

func (c *peopleCheck) state(f peopleField, raw []byte) string {
	if raw == nil {
		return ""
	}
	name := peopleFieldNames[f]
	if s, ok := constant(raw, StateCodes); ok {
		return s
	}
	c.fail(name, "%s must be a valid two-letter US state abbreviation", name)
	return ""
}

// ids checks a field of card ids: in the current model a string or an array of strings, in the
// deprecated model an array of strings only. Each id is at most 255 characters and an id is
// named once.
func (c *peopleCheck) ids(name string, raw []byte, nonEmpty bool) []string {
	if raw == nil {
		return nil
	}
	if raw[0] == '"' && c.model == ClientModel {
		if s, ok := c.textAt(name, raw, MaxBulkID, true); ok {
			return []string{s}
		}
		return nil
	}
	var out []string
	bad := false
	isArray := eachElement(raw, func(i int, v []byte) {
		if s, ok := c.element(name, i, v); ok {
			if slices.Contains(out, s) {
				c.fail(indexed(name, i), "%s names %q more than once", name, s)
				return
			}
			out = append(out, s)
		} else {
			bad = true
		}
	})
	switch {
	case !isArray && c.model == TopAccountModel:
		c.fail(name, "%s must be an array of strings in the deprecated top-account model, not %s", name, jsonType(raw))
	case !isArray:
		c.fail(name, "%s must be a string or an array of strings, not %s", name, jsonType(raw))
	case bad:
		return nil
	case nonEmpty && len(out) == 0:
		c.fail(name, "%s must name at least one owner", name)
	}
	return out
}

func (c *peopleCheck) ownership(raw []byte) {
	r := c.row
	// Several ids in one owner_id mean joint ownership with right of survivorship; other shared
	// ownership is several entries. An owner named in two entries would be both at once, so
	// it is refused; seen remembers the entry that first named each owner.
	seen := map[string]int{}
	isArray := eachElement(raw, func(i int, v []byte) {
		at, ownerField := ownershipAt(i)
		var entry [2][]byte // percentage, owner_id
		isObject := eachMember(v, func(key string, val []byte) {
			slot := -1
			switch key {
			case "percentage":
				slot = 0
			case "owner_id":
				slot = 1
			}
			switch {
			case slot < 0:
				c.fail(at+"."+key, "%s.%s is not a field of an ownership entry", at, key)
			case entry[slot] != nil:
				c.fail(at+"."+key, "%s.%s is given more than once", at, key)
			case !scannedNull(val):
				entry[slot] = val
			}
		})
		if !isObject {
			c.fail(at, "%s must be an object with percentage and owner_id, not %s", at, jsonType(v))
			return
		}
		o := BulkOwnership{}
		okEntry := true
		switch p, isNumber := scannedNumber(entry[0]); {
		case entry[0] == nil:
			c.fail(at+".percentage", "%s.percentage is required", at)
			okEntry = false
		case !isNumber || p < 0 || p > 100:
			c.fail(at+".percentage", "%s.percentage must be a number from 0 to 100", at)
			okEntry = false
		default:
			o.Percentage = p
		}
		if entry[1] == nil {
			c.fail(at+".owner_id", "%s.owner_id is required", at)
			okEntry = false
		} else if o.OwnerID = c.ids(ownerField, entry[1], true); o.OwnerID == nil {
			okEntry = false
		}
		for _, id := range o.OwnerID {
			if first, dup := seen[id]; dup {
				c.fail(at+".owner_id", "%s.owner_id names %q, already an owner in ownership[%d]; joint owners share one owner_id array", at, id, first)
				okEntry = false
				continue
			}
			seen[id] = i
		}
		if okEntry {
			r.Ownership = append(r.Ownership, o)
		}
	})
	if !isArray {
		c.fail("ownership", "ownership must be an array of ownership entries, not %s", jsonType(raw))
	}
}

// selfReferences refuses a row that names itself as its own creator, trustee or owner, as the
// REST API refuses a contact that references itself.
func (c *peopleCheck) selfReferences() {
	r := c.row
	if r.ID == "" {
		return
	}
	for ref := range r.References() {
		if ref.Kind == RefCard && ref.ID == r.ID {
			c.fail(ref.Field, "%s must not name the row itself", ref.Field)
		}
	}
}

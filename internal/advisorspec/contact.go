package advisorspec

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Scope says which family of contact endpoints a body was sent to: the v2 endpoints scoped by top
// account, or the v1 endpoints scoped by client. Only v1 knows an Individual's dob, and each
// names the place a reference must be found in.
type Scope int

const (
	TopAccountScope Scope = iota
	ClientScope
)

func (s Scope) place() string {
	if s == ClientScope {
		return "this client"
	}
	return "this top account"
}

// Contact checks run in this order, so that the first message is always the same for the same
// body: the body's shape, type and external_id, fields that do not belong, missing required
// fields, each field's value in specification order, and last the references, which need the
// contacts of the scope.
type contactCheck struct {
	scope Scope
	typ   ContactType
	self  string             // external_id of the contact being written
	known func(string) bool  // nil: references are not checked
	refs  []contactReference // collected while values are checked
	obj   object             // the body
	isNew bool               // create rather than update
}

type contactReference struct {
	field, externalID string
}

type valueKind int

const (
	kindText valueKind = iota
	kindEnum
	kindDate
	kindState
	kindInteger
	kindRefs
	kindOwnership
	kindParties
)

type contactField struct {
	name     string
	kind     valueKind
	max      int      // kindText
	values   []string // kindEnum
	types    []ContactType
	required bool // on create, for every type that has the field
	v1Only   bool
}

var organisations = []ContactType{Trust, Entity, Charity, Will, Class}

// contactFields is the specification's field tables, in their order.
var contactFields = []contactField{
	{name: "first_name", kind: kindText, max: 200, types: []ContactType{Individual}},
	{name: "middle_name", kind: kindText, max: 200, types: []ContactType{Individual}},
	{name: "last_name", kind: kindText, max: 200, types: []ContactType{Individual}},
	{name: "dob", kind: kindDate, types: []ContactType{Individual}, v1Only: true},
	{name: "legal_name", kind: kindText, max: 200, types: organisations, required: true},
	{name: "trust_type", kind: kindEnum, values: TrustTypes, types: []ContactType{Trust}},
	{name: "trust_creator", kind: kindRefs, types: []ContactType{Trust}},
	{name: "initial_trustee", kind: kindRefs, types: []ContactType{Trust}},
	{name: "governing_state", kind: kindState, types: []ContactType{Trust, Will}},
	{name: "trust_creation_date", kind: kindDate, types: []ContactType{Trust}},
	{name: "incorporation_state", kind: kindState, types: []ContactType{Entity}},
	{name: "incorporation_form", kind: kindEnum, values: IncorporationForms, types: []ContactType{Entity}},
	{name: "ownership", kind: kindOwnership, types: []ContactType{Entity}},
	{name: "ein", kind: kindInteger, types: []ContactType{Charity}},
	{name: "city", kind: kindText, max: 100, types: []ContactType{Charity}, required: true},
	{name: "state", kind: kindState, types: []ContactType{Charity}, required: true},
	{name: "address_formatted", kind: kindText, max: 200, types: []ContactType{Charity}},
	{name: "notes", kind: kindText, max: 5000, types: []ContactType{Charity, Class}},
	{name: "will_type", kind: kindEnum, values: WillTypes, types: []ContactType{Will}, required: true},
	{name: "will_creation_date", kind: kindDate, types: []ContactType{Will}},
	{name: "testator", kind: kindRefs, types: []ContactType{Will}},
	{name: "executor", kind: kindRefs, types: []ContactType{Will}},
	{name: "current_parties", kind: kindParties, types: []ContactType{Class}},
}

// ContactFields returns the names of the mutable fields a contact of type t has in scope, in
// specification order.
func ContactFields(t ContactType, scope Scope) []string {
	var out []string
	for _, f := range contactFields {
		if slices.Contains(f.types, t) && (!f.v1Only || scope == ClientScope) {
			out = append(out, f.name)
		}
	}
	return out
}

func findContactField(name string) (contactField, bool) {
	for _, f := range contactFields {
		if f.name == name {
			return f, true
		}
	}
	return contactField{}, false
}

// ParseContactType returns the contact type spelled s.
func ParseContactType(s string) (ContactType, bool) {
	for _, t := range ContactTypes {
		if string(t) == s {
			return t, true
		}
	}
	return "", false
}

// ContactExternalIDTaken is the service's message when a contact's external_id is another's in
// its top account or client: the v2 409's words, which v1 shares.
const ContactExternalIDTaken = "Contact card with this external id already exists"

// CheckNewContact checks the body of an Add Contact request. known reports whether an
// external_id names a contact in scope; when it is nil references are not looked up. On success
// it returns the new contact's type and external_id.
func CheckNewContact(body []byte, scope Scope, known func(externalID string) bool) (ContactType, string, *Error) {
	obj, err := decodeObject(body)
	if err != nil {
		return "", "", err
	}
	raw, ok := obj["type"]
	if !ok || isNull(raw) {
		return "", "", invalid("type", "type is required")
	}
	s, _ := asString(raw)
	typ, ok := ParseContactType(s)
	if !ok {
		return "", "", invalid("type", "type must be one of %s", joinTypes(ContactTypes))
	}
	raw, ok = obj["external_id"]
	if !ok || isNull(raw) {
		return "", "", invalid("external_id", "external_id is required")
	}
	self, err := text("external_id", raw, MaxExternalID)
	if err != nil {
		return "", "", err
	}
	c := &contactCheck{scope: scope, typ: typ, self: self, known: known, obj: obj, isNew: true}
	if err := c.check(); err != nil {
		return "", "", err
	}
	return typ, self, nil
}

// CheckContactUpdate checks the body of an Update Contact request against a contact of type typ
// whose external_id is self. known is as for CheckNewContact.
func CheckContactUpdate(body []byte, scope Scope, typ ContactType, self string, known func(externalID string) bool) *Error {
	obj, err := decodeObject(body)
	if err != nil {
		return err
	}
	for _, f := range []string{"type", "external_id"} {
		if !obj.has(f) {
			continue
		}
		// v1 answers "409 ... on update: conflicts with an existing contact": the only way an
		// update can is by carrying another contact's external_id. The contact's own, or one no
		// contact holds, is the immutable field it is in v2.
		if f == "external_id" && scope == ClientScope && known != nil {
			if id, ok := asString(obj[f]); ok && id != self && known(id) {
				return &Error{Kind: Conflict, Field: f, Message: ContactExternalIDTaken}
			}
		}
		return &Error{Kind: Immutable, Field: f, Message: f + " cannot be updated"}
	}
	c := &contactCheck{scope: scope, typ: typ, self: self, known: known, obj: obj}
	return c.check()
}

func (c *contactCheck) check() *Error {
	for _, key := range c.obj.sortedKeys() {
		if key == "type" || key == "external_id" {
			continue
		}
		if err := c.belongs(key); err != nil {
			return err
		}
	}
	if !c.isNew && len(c.obj) == 0 {
		return &Error{Kind: Empty, Message: "At least one mutable field must be provided"}
	}
	for _, f := range contactFields {
		// A required field sent as null is as missing as one left out.
		if raw, present := c.obj[f.name]; c.isNew && f.required && (!present || isNull(raw)) && slices.Contains(f.types, c.typ) {
			return invalid(f.name, "%s is required", f.name)
		}
	}
	for _, f := range contactFields {
		if raw, present := c.obj[f.name]; present {
			if err := c.value(f, raw); err != nil {
				return err
			}
		}
	}
	return c.references()
}

// belongs rejects a key that is no field of the contact's type in this scope, naming the types
// that do have it.
func (c *contactCheck) belongs(key string) *Error {
	f, ok := findContactField(key)
	switch {
	case key == "id":
		return invalid(key, "id is assigned by the service and cannot be set")
	case !ok:
		return invalid(key, "%s is not a contact card field", key)
	case !slices.Contains(f.types, c.typ):
		return invalid(key, "%s is only supported for %s contact cards", key, joinTypes(f.types))
	case f.v1Only && c.scope != ClientScope:
		return invalid(key, "%s is only supported on the client-scoped (v1) contact endpoints", key)
	}
	return nil
}

func (c *contactCheck) value(f contactField, raw json.RawMessage) *Error {
	switch f.kind {
	case kindText:
		_, err := text(f.name, raw, f.max)
		return err
	case kindEnum:
		if s, ok := asString(raw); !ok || !slices.Contains(f.values, s) {
			return invalid(f.name, "%s must be one of %s", f.name, strings.Join(f.values, ", "))
		}
	case kindDate:
		if s, ok := asString(raw); !ok || !IsDate(s) {
			return invalid(f.name, "%s must be a valid date in YYYY-MM-DD format", f.name)
		}
	case kindState:
		if s, ok := asString(raw); !ok || !IsStateCode(s) {
			return invalid(f.name, "%s must be a valid two-letter US state abbreviation", f.name)
		}
	case kindInteger:
		if _, ok := asInteger(raw); !ok {
			return invalid(f.name, "%s must be an integer", f.name)
		}
	case kindRefs:
		return c.refList(f.name, raw, false)
	case kindOwnership:
		return c.ownership(raw)
	case kindParties:
		return c.parties(raw)
	}
	return nil
}

// refList checks an array of contact external_ids and remembers them for the reference check.
func (c *contactCheck) refList(field string, raw json.RawMessage, nonEmpty bool) *Error {
	items, ok := asArray(raw)
	if ok && nonEmpty && len(items) == 0 {
		return invalid(field, "%s must name at least one contact", field)
	}
	for _, item := range items {
		s, isString := asString(item)
		if !isString || isBlank(s) {
			ok = false
			break
		}
		c.refs = append(c.refs, contactReference{field: field, externalID: s})
	}
	if !ok {
		return invalid(field, "%s must be an array of contact external_ids", field)
	}
	return nil
}

func (c *contactCheck) ref(field string, raw json.RawMessage) *Error {
	s, ok := asString(raw)
	if !ok || isBlank(s) {
		return invalid(field, "%s must be a contact external_id", field)
	}
	c.refs = append(c.refs, contactReference{field: field, externalID: s})
	return nil
}

func percentage(field string, raw json.RawMessage) *Error {
	if p, ok := asNumber(raw); !ok || p < 0 || p > 100 {
		return invalid(field, "%s must be a number from 0 to 100", field)
	}
	return nil
}

// members checks a nested object: it must be an object and carry only the named keys.
func members(field string, raw json.RawMessage, what string, allowed ...string) (object, *Error) {
	o, ok := asObject(raw)
	if !ok {
		return nil, invalid(field, "%s must be an object", field)
	}
	for _, k := range o.sortedKeys() {
		if !slices.Contains(allowed, k) {
			return nil, invalid(field+"."+k, "%s.%s is not a field of %s", field, k, what)
		}
	}
	return o, nil
}

func (c *contactCheck) ownership(raw json.RawMessage) *Error {
	entries, ok := asArray(raw)
	if !ok {
		return invalid("ownership", "ownership must be an array of ownership entries")
	}
	for i, rawEntry := range entries {
		at := fmt.Sprintf("ownership[%d]", i)
		e, err := members(at, rawEntry, "an ownership entry", "percentage", "owner_id", "subowners")
		if err != nil {
			return err
		}
		p, ok := e["percentage"]
		if !ok {
			return invalid(at+".percentage", "%s.percentage is required", at)
		}
		if err := percentage(at+".percentage", p); err != nil {
			return err
		}
		owner, single := e["owner_id"]
		subowners, joint := e["subowners"]
		switch {
		case single && joint:
			return invalid(at, "%s must have either owner_id or subowners, not both", at)
		case single:
			err = c.ref(at+".owner_id", owner)
		case joint:
			err = c.refList(at+".subowners", subowners, true)
		default:
			return invalid(at, "%s must have owner_id (single owner) or subowners (joint owners)", at)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *contactCheck) parties(raw json.RawMessage) *Error {
	const at = "current_parties"
	cp, err := members(at, raw, at, "is_distributed_evenly", "share_amount", "parties")
	if err != nil {
		return err
	}
	if v, ok := cp["is_distributed_evenly"]; ok && !asBool(v) {
		return invalid(at+".is_distributed_evenly", "%s.is_distributed_evenly must be a boolean", at)
	}
	if v, ok := cp["share_amount"]; ok {
		if _, err := text(at+".share_amount", v, MaxShareAmount); err != nil {
			return err
		}
	}
	rawParties, ok := cp["parties"]
	if !ok {
		return invalid(at+".parties", "%s.parties is required", at)
	}
	list, ok := asArray(rawParties)
	if !ok {
		return invalid(at+".parties", "%s.parties must be an array of parties", at)
	}
	for i, rawParty := range list {
		if err := c.party(fmt.Sprintf("%s.parties[%d]", at, i), rawParty); err != nil {
			return err
		}
	}
	return nil
}

func (c *contactCheck) party(at string, raw json.RawMessage) *Error {
	p, err := members(at, raw, "a party", "contact_id", "distribution_percentage", "fraction")
	if err != nil {
		return err
	}
	id, ok := p["contact_id"]
	if !ok {
		return invalid(at+".contact_id", "%s.contact_id is required", at)
	}
	if err := c.ref(at+".contact_id", id); err != nil {
		return err
	}
	if v, ok := p["distribution_percentage"]; ok {
		if err := percentage(at+".distribution_percentage", v); err != nil {
			return err
		}
	}
	rawFraction, ok := p["fraction"]
	if !ok {
		return nil
	}
	fr, err := members(at+".fraction", rawFraction, "a fraction", "numerator", "denominator")
	if err != nil {
		return err
	}
	for _, part := range []string{"numerator", "denominator"} {
		field := at + ".fraction." + part
		v, ok := fr[part]
		if !ok {
			return invalid(field, "%s is required", field)
		}
		n, ok := asInteger(v)
		if part == "denominator" && (!ok || n == 0) {
			return invalid(field, "%s must be a non-zero integer", field)
		}
		if !ok {
			return invalid(field, "%s must be an integer", field)
		}
	}
	return nil
}

// references checks, once every field has its shape, that each reference names another contact
// that exists in scope.
func (c *contactCheck) references() *Error {
	for _, r := range c.refs {
		if r.externalID == c.self {
			return &Error{Kind: Reference, Field: r.field, Message: r.field + " must not reference the contact itself"}
		}
		if c.known != nil && !c.known(r.externalID) {
			return &Error{Kind: Reference, Field: r.field, Message: fmt.Sprintf(
				"%s references contact %q, which does not exist in %s", r.field, r.externalID, c.scope.place())}
		}
	}
	return nil
}

func joinTypes(types []ContactType) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

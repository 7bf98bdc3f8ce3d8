package advisorspec

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// MaxClientField is the longest value, in characters, of every string field of a Clients-file
// row: ids, names, email and each address member.
const MaxClientField = 255

// MaritalStatuses are the values of a Clients-file row's marital_status.
var MaritalStatuses = []string{
	"Single", "Married", "DomesticPartnership", "CivilUnion", "Engaged", "OtherCommittedRelationship", "Widowed",
}

// EstatePlans are the values of a Clients-file row's existing_estate_plan.
var EstatePlans = []string{"IndividualTrust", "JointTrust", "LastWillAndTestament", "NoEstatePlan", "Unknown"}

// PrimaryDocuments are the values of a Clients-file row's selected_primary_document. Unlike the
// other enumerations they are spelled with spaces, and only so.
var PrimaryDocuments = []string{
	"One Joint Revocable Trust", "One Individual Revocable Trust", "Two Individual Revocable Trusts",
	"One Last Will and Testament", "Two Last Will and Testaments",
}

// ClientRow is one line of the Clients file, which is also the body of Add Client. Required
// fields are values; every optional one is a pointer, nil when the row does not carry it, so
// that an update can leave what a row leaves out unchanged.
type ClientRow struct {
	// ID is the caller's client identifier: the client's external_id.
	ID string `json:"id"`
	ClientFields
}

// ClientFields are the fields of a Clients-file row other than its id, shared by the row and by
// the client the sandbox answers with.
type ClientFields struct {
	PrimaryID           *string `json:"primary_id,omitempty"`
	Email               *string `json:"email,omitempty"`
	FirstName           string  `json:"first_name"`
	LastName            string  `json:"last_name"`
	SendInvitationEmail *bool   `json:"send_invitation_email,omitempty"`
	// SubscriptionStartDate is kept in UTC.
	SubscriptionStartDate   *time.Time     `json:"subscription_start_date,omitempty"`
	MaritalStatus           *string        `json:"marital_status,omitempty"`
	SpouseFirstName         *string        `json:"spouse_first_name,omitempty"`
	SpouseLastName          *string        `json:"spouse_last_name,omitempty"`
	SpouseID                *string        `json:"spouse_id,omitempty"`
	Address                 *ClientAddress `json:"address,omitempty"`
	HasChildren             *bool          `json:"has_children,omitempty"`
	HasPets                 *bool          `json:"has_pets,omitempty"`
	OwnProperty             *bool          `json:"own_property,omitempty"`
	ExistingEstatePlan      *string        `json:"existing_estate_plan,omitempty"`
	SelectedPrimaryDocument *string        `json:"selected_primary_document,omitempty"`
}

// ClientAddress is a Clients-file row's address; every member is optional.
type ClientAddress struct {
	Line1 *string `json:"line1,omitempty"`
	Line2 *string `json:"line2,omitempty"`
	City  *string `json:"city,omitempty"`
	State *string `json:"state,omitempty"`
	Zip   *string `json:"zip,omitempty"`
}

// SubscriptionStart is the date the service records for the row's subscription: the row's own
// when it is not after now, now otherwise. The specification: "Must be in the past; if absent or
// in the future the current date is used", so a future date is replaced, not refused.
func (r ClientRow) SubscriptionStart(now time.Time) time.Time {
	now = now.UTC()
	if r.SubscriptionStartDate == nil || r.SubscriptionStartDate.After(now) {
		return now
	}
	return *r.SubscriptionStartDate
}

// clientRowField is one row of the specification's Clients table.
type clientRowField struct {
	name     string
	kind     valueKind // kindText, kindEnum, kindBool, kindDateTime or kindAddress
	values   []string  // kindEnum
	required bool
}

const (
	kindBool valueKind = iota + 100
	kindDateTime
	kindAddress
)

// clientRowFields is the Clients table, in its order, which is the order rules are checked in.
var clientRowFields = []clientRowField{
	{name: "id", kind: kindText, required: true},
	{name: "primary_id", kind: kindText},
	{name: "email", kind: kindText},
	{name: "first_name", kind: kindText, required: true},
	{name: "last_name", kind: kindText, required: true},
	{name: "send_invitation_email", kind: kindBool},
	{name: "subscription_start_date", kind: kindDateTime},
	{name: "marital_status", kind: kindEnum, values: MaritalStatuses},
	{name: "spouse_first_name", kind: kindText},
	{name: "spouse_last_name", kind: kindText},
	{name: "spouse_id", kind: kindText},
	{name: "address", kind: kindAddress},
	{name: "has_children", kind: kindBool},
	{name: "has_pets", kind: kindBool},
	{name: "own_property", kind: kindBool},
	{name: "existing_estate_plan", kind: kindEnum, values: EstatePlans},
	{name: "selected_primary_document", kind: kindEnum, values: PrimaryDocuments},
}

var addressMembers = []string{"line1", "line2", "city", "state", "zip"}

// ParseClientRow decodes one Clients-file row, or an Add Client body, and checks it against every
// rule of the Clients table. It returns the first broken rule, in a fixed order: the body's
// shape, fields the table does not have, missing required fields, then each field's value in
// table order, then the rules between fields.
func ParseClientRow(data []byte) (ClientRow, *Error) {
	row, errs := CheckClientRow(data)
	if len(errs) > 0 {
		return row, errs[0]
	}
	return row, nil
}

// CheckClientRow is ParseClientRow reporting every field at fault, one error per field, in the
// same order, for a bulk report that lists all that is wrong with a line. The row it returns
// carries what could be read even when there are errors, so a report can name the row's id.
func CheckClientRow(data []byte) (ClientRow, []*Error) {
	var row ClientRow
	obj, err := decodeObject(data)
	if err != nil {
		return row, []*Error{err}
	}
	var errs []*Error
	for _, key := range obj.sortedKeys() {
		if !slices.ContainsFunc(clientRowFields, func(f clientRowField) bool { return f.name == key }) {
			errs = append(errs, foreignClientField(key))
		}
	}
	for _, f := range clientRowFields {
		// A required field sent as null is as missing as one left out.
		if raw, ok := obj[f.name]; f.required && (!ok || isNull(raw)) {
			errs = append(errs, invalid(f.name, "%s is required", f.name))
		}
	}
	for _, f := range clientRowFields {
		raw, ok := obj[f.name]
		if !ok || isNull(raw) {
			continue // absent; a missing required field is reported above
		}
		if err := row.set(f, raw); err != nil {
			errs = append(errs, err)
		}
	}
	if row.SpouseID != nil && row.SpouseFirstName == nil && row.SpouseLastName == nil && !hasError(errs, "spouse_first_name", "spouse_last_name") {
		// The spouse contact is made from the spouse's names; an id with nothing to link is a
		// mistake the caller should hear of rather than a link that silently does nothing.
		errs = append(errs, invalid("spouse_id", "spouse_id requires spouse_first_name or spouse_last_name: it links the spouse contact they create"))
	}
	if row.SpouseID != nil && row.PrimaryID != nil && *row.SpouseID == *row.PrimaryID {
		errs = append(errs, invalid("spouse_id", "spouse_id must differ from primary_id: each links its own contact"))
	}
	return row, errs
}

func foreignClientField(key string) *Error {
	switch key {
	case "wid", "external_id":
		// The client's answer carries these; the row names the client by id.
		return invalid(key, "%s is not a Clients file field: the client is named by id", key)
	}
	return invalid(key, "%s is not a Clients file field", key)
}

func hasError(errs []*Error, fields ...string) bool {
	return slices.ContainsFunc(errs, func(e *Error) bool { return slices.Contains(fields, e.Field) })
}

// set checks one present, non-null value and stores it in the row.
func (r *ClientRow) set(f clientRowField, raw json.RawMessage) *Error {
	switch f.kind {
	case kindText:
		s, err := text(f.name, raw, MaxClientField)
		if err != nil {
			return err
		}
		r.setText(f.name, s)
	case kindEnum:
		s, ok := asString(raw)
		if !ok || !slices.Contains(f.values, s) {
			return invalid(f.name, "%s must be one of %s", f.name, strings.Join(f.values, ", "))
		}
		r.setText(f.name, s)
	case kindBool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return invalid(f.name, "%s must be a boolean", f.name)
		}
		*r.boolField(f.name) = &b
	case kindDateTime:
		t, ok := dateTime(raw)
		if !ok {
			return invalid(f.name, "%s must be an ISO 8601 date-time with a time zone, such as 2024-01-15T09:30:00Z", f.name)
		}
		r.SubscriptionStartDate = &t
	case kindAddress:
		a, err := clientAddress(raw)
		if err != nil {
			return err
		}
		r.Address = a
	}
	return nil
}

func (r *ClientRow) setText(name, s string) {
	switch name {
	case "id":
		r.ID = s
	case "first_name":
		r.FirstName = s
	case "last_name":
		r.LastName = s
	default:
		*r.optionalText(name) = &s
	}
}

func (r *ClientRow) optionalText(name string) **string {
	switch name {
	case "primary_id":
		return &r.PrimaryID
	case "email":
		return &r.Email
	case "marital_status":
		return &r.MaritalStatus
	case "spouse_first_name":
		return &r.SpouseFirstName
	case "spouse_last_name":
		return &r.SpouseLastName
	case "spouse_id":
		return &r.SpouseID
	case "existing_estate_plan":
		return &r.ExistingEstatePlan
	case "selected_primary_document":
		return &r.SelectedPrimaryDocument
	}
	panic("advisorspec: no text field " + name) // clientRowFields and this switch disagree
}

func (r *ClientRow) boolField(name string) **bool {
	switch name {
	case "send_invitation_email":
		return &r.SendInvitationEmail
	case "has_children":
		return &r.HasChildren
	case "has_pets":
		return &r.HasPets
	case "own_property":
		return &r.OwnProperty
	}
	panic("advisorspec: no boolean field " + name) // clientRowFields and this switch disagree
}

// dateTime reads an ISO 8601 date-time in its RFC 3339 profile: a date, a time and a zone
// ("Z" or an offset). A date alone or a time without a zone is refused rather than guessed at,
// since either could move the start by a day.
func dateTime(raw json.RawMessage) (time.Time, bool) {
	s, ok := asString(raw)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// clientAddress checks the address object: only the five members, each an optional string of
// at most 255 characters. state is not held to the state codes: the Clients table says only
// "each string max 255", unlike the trust and entity tables, which ask for an abbreviation.
func clientAddress(raw json.RawMessage) (*ClientAddress, *Error) {
	o, err := members("address", raw, "an address", addressMembers...)
	if err != nil {
		return nil, err
	}
	a := &ClientAddress{}
	dst := map[string]**string{"line1": &a.Line1, "line2": &a.Line2, "city": &a.City, "state": &a.State, "zip": &a.Zip}
	for _, m := range addressMembers {
		v, ok := o[m]
		if !ok || isNull(v) {
			continue
		}
		s, err := text("address."+m, v, MaxClientField)
		if err != nil {
			return nil, err
		}
		*dst[m] = &s
	}
	return a, nil
}

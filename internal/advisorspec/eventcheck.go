package advisorspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Webhook is a webhook delivery that satisfies the specification.
type Webhook struct {
	EventType EventType
	// Wid is the client's (for ClientDeclinedInvitation, the user's) service identifier.
	Wid       string
	Timestamp time.Time
	// Canonical is the delivery in one form: only the fields the specification describes,
	// under its names (the owners of AssetOwnershipAdded under OwnershipAdded, whichever name
	// they came under), in its order, nulls left out, date-times in RFC 3339 UTC. It is a body
	// ParseWebhook accepts and gives back unchanged, and each of its keys is the exact name of
	// a field, so encoding/json decodes it without the checks (which the case-insensitive
	// matching of encoding/json would make unsafe on a body as received). A delivery of a type
	// the specification does not have is kept whole instead (compacted), since which of its
	// fields matter is not known here: see Known.
	Canonical []byte
	// Unknown lists the values the delivery holds that the specification does not (yet) have:
	// an EventType, or a value of an enumeration such as a failure Reason. The service adds
	// values before receivers know them, and a receiver that refused them would lose the event
	// for good (the service does not retry a refusal), so they are accepted and kept as sent.
	Unknown []UnknownValue
	// strict is the refusal of the first of Unknown, for Strict.
	strict *Error
}

// UnknownValue is a value of an enumeration that the specification does not have, or a whole
// number wider than the gateway's field for it holds (Unheld).
type UnknownValue struct {
	// Field is the field's name, such as EventType or Reason (without its path, so that the
	// names form a small, fixed set).
	Field string
	Value string
	// Unheld: the value is a whole number, as the specification's "integer" allows, but wider
	// than the gateway's field holds (64 bits, or 32 for a field the schema gives as Int). The
	// event is kept without it (null), rather than lost by a refusal the service does not
	// retry; the value is logged.
	Unheld bool
}

// Strict is what a sender that holds to the specification (such as the sandbox, which plays the
// service) refuses the delivery with: the first value the specification does not have, as an
// *Error naming its path; nil when there is none.
func (w *Webhook) Strict() *Error { return w.strict }

// unknown records a value the specification does not have, and the refusal Strict gives for it.
func (w *Webhook) unknown(field, value string, refusal *Error) {
	w.Unknown = append(w.Unknown, UnknownValue{Field: field, Value: value})
	if w.strict == nil {
		w.strict = refusal
	}
}

// unheld records a whole number wider than the gateway's field holds. It is no refusal even
// for Strict: the specification's integers have no bound.
func (w *Webhook) unheld(field, value string) {
	w.Unknown = append(w.Unknown, UnknownValue{Field: field, Value: value, Unheld: true})
}

// Known reports whether the delivery's EventType is one of the specification's. A delivery of
// any other type has had its envelope checked and nothing else.
func (w *Webhook) Known() bool { return w.EventType.Group() != "" }

// ParseWebhook checks a webhook body against the specification. Fields it does not describe
// are ignored, as a receiver must when the service adds fields, and so are names that differ
// from its names only in letter case. A missing, mistyped or out-of-range field is an *Error of
// Kind Invalid whose Field is the field's path in the body, such as Payload.DocumentWid, and
// whose Message starts with that path; a body that is not one JSON object is Kind Malformed.
// A body of one of the specification's event types that breaks another rule comes back with
// its Webhook too, holding the EventType alone, so that a refusal can be told apart by type
// without reading the body again; otherwise the Webhook of a refusal is nil.
func ParseWebhook(body []byte) (*Webhook, *Error) {
	var w Webhook
	if err := w.parse(body); err != nil {
		if w.EventType == "" {
			return nil, err
		}
		return &Webhook{EventType: w.EventType}, err
	}
	return &w, nil
}

// parse fills w from body, setting EventType as soon as it is known to be one of the
// specification's.
func (w *Webhook) parse(body []byte) *Error {
	top, err := eventObject(body, "")
	if err != nil {
		return err
	}
	typeName, _, err := w.eventString(top, eventRule{name: "EventType", required: true, nonEmpty: true}, "")
	if err != nil {
		return err
	}
	known := EventType(typeName).Group() != ""
	if known {
		w.EventType = EventType(typeName)
	}
	var wid json.RawMessage
	if w.Wid, wid, err = w.eventString(top, eventRule{name: "Wid", required: true, nonEmpty: true, maxLen: MaxWID}, ""); err != nil {
		return err
	}
	stamp, _, err := w.eventString(top, eventRule{name: "Timestamp", required: true, nonEmpty: true}, "")
	if err != nil {
		return err
	}
	var perr error
	if w.Timestamp, perr = ParseDateTime(stamp); perr != nil {
		return eventInvalid("Timestamp", "%q is not an ISO 8601 date-time such as 2026-11-22T09:30:00Z", stamp)
	}

	if !known {
		return w.keepWhole(body, typeName)
	}

	var out eventJSON
	out.add("EventType", eventQuote(typeName))
	out.add("Wid", wid)
	out.add("Timestamp", eventQuote(w.Timestamp.Format(time.RFC3339Nano)))
	fields, prefix := top, ""
	var externalID json.RawMessage
	if w.EventType.Group() == GroupAnalysis {
		raw, ok := top["Payload"]
		if !ok || eventNull(raw) {
			return eventInvalid("Payload", "is required for %s events", w.EventType)
		}
		if fields, err = eventObject(raw, "Payload"); err != nil {
			return err
		}
		prefix = "Payload."
		if raw, ok := top["ExternalId"]; ok && !eventNull(raw) {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return eventInvalid("ExternalId", "must be a string or null")
			}
			externalID = eventQuote(s)
		}
	}
	var own eventJSON
	for _, r := range eventRules[w.EventType] {
		v, err := w.checkEventField(fields, r, prefix)
		if err != nil {
			return err
		}
		own.add(r.name, v)
	}
	if w.EventType == AssetOwnershipAdded {
		v, err := w.ownershipAdded(fields)
		if err != nil {
			return err
		}
		own.add("OwnershipAdded", v)
	}
	if w.EventType.Group() == GroupAnalysis {
		out.add("ExternalId", externalID)
		out.add("Payload", own.bytes())
	} else {
		out.merge(&own)
	}
	w.Canonical = out.bytes()
	return nil
}

// keepWhole accepts a delivery of a type the specification does not have, whose envelope passed
// the checks: its canonical form is the body as sent, compacted, so that a gateway that knows
// the type reads every field of it, checked, when it reads it back.
func (w *Webhook) keepWhole(body []byte, typeName string) *Error {
	var out bytes.Buffer
	if err := json.Compact(&out, body); err != nil {
		return &Error{Kind: Malformed, Message: "the body must be one JSON object"}
	}
	w.EventType = EventType(typeName)
	w.Canonical = out.Bytes()
	w.unknown("EventType", typeName, eventInvalid("EventType", "unknown event type %q; the known types are %s", typeName, strings.Join(eventTypeNames(), ", ")))
	return nil
}

// ParseDateTime reads an ISO 8601 date-time as events carry it: RFC 3339, or without an offset,
// which is taken as UTC.
func ParseDateTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse("2006-01-02T15:04:05.999999999", s)
	return t.UTC(), err
}

// eventKind is the shape of one event field's value.
type eventKind int

const (
	eventText eventKind = iota
	eventInt
	eventBool
	eventNames
	eventOwnerInfo
	eventSourceDocument
	eventGeneratedDocuments
	eventDateTime
)

// eventRule checks one field. Fields without a rule are ignored.
type eventRule struct {
	name     string
	kind     eventKind
	required bool
	nonEmpty bool // a string that must not be blank
	maxLen   int
	percent  bool // an integer from 0 to 100
	nonNeg   bool
	int32    bool // the schema gives it as an Int: wider than 32 bits is left out (unheld)
	enum     []string
	constant string
}

var (
	analysisRules = []eventRule{
		{name: "CorrelationId", kind: eventText, required: true, maxLen: 256},
		{name: "JobId", kind: eventText, required: true, maxLen: 256},
		{name: "DocumentWid", kind: eventText, required: true, nonEmpty: true, maxLen: MaxVaultID},
	}
	invitationRules = []eventRule{
		{name: "AdvisorWid", kind: eventText, maxLen: MaxEventID},
		{name: "TeamId", kind: eventText, maxLen: MaxEventID},
		{name: "CompanyId", kind: eventText, maxLen: MaxEventID},
		{name: "RegistrationEmail", kind: eventText, maxLen: MaxEventEmail},
	}
	assetNameRule = eventRule{name: "AssetName", kind: eventText, required: true, nonEmpty: true, maxLen: 1024}
	progressRules = []eventRule{
		{name: "IsRecommendedDocument", kind: eventBool},
		{name: "DocumentName", kind: eventText, required: true, enum: EstateDocumentNames},
		{name: "DocumentProgressPercentage", kind: eventInt, required: true, percent: true},
		{name: "UserTier", kind: eventText, maxLen: 128},
		{name: "DocumentOwnerInfo", kind: eventOwnerInfo},
	}
	planRule = func(name string) eventRule {
		return eventRule{name: name, kind: eventText, required: true, nonEmpty: true, maxLen: 128}
	}
	nameRule       = eventRule{name: "Name", kind: eventText, required: true, nonEmpty: true, maxLen: 1024}
	ownerInfoRules = []eventRule{
		{name: "FirstName", kind: eventText, maxLen: 256},
		{name: "LastName", kind: eventText, maxLen: 256},
		{name: "LegalName", kind: eventText, maxLen: 512},
		{name: "ContactType", kind: eventText, enum: OwnerContactTypes},
		{name: "IsPrimary", kind: eventBool},
	}
	sourceDocumentRules = []eventRule{
		{name: "vault_id", kind: eventText, required: true, nonEmpty: true, maxLen: MaxVaultID},
		{name: "name", kind: eventText, maxLen: 1024},
		{name: "extension", kind: eventText, maxLen: 16},
		{name: "uploaded_at", kind: eventDateTime},
	}
	generatedDocumentRules = []eventRule{
		{name: "DocumentType", kind: eventText, required: true, enum: GeneratedDocumentTypes},
		{name: "VaultId", kind: eventText, required: true, nonEmpty: true, maxLen: MaxVaultID},
		{name: "Extension", kind: eventText, maxLen: 16},
	}
)

// eventRules are each type's fields, in the specification's order: inside Payload for analysis
// events, at the top level for the others.
var eventRules = map[EventType][]eventRule{
	AssistantJobCompleted: append(slices.Clone(analysisRules),
		eventRule{name: "source_document", kind: eventSourceDocument},
		eventRule{name: "category", kind: eventText, constant: "estate"},
		eventRule{name: "Documents", kind: eventGeneratedDocuments, required: true}),
	AssistantJobFailed: append(slices.Clone(analysisRules),
		eventRule{name: "Reason", kind: eventText, required: true, enum: AssistantFailureReasons}),
	AssistantMultiDocumentRequiresReview: append(slices.Clone(analysisRules),
		eventRule{name: "VaultLink", kind: eventText, maxLen: 2048},
		eventRule{name: "DetectedDocumentCount", kind: eventInt, nonNeg: true, int32: true}),
	TaxJobCompleted: append(slices.Clone(analysisRules),
		eventRule{name: "source_document", kind: eventSourceDocument},
		eventRule{name: "category", kind: eventText, constant: "tax"},
		eventRule{name: "PresentationStatus", kind: eventText, enum: PresentationStatuses}),
	TaxJobFailed: append(slices.Clone(analysisRules),
		eventRule{name: "Reason", kind: eventText, required: true, enum: TaxFailureReasons}),

	ClientAcceptedInvitation:    invitationRules,
	ClientDeclinedInvitation:    invitationRules,
	UserSubscriptionCreated:     {planRule("NewPlan")},
	UserSubscriptionCanceled:    {planRule("OldPlan")},
	UserSubscriptionChanged:     {planRule("OldPlan"), planRule("NewPlan")},
	UserSubscriptionReactivated: {planRule("OldPlan")},
	ClientProgressChanged: {
		{name: "EstateStatus", kind: eventText, required: true, enum: EstateStatuses},
		{name: "CompletionPercentage", kind: eventInt, required: true, percent: true},
	},

	AssetAdded:              {assetNameRule, {name: "DollarAmount", kind: eventInt}},
	AssetDeleted:            {assetNameRule},
	AssetBeneficiaryAdded:   {assetNameRule, {name: "BeneficiaryAdded", kind: eventNames, required: true}},
	AssetBeneficiaryDeleted: {assetNameRule, {name: "BeneficiaryDeleted", kind: eventNames, required: true}},
	// OwnershipAdded or OwnerAdded: checked by ownershipAdded.
	AssetOwnershipAdded:   {assetNameRule},
	AssetOwnershipDeleted: {assetNameRule, {name: "OwnerDeleted", kind: eventNames, required: true}},

	DocumentStarted:           append(slices.Clone(progressRules), eventRule{name: "WasCompletedBefore", kind: eventBool}),
	DocumentPendingValidation: progressRules,
	DocumentCompleted:         progressRules,
}

// EventFields lists the fields the specification gives events of type t, in its order: inside
// Payload for analysis events, at the top level for the others, beside the envelope (EventType,
// Wid, Timestamp, and ExternalId for analysis events). AssetOwnershipAdded's owners are listed
// under OwnershipAdded, the name its sample uses.
func EventFields(t EventType) []string {
	var out []string
	for _, r := range eventRules[t] {
		out = append(out, r.name)
	}
	if t == AssetOwnershipAdded {
		out = append(out, "OwnershipAdded")
	}
	return out
}

// ownershipAdded accepts the owners under OwnershipAdded or OwnerAdded: the specification's
// sample and its field table disagree on the name.
func (w *Webhook) ownershipAdded(fields map[string]json.RawMessage) (json.RawMessage, *Error) {
	// A null under one name is as good as absent: the owners may come under the other.
	rawA, a := fields["OwnershipAdded"]
	rawB, b := fields["OwnerAdded"]
	a, b = a && !eventNull(rawA), b && !eventNull(rawB)
	switch {
	case a:
		return w.checkEventField(fields, eventRule{name: "OwnershipAdded", kind: eventNames, required: true}, "")
	case b:
		return w.checkEventField(fields, eventRule{name: "OwnerAdded", kind: eventNames, required: true}, "")
	}
	return nil, eventInvalid("OwnershipAdded", "is required (or OwnerAdded): the owners added, as an array of {\"Name\": ...}")
}

// checkEventField checks one field against its rule and returns its value in canonical form,
// nil when it is absent or null.
func (w *Webhook) checkEventField(fields map[string]json.RawMessage, r eventRule, prefix string) (json.RawMessage, *Error) {
	raw, ok := fields[r.name]
	if !ok || eventNull(raw) {
		if r.required {
			return nil, eventInvalid(prefix+r.name, "is required")
		}
		return nil, nil
	}
	path := prefix + r.name
	switch r.kind {
	case eventText:
		_, v, err := w.eventString(fields, r, prefix)
		return v, err
	case eventDateTime:
		s, _, err := w.eventString(fields, r, prefix)
		if err != nil || s == "" {
			return nil, err // an empty date-time is as good as none
		}
		t, perr := ParseDateTime(s)
		if perr != nil {
			return nil, eventInvalid(path, "%q is not an ISO 8601 date-time", s)
		}
		return eventQuote(t.Format(time.RFC3339Nano)), nil
	case eventInt:
		var n int64
		if json.Unmarshal(raw, &n) != nil {
			if !r.percent && wholeNumber(raw) {
				w.unheld(r.name, string(raw)) // beyond 64 bits
				return nil, nil
			}
			return nil, eventInvalid(path, "must be an integer")
		}
		if r.percent && (n < 0 || n > 100) {
			return nil, eventInvalid(path, "must be from 0 to 100, got %d", n)
		}
		if r.nonNeg && n < 0 {
			return nil, eventInvalid(path, "must not be negative, got %d", n)
		}
		if r.int32 && (n < math.MinInt32 || n > math.MaxInt32) {
			w.unheld(r.name, string(raw))
			return nil, nil
		}
		return strconv.AppendInt(nil, n, 10), nil
	case eventBool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil, eventInvalid(path, "must be true or false")
		}
		return strconv.AppendBool(nil, b), nil
	case eventNames:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil, eventInvalid(path, "must be an array of {\"Name\": ...} objects")
		}
		return w.eventArray(items, path, []eventRule{nameRule})
	case eventGeneratedDocuments:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil, eventInvalid(path, "must be an array of generated documents")
		}
		return w.eventArray(items, path, generatedDocumentRules)
	case eventOwnerInfo:
		return w.eventSubObject(raw, path, ownerInfoRules)
	case eventSourceDocument:
		return w.eventSubObject(raw, path, sourceDocumentRules)
	}
	panic("advisorspec: no check for event field kind " + strconv.Itoa(int(r.kind)))
}

// eventArray checks each item of an array of objects against rules.
func (w *Webhook) eventArray(items []json.RawMessage, path string, rules []eventRule) (json.RawMessage, *Error) {
	out := []byte{'['}
	for i, item := range items {
		v, err := w.eventSubObject(item, fmt.Sprintf("%s[%d]", path, i), rules)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	return append(out, ']'), nil
}

// eventSubObject checks an object nested in an event against rules.
func (w *Webhook) eventSubObject(raw json.RawMessage, path string, rules []eventRule) (json.RawMessage, *Error) {
	obj, err := eventObject(raw, path)
	if err != nil {
		return nil, err
	}
	var out eventJSON
	for _, r := range rules {
		v, err := w.checkEventField(obj, r, path+".")
		if err != nil {
			return nil, err
		}
		out.add(r.name, v)
	}
	return out.bytes(), nil
}

// eventString checks a string field against r and returns it, with its canonical encoding;
// "" and nil when it is absent and optional.
func (w *Webhook) eventString(fields map[string]json.RawMessage, r eventRule, prefix string) (string, json.RawMessage, *Error) {
	path := prefix + r.name
	raw, ok := fields[r.name]
	if !ok || eventNull(raw) {
		if r.required {
			return "", nil, eventInvalid(path, "is required")
		}
		return "", nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", nil, eventInvalid(path, "must be a string")
	}
	switch {
	case r.nonEmpty && strings.TrimSpace(s) == "":
		return "", nil, eventInvalid(path, "must not be empty")
	case r.maxLen > 0 && utf8.RuneCountInString(s) > r.maxLen:
		return "", nil, eventInvalid(path, "must be at most %d characters, got %d", r.maxLen, utf8.RuneCountInString(s))
	case r.enum != nil && !slices.Contains(r.enum, s):
		w.unknown(r.name, s, eventInvalid(path, "%q is not one of %s", s, strings.Join(r.enum, ", ")))
	case r.constant != "" && s != r.constant:
		return "", nil, eventInvalid(path, "must be %q, got %q", r.constant, s)
	}
	return s, eventQuote(s), nil
}

// eventObject reads one JSON object, keeping its values raw so that each is checked for its own
// type and reported by its path. Of keys that repeat, the last counts, as in encoding/json.
func eventObject(raw []byte, path string) (map[string]json.RawMessage, *Error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil || m == nil {
		if path == "" {
			return nil, &Error{Kind: Malformed, Message: "the body must be one JSON object"}
		}
		return nil, eventInvalid(path, "must be an object")
	}
	if dec.More() {
		if path == "" {
			return nil, &Error{Kind: Malformed, Message: "the body must be one JSON object"}
		}
		return nil, eventInvalid(path, "must be one JSON value")
	}
	return m, nil
}

// eventInvalid is an event field's error: its message starts with the field's path, as the
// receiver answers it.
func eventInvalid(path, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Field: path, Message: path + ": " + fmt.Sprintf(format, args...)}
}

func eventNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// eventQuote encodes a string as encoding/json does, so equal strings encode alike.
func eventQuote(s string) json.RawMessage {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}

func eventTypeNames() []string {
	out := make([]string, len(EventTypes))
	for i, t := range EventTypes {
		out[i] = string(t)
	}
	return out
}

// eventJSON writes a JSON object whose keys come in the order they are added.
type eventJSON struct{ buf []byte }

// add writes key with its value; nothing when the value is nil (absent or null).
func (o *eventJSON) add(key string, v json.RawMessage) {
	if v == nil {
		return
	}
	if len(o.buf) == 0 {
		o.buf = append(o.buf, '{')
	} else {
		o.buf = append(o.buf, ',')
	}
	o.buf = append(o.buf, eventQuote(key)...)
	o.buf = append(o.buf, ':')
	o.buf = append(o.buf, v...)
}

// merge writes the members of other after o's.
func (o *eventJSON) merge(other *eventJSON) {
	if len(other.buf) == 0 {
		return
	}
	if len(o.buf) == 0 {
		o.buf = append(o.buf, other.buf...)
		return
	}
	o.buf = append(o.buf, ',')
	o.buf = append(o.buf, other.buf[1:]...)
}

func (o *eventJSON) bytes() json.RawMessage {
	if len(o.buf) == 0 {
		return json.RawMessage("{}")
	}
	return append(o.buf, '}')
}

// wholeNumber reports whether a JSON value is an integer written in digits, of any width.
func wholeNumber(raw json.RawMessage) bool {
	digits := bytes.TrimPrefix(raw, []byte("-"))
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

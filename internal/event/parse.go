package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of the specification's fields.
const (
	maxWid   = 64
	maxID    = 64
	maxEmail = 320
)

// InvalidError says which field of an event is wrong and why.
type InvalidError struct {
	// Field is the field's path in the webhook body, such as Payload.DocumentWid.
	Field   string
	Message string
}

func (e *InvalidError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// kind is the shape of one field's value.
type kind int

const (
	kString kind = iota
	kInt
	kBool
	kNames
	kOwnerInfo
	kSourceDocument
	kGeneratedDocuments
)

// rule checks one field. Fields not listed are ignored, as a receiver must when the service
// adds fields.
type rule struct {
	name     string
	kind     kind
	required bool
	nonEmpty bool // a string that must not be empty
	maxLen   int
	percent  bool // an integer from 0 to 100
	nonNeg   bool
	enum     []string
	constant string
}

var (
	analysisCommon = []rule{
		{name: "CorrelationId", kind: kString, required: true, maxLen: 256},
		{name: "JobId", kind: kString, required: true, maxLen: 256},
		{name: "DocumentWid", kind: kString, required: true, nonEmpty: true, maxLen: maxID},
	}
	invitation = []rule{
		{name: "AdvisorWid", kind: kString, maxLen: maxID},
		{name: "TeamId", kind: kString, maxLen: maxID},
		{name: "CompanyId", kind: kString, maxLen: maxID},
		{name: "RegistrationEmail", kind: kString, maxLen: maxEmail},
	}
	assetName = rule{name: "AssetName", kind: kString, required: true, nonEmpty: true, maxLen: 1024}
	progress  = []rule{
		{name: "IsRecommendedDocument", kind: kBool},
		{name: "DocumentName", kind: kString, required: true, enum: DocumentNames},
		{name: "DocumentProgressPercentage", kind: kInt, required: true, percent: true},
		{name: "UserTier", kind: kString, maxLen: 128},
		{name: "DocumentOwnerInfo", kind: kOwnerInfo},
	}
	plan = func(name string) rule {
		return rule{name: name, kind: kString, required: true, nonEmpty: true, maxLen: 128}
	}
)

// rules are each type's fields: inside Payload for analysis events, at the top level for the
// others.
var rules = map[EventType][]rule{
	TypeAssistantJobCompleted: append(slices.Clone(analysisCommon),
		rule{name: "source_document", kind: kSourceDocument},
		rule{name: "category", kind: kString, constant: "estate"},
		rule{name: "Documents", kind: kGeneratedDocuments, required: true}),
	TypeAssistantJobFailed: append(slices.Clone(analysisCommon),
		rule{name: "Reason", kind: kString, required: true, enum: AssistantFailureReasons}),
	TypeAssistantMultiDocumentRequiresReview: append(slices.Clone(analysisCommon),
		rule{name: "VaultLink", kind: kString, maxLen: 2048},
		rule{name: "DetectedDocumentCount", kind: kInt, nonNeg: true}),
	TypeTaxJobCompleted: append(slices.Clone(analysisCommon),
		rule{name: "source_document", kind: kSourceDocument},
		rule{name: "category", kind: kString, constant: "tax"},
		rule{name: "PresentationStatus", kind: kString, enum: PresentationStatuses}),
	TypeTaxJobFailed: append(slices.Clone(analysisCommon),
		rule{name: "Reason", kind: kString, required: true, enum: TaxFailureReasons}),

	TypeClientAcceptedInvitation:    invitation,
	TypeClientDeclinedInvitation:    invitation,
	TypeUserSubscriptionCreated:     {plan("NewPlan")},
	TypeUserSubscriptionCanceled:    {plan("OldPlan")},
	TypeUserSubscriptionChanged:     {plan("OldPlan"), plan("NewPlan")},
	TypeUserSubscriptionReactivated: {plan("OldPlan")},
	TypeClientProgressChanged: {
		{name: "EstateStatus", kind: kString, required: true, enum: EstateStatuses},
		{name: "CompletionPercentage", kind: kInt, required: true, percent: true},
	},

	TypeAssetAdded:              {assetName, {name: "DollarAmount", kind: kInt}},
	TypeAssetDeleted:            {assetName},
	TypeAssetBeneficiaryAdded:   {assetName, {name: "BeneficiaryAdded", kind: kNames, required: true}},
	TypeAssetBeneficiaryDeleted: {assetName, {name: "BeneficiaryDeleted", kind: kNames, required: true}},
	// OwnershipAdded or OwnerAdded: checked by ownershipAdded.
	TypeAssetOwnershipAdded:   {assetName},
	TypeAssetOwnershipDeleted: {assetName, {name: "OwnerDeleted", kind: kNames, required: true}},

	TypeDocumentStarted:           append(slices.Clone(progress), rule{name: "WasCompletedBefore", kind: kBool}),
	TypeDocumentPendingValidation: progress,
	TypeDocumentCompleted:         progress,
}

// Parse checks a webhook body against the specification and returns its event. Unknown fields
// are ignored; a missing, mistyped or out-of-range field is an *InvalidError naming it.
func Parse(body []byte) (Event, error) {
	top, err := object(body, "")
	if err != nil {
		return nil, err
	}
	var env Envelope
	typeName, err := str(top, rule{name: "EventType", required: true, nonEmpty: true}, "")
	if err != nil {
		return nil, err
	}
	env.EventType = EventType(typeName)
	if env.EventType.Group() == "" {
		return nil, invalid("EventType", "unknown event type %q; the known types are %s", typeName, strings.Join(typeNames(), ", "))
	}
	if env.Wid, err = str(top, rule{name: "Wid", required: true, nonEmpty: true, maxLen: maxWid}, ""); err != nil {
		return nil, err
	}
	stamp, err := str(top, rule{name: "Timestamp", required: true, nonEmpty: true}, "")
	if err != nil {
		return nil, err
	}
	if env.Timestamp, err = ParseTime(stamp); err != nil {
		return nil, invalid("Timestamp", "%q is not an ISO 8601 date-time such as 2026-11-22T09:30:00Z", stamp)
	}

	fields, prefix := top, ""
	var externalID *string
	if env.EventType.Group() == GroupAnalysis {
		raw, ok := top["Payload"]
		if !ok || isNull(raw) {
			return nil, invalid("Payload", "is required for %s events", env.EventType)
		}
		if fields, err = object(raw, "Payload"); err != nil {
			return nil, err
		}
		prefix = "Payload."
		if raw, ok := top["ExternalId"]; ok && !isNull(raw) {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return nil, invalid("ExternalId", "must be a string or null")
			}
			externalID = &s
		}
	}
	for _, r := range rules[env.EventType] {
		if err := check(fields, r, prefix); err != nil {
			return nil, err
		}
	}
	if env.EventType == TypeAssetOwnershipAdded {
		if err := ownershipAdded(fields); err != nil {
			return nil, err
		}
	}

	ev := newEvent(env.EventType)
	if err := json.Unmarshal(exact(rawObject(fields), reflect.TypeOf(ev)), ev); err != nil {
		return nil, fmt.Errorf("decode %s event: %w", env.EventType, err)
	}
	*ev.Header() = env
	finish(ev, fields, externalID)
	return ev, nil
}

// ParseTime reads an ISO 8601 date-time: RFC 3339, or without an offset, which is taken as UTC.
func ParseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse("2006-01-02T15:04:05.999999999", s)
	return t.UTC(), err
}

func newEvent(t EventType) Event {
	switch t {
	case TypeAssistantJobCompleted:
		return &AssistantJobCompleted{}
	case TypeAssistantJobFailed:
		return &AssistantJobFailed{}
	case TypeAssistantMultiDocumentRequiresReview:
		return &AssistantMultiDocumentRequiresReview{}
	case TypeTaxJobCompleted:
		return &TaxJobCompleted{}
	case TypeTaxJobFailed:
		return &TaxJobFailed{}
	case TypeClientAcceptedInvitation:
		return &ClientAcceptedInvitation{}
	case TypeClientDeclinedInvitation:
		return &ClientDeclinedInvitation{}
	case TypeUserSubscriptionCreated:
		return &UserSubscriptionCreated{}
	case TypeUserSubscriptionCanceled:
		return &UserSubscriptionCanceled{}
	case TypeUserSubscriptionChanged:
		return &UserSubscriptionChanged{}
	case TypeUserSubscriptionReactivated:
		return &UserSubscriptionReactivated{}
	case TypeClientProgressChanged:
		return &ClientProgressChanged{}
	case TypeAssetAdded:
		return &AssetAdded{}
	case TypeAssetDeleted:
		return &AssetDeleted{}
	case TypeAssetBeneficiaryAdded:
		return &AssetBeneficiaryAdded{}
	case TypeAssetBeneficiaryDeleted:
		return &AssetBeneficiaryDeleted{}
	case TypeAssetOwnershipAdded:
		return &AssetOwnershipAdded{}
	case TypeAssetOwnershipDeleted:
		return &AssetOwnershipDeleted{}
	case TypeDocumentStarted:
		return &DocumentStarted{}
	case TypeDocumentPendingValidation:
		return &DocumentPendingValidation{}
	case TypeDocumentCompleted:
		return &DocumentCompleted{}
	}
	panic("event: no Go type for " + string(t))
}

// finish fills what JSON decoding cannot: the analysis envelope's external id, the top account
// a document belongs to (so its document field can load it), and the owners of
// AssetOwnershipAdded under either name.
func finish(ev Event, fields map[string]json.RawMessage, externalID *string) {
	wid := ev.Header().Wid
	source := func(s *SourceDocument) {
		if s == nil {
			return
		}
		s.Wid = wid
		var raw struct {
			UploadedAt *string `json:"uploaded_at"`
		}
		_ = json.Unmarshal(exact(fields["source_document"], reflect.TypeOf(raw)), &raw) // checked by check
		if raw.UploadedAt != nil {
			if t, err := ParseTime(*raw.UploadedAt); err == nil {
				s.UploadedAt = &t
			}
		}
	}
	switch e := ev.(type) {
	case *AssistantJobCompleted:
		e.ExternalID = externalID
		source(e.SourceDocument)
		for _, d := range e.Documents {
			d.Wid = wid
		}
	case *TaxJobCompleted:
		e.ExternalID = externalID
		source(e.SourceDocument)
	case *AssistantJobFailed:
		e.ExternalID = externalID
	case *AssistantMultiDocumentRequiresReview:
		e.ExternalID = externalID
	case *TaxJobFailed:
		e.ExternalID = externalID
	case *AssetOwnershipAdded:
		if e.OwnershipAdded == nil {
			_ = json.Unmarshal(exact(fields["OwnerAdded"], reflect.TypeOf(e.OwnershipAdded)), &e.OwnershipAdded) // checked by ownershipAdded
		}
	}
}

// ownershipAdded accepts the owners under OwnershipAdded or OwnerAdded: the specification's
// sample and its field table disagree on the name.
func ownershipAdded(fields map[string]json.RawMessage) error {
	// A null under one name is as good as absent: the owners may come under the other.
	rawA, a := fields["OwnershipAdded"]
	rawB, b := fields["OwnerAdded"]
	a, b = a && !isNull(rawA), b && !isNull(rawB)
	switch {
	case a:
		return check(fields, rule{name: "OwnershipAdded", kind: kNames, required: true}, "")
	case b:
		return check(fields, rule{name: "OwnerAdded", kind: kNames, required: true}, "")
	}
	return invalid("OwnershipAdded", "is required (or OwnerAdded): the owners added, as an array of {\"Name\": ...}")
}

func check(fields map[string]json.RawMessage, r rule, prefix string) error {
	raw, ok := fields[r.name]
	if !ok || isNull(raw) {
		if r.required {
			return invalid(prefix+r.name, "is required")
		}
		return nil
	}
	path := prefix + r.name
	switch r.kind {
	case kString:
		_, err := str(fields, r, prefix)
		return err
	case kInt:
		n, err := integer(raw, path)
		if err != nil {
			return err
		}
		if r.percent && (n < 0 || n > 100) {
			return invalid(path, "must be from 0 to 100, got %d", n)
		}
		if r.nonNeg && n < 0 {
			return invalid(path, "must not be negative, got %d", n)
		}
	case kBool:
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return invalid(path, "must be true or false")
		}
	case kNames:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return invalid(path, "must be an array of {\"Name\": ...} objects")
		}
		for i, item := range items {
			obj, err := object(item, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return err
			}
			if err := check(obj, rule{name: "Name", kind: kString, required: true, nonEmpty: true, maxLen: 1024}, fmt.Sprintf("%s[%d].", path, i)); err != nil {
				return err
			}
		}
	case kOwnerInfo:
		obj, err := object(raw, path)
		if err != nil {
			return err
		}
		for _, sub := range []rule{
			{name: "FirstName", kind: kString, maxLen: 256},
			{name: "LastName", kind: kString, maxLen: 256},
			{name: "LegalName", kind: kString, maxLen: 512},
			{name: "ContactType", kind: kString, enum: OwnerContactTypes},
			{name: "IsPrimary", kind: kBool},
		} {
			if err := check(obj, sub, path+"."); err != nil {
				return err
			}
		}
	case kSourceDocument:
		obj, err := object(raw, path)
		if err != nil {
			return err
		}
		for _, sub := range []rule{
			{name: "vault_id", kind: kString, required: true, nonEmpty: true, maxLen: maxID},
			{name: "name", kind: kString, maxLen: 1024},
			{name: "extension", kind: kString, maxLen: 16},
			{name: "uploaded_at", kind: kString},
		} {
			if err := check(obj, sub, path+"."); err != nil {
				return err
			}
		}
		if s, _ := str(obj, rule{name: "uploaded_at"}, ""); s != "" {
			if _, err := ParseTime(s); err != nil {
				return invalid(path+".uploaded_at", "%q is not an ISO 8601 date-time", s)
			}
		}
	case kGeneratedDocuments:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return invalid(path, "must be an array of generated documents")
		}
		for i, item := range items {
			p := fmt.Sprintf("%s[%d]", path, i)
			obj, err := object(item, p)
			if err != nil {
				return err
			}
			for _, sub := range []rule{
				{name: "DocumentType", kind: kString, required: true, enum: GeneratedDocumentTypes},
				{name: "VaultId", kind: kString, required: true, nonEmpty: true, maxLen: maxID},
				{name: "Extension", kind: kString, maxLen: 16},
			} {
				if err := check(obj, sub, p+"."); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// str returns a string field after checking it against r; "" when it is absent and optional.
func str(fields map[string]json.RawMessage, r rule, prefix string) (string, error) {
	path := prefix + r.name
	raw, ok := fields[r.name]
	if !ok || isNull(raw) {
		if r.required {
			return "", invalid(path, "is required")
		}
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", invalid(path, "must be a string")
	}
	switch {
	case r.nonEmpty && strings.TrimSpace(s) == "":
		return "", invalid(path, "must not be empty")
	case r.maxLen > 0 && utf8.RuneCountInString(s) > r.maxLen:
		return "", invalid(path, "must be at most %d characters, got %d", r.maxLen, utf8.RuneCountInString(s))
	case r.enum != nil && !slices.Contains(r.enum, s):
		return "", invalid(path, "%q is not one of %s", s, strings.Join(r.enum, ", "))
	case r.constant != "" && s != r.constant:
		return "", invalid(path, "must be %q, got %q", r.constant, s)
	}
	return s, nil
}

func integer(raw json.RawMessage, path string) (int, error) {
	var n int
	if json.Unmarshal(raw, &n) != nil {
		return 0, invalid(path, "must be an integer")
	}
	return n, nil
}

func object(raw []byte, path string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&m); err != nil || m == nil {
		if path == "" {
			return nil, invalid("", "the body must be one JSON object")
		}
		return nil, invalid(path, "must be an object")
	}
	if dec.More() {
		return nil, invalid(path, "must be one JSON value")
	}
	return m, nil
}

func rawObject(m map[string]json.RawMessage) []byte {
	b, _ := json.Marshal(m) // RawMessages that were decoded from valid JSON re-encode
	return b
}

// exact keeps, in the JSON value raw decoded into a t, only the object keys that are exactly
// the JSON name of one of t's fields, at every depth. encoding/json matches names regardless of
// case, so an unknown "reason" or "completionpercentage" would otherwise replace (or stand in
// for) the value check accepted.
func exact(raw json.RawMessage, t reflect.Type) json.RawMessage {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return raw
		}
		known := jsonFields(t)
		out := make(map[string]json.RawMessage, len(m))
		for k, v := range m {
			if ft, ok := known[k]; ok {
				out[k] = exact(v, ft)
			}
		}
		b, _ := json.Marshal(out)
		return b
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil || items == nil {
			return raw
		}
		for i, item := range items {
			items[i] = exact(item, t.Elem())
		}
		b, _ := json.Marshal(items)
		return b
	}
	return raw
}

// jsonFields maps the JSON names encoding/json decodes into a struct of type t, including those
// of embedded structs, to their fields' types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			for name, ft := range jsonFields(f.Type) {
				out[name] = ft
			}
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

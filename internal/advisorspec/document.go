package advisorspec

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// DocumentFields are the caller-settable metadata of a vault document. An empty Description or
// Type is an absent one.
type DocumentFields struct {
	Name        string
	Extension   string // normalized: no leading dot, lower case
	Description string
	Category    string
	SubCategory string
	Type        string
	Tags        []string // canonical spelling, no duplicates
}

// Tags is the set of tag names one top account knows: the built-in tags and its custom ones.
// Names match case-insensitively after trimming; the set gives back each name's own spelling.
type Tags struct {
	byFold map[string]string
	open   bool
}

// OpenTags is the tag set of a caller that does not know a top account's custom tags, such
// as the gateway: built-in tags get their spelling, any other name is taken as it is and left
// for the service to judge.
func OpenTags() Tags {
	t := NewTags()
	t.open = true
	return t
}

// NewTags returns the built-in tags plus custom.
func NewTags(custom ...string) Tags {
	t := Tags{byFold: make(map[string]string, len(BuiltinTags)+len(custom))}
	for _, name := range slices.Concat(BuiltinTags, custom) {
		t.byFold[strings.ToLower(strings.TrimSpace(name))] = name
	}
	return t
}

// Canonical returns the spelling of the known tag that name matches.
func (t Tags) Canonical(name string) (string, bool) {
	c, ok := t.byFold[strings.ToLower(strings.TrimSpace(name))]
	if !ok && t.open && strings.TrimSpace(name) != "" {
		return strings.TrimSpace(name), true
	}
	return c, ok
}

// Unknown returns the names, as given, that match no known tag.
func (t Tags) Unknown(names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := t.Canonical(n); !ok {
			out = append(out, n)
		}
	}
	return out
}

// documentKeys are the body fields Upload and Update Document accept, in specification order.
var documentKeys = []string{"name", "extension", "description", "category", "sub_category", "type", "tags"}

// serviceKeys are document fields the service sets; a body that carries one is refused by name.
var serviceKeys = []string{"wid", "vault_id", "creation_date", "modification_date", "file_status", "download_uri", "upload_uri"}

// CheckNewDocument checks an Upload Document body and returns the new document's metadata.
func CheckNewDocument(body []byte, tags Tags) (DocumentFields, *Error) {
	obj, err := decodeDocumentBody(body)
	if err != nil {
		return DocumentFields{}, err
	}
	// Absent, null and blank are all "missing", which the service answers with a bare Bad Request.
	for _, key := range []string{"name", "extension", "category", "sub_category"} {
		if s, ok := asString(obj[key]); obj[key] == nil || isNull(obj[key]) || ok && isBlank(s) {
			return DocumentFields{}, invalid(key, "Bad Request")
		}
	}
	return applyDocument(obj, DocumentFields{}, tags)
}

// CheckDocumentPatch checks an Update Document body against the document's current metadata and
// returns the metadata after the update. A null description, type or tags clears it.
func CheckDocumentPatch(body []byte, current DocumentFields, tags Tags) (DocumentFields, *Error) {
	obj, err := decodeDocumentBody(body)
	if err != nil {
		return DocumentFields{}, err
	}
	return applyDocument(obj, current, tags)
}

// CheckDocumentPatchAlone checks an Update Document body without the document at hand: each
// field on its own, and the taxonomy as far as the body tells it (a sub-category belongs to the
// category sent with it, or to some category; a type fits the sub-category sent with it).
func CheckDocumentPatchAlone(body []byte, tags Tags) *Error {
	obj, err := decodeDocumentBody(body)
	if err != nil {
		return err
	}
	var d DocumentFields
	for _, key := range documentKeys {
		if raw, ok := obj[key]; ok {
			if err := applyDocumentField(&d, key, raw, tags); err != nil {
				return err
			}
		}
	}
	if obj.has("category") {
		if _, ok := FindCategory(d.Category); !ok {
			return invalid("category", "Invalid category")
		}
	}
	if !obj.has("sub_category") {
		return nil
	}
	for _, c := range Categories {
		if obj.has("category") && c.Name != d.Category {
			continue
		}
		if sub, ok := c.FindSubCategory(d.SubCategory); ok {
			if obj.has("type") && d.Type != "" && !slices.Contains(sub.Types, d.Type) {
				return typeMismatch(sub)
			}
			return nil
		}
	}
	return invalid("sub_category", "Invalid sub-category")
}

// typeMismatch is the refusal of a type the sub-category does not list.
func typeMismatch(sub SubCategory) *Error {
	if len(sub.Types) == 0 {
		return invalid("type", "Invalid type: sub-category %s has no types", sub.Name)
	}
	return invalid("type", "Invalid type: sub-category %s allows %s", sub.Name, strings.Join(sub.Types, ", "))
}

func decodeDocumentBody(body []byte) (object, *Error) {
	obj, err := decodeObject(body)
	if err != nil {
		return nil, err
	}
	for _, key := range obj.sortedKeys() {
		switch {
		case slices.Contains(serviceKeys, key):
			return nil, invalid(key, "%s is set by the service and cannot be changed", key)
		case !slices.Contains(documentKeys, key):
			return nil, invalid(key, "%s is not a document field", key)
		}
	}
	return obj, nil
}

// applyDocument writes the body's fields over d, then checks that category, sub-category and
// type fit together as the taxonomy says.
func applyDocument(obj object, d DocumentFields, tags Tags) (DocumentFields, *Error) {
	d.Tags = slices.Clone(d.Tags)
	for _, key := range documentKeys {
		raw, ok := obj[key]
		if !ok {
			continue
		}
		if err := applyDocumentField(&d, key, raw, tags); err != nil {
			return DocumentFields{}, err
		}
	}
	cat, ok := FindCategory(d.Category)
	if !ok {
		return DocumentFields{}, invalid("category", "Invalid category")
	}
	sub, ok := cat.FindSubCategory(d.SubCategory)
	if !ok {
		return DocumentFields{}, invalid("sub_category", "Invalid sub-category")
	}
	if d.Type != "" && !slices.Contains(sub.Types, d.Type) {
		return DocumentFields{}, typeMismatch(sub)
	}
	return d, nil
}

func applyDocumentField(d *DocumentFields, key string, raw json.RawMessage, tags Tags) *Error {
	clearable := key == "description" || key == "type" || key == "tags"
	if isNull(raw) && clearable {
		switch key {
		case "description":
			d.Description = ""
		case "type":
			d.Type = ""
		case "tags":
			d.Tags = nil
		}
		return nil
	}
	var err *Error
	switch key {
	case "name":
		d.Name, err = text(key, raw, MaxDocumentName)
	case "extension":
		var ext string
		if ext, err = text(key, raw, MaxExtension); err == nil {
			d.Extension = NormalizeExtension(ext)
			if _, ok := ContentTypeFor(d.Extension); !ok {
				err = invalid(key, "Unsupported extension: %s (supported: %s)", ext, strings.Join(extensionNames(), ", "))
			}
		}
	case "description":
		d.Description, err = text(key, raw, MaxDescription)
	// A category, sub-category or type that is not a string, or not in the taxonomy, is caught by
	// the taxonomy check in applyDocument with the service's own message.
	case "category":
		d.Category, _ = asString(raw)
	case "sub_category":
		d.SubCategory, _ = asString(raw)
	case "type":
		if d.Type, _ = asString(raw); d.Type == "" {
			err = invalid(key, "Invalid type")
		}
	case "tags":
		d.Tags, err = canonicalTags(raw, tags)
	}
	return err
}

func canonicalTags(raw json.RawMessage, tags Tags) ([]string, *Error) {
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return nil, invalid("tags", "tags must be an array of strings")
	}
	// Names are trimmed, as in the List Documents filter, so the message shows what was matched.
	for i, n := range names {
		if names[i] = strings.TrimSpace(n); names[i] == "" {
			return nil, invalid("tags", "tags must not contain a blank tag name")
		}
	}
	if bad := tags.Unknown(names); len(bad) > 0 {
		return nil, invalid("tags", "Invalid tags: %s", strings.Join(bad, ", "))
	}
	var out []string
	for _, n := range names {
		c, _ := tags.Canonical(n)
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// DocumentQuery is a checked List Documents query.
type DocumentQuery struct {
	Limit     int
	NextToken string
	Tags      []string // trimmed, non-empty, as given; nil when the query filters nothing
}

// ParseDocumentQuery reads the limit, nextToken and tags of List Documents. Whether each tag
// exists for the top account is the caller's to check, with Tags.Unknown.
func ParseDocumentQuery(q url.Values) (DocumentQuery, *Error) {
	limit, err := intParam(q, "limit", DefaultDocLimit, "", limitRule(MaxDocLimit))
	if err != nil {
		return DocumentQuery{}, err
	}
	dq := DocumentQuery{Limit: limit, NextToken: q.Get("nextToken")}
	if !q.Has("tags") {
		return dq, nil
	}
	for _, v := range q["tags"] {
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				dq.Tags = append(dq.Tags, name)
			}
		}
	}
	if len(dq.Tags) == 0 {
		return DocumentQuery{}, invalid("tags", "tags query parameter must contain at least one non-empty value")
	}
	return dq, nil
}

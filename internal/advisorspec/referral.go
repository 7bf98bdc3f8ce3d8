package advisorspec

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The referral call's field table (bulk-referral-session-sdk.md, "Referral request and
// response"): the longest value of each string, in characters.
const (
	MaxReferralToken      = 36
	MaxReferralEmail      = 320
	MaxReferralName       = 100
	MaxReferralLine1      = 255
	MaxReferralLine2      = 150
	MaxReferralCity       = 255
	MaxReferralState      = 2
	MaxReferralPostalCode = 10
	// MaxReferralAnswerToken and MaxReferralURL bound the answer's referralToken and url.
	MaxReferralAnswerToken = 36
	MaxReferralURL         = 2048
	// MaxReferralBody bounds a referral request body; the largest valid one is about 1.5 KB
	// (more when every character is escaped).
	MaxReferralBody = 64 << 10
)

// ReferralProducts are the referral's products, product 1 first: the value of product is the
// index plus one. 1 (will) is the default.
var ReferralProducts = []string{"will", "trust", "ahcd", "fpoa"}

// DefaultReferralProduct is the product of a referral that names none: a will.
const DefaultReferralProduct = 1

// ReferralMaritalStatuses are the values of the referral's user.maritalStatus, status 1 first,
// in the Clients file's spelling. The referral has no Widowed, which the Clients file has.
var ReferralMaritalStatuses = MaritalStatuses[:6]

// ReferralSignatureHeader and ReferralKeyHeader are the referral call's credentials.
const (
	ReferralKeyHeader       = "x-api-key"
	ReferralSignatureHeader = "user-data-signature"
)

// SignReferral is the referral's user-data-signature as this project decides it (the
// specification does not show it): the HMAC-SHA256 of the exact request body with the shared
// secret, in lower-case hex.
func SignReferral(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// Referral is a referral request body, with the field table's names: the canonical form the
// gateway sends and the sandbox reads either encoding into.
type Referral struct {
	Product int          `json:"product"`
	Token   string       `json:"token,omitempty"`
	User    ReferralUser `json:"user"`
}

// ReferralUser is the referral's user.
type ReferralUser struct {
	Email     string `json:"email"`
	FirstName string `json:"firstName"`
	LastName  string `json:"lastName"`
	HasPets   *bool  `json:"hasPets,omitempty"`
	// MaritalStatus is 1 to 6 (ReferralMaritalStatuses); 0 when not given.
	MaritalStatus int              `json:"maritalStatus,omitempty"`
	Address       *ReferralAddress `json:"address,omitempty"`
}

// ReferralAddress is the referral's user.address with the field table's names.
type ReferralAddress struct {
	Line1      string `json:"address_line1"`
	Line2      string `json:"address_line2,omitempty"`
	City       string `json:"city"`
	State      string `json:"state"`
	PostalCode string `json:"postal_code"`
}

// ReferralAnswer is the referral call's answer.
type ReferralAnswer struct {
	ReferralToken string `json:"referralToken"`
	URL           string `json:"url"`
}

// Check reports what is wrong with an answer: the field table's limits, and a url that is an
// absolute http or https address the user can be sent to.
func (a ReferralAnswer) Check() error {
	switch {
	case a.ReferralToken == "" || utf8.RuneCountInString(a.ReferralToken) > MaxReferralAnswerToken:
		return fmt.Errorf("referralToken must be 1 to %d characters", MaxReferralAnswerToken)
	case len(a.URL) > MaxReferralURL:
		return fmt.Errorf("url must be at most %d characters", MaxReferralURL)
	}
	u, err := url.Parse(a.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url must be an absolute http or https address")
	}
	return nil
}

// referralField is one string of the field table.
type referralField struct {
	names    []string // the table's name first, then the JSON sample's
	max      int
	required bool
}

// What is required is this project's decision (the table does not say): the user and the
// legal names and email the service onboards them with; the address, when given, needs every
// member but address_line2, which the table calls optional.
var (
	referralUserFields = []referralField{
		{names: []string{"email"}, max: MaxReferralEmail, required: true},
		{names: []string{"firstName"}, max: MaxReferralName, required: true},
		{names: []string{"lastName"}, max: MaxReferralName, required: true},
	}
	referralAddressFields = []referralField{
		{names: []string{"address_line1", "line1"}, max: MaxReferralLine1, required: true},
		{names: []string{"address_line2", "line2"}, max: MaxReferralLine2},
		{names: []string{"city"}, max: MaxReferralCity, required: true},
		{names: []string{"state"}, max: MaxReferralState, required: true},
		{names: []string{"postal_code", "zip"}, max: MaxReferralPostalCode, required: true},
	}
)

// ParseReferral reads a JSON referral body and checks it against the field table. Either
// spelling of the address members is taken (address_line1 or line1, address_line2 or line2,
// postal_code or zip), and user.maritalStatus as its number or its text.
func ParseReferral(body []byte) (Referral, *Error) {
	obj, err := decodeObject(body)
	if err != nil {
		return Referral{}, err
	}
	return checkReferral(obj, false)
}

// ParseReferralForm reads the bracketed form encoding of the specification's curl sample
// (product=1&user[firstName]=...&user[address][address_line1]=...) and checks it as
// ParseReferral does. Every value arrives as text: product and maritalStatus are read as
// numbers (maritalStatus also as its text), hasPets as true or false.
func ParseReferralForm(form url.Values) (Referral, *Error) {
	obj := map[string]any{}
	for _, key := range sortedFormKeys(form) {
		path, ok := formPath(key)
		if !ok {
			return Referral{}, &Error{Kind: Malformed, Message: fmt.Sprintf("form field %q is not a name or name[member]", key)}
		}
		field := strings.Join(path, ".")
		if len(form[key]) > 1 {
			return Referral{}, invalid(field, "%s is given more than once", field)
		}
		if at := setPath(obj, path, form[key][0]); at != "" {
			return Referral{}, invalid(at, "%s is given both as a value and as an object", at)
		}
	}
	data, _ := json.Marshal(obj) // strings and maps only
	o, err := decodeObject(data)
	if err != nil {
		return Referral{}, err
	}
	return checkReferral(o, true)
}

func sortedFormKeys(form url.Values) []string {
	keys := make([]string, 0, len(form))
	for k := range form {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// formPath splits user[address][city] into user, address, city.
func formPath(key string) ([]string, bool) {
	name, rest, _ := strings.Cut(key, "[")
	if name == "" {
		return nil, false
	}
	path := []string{name}
	if rest == "" && !strings.Contains(key, "[") {
		return path, !strings.Contains(name, "]")
	}
	for _, part := range strings.Split(rest, "[") {
		member, ok := strings.CutSuffix(part, "]")
		if !ok || member == "" || strings.ContainsAny(member, "[]") {
			return nil, false
		}
		path = append(path, member)
	}
	return path, true
}

// setPath puts value at path in obj, making the objects on the way. When a value and an
// object would share a name it returns that name's path, and "" otherwise.
func setPath(obj map[string]any, path []string, value string) string {
	for i, name := range path[:len(path)-1] {
		next, ok := obj[name]
		if !ok {
			m := map[string]any{}
			obj[name] = m
			obj = m
			continue
		}
		m, isObj := next.(map[string]any)
		if !isObj {
			return strings.Join(path[:i+1], ".")
		}
		obj = m
	}
	last := path[len(path)-1]
	if _, taken := obj[last]; taken {
		return strings.Join(path, ".")
	}
	obj[last] = value
	return ""
}

func checkReferral(obj object, form bool) (Referral, *Error) {
	ref := Referral{Product: DefaultReferralProduct}
	if err := foreignKeys(obj, "", "product", "token", "user"); err != nil {
		return ref, err
	}
	if raw, ok := obj["product"]; ok && !isNull(raw) {
		n, ok := referralInt(raw, form)
		if !ok || n < 1 || n > int64(len(ReferralProducts)) {
			return ref, invalid("product", "product must be 1 (will), 2 (trust), 3 (ahcd) or 4 (fpoa)")
		}
		ref.Product = int(n)
	}
	if raw, ok := obj["token"]; ok && !isNull(raw) {
		s, err := text("token", raw, MaxReferralToken)
		if err != nil {
			return ref, err
		}
		ref.Token = s
	}
	raw, ok := obj["user"]
	if !ok || isNull(raw) {
		return ref, invalid("user", "user is required")
	}
	user, ok := asObject(raw)
	if !ok {
		return ref, invalid("user", "user must be an object")
	}
	if err := foreignKeys(user, "user.", "email", "firstName", "lastName", "hasPets", "maritalStatus", "address"); err != nil {
		return ref, err
	}
	vals, err := referralStrings(user, "user.", referralUserFields)
	if err != nil {
		return ref, err
	}
	ref.User.Email, ref.User.FirstName, ref.User.LastName = vals[0], vals[1], vals[2]
	if raw, ok := user["hasPets"]; ok && !isNull(raw) {
		b, ok := referralBool(raw, form)
		if !ok {
			return ref, invalid("user.hasPets", "user.hasPets must be true or false")
		}
		ref.User.HasPets = &b
	}
	if raw, ok := user["maritalStatus"]; ok && !isNull(raw) {
		n, ok := referralMaritalStatus(raw, form)
		if !ok {
			return ref, invalid("user.maritalStatus", "user.maritalStatus must be 1 to 6 or one of %s",
				strings.Join(ReferralMaritalStatuses, ", "))
		}
		ref.User.MaritalStatus = n
	}
	if raw, ok := user["address"]; ok && !isNull(raw) {
		addr, ok := asObject(raw)
		if !ok {
			return ref, invalid("user.address", "user.address must be an object")
		}
		var names []string
		for _, f := range referralAddressFields {
			names = append(names, f.names...)
		}
		if err := foreignKeys(addr, "user.address.", names...); err != nil {
			return ref, err
		}
		vals, err := referralStrings(addr, "user.address.", referralAddressFields)
		if err != nil {
			return ref, err
		}
		ref.User.Address = &ReferralAddress{Line1: vals[0], Line2: vals[1], City: vals[2], State: vals[3], PostalCode: vals[4]}
	}
	return ref, nil
}

// foreignKeys refuses a member the table does not have.
func foreignKeys(obj object, prefix string, known ...string) *Error {
	for _, key := range obj.sortedKeys() {
		if !slices.Contains(known, key) {
			return invalid(prefix+key, "%s%s is not a field of the referral", prefix, key)
		}
	}
	return nil
}

// referralStrings reads the fields' strings in order, under either spelling of each; a field
// given under both spellings is refused, as the two could disagree.
func referralStrings(obj object, prefix string, fields []referralField) ([]string, *Error) {
	out := make([]string, len(fields))
	for i, f := range fields {
		var given []string
		for _, n := range f.names {
			if raw, ok := obj[n]; ok && !isNull(raw) {
				given = append(given, n)
			}
		}
		switch len(given) {
		case 0:
			if f.required {
				return nil, invalid(prefix+f.names[0], "%s%s is required", prefix, f.names[0])
			}
			continue
		case 2:
			return nil, invalid(prefix+f.names[0], "%s%s and %s%s are the same field: give one", prefix, given[0], prefix, given[1])
		}
		s, err := text(prefix+given[0], obj[given[0]], f.max)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// referralInt reads an integer: a JSON integer, or in a form its decimal text.
func referralInt(raw json.RawMessage, form bool) (int64, bool) {
	if !form {
		return asInteger(raw)
	}
	s, ok := asString(raw)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n, err == nil
}

func referralBool(raw json.RawMessage, form bool) (bool, bool) {
	if !form {
		var b bool
		return b, !isNull(raw) && json.Unmarshal(raw, &b) == nil
	}
	s, _ := asString(raw)
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	return b, err == nil && (s == "true" || s == "false" || s == "1" || s == "0")
}

// referralMaritalStatus reads 1 to 6, or the text of one: the Clients file's spelling, in any
// case, with or without spaces, hyphens or underscores between the words ("Domestic
// Partnership", "domestic_partnership").
func referralMaritalStatus(raw json.RawMessage, form bool) (int, bool) {
	if n, ok := referralInt(raw, form); ok {
		return int(n), n >= 1 && n <= int64(len(ReferralMaritalStatuses))
	}
	s, ok := asString(raw)
	if !ok {
		return 0, false
	}
	squash := strings.NewReplacer(" ", "", "-", "", "_", "")
	s = squash.Replace(s)
	for i, v := range ReferralMaritalStatuses {
		if strings.EqualFold(s, v) {
			return i + 1, true
		}
	}
	return 0, false
}

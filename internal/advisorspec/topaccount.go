package advisorspec

import (
	"net/url"
	"strconv"
)

// TopAccountUpdate is an Update Top Account body (and an Add Top Account body, which needs
// both fields); nil means the field was not sent.
type TopAccountUpdate struct {
	ExternalID *string `json:"external_id,omitzero"`
	Name       *string `json:"name,omitzero"`
}

// CheckNewTopAccount checks an Add Top Account body and returns its external_id and name.
func CheckNewTopAccount(body []byte) (externalID, name string, err *Error) {
	u, err := checkTopAccountBody(body)
	if err != nil {
		return "", "", err
	}
	switch {
	case u.ExternalID == nil && u.Name == nil:
		return "", "", invalid("", "Missing required parameters")
	case u.Name == nil:
		return "", "", invalid("name", "Missing name parameter")
	case u.ExternalID == nil:
		// The specification has no message of its own for this one.
		return "", "", invalid("external_id", "Missing required parameters")
	}
	return *u.ExternalID, *u.Name, nil
}

// CheckTopAccountUpdate checks an Update Top Account body.
func CheckTopAccountUpdate(body []byte) (TopAccountUpdate, *Error) {
	u, err := checkTopAccountBody(body)
	if err == nil && u.ExternalID == nil && u.Name == nil {
		err = &Error{Kind: Empty, Message: "At least one of name or external_id must be provided"}
	}
	return u, err
}

// checkTopAccountBody treats a blank value as a missing one, which is how the service's
// "Missing ... parameter" messages read.
func checkTopAccountBody(body []byte) (TopAccountUpdate, *Error) {
	var u TopAccountUpdate
	obj, err := decodeObject(body)
	if err != nil {
		return u, err
	}
	for _, key := range obj.sortedKeys() {
		var max int
		var dst **string
		switch key {
		case "external_id":
			max, dst = MaxExternalID, &u.ExternalID
		case "name":
			max, dst = MaxTopAccountName, &u.Name
		case "wid":
			return u, invalid(key, "wid is assigned by the service and cannot be set")
		default:
			return u, invalid(key, "%s is not a top account field", key)
		}
		raw := obj[key]
		if isNull(raw) {
			continue
		}
		if s, ok := asString(raw); ok && isBlank(s) {
			continue
		}
		s, err := text(key, raw, max)
		if err != nil {
			return u, err
		}
		*dst = &s
	}
	return u, nil
}

// ParseTopAccountPage reads the page and limit of List Top Accounts.
func ParseTopAccountPage(q url.Values) (page, limit int, err *Error) {
	const missing = "Missing one of the required parameters"
	page, err = intParam(q, "page", 1, missing, func(n int) *Error {
		if n < 1 {
			return invalid("page", "page must be a positive integer")
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	limit, err = intParam(q, "limit", DefaultTopPageLimit, missing, limitRule(MaxTopPageLimit))
	return page, limit, err
}

// limitRule is the page-size rule of a list endpoint whose largest page is max.
func limitRule(max int) func(int) *Error {
	return func(n int) *Error {
		if n > max {
			return invalid("limit", "Limit can't be more than %d", max)
		}
		if n < 1 {
			return invalid("limit", "limit must be an integer from 1 to %d", max)
		}
		return nil
	}
}

// intParam reads an optional integer query parameter. A parameter sent with no value gets the
// message missing when there is one; otherwise, like one that is not an integer, it gets the
// rule's message for an out-of-range value.
func intParam(q url.Values, name string, def int, missing string, rule func(int) *Error) (int, *Error) {
	if !q.Has(name) {
		return def, nil
	}
	s := q.Get(name)
	if s == "" && missing != "" {
		return 0, invalid(name, "%s", missing)
	}
	n, convErr := strconv.Atoi(s)
	if convErr != nil {
		n = 0 // fails the rule with its own message
	}
	if err := rule(n); err != nil {
		return 0, err
	}
	return n, nil
}

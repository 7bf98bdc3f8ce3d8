package sandbox_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox"
)

const (
	referralKey     = "test-referral-key"
	referralSecret  = "test-referral-secret"
	referralPartner = "demo-partner"
)

func referralSandbox(t *testing.T) *fixture {
	return newSandbox(t, sandbox.Options{ReferralAPIKey: referralKey, ReferralSecret: referralSecret}, false)
}

// refer POSTs body (bytes as given) with the content type, the key and the body's signature.
func (f *fixture) refer(partner, contentType string, body []byte) *response {
	f.t.Helper()
	return f.referWith(partner, contentType, body, referralKey, advisorspec.SignReferral(referralSecret, body))
}

func (f *fixture) referWith(partner, contentType string, body []byte, key, sig string) *response {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/v1/refer/"+partner, bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	if sig != "" {
		req.Header.Set("user-data-signature", sig)
	}
	return f.do(req)
}

// referralJSON is a valid JSON referral, with changes applied to a copy of its user.
func referralJSON(t *testing.T, top map[string]any, user map[string]any) []byte {
	t.Helper()
	u := map[string]any{"email": "ada@example.com", "firstName": "Ada", "lastName": "Lovelace"}
	for k, v := range user {
		if v == nil {
			delete(u, k)
		} else {
			u[k] = v
		}
	}
	body := map[string]any{"product": 1, "token": "tok-1", "user": u}
	for k, v := range top {
		if v == nil {
			delete(body, k)
		} else {
			body[k] = v
		}
	}
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

const formType = "application/x-www-form-urlencoded"

// referralForm is a valid form referral with the fields of extra added or replaced.
func referralForm(extra map[string]string) []byte {
	v := url.Values{"product": {"1"}, "token": {"tok-1"}, "user[email]": {"ada@example.com"},
		"user[firstName]": {"Ada"}, "user[lastName]": {"Lovelace"}}
	for k, s := range extra {
		if s == "\x00" {
			v.Del(k)
		} else {
			v.Set(k, s)
		}
	}
	return []byte(v.Encode())
}

func TestReferralAnswersATokenAndAnAddress(t *testing.T) {
	f := referralSandbox(t)
	address := map[string]any{"address_line1": "1 Main St", "address_line2": "Apt 2", "city": "Springfield", "state": "IL", "postal_code": "62701"}
	sample := map[string]any{"line1": "1 Main St", "line2": "Apt 2", "city": "Springfield", "state": "IL", "zip": "62701"}
	cases := []struct {
		name        string
		contentType string
		body        []byte
	}{
		{"json with the table's names", "application/json", referralJSON(t, nil, map[string]any{"address": address, "hasPets": true, "maritalStatus": 2})},
		{"json with the sample's names and a text status", "application/json", referralJSON(t, nil, map[string]any{"address": sample, "maritalStatus": "DomesticPartnership"})},
		{"json with a spaced lower-case status", "application/json", referralJSON(t, nil, map[string]any{"maritalStatus": "domestic partnership"})},
		{"json without a content type", "", referralJSON(t, nil, nil)},
		{"json without product takes a will", "application/json", referralJSON(t, map[string]any{"product": nil, "token": nil}, nil)},
		{"form with the table's names", formType, referralForm(map[string]string{
			"user[hasPets]": "false", "user[maritalStatus]": "6", "user[address][address_line1]": "1 Main St",
			"user[address][city]": "Springfield", "user[address][state]": "IL", "user[address][postal_code]": "62701",
		})},
		{"form with the sample's names and a text status", formType, referralForm(map[string]string{
			"product": "4", "user[maritalStatus]": "Single", "user[address][line1]": "1 Main St", "user[address][line2]": "Apt 2",
			"user[address][city]": "Springfield", "user[address][state]": "IL", "user[address][zip]": "62701",
		})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got advisorspec.ReferralAnswer
			f.refer(referralPartner, c.contentType, c.body).wantOK(t).decode(t, &got)
			if err := got.Check(); err != nil {
				t.Errorf("answer %+v: %v", got, err)
			}
		})
	}
}

func TestReferralRefusesMissingOrWrongCredentials(t *testing.T) {
	f := referralSandbox(t)
	body := referralJSON(t, nil, nil)
	good := advisorspec.SignReferral(referralSecret, body)
	cases := []struct {
		name, key, sig string
		status         int
		message        string
	}{
		{"no key", "", good, 401, "Missing or invalid x-api-key"},
		{"wrong key", "other-key", good, 401, "Missing or invalid x-api-key"},
		{"no signature", referralKey, "", 403, "Missing or invalid user-data-signature"},
		{"signature with another secret", referralKey, advisorspec.SignReferral("other", body), 403, "Missing or invalid user-data-signature"},
		{"upper-case hex", referralKey, strings.ToUpper(good), 403, "Missing or invalid user-data-signature"},
		{"signature of another body", referralKey, advisorspec.SignReferral(referralSecret, append(body, ' ')), 403, "Missing or invalid user-data-signature"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.referWith(referralPartner, "application/json", body, c.key, c.sig).wantError(t, c.status, c.message)
		})
	}
	// Credentials come before the path: an unknown partner without them learns nothing.
	f.referWith("nobody", "application/json", body, "", "").wantError(t, 401, "Missing or invalid x-api-key")
}

func TestReferralToAnUnknownPartnerIsNotFound(t *testing.T) {
	f := referralSandbox(t)
	for _, partner := range []string{"nobody", "", "demo-partner/extra"} {
		f.refer(partner, "application/json", referralJSON(t, nil, nil)).wantError(t, 404, "Partner not found")
	}
}

func TestReferralPartnersCanBeReplaced(t *testing.T) {
	f := newSandbox(t, sandbox.Options{ReferralAPIKey: referralKey, ReferralSecret: referralSecret, Partners: []string{"p-1"}}, false)
	f.refer("p-1", "application/json", referralJSON(t, nil, nil)).wantOK(t)
	f.refer(referralPartner, "application/json", referralJSON(t, nil, nil)).wantError(t, 404, "Partner not found")
}

func TestReferralRefusesEveryFieldOverItsLimit(t *testing.T) {
	f := referralSandbox(t)
	long := func(n int) string { return strings.Repeat("x", n+1) }
	address := func(member string, v string) map[string]any {
		a := map[string]any{"address_line1": "1 Main St", "city": "Springfield", "state": "IL", "postal_code": "62701"}
		a[member] = v
		return a
	}
	cases := []struct {
		field   string // as the message names it
		json    []byte
		form    map[string]string
		message string
	}{
		{"token", referralJSON(t, map[string]any{"token": long(36)}, nil), map[string]string{"token": long(36)}, "token must be at most 36 characters"},
		{"email", referralJSON(t, nil, map[string]any{"email": long(320)}), map[string]string{"user[email]": long(320)}, "user.email must be at most 320 characters"},
		{"firstName", referralJSON(t, nil, map[string]any{"firstName": long(100)}), map[string]string{"user[firstName]": long(100)}, "user.firstName must be at most 100 characters"},
		{"lastName", referralJSON(t, nil, map[string]any{"lastName": long(100)}), map[string]string{"user[lastName]": long(100)}, "user.lastName must be at most 100 characters"},
		{"address_line1", referralJSON(t, nil, map[string]any{"address": address("address_line1", long(255))}), addressForm("address_line1", long(255)), "user.address.address_line1 must be at most 255 characters"},
		{"address_line2", referralJSON(t, nil, map[string]any{"address": address("address_line2", long(150))}), addressForm("address_line2", long(150)), "user.address.address_line2 must be at most 150 characters"},
		{"city", referralJSON(t, nil, map[string]any{"address": address("city", long(255))}), addressForm("city", long(255)), "user.address.city must be at most 255 characters"},
		{"state", referralJSON(t, nil, map[string]any{"address": address("state", long(2))}), addressForm("state", long(2)), "user.address.state must be at most 2 characters"},
		{"postal_code", referralJSON(t, nil, map[string]any{"address": address("postal_code", long(10))}), addressForm("postal_code", long(10)), "user.address.postal_code must be at most 10 characters"},
	}
	for _, c := range cases {
		t.Run(c.field+" json", func(t *testing.T) {
			f.refer(referralPartner, "application/json", c.json).wantError(t, 400, c.message)
		})
		t.Run(c.field+" form", func(t *testing.T) {
			f.refer(referralPartner, formType, referralForm(c.form)).wantError(t, 400, c.message)
		})
	}
	// At the limit is accepted: the limits count characters, not bytes.
	atLimit := referralJSON(t, map[string]any{"token": strings.Repeat("é", 36)}, map[string]any{"firstName": strings.Repeat("é", 100)})
	f.refer(referralPartner, "application/json", atLimit).wantOK(t)
}

func addressForm(member, v string) map[string]string {
	m := map[string]string{"user[address][address_line1]": "1 Main St", "user[address][city]": "Springfield",
		"user[address][state]": "IL", "user[address][postal_code]": "62701"}
	m["user[address]["+member+"]"] = v
	return m
}

func TestReferralRefusesValuesTheTableDoesNotAllow(t *testing.T) {
	f := referralSandbox(t)
	cases := []struct {
		name        string
		contentType string
		body        []byte
		message     string
	}{
		{"product 0", "application/json", referralJSON(t, map[string]any{"product": 0}, nil), "product must be 1 (will), 2 (trust), 3 (ahcd) or 4 (fpoa)"},
		{"product 5", formType, referralForm(map[string]string{"product": "5"}), "product must be 1 (will), 2 (trust), 3 (ahcd) or 4 (fpoa)"},
		{"product as text", "application/json", referralJSON(t, map[string]any{"product": "1"}, nil), "product must be 1 (will), 2 (trust), 3 (ahcd) or 4 (fpoa)"},
		{"marital status 7", "application/json", referralJSON(t, nil, map[string]any{"maritalStatus": 7}), "user.maritalStatus must be 1 to 6 or one of Single, Married, DomesticPartnership, CivilUnion, Engaged, OtherCommittedRelationship"},
		{"widowed is not a referral status", formType, referralForm(map[string]string{"user[maritalStatus]": "Widowed"}), "user.maritalStatus must be 1 to 6 or one of Single, Married, DomesticPartnership, CivilUnion, Engaged, OtherCommittedRelationship"},
		{"hasPets as text in json", "application/json", referralJSON(t, nil, map[string]any{"hasPets": "yes"}), "user.hasPets must be true or false"},
		{"hasPets yes in a form", formType, referralForm(map[string]string{"user[hasPets]": "yes"}), "user.hasPets must be true or false"},
		{"no user", "application/json", referralJSON(t, map[string]any{"user": nil}, nil), "user is required"},
		{"no first name", "application/json", referralJSON(t, nil, map[string]any{"firstName": nil}), "user.firstName is required"},
		{"no email in a form", formType, referralForm(map[string]string{"user[email]": "\x00"}), "user.email is required"},
		{"blank last name", "application/json", referralJSON(t, nil, map[string]any{"lastName": "  "}), "user.lastName must not be blank"},
		{"address without a city", "application/json", referralJSON(t, nil, map[string]any{"address": map[string]any{"line1": "1 Main St", "state": "IL", "zip": "1"}}), "user.address.city is required"},
		{"both spellings of one member", "application/json", referralJSON(t, nil, map[string]any{"address": map[string]any{"line1": "a", "address_line1": "b", "city": "c", "state": "IL", "zip": "1"}}), "user.address.address_line1 and user.address.line1 are the same field: give one"},
		{"unknown field", "application/json", referralJSON(t, map[string]any{"partner": "x"}, nil), "partner is not a field of the referral"},
		{"unknown user field", formType, referralForm(map[string]string{"user[phone]": "1"}), "user.phone is not a field of the referral"},
		{"a field twice in a form", formType, []byte(string(referralForm(nil)) + "&token=again"), "token is given more than once"},
		{"user as a value and an object", formType, []byte(string(referralForm(nil)) + "&user=x"), "user is given both as a value and as an object"},
		{"an address as a value and an object", formType, []byte(string(referralForm(addressForm("city", "c"))) + "&user[address]=x"), "user.address is given both as a value and as an object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.refer(referralPartner, c.contentType, c.body).wantError(t, 400, c.message)
		})
	}
}

func TestReferralRefusesMalformedAndOversizedBodies(t *testing.T) {
	f := referralSandbox(t)
	cases := []struct {
		name        string
		contentType string
		body        []byte
		status      int
		message     string
	}{
		{"malformed json", "application/json", []byte(`{"user": `), 400, "Request body must be a JSON object"},
		{"json array", "application/json", []byte(`[]`), 400, "Request body must be a JSON object"},
		{"malformed form", formType, []byte(`user[firstName]=%zz`), 400, "Request body is not a valid form"},
		{"unbalanced brackets", formType, []byte(`user[firstName=Ada`), 400, `form field "user[firstName" is not a name or name[member]`},
		{"another content type", "text/plain", referralJSON(t, nil, nil), 415, "Content-Type must be application/json or application/x-www-form-urlencoded"},
		{"oversized", "application/json", bytes.Repeat([]byte(" "), advisorspec.MaxReferralBody+1), 413, "Request body too large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.refer(referralPartner, c.contentType, c.body).wantError(t, c.status, c.message)
		})
	}
}

// The signature is checked against an independent implementation of HMAC-SHA256, openssl's,
// so that the sandbox and the gateway cannot agree on a wrong one.
func TestReferralSignatureIsOpensslsHMACSHA256(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	body := referralJSON(t, nil, map[string]any{"firstName": "Zoë"})
	cmd := exec.Command("openssl", "dgst", "-sha256", "-hmac", referralSecret)
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("openssl: %v", err)
	}
	// "SHA2-256(stdin)= <hex>" or "(stdin)= <hex>", depending on the version.
	_, want, ok := strings.Cut(strings.TrimSpace(string(out)), "= ")
	if !ok {
		t.Fatalf("openssl printed %q", out)
	}
	if got := advisorspec.SignReferral(referralSecret, body); got != want {
		t.Fatalf("got signature %s, want openssl's %s", got, want)
	}
	f := referralSandbox(t)
	f.referWith(referralPartner, "application/json", body, referralKey, want).wantOK(t)
}

package gateway_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// GraphQL's Int is "a signed 32-bit integer" (the GraphQL specification); the service's
// integers have no bound. An ein, an identifier, is a String written 12-3456789; a fraction's
// numerator and denominator and an asset's DollarAmount, quantities, are BigInts: a JSON number
// within ±(2^53−1), a string of digits beyond. Each is checked here as a client reads it: the
// bytes of the answer, not a decoding that would round it.

// The specification: "ein | integer" for a Charity, with no bound.
func TestAnEINRoundTripsWrittenAsAnEINAndAWiderIntegerAsItsDigits(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := ctNewFamily(t, up, "EIN-FAMILY")
	// A card the service holds with an ein beyond 32 bits reads back whole.
	wide := ctAdd(t, up, wid, map[string]any{"type": "Charity", "external_id": "wide", "legal_name": "Wide", "ein": 12345678901,
		"city": "Boston", "state": "MA"})
	if got := gw.raw(t, `query($wid: ID!, $id: ID!) { contact(wid: $wid, id: $id) { ... on Charity { ein } } }`,
		map[string]any{"wid": wid, "id": wide}); string(bytes.TrimSpace(got)) != `{"data":{"contact":{"ein":"12345678901"}}}` {
		t.Errorf("a card of ein 12345678901 reads %s, want its digits as a String", got)
	}

	const mutation = `mutation($wid: ID!, $input: ContactInput!) { createContact(wid: $wid, input: $input) { ... on Charity { contactId ein } } }`
	for _, tc := range []struct {
		name, ein, want string
		upstream        float64 // the integer the service is sent
	}{
		{"written 12-3456789", "12-3456789", "12-3456789", 123456789},
		{"nine digits with a leading 0, which the service's integer drops", "012345678", "01-2345678", 12345678},
		{"written with its leading 0", "01-2345678", "01-2345678", 12345678},
		{"an integer beyond 32 bits", "12345678901", "12345678901", 12345678901},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			input := map[string]any{"charity": map[string]any{"externalId": "c-" + tc.ein, "legalName": "Gift", "ein": tc.ein, "city": "Austin", "state": "TX"}}
			var got struct {
				CreateContact struct{ ContactID, Ein string }
			}
			gw.post(t, mutation, map[string]any{"wid": wid, "input": input}).ok(t, &got)
			if got.CreateContact.Ein != tc.want {
				t.Errorf("ein %q, want %q", got.CreateContact.Ein, tc.want)
			}
			stored := up.rest(t, "GET", "/v2/top-accounts/"+wid+"/contacts/"+got.CreateContact.ContactID, nil)
			if stored["ein"] != tc.upstream {
				t.Errorf("the service holds ein %v, want the integer %v", stored["ein"], tc.upstream)
			}
		})
	}

	t.Run("anything else is refused, naming the field", func(t *testing.T) {
		t.Parallel()
		for _, ein := range []string{"12-345", "EIN 123456789", "1.5", "99999999999999999999"} {
			input := map[string]any{"charity": map[string]any{"externalId": "bad", "legalName": "Bad", "ein": ein, "city": "Austin", "state": "TX"}}
			e := gw.post(t, mutation, map[string]any{"wid": wid, "input": input}).
				wantError(t, "BAD_USER_INPUT", "ein must be an integer or an EIN written 12-3456789")
			if e.Extensions["field"] != "input.charity.ein" {
				t.Errorf("%q: field %v, want input.charity.ein", ein, e.Extensions["field"])
			}
		}
	})
}

// The specification: "fraction.numerator integer", "fraction.denominator non-zero integer".
func TestAFractionBeyondThirtyTwoBitsRoundTripsAsABigInt(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := ctNewFamily(t, up, "FRACTION-FAMILY", "a", "b")
	input := map[string]any{"class": map[string]any{"externalId": "heirs", "legalName": "Heirs", "currentParties": map[string]any{
		"parties": []any{
			map[string]any{"party": "a", "fraction": map[string]any{"numerator": 5000000000, "denominator": 7000000000}},
			// Beyond 2^53 a client sends the digits as a string, so that nothing rounds them.
			map[string]any{"party": "b", "fraction": map[string]any{"numerator": "9007199254740993", "denominator": "-9223372036854775808"}},
		}}}}
	got := gw.raw(t, `mutation($wid: ID!, $input: ContactInput!) { createContact(wid: $wid, input: $input) {
	  ... on Class { currentParties { parties { fraction { numerator denominator } } } } } }`, map[string]any{"wid": wid, "input": input})
	const want = `{"data":{"createContact":{"currentParties":{"parties":[` +
		`{"fraction":{"numerator":5000000000,"denominator":7000000000}},` +
		`{"fraction":{"numerator":"9007199254740993","denominator":"-9223372036854775808"}}]}}}}`
	if got = bytes.TrimSpace(got); string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, bad := range []any{1.5, "five", "9223372036854775808"} {
		input := map[string]any{"class": map[string]any{"externalId": "bad", "legalName": "Bad", "currentParties": map[string]any{
			"parties": []any{map[string]any{"party": "a", "fraction": map[string]any{"numerator": bad, "denominator": 2}}}}}}
		res := gw.post(t, `mutation($wid: ID!, $input: ContactInput!) { createContact(wid: $wid, input: $input) { __typename } }`,
			map[string]any{"wid": wid, "input": input})
		if len(res.Errors) != 1 || res.Errors[0].Extensions["code"] != "BAD_USER_INPUT" {
			t.Errorf("numerator %v: got %+v, want one BAD_USER_INPUT", bad, res.Errors)
		}
	}
}

// webhook-events.md: "AssetAdded | DollarAmount integer, the dollar value", with no bound.
func TestADollarAmountBeyondThirtyTwoBitsIsDeliveredAndReadBack(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	for _, tc := range []struct {
		name, amount, want string
	}{
		{"beyond 32 bits, a number", "3000000000", "3000000000"},
		{"beyond 2^53, a string, so that no client rounds it", "9007199254740993", `"9007199254740993"`},
		{"the largest 64-bit integer", "9223372036854775807", `"9223372036854775807"`},
		// Wider than the gateway holds: the event is kept (the service does not send a refused
		// delivery again), without the amount.
		{"beyond 64 bits, null", "99999999999999999999", "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wid := "w-dollars-" + tc.amount
			body := fmt.Sprintf(`{"EventType":"AssetAdded","Wid":%q,"Timestamp":"2026-11-22T10:00:00Z","AssetName":"Ranch","DollarAmount":%s}`, wid, tc.amount)
			if status, out := gw.deliver(t, webhookKey, []byte(body)); status != http.StatusOK {
				t.Fatalf("delivery: %d %v, want 200", status, out)
			}
			got := gw.raw(t, `query($wid: ID!) { recentEvents(filter: {wids: [$wid]}) { ... on AssetAdded { assetName dollarAmount } } }`,
				map[string]any{"wid": wid})
			want := `{"data":{"recentEvents":[{"assetName":"Ranch","dollarAmount":` + tc.want + `}]}}`
			if got = bytes.TrimSpace(got); string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// The GraphQL specification: "Int: A signed 32-bit integer". An argument beyond is refused in
// graphql-js's words, as a variable as well as a literal, naming the argument as every coercion
// error does (docs/errors.md).
func TestAnIntArgumentBeyondThirtyTwoBitsIsRefused(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	const want = `Argument "last" got an invalid value at "last"; Int cannot represent non 32-bit signed integer value: 3000000000`
	res := gw.post(t, `query($last: Int) { recentEvents(last: $last) { id } }`, map[string]any{"last": 3000000000})
	if len(res.Errors) != 1 || res.Errors[0].Message != want || res.Errors[0].Extensions["code"] != "BAD_USER_INPUT" || res.Errors[0].Extensions["field"] != "last" {
		t.Errorf("a variable: got %+v, want one BAD_USER_INPUT %q", res.Errors, want)
	}
	res = gw.post(t, `{ recentEvents(last: 3000000000) { id } }`, nil)
	if len(res.Errors) != 1 || res.Errors[0].Message != want {
		t.Errorf("a literal: got %+v, want one error %q", res.Errors, want)
	}
	// Within 32 bits, the argument's own bound applies (its message, not Int's).
	res = gw.post(t, `query($last: Int) { recentEvents(last: $last) { id } }`, map[string]any{"last": 2147483647})
	if len(res.Errors) == 1 && strings.Contains(res.Errors[0].Message, "32-bit") {
		t.Errorf("2147483647 is an Int: got %+v", res.Errors)
	}
}

package gateway_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// The promise: a top account, all its cards with every relationship field, and the
// family graph cost exactly two upstream requests, however many cards there are.
func TestFamilyQueryCostsTwoUpstreamRequests(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	for _, n := range []int{5, 200, 2000} {
		wid := up.family(t, fmt.Sprintf("FAMILY-%d", n), n)
		up.ResetRequests()
		var got struct {
			TopAccount struct {
				Contacts      []json.RawMessage
				Relationships []struct {
					Target struct{ Contact *struct{ DisplayName string } }
				}
			}
		}
		gw.post(t, familyQuery, map[string]any{"wid": wid}).ok(t, &got)
		if len(got.TopAccount.Contacts) != n {
			t.Fatalf("%d contacts: got %d", n, len(got.TopAccount.Contacts))
		}
		for _, r := range got.TopAccount.Relationships {
			if r.Target.Contact == nil {
				t.Fatalf("%d contacts: a relationship's target did not resolve", n)
			}
		}
		want := []string{"GET /v2/top-accounts/" + wid, "GET /v2/top-accounts/" + wid + "/contacts/"}
		if reqs := up.Requests(); !slices.Equal(reqs, want) {
			t.Errorf("%d contacts: upstream requests %v, want %v", n, reqs, want)
		}
	}
}

// A card read on its own by id comes with its owner's roster only when the query reaches into
// the graph below it, however the selection gets there (here through a named fragment): one
// upstream request for the card alone, one more for the roster that answers its references
// and relationships from memory.
func TestACardByIDListsItsRosterOnlyWhenTheQueryReachesTheGraph(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := up.family(t, "BY-ID", 5)
	var found struct {
		TopAccount struct{ Contact struct{ ContactID string } }
	}
	gw.post(t, `query($wid: ID!) { topAccount(wid: $wid) { contact(externalId: "c0") { ... on ContactCard { contactId } } } }`,
		map[string]any{"wid": wid}).ok(t, &found)
	id := found.TopAccount.Contact.ContactID
	one := "GET /v2/top-accounts/" + wid + "/contacts/" + id
	list := "GET /v2/top-accounts/" + wid + "/contacts/"
	for _, tc := range []struct {
		name, query string
		want        string // the answer's data
		requests    []string
	}{
		{"the card alone", `query($wid: ID!, $id: ID!) { contact(wid: $wid, id: $id) { ... on Trust { legalName trustCreators { externalId } } } }`,
			`{"contact":{"legalName":"Trust c0","trustCreators":[{"externalId":"p0"}]}}`, []string{one}},
		{"its references through a fragment", `query($wid: ID!, $id: ID!) { contact(wid: $wid, id: $id) { ...Refs } }
fragment Refs on Trust { trustCreators { externalId contact { ... on ContactCard { displayName } } } }`,
			`{"contact":{"trustCreators":[{"externalId":"p0","contact":{"displayName":"Person 0"}}]}}`, []string{one, list}},
		{"its relationships", `query($wid: ID!, $id: ID!) { contact(wid: $wid, id: $id) { ... on ContactCard { relationships { role target { externalId } } } } }`,
			`{"contact":{"relationships":[{"role":"TRUST_CREATOR","target":{"externalId":"p0"}},{"role":"INITIAL_TRUSTEE","target":{"externalId":"p0"}},{"role":"INITIAL_TRUSTEE","target":{"externalId":"p1"}}]}}`,
			[]string{one, list}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.ResetRequests()
			r := gw.post(t, tc.query, map[string]any{"wid": wid, "id": id})
			r.ok(t, nil)
			if string(r.Data) != tc.want {
				t.Errorf("got %s, want %s", r.Data, tc.want)
			}
			if reqs := up.Requests(); !slices.Equal(reqs, tc.requests) {
				t.Errorf("upstream requests %v, want %v", reqs, tc.requests)
			}
		})
	}
}

package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The promise: a top account, all its cards with every relationship field, and the
// family graph cost exactly two upstream requests, however many cards there are.
func TestFamilyQueryCostsTwoUpstreamRequests(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	for _, n := range []int{5, 200} {
		wid := up.family(t, "FAMILY-"+strings.Repeat("X", n%7), n)
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

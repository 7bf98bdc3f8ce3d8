package gateway_test

import (
	"fmt"
	"strings"
	"testing"
)

// End-to-end tests of the top-account part of the schema: listing in pages, reading one,
// and the two mutations, with the errors each can give.

// taAccount is a top account as the tests select it.
type taAccount struct {
	WID, ExternalID, Name string
}

const taFields = `wid externalId name`

// taWantField fails the test unless the error names the input field.
func taWantField(t testing.TB, e gqlError, field string) {
	t.Helper()
	if got := e.Extensions["field"]; got != field {
		t.Errorf("extensions.field = %v, want %q (error %+v)", got, field, e)
	}
}

// taNoUpstream fails the test if the gateway asked the upstream anything since the last reset.
func taNoUpstream(t testing.TB, up *upstream) {
	t.Helper()
	if reqs := up.Requests(); len(reqs) > 0 {
		t.Errorf("the gateway called the upstream: %v; want the request answered locally", reqs)
	}
}

// taSeed adds n top accounts TA-1 ... TA-n to an empty upstream and returns their wids in order.
func taSeed(t testing.TB, up *upstream, n int) []string {
	t.Helper()
	wids := make([]string, n)
	for i := range n {
		id := fmt.Sprintf("TA-%d", i+1)
		wids[i] = up.rest(t, "POST", "/v2/top-accounts/", map[string]any{"external_id": id, "name": "Account " + id})["wid"].(string)
	}
	return wids
}

func TestTopAccountsPagesWithPageInfo(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wids := taSeed(t, up, 5)
	const query = `query Page($page: Int, $limit: Int) {
  topAccounts(page: $page, limit: $limit) { nodes { ` + taFields + ` } pageInfo { page limit totalCount totalPages } }
}`
	for _, tc := range []struct {
		name                          string
		vars                          map[string]any
		wantIDs                       []string // external ids, in order
		page, limit, total, pageCount int
	}{
		{"the defaults are page 1 of 20", nil, []string{"TA-1", "TA-2", "TA-3", "TA-4", "TA-5"}, 1, 20, 5, 1},
		{"explicit nulls take the defaults", map[string]any{"page": nil, "limit": nil}, []string{"TA-1", "TA-2", "TA-3", "TA-4", "TA-5"}, 1, 20, 5, 1},
		{"the first page of two", map[string]any{"limit": 2}, []string{"TA-1", "TA-2"}, 1, 2, 5, 3},
		{"a middle page", map[string]any{"page": 2, "limit": 2}, []string{"TA-3", "TA-4"}, 2, 2, 5, 3},
		{"the last page is short", map[string]any{"page": 3, "limit": 2}, []string{"TA-5"}, 3, 2, 5, 3},
		{"a page past the end is empty", map[string]any{"page": 4, "limit": 2}, []string{}, 4, 2, 5, 3},
		{"a page of one", map[string]any{"page": 5, "limit": 1}, []string{"TA-5"}, 5, 1, 5, 5},
		{"the largest page", map[string]any{"limit": 100}, []string{"TA-1", "TA-2", "TA-3", "TA-4", "TA-5"}, 1, 100, 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got struct {
				TopAccounts struct {
					Nodes    []taAccount
					PageInfo struct{ Page, Limit, TotalCount, TotalPages int }
				}
			}
			gw.post(t, query, tc.vars).ok(t, &got)
			ids := []string{}
			for _, n := range got.TopAccounts.Nodes {
				ids = append(ids, n.ExternalID)
				if want := "Account " + n.ExternalID; n.Name != want || n.WID == "" {
					t.Errorf("node %+v, want name %q and a wid", n, want)
				}
			}
			if strings.Join(ids, ",") != strings.Join(tc.wantIDs, ",") {
				t.Errorf("nodes %v, want %v", ids, tc.wantIDs)
			}
			pi := got.TopAccounts.PageInfo
			if pi.Page != tc.page || pi.Limit != tc.limit || pi.TotalCount != tc.total || pi.TotalPages != tc.pageCount {
				t.Errorf("pageInfo %+v, want page %d limit %d totalCount %d totalPages %d", pi, tc.page, tc.limit, tc.total, tc.pageCount)
			}
		})
	}
	// Nodes carry the wids the upstream gave.
	var first struct{ TopAccounts struct{ Nodes []taAccount } }
	gw.post(t, `{ topAccounts(limit: 1) { nodes { wid } } }`, nil).ok(t, &first)
	if len(first.TopAccounts.Nodes) != 1 || first.TopAccounts.Nodes[0].WID != wids[0] {
		t.Errorf("first node %+v, want wid %s", first.TopAccounts.Nodes, wids[0])
	}
}

func TestTopAccountsRefusesPagingOutOfRangeWithoutCallingTheUpstream(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	for _, tc := range []struct {
		name, query, field, message string
	}{
		{"a limit over the maximum", `{ topAccounts(limit: 101) { nodes { wid } } }`, "limit", "Limit can't be more than 100"},
		{"a far larger limit", `{ topAccounts(page: 2, limit: 100000) { nodes { wid } } }`, "limit", "Limit can't be more than 100"},
		{"a limit of zero", `{ topAccounts(limit: 0) { nodes { wid } } }`, "limit", "limit must be an integer from 1 to 100"},
		{"a negative limit", `{ topAccounts(limit: -5) { nodes { wid } } }`, "limit", "limit must be an integer from 1 to 100"},
		{"page zero", `{ topAccounts(page: 0) { nodes { wid } } }`, "page", "page must be a positive integer"},
		{"a negative page", `{ topAccounts(page: -1, limit: 10) { nodes { wid } } }`, "page", "page must be a positive integer"},
	} {
		// Sequential: each checks that it alone made no upstream request.
		t.Run(tc.name, func(t *testing.T) {
			up.ResetRequests()
			r := gw.post(t, tc.query, nil)
			e := r.wantError(t, "BAD_USER_INPUT", tc.message)
			taWantField(t, e, tc.field)
			if string(r.Data) != "null" {
				t.Errorf("data %s, want null (topAccounts is non-null)", r.Data)
			}
			if len(e.Path) != 1 || e.Path[0] != "topAccounts" {
				t.Errorf("error path %v, want [topAccounts]", e.Path)
			}
			taNoUpstream(t, up)
		})
	}
}

func TestTopAccountByWidIsTheAccountOrNull(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wids := taSeed(t, up, 2)
	const query = `query One($wid: ID!) { topAccount(wid: $wid) { ` + taFields + ` } }`
	for _, tc := range []struct {
		name string
		wid  string
		want *taAccount
	}{
		{"the first account", wids[0], &taAccount{wids[0], "TA-1", "Account TA-1"}},
		{"the second account", wids[1], &taAccount{wids[1], "TA-2", "Account TA-2"}},
		{"an unknown wid is null", "no-such-wid", nil},
		{"an external id is not a wid", "TA-1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got struct{ TopAccount *taAccount }
			gw.post(t, query, map[string]any{"wid": tc.wid}).ok(t, &got)
			switch {
			case tc.want == nil && got.TopAccount != nil:
				t.Errorf("topAccount %+v, want null", got.TopAccount)
			case tc.want != nil && (got.TopAccount == nil || *got.TopAccount != *tc.want):
				t.Errorf("topAccount %+v, want %+v", got.TopAccount, tc.want)
			}
		})
	}
	// An unknown top account beside a known one: the known one is still answered.
	var both struct{ A, B *taAccount }
	gw.post(t, `query($a: ID!, $b: ID!) { a: topAccount(wid: $a) { wid } b: topAccount(wid: $b) { wid } }`,
		map[string]any{"a": wids[0], "b": "missing"}).ok(t, &both)
	if both.A == nil || both.A.WID != wids[0] || both.B != nil {
		t.Errorf("a %+v b %+v, want the first account and null", both.A, both.B)
	}
}

func TestCreateAndUpdateTopAccountReturnTheWholeAccount(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	const create = `mutation Create($input: CreateTopAccountInput!) { createTopAccount(input: $input) { ` + taFields + ` } }`
	const update = `mutation Update($wid: ID!, $input: UpdateTopAccountInput!) { updateTopAccount(wid: $wid, input: $input) { ` + taFields + ` } }`
	const read = `query Read($wid: ID!) { topAccount(wid: $wid) { ` + taFields + ` } }`

	var created struct{ CreateTopAccount taAccount }
	gw.post(t, create, map[string]any{"input": map[string]any{"externalId": "NEW-1", "name": "New Family"}}).ok(t, &created)
	acct := created.CreateTopAccount
	if acct.WID == "" || acct.ExternalID != "NEW-1" || acct.Name != "New Family" {
		t.Fatalf("createTopAccount %+v, want a wid, NEW-1 and New Family", acct)
	}
	var read1 struct{ TopAccount *taAccount }
	gw.post(t, read, map[string]any{"wid": acct.WID}).ok(t, &read1)
	if read1.TopAccount == nil || *read1.TopAccount != acct {
		t.Fatalf("after create, topAccount %+v, want %+v", read1.TopAccount, acct)
	}

	for _, tc := range []struct {
		name  string
		input map[string]any
		want  taAccount
	}{
		{"the name alone", map[string]any{"name": "Renamed Family"}, taAccount{acct.WID, "NEW-1", "Renamed Family"}},
		{"the external id alone", map[string]any{"externalId": "NEW-1B"}, taAccount{acct.WID, "NEW-1B", "Renamed Family"}},
		{"both", map[string]any{"externalId": "NEW-1C", "name": "Third Name"}, taAccount{acct.WID, "NEW-1C", "Third Name"}},
		{"a null field stays as it is", map[string]any{"externalId": nil, "name": "Fourth Name"}, taAccount{acct.WID, "NEW-1C", "Fourth Name"}},
		{"its own external id again is no conflict", map[string]any{"externalId": "NEW-1C"}, taAccount{acct.WID, "NEW-1C", "Fourth Name"}},
	} {
		// Sequential: each update builds on the one before.
		t.Run(tc.name, func(t *testing.T) {
			var got struct{ UpdateTopAccount taAccount }
			gw.post(t, update, map[string]any{"wid": acct.WID, "input": tc.input}).ok(t, &got)
			if got.UpdateTopAccount != tc.want {
				t.Errorf("updateTopAccount %+v, want %+v", got.UpdateTopAccount, tc.want)
			}
			var after struct{ TopAccount *taAccount }
			gw.post(t, read, map[string]any{"wid": acct.WID}).ok(t, &after)
			if after.TopAccount == nil || *after.TopAccount != tc.want {
				t.Errorf("read back %+v, want %+v", after.TopAccount, tc.want)
			}
		})
	}

	// Written with literals rather than variables, the same.
	var lit struct{ CreateTopAccount taAccount }
	gw.post(t, `mutation { createTopAccount(input: {externalId: "LIT-1", name: "Literal"}) { `+taFields+` } }`, nil).ok(t, &lit)
	if lit.CreateTopAccount.WID == "" || lit.CreateTopAccount.ExternalID != "LIT-1" || lit.CreateTopAccount.Name != "Literal" {
		t.Errorf("createTopAccount with literals: %+v", lit.CreateTopAccount)
	}
}

func TestATakenTopAccountExternalIdIsAConflictNamingItsWid(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wids := taSeed(t, up, 2)
	const message = "A top account with this externalId already exists"
	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name, query string
			vars        map[string]any
			wantWID     string
		}{
			{"creating with a taken external id",
				`mutation($input: CreateTopAccountInput!) { createTopAccount(input: $input) { wid } }`,
				map[string]any{"input": map[string]any{"externalId": "TA-1", "name": "Impostor"}}, wids[0]},
			{"creating with another taken external id",
				`mutation($input: CreateTopAccountInput!) { createTopAccount(input: $input) { wid } }`,
				map[string]any{"input": map[string]any{"externalId": "TA-2", "name": "Impostor"}}, wids[1]},
			{"updating to another account's external id",
				`mutation($wid: ID!, $input: UpdateTopAccountInput!) { updateTopAccount(wid: $wid, input: $input) { wid } }`,
				map[string]any{"wid": wids[1], "input": map[string]any{"externalId": "TA-1"}}, wids[0]},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				r := gw.post(t, tc.query, tc.vars)
				e := r.wantError(t, "CONFLICT", message)
				wantUpstream(t, e, 409, "Container with this externalId already exists")
				if e.Extensions["wid"] != tc.wantWID {
					t.Errorf("extensions.wid = %v, want %s, the wid of the account that has it", e.Extensions["wid"], tc.wantWID)
				}
			})
		}
	})
	// Nothing changed.
	var got struct{ TopAccounts struct{ Nodes []taAccount } }
	gw.post(t, `{ topAccounts { nodes { `+taFields+` } } }`, nil).ok(t, &got)
	if n := got.TopAccounts.Nodes; len(n) != 2 || n[0].ExternalID != "TA-1" || n[1].ExternalID != "TA-2" {
		t.Errorf("after the conflicts the accounts are %+v, want TA-1 and TA-2 only", n)
	}
}

func TestTopAccountInputIsCheckedWithoutCallingTheUpstream(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	const create = `mutation($input: CreateTopAccountInput!) { createTopAccount(input: $input) { wid } }`
	const update = `mutation($input: UpdateTopAccountInput!) { updateTopAccount(wid: "any-wid", input: $input) { wid } }`
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name, query    string
		input          map[string]any
		field, message string
	}{
		{"create: a blank name", create, map[string]any{"externalId": "E-1", "name": ""}, "input.name", "input.name must not be blank"},
		{"create: a whitespace name", create, map[string]any{"externalId": "E-1", "name": "   "}, "input.name", "input.name must not be blank"},
		{"create: a blank external id", create, map[string]any{"externalId": " ", "name": "N"}, "input.externalId", "input.externalId must not be blank"},
		{"create: both blank", create, map[string]any{"externalId": "", "name": ""}, "input", "input.externalId and input.name must not be blank"},
		{"create: an external id over 50 characters", create, map[string]any{"externalId": long(51), "name": "N"}, "input.externalId", "input.externalId must be at most 50 characters"},
		{"create: a name over 255 characters", create, map[string]any{"externalId": "E-1", "name": long(256)}, "input.name", "input.name must be at most 255 characters"},
		{"update: nothing to change", update, map[string]any{}, "input", "input: At least one of name or externalId must be provided"},
		{"update: only nulls", update, map[string]any{"externalId": nil, "name": nil}, "input", "input: At least one of name or externalId must be provided"},
		{"update: an external id over 50 characters", update, map[string]any{"externalId": long(51)}, "input.externalId", "input.externalId must be at most 50 characters"},
		{"update: a name over 255 characters", update, map[string]any{"name": long(256)}, "input.name", "input.name must be at most 255 characters"},
	} {
		// Sequential: each checks that it alone made no upstream request.
		t.Run(tc.name, func(t *testing.T) {
			up.ResetRequests()
			e := gw.post(t, tc.query, map[string]any{"input": tc.input}).wantError(t, "BAD_USER_INPUT", tc.message)
			taWantField(t, e, tc.field)
			taNoUpstream(t, up)
			if u, ok := e.Extensions["upstream"]; ok {
				t.Errorf("a check of the gateway's own carries extensions.upstream %v", u)
			}
		})
	}
	// The limits are inclusive: 50 and 255 characters are accepted.
	var ok struct{ CreateTopAccount taAccount }
	gw.post(t, `mutation($input: CreateTopAccountInput!) { createTopAccount(input: $input) { `+taFields+` } }`,
		map[string]any{"input": map[string]any{"externalId": long(50), "name": long(255)}}).ok(t, &ok)
	if ok.CreateTopAccount.ExternalID != long(50) || ok.CreateTopAccount.Name != long(255) {
		t.Errorf("createTopAccount at the limits: %+v", ok.CreateTopAccount)
	}
}

func TestUpdatingAnUnknownTopAccountIsNotFound(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), nil)
	for _, tc := range []struct {
		name  string
		input map[string]any
	}{
		{"renaming", map[string]any{"name": "Nobody"}},
		{"changing the external id", map[string]any{"externalId": "NOBODY-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gw.post(t, `mutation($input: UpdateTopAccountInput!) { updateTopAccount(wid: "no-such-wid", input: $input) { wid } }`,
				map[string]any{"input": tc.input})
			e := r.wantError(t, "NOT_FOUND", "Top account not found")
			wantUpstream(t, e, 404, "Container not found")
		})
	}
}

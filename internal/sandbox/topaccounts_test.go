package sandbox_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// The top-account endpoints, walked rule by rule through the specification's Top account
// field table, its Top accounts endpoints, and its Errors and Limits tables. Where the
// specification words a message, the test asserts that text; where it only gives the status
// ("400 ... invalid payload"), the message asserted is the sandbox's own and is marked so.

// taCollection is the top-account collection, written with the trailing slash the
// specification gives it.
const taCollection = "/v2/top-accounts/"

func taPath(wid string) string { return taCollection + wid }

// taOn is f reporting to t: the harness's helpers fail the test they were made for, and a
// subtest must not stop its parent.
func taOn(f *fixture, t *testing.T) *fixture {
	g := *f
	g.t = t
	return &g
}

// taPage is one page of List Top Accounts.
type taPage struct {
	TopAccounts []map[string]any `json:"top_accounts"`
	Pagination  map[string]any   `json:"pagination"`
}

func taList(t *testing.T, f *fixture, query string) taPage {
	t.Helper()
	r := taOn(f, t).v2("GET", taCollection+query, nil).wantOK(t)
	taWantJSON(t, r)
	var p taPage
	r.decode(t, &p)
	if p.TopAccounts == nil {
		t.Errorf("top_accounts is %s, want an array", r.body)
	}
	for i, ta := range p.TopAccounts {
		taWantKeys(t, fmt.Sprintf("top_accounts[%d]", i), ta, "wid", "external_id", "name")
	}
	taWantKeys(t, "pagination", p.Pagination, "page", "limit", "total_count", "total_pages")
	return p
}

// pages gives the pagination object as integers; the specification says they are integers.
func (p taPage) pages(t *testing.T) (page, limit, totalCount, totalPages int) {
	t.Helper()
	get := func(key string) int {
		n, ok := p.Pagination[key].(float64)
		if !ok || n != float64(int(n)) {
			t.Fatalf("pagination.%s is %#v, want an integer", key, p.Pagination[key])
		}
		return int(n)
	}
	return get("page"), get("limit"), get("total_count"), get("total_pages")
}

func (p taPage) externalIDs(t *testing.T) []string {
	t.Helper()
	out := make([]string, len(p.TopAccounts))
	for i, ta := range p.TopAccounts {
		out[i] = str(t, ta, "external_id")
	}
	return out
}

// taGet returns a top account as Get Top Account answers it.
func taGet(t *testing.T, f *fixture, wid string) map[string]any {
	t.Helper()
	r := taOn(f, t).v2("GET", taPath(wid), nil).wantOK(t)
	taWantJSON(t, r)
	m := r.object(t)
	taWantKeys(t, "Get Top Account response", m, "wid", "external_id", "name")
	return m
}

func taCount(t *testing.T, f *fixture) int {
	t.Helper()
	_, _, total, _ := taList(t, f, "?limit=100").pages(t)
	return total
}

// taWantKeys checks that an object has exactly the keys want.
func taWantKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	got := make([]string, 0, len(m))
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s has keys %v, want %v", what, got, want)
	}
}

// taWantAccount checks a top account object against the fields it should have.
func taWantAccount(t *testing.T, what string, m map[string]any, wid, externalID, name string) {
	t.Helper()
	for _, kv := range [][2]string{{"wid", wid}, {"external_id", externalID}, {"name", name}} {
		if got := m[kv[0]]; got != kv[1] {
			t.Errorf("%s: %s is %#v, want %q", what, kv[0], got, kv[1])
		}
	}
}

func taWantJSON(t *testing.T, r *response) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
}

func TestGetTopAccount(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("GET-1", "Get family")
	f.addTopAccount("GET-2", "Other family")
	for _, tc := range []struct {
		name    string
		path    string
		status  int    // 0: 200 with the top account
		message string // the error message
	}{
		{name: "answers exactly wid, external_id and name", path: taPath(wid)},
		{name: "a trailing slash addresses the same top account", path: taPath(wid) + "/"},
		{name: "unknown wid is Container not found", path: taPath("no-such-wid"), status: http.StatusNotFound, message: "Container not found"},
		{name: "wid is matched exactly, not by prefix", path: taPath(wid[:len(wid)-1]), status: http.StatusNotFound, message: "Container not found"},
		{name: "an external_id is not a wid", path: taPath("GET-1"), status: http.StatusNotFound, message: "Container not found"},
		{name: "blank wid is Missing wid parameter", path: taPath("%20%20"), status: http.StatusBadRequest, message: "Missing wid parameter"},
		{name: "empty wid segment is Missing wid parameter", path: taCollection + "/", status: http.StatusBadRequest, message: "Missing wid parameter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := taOn(f, t).v2("GET", tc.path, nil)
			if tc.status != 0 {
				r.wantError(t, tc.status, tc.message)
				return
			}
			r.wantOK(t)
			taWantJSON(t, r)
			m := r.object(t)
			taWantKeys(t, "Get Top Account response", m, "wid", "external_id", "name")
			taWantAccount(t, "Get Top Account", m, wid, "GET-1", "Get family")
		})
	}
}

func TestListTopAccountsPagination(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	const accounts = 45
	var all []string
	for i := range accounts {
		id := fmt.Sprintf("PAGE-%02d", i)
		all = append(all, id)
		f.addTopAccount(id, "Family "+id)
	}
	for _, tc := range []struct {
		name                          string
		path                          string // default: the collection with its trailing slash
		query                         string
		page, limit, items, pageCount int
	}{
		{name: "page defaults to 1 and limit to 20", query: "", page: 1, limit: 20, items: 20, pageCount: 3},
		{name: "the collection path without a trailing slash lists too", path: "/v2/top-accounts", query: "", page: 1, limit: 20, items: 20, pageCount: 3},
		{name: "page 2 of the default limit", query: "?page=2", page: 2, limit: 20, items: 20, pageCount: 3},
		{name: "the last page holds the remainder", query: "?page=3", page: 3, limit: 20, items: 5, pageCount: 3},
		{name: "a page beyond the end is empty, with the pagination still reported", query: "?page=4", page: 4, limit: 20, items: 0, pageCount: 3},
		{name: "a page far beyond the end is empty", query: "?page=1000000000", page: 1000000000, limit: 20, items: 0, pageCount: 3},
		{name: "limit 1 is the smallest page", query: "?limit=1", page: 1, limit: 1, items: 1, pageCount: accounts},
		{name: "limit 100 is the largest page", query: "?limit=100", page: 1, limit: 100, items: accounts, pageCount: 1},
		{name: "page and limit combine", query: "?page=7&limit=7", page: 7, limit: 7, items: 3, pageCount: 7},
		{name: "limit alone keeps page 1", query: "?limit=44", page: 1, limit: 44, items: 44, pageCount: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p taPage
			if tc.path != "" {
				taOn(f, t).v2("GET", tc.path+tc.query, nil).wantOK(t).decode(t, &p)
			} else {
				p = taList(t, f, tc.query)
			}
			page, limit, total, pageCount := p.pages(t)
			if page != tc.page || limit != tc.limit || total != accounts || pageCount != tc.pageCount {
				t.Errorf("pagination is page %d, limit %d, total_count %d, total_pages %d; want %d, %d, %d, %d",
					page, limit, total, pageCount, tc.page, tc.limit, accounts, tc.pageCount)
			}
			if len(p.TopAccounts) != tc.items {
				t.Errorf("got %d top accounts, want %d", len(p.TopAccounts), tc.items)
			}
		})
	}

	for _, limit := range []int{1, 7, 20, 45, 100} {
		t.Run(fmt.Sprintf("pages of %d cover every top account once", limit), func(t *testing.T) {
			var seen []string
			for page := 1; ; page++ {
				p := taList(t, f, fmt.Sprintf("?page=%d&limit=%d", page, limit))
				ids := p.externalIDs(t)
				if len(ids) == 0 {
					break
				}
				if len(ids) > limit {
					t.Fatalf("page %d has %d top accounts, want at most %d", page, len(ids), limit)
				}
				seen = append(seen, ids...)
				if page > accounts+1 {
					t.Fatalf("paging did not end after %d pages", page)
				}
			}
			slices.Sort(seen)
			if !slices.Equal(seen, all) {
				t.Errorf("pages held %v, want each of %v once", seen, all)
			}
		})
	}

	t.Run("every listed top account is the one Get answers", func(t *testing.T) {
		for _, ta := range taList(t, f, "?limit=100").TopAccounts {
			wid := str(t, ta, "wid")
			taWantAccount(t, "Get "+wid, taGet(t, f, wid), wid, str(t, ta, "external_id"), str(t, ta, "name"))
		}
	})
}

func TestListTopAccountsWhenThereAreNone(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	p := taList(t, f, "")
	page, limit, total, pageCount := p.pages(t)
	if len(p.TopAccounts) != 0 || page != 1 || limit != 20 || total != 0 || pageCount != 0 {
		t.Errorf("got %d top accounts, page %d, limit %d, total_count %d, total_pages %d; want 0, 1, 20, 0, 0",
			len(p.TopAccounts), page, limit, total, pageCount)
	}
}

func TestListTopAccountsRefusesInvalidPageAndLimit(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	f.addTopAccount("ONE", "One family")
	// The specification: `limit` integer optional 1 to 100; its messages for List are
	// `Missing required parameters` and `Missing one of the required parameters`. It gives no
	// message for an out-of-range or non-integer value; those below are the sandbox's.
	const (
		missingOne = "Missing one of the required parameters"
		limitRange = "limit must be an integer from 1 to 100"
		tooLarge   = "Limit can't be more than 100"
		badPage    = "page must be a positive integer"
	)
	for _, tc := range []struct {
		name, query, message string
	}{
		{name: "page sent without a value is Missing one of the required parameters", query: "?page=", message: missingOne},
		{name: "limit sent without a value is Missing one of the required parameters", query: "?limit=", message: missingOne},
		{name: "limit 101 is over the largest page of 100", query: "?limit=101", message: tooLarge},
		{name: "limit 1000, the document list's largest page, is over the top-account limit", query: "?limit=1000", message: tooLarge},
		{name: "limit 1001 is refused", query: "?limit=1001", message: tooLarge},
		{name: "limit 0 is below the smallest page", query: "?limit=0", message: limitRange},
		{name: "negative limit is refused", query: "?limit=-1", message: limitRange},
		{name: "non-integer limit is refused", query: "?limit=twenty", message: limitRange},
		{name: "fractional limit is refused", query: "?limit=2.5", message: limitRange},
		{name: "page 0 is refused", query: "?page=0", message: badPage},
		{name: "negative page is refused", query: "?page=-3", message: badPage},
		{name: "non-integer page is refused", query: "?page=first", message: badPage},
		{name: "fractional page is refused", query: "?page=1.5", message: badPage},
		{name: "an invalid page is refused even with a valid limit", query: "?page=0&limit=10", message: badPage},
		{name: "an invalid limit is refused even with a valid page", query: "?page=1&limit=500", message: tooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			taOn(f, t).v2("GET", taCollection+tc.query, nil).wantError(t, http.StatusBadRequest, tc.message)
		})
	}
}

func TestAddTopAccount(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	r := f.v2("POST", taCollection, map[string]any{"external_id": "ADD-1", "name": "Add family"}).wantOK(t)
	taWantJSON(t, r)
	first := r.object(t)
	taWantKeys(t, "Add Top Account response", first, "wid", "external_id", "name")
	wid := str(t, first, "wid")
	taWantAccount(t, "Add Top Account response", first, wid, "ADD-1", "Add family")
	if wid == "" || len(wid) > advisorspec.MaxWID {
		t.Errorf("wid %q has %d characters, want 1 to %d", wid, len(wid), advisorspec.MaxWID)
	}
	taWantAccount(t, "Get after Add", taGet(t, f, wid), wid, "ADD-1", "Add family")

	// The collection path without its trailing slash is the same endpoint.
	second := f.v2("POST", strings.TrimSuffix(taCollection, "/"), map[string]any{"external_id": "ADD-2", "name": "Add family"}).wantOK(t).object(t)
	if str(t, second, "wid") == wid {
		t.Errorf("two top accounts got the same wid %s", wid)
	}
	if got := taList(t, f, "").externalIDs(t); !slices.Contains(got, "ADD-1") || !slices.Contains(got, "ADD-2") || len(got) != 2 {
		t.Errorf("list holds %v, want ADD-1 and ADD-2", got)
	}
}

func TestAddTopAccountRules(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	const (
		missingAll  = "Missing required parameters"
		missingName = "Missing name parameter"
	)
	valid := func(changes map[string]any) map[string]any {
		b := map[string]any{"external_id": "RULE", "name": "Rules family"}
		for k, v := range changes {
			if v == (taRemove{}) {
				delete(b, k)
				continue
			}
			b[k] = v
		}
		return b
	}
	n := 0
	unique := func() string { n++; return fmt.Sprintf("RULE-%d", n) }
	for _, tc := range []struct {
		name    string
		body    any
		message string // empty: the add succeeds
	}{
		// The specification: external_id and name both required; 400 `Missing required
		// parameters` or `Missing name parameter`.
		{name: "both fields missing is Missing required parameters", body: map[string]any{}, message: missingAll},
		{name: "an empty body is Missing required parameters", body: nil, message: missingAll},
		{name: "name missing is Missing name parameter", body: valid(map[string]any{"name": taRemove{}}), message: missingName},
		{name: "empty name is Missing name parameter", body: valid(map[string]any{"name": ""}), message: missingName},
		{name: "blank name is Missing name parameter", body: valid(map[string]any{"name": " \t "}), message: missingName},
		{name: "null name is Missing name parameter", body: valid(map[string]any{"name": nil}), message: missingName},
		// The specification lists no "Missing external_id parameter"; of its two messages for
		// Add, the one for a missing external_id is Missing required parameters.
		{name: "external_id missing is Missing required parameters", body: valid(map[string]any{"external_id": taRemove{}}), message: missingAll},
		{name: "empty external_id is Missing required parameters", body: valid(map[string]any{"external_id": ""}), message: missingAll},
		{name: "blank external_id is Missing required parameters", body: valid(map[string]any{"external_id": "   "}), message: missingAll},
		{name: "null external_id is Missing required parameters", body: valid(map[string]any{"external_id": nil}), message: missingAll},
		{name: "blank external_id and blank name are Missing required parameters", body: map[string]any{"external_id": " ", "name": " "}, message: missingAll},

		// Field lengths: external_id max 50, name max 255, counted in characters. The messages
		// for an over-long or mistyped field are the sandbox's (the specification: "400 ...
		// invalid payload").
		{name: "external_id of 50 characters is accepted", body: valid(map[string]any{"external_id": strings.Repeat("e", 50)})},
		{name: "external_id limit counts characters, not bytes", body: valid(map[string]any{"external_id": strings.Repeat("é", 50)})},
		{name: "external_id of 51 characters is refused", body: valid(map[string]any{"external_id": strings.Repeat("x", 51)}),
			message: "external_id must be at most 50 characters"},
		{name: "name of 255 characters is accepted", body: valid(map[string]any{"name": strings.Repeat("n", 255)})},
		{name: "name limit counts characters, not bytes", body: valid(map[string]any{"name": strings.Repeat("ü", 255)})},
		{name: "name of 256 characters is refused", body: valid(map[string]any{"name": strings.Repeat("n", 256)}),
			message: "name must be at most 255 characters"},
		{name: "name that is not a string is refused", body: valid(map[string]any{"name": 42}), message: "name must be a string"},
		{name: "external_id that is not a string is refused", body: valid(map[string]any{"external_id": 1234}), message: "external_id must be a string"},
		{name: "wid is assigned by the service", body: valid(map[string]any{"wid": "my-wid"}), message: "wid is assigned by the service and cannot be set"},
		{name: "unknown field is refused", body: valid(map[string]any{"colour": "blue"}), message: "colour is not a top account field"},

		// Malformed JSON is an invalid payload: 400.
		{name: "truncated JSON is refused", body: `{"external_id": "RULE", "name":`, message: "Request body must be a JSON object"},
		{name: "a JSON array is refused", body: `[{"external_id": "RULE", "name": "Rules family"}]`, message: "Request body must be a JSON object"},
		{name: "a JSON string is refused", body: `"RULE"`, message: "Request body must be a JSON object"},
		{name: "JSON null is refused", body: `null`, message: "Request body must be a JSON object"},
		{name: "two JSON objects are refused", body: `{"external_id": "RULE", "name": "a"}{"external_id": "RULE", "name": "b"}`,
			message: "Request body must be a single JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if m, ok := body.(map[string]any); ok && tc.message == "" && m["external_id"] == "RULE" {
				m["external_id"] = unique()
			}
			before := taCount(t, f)
			r := taOn(f, t).v2("POST", taCollection, body)
			after := taCount(t, f)
			if tc.message != "" {
				r.wantError(t, http.StatusBadRequest, tc.message)
				if after != before {
					t.Errorf("a refused add left %d top accounts, want %d", after, before)
				}
				return
			}
			r.wantOK(t)
			if after != before+1 {
				t.Errorf("got %d top accounts after the add, want %d", after, before+1)
			}
			m := body.(map[string]any)
			got := taGet(t, f, str(t, r.object(t), "wid"))
			taWantAccount(t, "Get after Add", got, str(t, got, "wid"), m["external_id"].(string), m["name"].(string))
		})
	}
}

// taRemove, as a value in a body's changes, removes the key.
type taRemove struct{}

func TestAddTopAccountDuplicateExternalIDIsConflict(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	existing := f.addTopAccount("DUP-1", "First family")
	f.addTopAccount("DUP-2", "Second family")
	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{name: "same external_id, another name, is 409 with the existing wid", body: map[string]any{"external_id": "DUP-1", "name": "Impostor family"}},
		{name: "same external_id and name is 409 with the existing wid", body: map[string]any{"external_id": "DUP-1", "name": "First family"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := taOn(f, t).v2("POST", taCollection, tc.body)
			// README: the top-account 409 body is {"message": ..., "wid": "<existing wid>"}.
			r.wantError(t, http.StatusConflict, "Container with this externalId already exists")
			m := r.object(t)
			taWantKeys(t, "409 body", m, "message", "wid")
			if m["wid"] != existing {
				t.Errorf("409 carries wid %#v, want the existing top account's %q", m["wid"], existing)
			}
			if n := taCount(t, f); n != 2 {
				t.Errorf("got %d top accounts after the conflict, want 2", n)
			}
			taWantAccount(t, "existing top account", taGet(t, f, existing), existing, "DUP-1", "First family")
		})
	}
	t.Run("an external_id freed by an update can be added again", func(t *testing.T) {
		g := taOn(f, t)
		g.v2("PUT", taPath(existing), map[string]any{"external_id": "DUP-1-RENAMED"}).wantOK(t)
		wid := g.addTopAccount("DUP-1", "New holder")
		if wid == existing {
			t.Errorf("the new top account got the old wid %s", wid)
		}
		r := g.v2("POST", taCollection, map[string]any{"external_id": "DUP-1-RENAMED", "name": "x"})
		r.wantError(t, http.StatusConflict, "Container with this externalId already exists")
		if got := r.object(t)["wid"]; got != existing {
			t.Errorf("409 carries wid %#v, want %q, the top account that now has the external_id", got, existing)
		}
	})
}

func TestUpdateTopAccount(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	for _, tc := range []struct {
		name              string
		body              map[string]any
		wantExt, wantName string
	}{
		{name: "name alone changes the name and keeps external_id", body: map[string]any{"name": "Renamed family"},
			wantExt: "UPD", wantName: "Renamed family"},
		{name: "external_id alone changes external_id and keeps the name", body: map[string]any{"external_id": "UPD-NEW"},
			wantExt: "UPD-NEW", wantName: "Update family"},
		{name: "both change together", body: map[string]any{"external_id": "UPD-BOTH", "name": "Both family"},
			wantExt: "UPD-BOTH", wantName: "Both family"},
		{name: "setting external_id to its own value is no conflict", body: map[string]any{"external_id": "UPD", "name": "Same id family"},
			wantExt: "UPD", wantName: "Same id family"},
		{name: "a null field is left as it was", body: map[string]any{"external_id": nil, "name": "Null id family"},
			wantExt: "UPD", wantName: "Null id family"},
		{name: "name of 255 characters is accepted", body: map[string]any{"name": strings.Repeat("n", 255)},
			wantExt: "UPD", wantName: strings.Repeat("n", 255)},
		{name: "external_id of 50 characters is accepted", body: map[string]any{"external_id": strings.Repeat("e", 50)},
			wantExt: strings.Repeat("e", 50), wantName: "Update family"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := taOn(f, t)
			wid := g.addTopAccount("UPD", "Update family")
			t.Cleanup(func() {
				// Free external_id "UPD" for the next case.
				g.v2("PUT", taPath(wid), map[string]any{"external_id": "DONE-" + wid[:min(len(wid), 40)]}).wantOK(t)
			})
			r := g.v2("PUT", taPath(wid), tc.body).wantOK(t)
			taWantJSON(t, r)
			m := r.object(t)
			taWantKeys(t, "Update Top Account response", m, "wid", "name", "external_id")
			taWantAccount(t, "Update Top Account response", m, wid, tc.wantExt, tc.wantName)
			taWantAccount(t, "Get after Update", taGet(t, f, wid), wid, tc.wantExt, tc.wantName)
		})
	}
}

func TestUpdateTopAccountRules(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("KEEP", "Keep family")
	const atLeastOne = "At least one of name or external_id must be provided"
	for _, tc := range []struct {
		name    string
		path    string // default: the top account
		body    any
		status  int // default 400
		message string
	}{
		// The specification: body external_id optional, name optional; at least one.
		{name: "an empty object is At least one of name or external_id must be provided", body: map[string]any{}, message: atLeastOne},
		{name: "an empty body is At least one of name or external_id must be provided", body: nil, message: atLeastOne},
		{name: "null fields are no fields", body: map[string]any{"name": nil, "external_id": nil}, message: atLeastOne},
		{name: "blank fields are no fields", body: map[string]any{"name": "  ", "external_id": ""}, message: atLeastOne},
		// Only name and external_id are mutable; the messages are the sandbox's.
		{name: "wid cannot be changed", body: map[string]any{"wid": "another-wid"}, message: "wid is assigned by the service and cannot be set"},
		{name: "wid cannot be changed alongside a valid name", body: map[string]any{"wid": "another-wid", "name": "x"}, message: "wid is assigned by the service and cannot be set"},
		{name: "unknown field is refused", body: map[string]any{"colour": "blue"}, message: "colour is not a top account field"},
		{name: "name of 256 characters is refused", body: map[string]any{"name": strings.Repeat("n", 256)}, message: "name must be at most 255 characters"},
		{name: "external_id of 51 characters is refused", body: map[string]any{"external_id": strings.Repeat("e", 51)}, message: "external_id must be at most 50 characters"},
		{name: "name that is not a string is refused", body: map[string]any{"name": true}, message: "name must be a string"},
		{name: "truncated JSON is refused", body: `{"name":`, message: "Request body must be a JSON object"},
		{name: "a JSON array is refused", body: `[]`, message: "Request body must be a JSON object"},
		// 404 `Container not found` for an unknown wid.
		{name: "unknown wid is Container not found", path: taPath("no-such-wid"), body: map[string]any{"name": "x"},
			status: http.StatusNotFound, message: "Container not found"},
		// The specification's messages for Update are `Missing required parameters` and
		// `At least one of name or external_id must be provided`; `Missing wid parameter` is
		// Get's, so a missing wid on Update is Missing required parameters.
		{name: "no wid is Missing required parameters", path: taCollection, body: map[string]any{"name": "x"},
			message: "Missing required parameters"},
		{name: "blank wid is Missing required parameters", path: taPath("%20"), body: map[string]any{"name": "x"},
			message: "Missing required parameters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = taPath(wid)
			}
			status := tc.status
			if status == 0 {
				status = http.StatusBadRequest
			}
			taOn(f, t).v2("PUT", path, tc.body).wantError(t, status, tc.message)
			taWantAccount(t, "top account after a refused update", taGet(t, f, wid), wid, "KEEP", "Keep family")
			if n := taCount(t, f); n != 1 {
				t.Errorf("got %d top accounts, want 1", n)
			}
		})
	}
}

func TestUpdateTopAccountExternalIDConflict(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	a := f.addTopAccount("CONF-A", "A family")
	b := f.addTopAccount("CONF-B", "B family")
	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{name: "taking another top account's external_id is 409 with that top account's wid", body: map[string]any{"external_id": "CONF-A"}},
		{name: "a conflicting external_id refuses the whole update, name included", body: map[string]any{"external_id": "CONF-A", "name": "Changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := taOn(f, t).v2("PUT", taPath(b), tc.body)
			r.wantError(t, http.StatusConflict, "Container with this externalId already exists")
			// README: the top-account 409 body is {"message": ..., "wid": "<existing wid>"}.
			m := r.object(t)
			taWantKeys(t, "409 body", m, "message", "wid")
			if m["wid"] != a {
				t.Errorf("409 carries wid %#v, want %q, the top account that has the external_id", m["wid"], a)
			}
			taWantAccount(t, "A after the conflict", taGet(t, f, a), a, "CONF-A", "A family")
			taWantAccount(t, "B after the conflict", taGet(t, f, b), b, "CONF-B", "B family")
		})
	}
}

func TestTopAccountMethodsNotAllowed(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("STAY", "Stay family")
	// "Deleting top accounts through the API is unsupported, because the operation is
	// irreversible." The 405 message is the sandbox's.
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{name: "DELETE of a top account is not allowed", method: "DELETE", path: taPath(wid)},
		{name: "DELETE of an unknown top account is not allowed either", method: "DELETE", path: taPath("no-such-wid")},
		{name: "DELETE of the collection is not allowed", method: "DELETE", path: taCollection},
		{name: "PATCH of a top account is not allowed", method: "PATCH", path: taPath(wid), body: map[string]any{"name": "Patched"}},
		{name: "POST to a top account is not allowed", method: "POST", path: taPath(wid), body: map[string]any{"external_id": "X", "name": "Posted"}},
		{name: "PATCH of the collection is not allowed", method: "PATCH", path: taCollection, body: map[string]any{"name": "Patched"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := taOn(f, t).v2(tc.method, tc.path, tc.body)
			r.wantError(t, http.StatusMethodNotAllowed, "Method Not Allowed")
			allow := r.header.Get("Allow")
			if !strings.Contains(allow, "GET") || strings.Contains(allow, tc.method) {
				t.Errorf("Allow is %q, want the path's methods: GET and not %s", allow, tc.method)
			}
			taWantAccount(t, "top account after "+tc.method, taGet(t, f, wid), wid, "STAY", "Stay family")
			if n := taCount(t, f); n != 1 {
				t.Errorf("got %d top accounts, want 1", n)
			}
		})
	}
}

package gateway_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Connections, as the cursor connections specification describes them and issue 27 asks:
// "`topAccounts`, a family's `contacts`, `documents` ... follow the cursor connections
// specification (`edges { cursor node }`, `pageInfo`, `first`/`after`, and `last`/`before` where
// the upstream allows it) ... Cursors are opaque and a tampered cursor is a clear
// `BAD_USER_INPUT`."

// connPage is a page of a connection as the tests read it: the nodes' ids, the edges' cursors
// and pageInfo.
type connPage struct {
	Edges []struct {
		Cursor string
		Node   struct{ ID string }
	}
	PageInfo struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

func (p connPage) ids() []string {
	out := []string{}
	for _, e := range p.Edges {
		out = append(out, e.Node.ID)
	}
	return out
}

// check fails unless the page's pageInfo cursors are its first and last edges' ("startCursor
// and endCursor must be the cursors corresponding to the first and last nodes in edges").
func (p connPage) check(t *testing.T, where string) {
	t.Helper()
	n := len(p.Edges)
	switch {
	case n == 0 && (p.PageInfo.StartCursor != nil || p.PageInfo.EndCursor != nil):
		t.Errorf("%s: an empty page with cursors %v, %v; want null", where, p.PageInfo.StartCursor, p.PageInfo.EndCursor)
	case n > 0 && (p.PageInfo.StartCursor == nil || *p.PageInfo.StartCursor != p.Edges[0].Cursor):
		t.Errorf("%s: startCursor %v, want the first edge's %q", where, p.PageInfo.StartCursor, p.Edges[0].Cursor)
	case n > 0 && (p.PageInfo.EndCursor == nil || *p.PageInfo.EndCursor != p.Edges[n-1].Cursor):
		t.Errorf("%s: endCursor %v, want the last edge's %q", where, p.PageInfo.EndCursor, p.Edges[n-1].Cursor)
	}
}

// pagesBothWays walks the connection read answers at each size, forward and back: each way
// gives all, once each in order, and the same cursors as the other way ("Cursors are opaque"
// and stable).
func pagesBothWays(t *testing.T, read func(vars map[string]any) connPage, sizes []int, all []string) {
	t.Helper()
	for _, size := range sizes {
		for _, back := range []bool{false, true} {
			t.Run(fmt.Sprintf("size %d back %v", size, back), func(t *testing.T) {
				ids, cursors := walk(t, read, size, back, 10)
				if !slices.Equal(ids, all) {
					t.Errorf("ids %v, want %v once each in order", ids, all)
				}
				_, other := walk(t, read, size, !back, 10)
				if !slices.Equal(cursors, other) {
					t.Errorf("cursors %v one way, %v the other; want the same", cursors, other)
				}
			})
		}
	}
}

// walk pages a connection forward (first/after) or back (last/before), size at a time, through
// read, which answers the page for the variables; it returns the ids in list order and each
// page's cursors.
func walk(t *testing.T, read func(vars map[string]any) connPage, size int, back bool, max int) (ids []string, cursors []string) {
	t.Helper()
	vars := map[string]any{"first": size}
	if back {
		vars = map[string]any{"last": size}
	}
	for n := 0; ; n++ {
		if n > max {
			t.Fatalf("still paging after %d pages", n)
		}
		p := read(vars)
		p.check(t, fmt.Sprintf("page %d", n))
		if len(p.Edges) > size {
			t.Errorf("page %d: %d edges, want at most %d", n, len(p.Edges), size)
		}
		var pc []string
		for _, e := range p.Edges {
			pc = append(pc, e.Cursor)
		}
		more := p.PageInfo.HasNextPage
		if back {
			ids = append(p.ids(), ids...)
			cursors = append(pc, cursors...)
			more = p.PageInfo.HasPreviousPage
		} else {
			ids = append(ids, p.ids()...)
			cursors = append(cursors, pc...)
		}
		if !more {
			return ids, cursors
		}
		if back {
			vars["before"] = *p.PageInfo.StartCursor
		} else {
			vars["after"] = *p.PageInfo.EndCursor
		}
	}
}

// topAccountListCalls counts List Top Accounts calls among recorded requests.
func topAccountListCalls(recorded []string) int {
	n := 0
	for _, r := range recorded {
		if path, _, _ := strings.Cut(r, "?"); path == "GET /v2/top-accounts/" || path == "GET /v2/top-accounts" {
			n++
		}
	}
	return n
}

const topAccountsConnQuery = `query($first: Int, $after: String, $last: Int, $before: String) {
  topAccounts(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id: externalId } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`

func TestTopAccountsPageForwardAndBackWithCursors(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	taSeed(t, up, 7)
	all := []string{"TA-1", "TA-2", "TA-3", "TA-4", "TA-5", "TA-6", "TA-7"}
	read := func(vars map[string]any) connPage {
		var got struct{ TopAccounts connPage }
		gw.post(t, topAccountsConnQuery, vars).ok(t, &got)
		return got.TopAccounts
	}
	pagesBothWays(t, read, []int{1, 2, 3, 7, 100}, all)

	t.Run("a page one of the service's pages holds costs one call", func(t *testing.T) {
		first := read(map[string]any{"first": 2})
		for _, tc := range []struct {
			name string
			vars map[string]any
			ids  []string
			// calls are the List Top Accounts calls the page costs.
			calls int
		}{
			{"first after an aligned cursor", map[string]any{"first": 2, "after": first.Edges[1].Cursor}, []string{"TA-3", "TA-4"}, 1},
			{"first after an unaligned cursor", map[string]any{"first": 2, "after": first.Edges[0].Cursor}, []string{"TA-2", "TA-3"}, 1},
			{"last before a cursor", map[string]any{"last": 1, "before": first.Edges[1].Cursor}, []string{"TA-1"}, 1},
			// last without before needs the list's length: one call tells it and holds a short list.
			{"last of a list longer than last", map[string]any{"last": 2}, []string{"TA-6", "TA-7"}, 2},
			{"last of a list shorter than last", map[string]any{"last": 50}, all, 1},
		} {
			up.ResetRequests()
			p := read(tc.vars)
			if !slices.Equal(p.ids(), tc.ids) {
				t.Errorf("%s: %v, want %v", tc.name, p.ids(), tc.ids)
			}
			if n := topAccountListCalls(up.Requests()); n != tc.calls {
				t.Errorf("%s: %d List Top Accounts calls, want %d", tc.name, n, tc.calls)
			}
		}
	})

	t.Run("the numbered pages have cursors too", func(t *testing.T) {
		var got struct{ TopAccounts connPage }
		gw.post(t, `{ topAccounts(page: 2, limit: 3) { edges { cursor node { id: externalId } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, nil).ok(t, &got)
		got.TopAccounts.check(t, "page 2")
		next := read(map[string]any{"first": 3, "after": *got.TopAccounts.PageInfo.EndCursor})
		if !slices.Equal(got.TopAccounts.ids(), all[3:6]) || !slices.Equal(next.ids(), all[6:]) {
			t.Errorf("page 2 of 3 is %v and after it %v, want %v and %v", got.TopAccounts.ids(), next.ids(), all[3:6], all[6:])
		}
		if !got.TopAccounts.PageInfo.HasPreviousPage || !got.TopAccounts.PageInfo.HasNextPage {
			t.Errorf("page 2: pageInfo %+v, want a page before and after", got.TopAccounts.PageInfo)
		}
	})
}

const contactsConnQuery = `query($wid: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  topAccount(wid: $wid) {
    contactsConnection(first: $first, after: $after, last: $last, before: $before) {
      totalCount
      edges { cursor node { ... on ContactCard { id: externalId } } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
    contacts { ... on ContactCard { externalId } }
  }
}`

func TestContactsConnectionPagesTheFamilysCardsForwardAndBack(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := up.family(t, "CONN", 9)
	var all []string
	read := func(vars map[string]any) connPage {
		vars["wid"] = wid
		var got struct {
			TopAccount struct {
				ContactsConnection connPage
				Contacts           []struct{ ExternalID string }
			}
		}
		up.ResetRequests()
		gw.post(t, contactsConnQuery, vars).ok(t, &got)
		// The service lists a family's cards in one call, shared with contacts.
		if n := countRequests(up.Requests(), "GET /v2/top-accounts/"+wid+"/contacts/"); n != 1 {
			t.Errorf("%d List Contacts calls for a page and the list, want 1", n)
		}
		all = all[:0]
		for _, c := range got.TopAccount.Contacts {
			all = append(all, c.ExternalID)
		}
		return got.TopAccount.ContactsConnection
	}
	for _, size := range []int{1, 4, 9, 1000} {
		for _, back := range []bool{false, true} {
			t.Run(fmt.Sprintf("size %d back %v", size, back), func(t *testing.T) {
				ids, _ := walk(t, read, size, back, 20)
				if len(ids) != 9 || !slices.Equal(ids, all) {
					t.Errorf("ids %v, want the 9 cards of contacts in its order %v", ids, all)
				}
			})
		}
	}
	t.Run("without first or last, every card", func(t *testing.T) {
		p := read(map[string]any{})
		if !slices.Equal(p.ids(), all) || p.PageInfo.HasNextPage || p.PageInfo.HasPreviousPage {
			t.Errorf("%v %+v, want every card %v on one page", p.ids(), p.PageInfo, all)
		}
	})
}

func countRequests(recorded []string, want string) int {
	n := 0
	for _, r := range recorded {
		if path, _, _ := strings.Cut(r, "?"); path == want || path+"/" == want {
			n++
		}
	}
	return n
}

// Every connection refuses a cursor it did not make, and a page size beyond the upstream's,
// naming the argument, before anything reaches the upstream.
func TestConnectionsRefuseForgedForeignOversizedAndTamperedInputs(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	taSeed(t, up, 3)
	wid := up.family(t, "BAD-INPUT", 4)
	other := up.family(t, "OTHER", 4)
	for i := range 3 {
		docAdd(t, up, wid, map[string]any{"name": fmt.Sprintf("Doc %d", i), "extension": "pdf", "category": "miscellaneous", "sub_category": "uncategorized"})
		docAdd(t, up, other, map[string]any{"name": fmt.Sprintf("Doc %d", i), "extension": "pdf", "category": "miscellaneous", "sub_category": "uncategorized"})
	}
	const (
		taQ   = `query($first: Int, $after: String, $last: Int, $before: String) { topAccounts(first: $first, after: $after, last: $last, before: $before) { edges { cursor } } }`
		docQ  = `query($wid: ID!, $first: Int, $after: String) { topAccount(wid: $wid) { documents(first: $first, after: $after) { edges { cursor } } } }`
		contQ = `query($wid: ID!, $first: Int, $after: String, $last: Int, $before: String) { topAccount(wid: $wid) { contactsConnection(first: $first, after: $after, last: $last, before: $before) { edges { cursor } } } }`
	)
	cursorOf := func(q string, w string) string {
		var got struct {
			TopAccounts struct{ Edges []struct{ Cursor string } }
			TopAccount  struct {
				Documents, ContactsConnection struct{ Edges []struct{ Cursor string } }
			}
		}
		gw.post(t, q, map[string]any{"wid": w, "first": 1}).ok(t, &got)
		for _, e := range [][]struct{ Cursor string }{got.TopAccounts.Edges, got.TopAccount.Documents.Edges, got.TopAccount.ContactsConnection.Edges} {
			if len(e) > 0 {
				return e[0].Cursor
			}
		}
		t.Fatalf("no cursor from %s", q)
		return ""
	}
	taCursor, docCursor, contCursor := cursorOf(taQ, ""), cursorOf(docQ, wid), cursorOf(contQ, wid)
	otherDoc, otherCont := cursorOf(docQ, other), cursorOf(contQ, other)
	tamper := func(c string) string {
		b := []byte(c)
		i := len(b) / 2
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	oversized := strings.Repeat("A", 2000)
	const (
		forgedMsg  = " is not a cursor the gateway made, or it was changed"
		foreignMsg = " is a cursor of "
		otherMsg   = " is a cursor of another list of "
		bigMsg     = " is not a cursor: it is 2000 characters long, and a cursor is at most 1024"
	)
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		field, want string
	}{
		{"topAccounts: a forged after", taQ, map[string]any{"after": "MTA"}, "after", "after" + forgedMsg},
		{"topAccounts: a tampered after", taQ, map[string]any{"after": tamper(taCursor)}, "after", "after" + forgedMsg},
		{"topAccounts: a tampered before", taQ, map[string]any{"last": 1, "before": tamper(taCursor)}, "before", "before" + forgedMsg},
		{"topAccounts: a documents cursor", taQ, map[string]any{"after": docCursor}, "after", "after" + foreignMsg + "TopAccount.documents, not of Query.topAccounts"},
		{"topAccounts: an oversized before", taQ, map[string]any{"before": oversized}, "before", "before" + bigMsg},
		{"topAccounts: first of zero", taQ, map[string]any{"first": 0}, "first", "first must be from 1 to 100, got 0"},
		{"topAccounts: first beyond the service's page size", taQ, map[string]any{"first": 101}, "first", "first must be from 1 to 100, got 101"},
		{"topAccounts: last beyond the service's page size", taQ, map[string]any{"last": 101}, "last", "last must be from 1 to 100, got 101"},
		{"topAccounts: first and last", taQ, map[string]any{"first": 1, "last": 1}, "last", "first and last can't be given together"},
		{"topAccounts: page with a cursor", `query($a: String) { topAccounts(page: 2, after: $a) { edges { cursor } } }`, map[string]any{"a": taCursor}, "page", "page can't be combined with first, after, last or before"},

		{"documents: a forged after", docQ, map[string]any{"wid": wid, "after": "bm8tc3VjaC1kb2N1bWVudA"}, "after", "after" + forgedMsg},
		{"documents: a tampered after", docQ, map[string]any{"wid": wid, "after": tamper(docCursor)}, "after", "after" + forgedMsg},
		{"documents: a topAccounts cursor", docQ, map[string]any{"wid": wid, "after": taCursor}, "after", "after" + foreignMsg + "Query.topAccounts, not of TopAccount.documents"},
		{"documents: another family's cursor", docQ, map[string]any{"wid": wid, "after": otherDoc}, "after", "after" + otherMsg + "TopAccount.documents"},
		{"documents: an oversized after", docQ, map[string]any{"wid": wid, "after": oversized}, "after", "after" + bigMsg},

		{"contacts: a forged before", contQ, map[string]any{"wid": wid, "before": "AQMAAAAAAAAAAAA"}, "before", "before" + forgedMsg},
		{"contacts: a tampered after", contQ, map[string]any{"wid": wid, "after": tamper(contCursor)}, "after", "after" + forgedMsg},
		{"contacts: a documents cursor", contQ, map[string]any{"wid": wid, "after": docCursor}, "after", "after" + foreignMsg + "TopAccount.documents, not of TopAccount.contactsConnection"},
		{"contacts: another family's cursor", contQ, map[string]any{"wid": wid, "before": otherCont}, "before", "before" + otherMsg + "TopAccount.contactsConnection"},
		{"contacts: an oversized after", contQ, map[string]any{"wid": wid, "after": oversized}, "after", "after" + bigMsg},
		{"contacts: first beyond 1000", contQ, map[string]any{"wid": wid, "first": 1001}, "first", "first must be from 1 to 1000, got 1001"},
		{"contacts: last of zero", contQ, map[string]any{"wid": wid, "last": 0}, "last", "last must be from 1 to 1000, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.ResetRequests()
			r := gw.post(t, tc.query, tc.vars)
			e := r.wantError(t, "BAD_USER_INPUT", "")
			if e.Extensions["field"] != tc.field || !strings.HasPrefix(e.Message, tc.want) {
				t.Errorf("got %q on %v, want %q on %s", e.Message, e.Extensions["field"], tc.want, tc.field)
			}
			for _, req := range up.Requests() {
				if strings.Contains(req, "/documents") || strings.Contains(req, "/contacts") || topAccountListCalls([]string{req}) > 0 {
					t.Errorf("the upstream was asked %s; want the cursor refused before", req)
				}
			}
		})
	}
}

// Another firm's cursor reaches nothing: each firm's cursors are bound to it.
func TestAnotherFirmsCursorIsRefused(t *testing.T) {
	t.Parallel()
	tf := newTwoFirms(t, nil)
	gw := tf.gw
	var a struct {
		TopAccounts struct{ Edges []struct{ Cursor string } }
		TopAccount  struct {
			Documents struct{ Edges []struct{ Cursor string } }
		}
	}
	gw.postVars(t, tf.callerA, `query($w: ID!) { topAccounts(first: 1) { edges { cursor } } topAccount(wid: $w) { documents(first: 1) { edges { cursor } } } }`,
		map[string]any{"w": tf.hartwell}).ok(t, &a)
	if len(a.TopAccounts.Edges) == 0 || len(a.TopAccount.Documents.Edges) == 0 {
		t.Fatalf("firm A has no top account or document to take a cursor of: %+v", a)
	}
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		want        string
	}{
		{"A's topAccounts cursor", `query($c: String) { topAccounts(first: 1, after: $c) { edges { cursor } } }`,
			map[string]any{"c": a.TopAccounts.Edges[0].Cursor}, "after is a cursor of another list of Query.topAccounts"},
		{"A's documents cursor on B's family", `query($w: ID!, $c: String) { topAccount(wid: $w) { documents(first: 1, after: $c) { edges { cursor } } } }`,
			map[string]any{"w": tf.castellan, "c": a.TopAccount.Documents.Edges[0].Cursor}, "after is a cursor of another list of TopAccount.documents"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := gw.postVars(t, tf.callerB, tc.query, tc.vars).wantError(t, "BAD_USER_INPUT", "")
			if !strings.HasPrefix(e.Message, tc.want) || e.Extensions["field"] != "after" {
				t.Errorf("got %q on %v, want %q on after", e.Message, e.Extensions["field"], tc.want)
			}
		})
	}
}

const eventHistoryQuery = `query($first: Int, $after: String, $last: Int, $before: String, $filter: EventFilter) {
  eventHistory(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
    edges { cursor node { id: wid } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`

// "Connections everywhere a list pages ... and event history": eventHistory pages the stored
// events forward and back, its cursors are the events' places in the log, and a cursor it did
// not make is refused naming the argument.
func TestEventHistoryPagesForwardAndBackWithCursors(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	taSeed(t, up, 1)
	var all []string
	for i := range 7 {
		wid := fmt.Sprintf("w-hist-%d", i)
		gw.mustDeliver(t, progress(wid, 10*i))
		all = append(all, wid)
		gw.mustDeliver(t, progress("w-other", i)) // filtered out below
	}
	filter := map[string]any{"wids": all}
	read := func(vars map[string]any) connPage {
		vars["filter"] = filter
		var got struct{ EventHistory connPage }
		gw.post(t, eventHistoryQuery, vars).ok(t, &got)
		return got.EventHistory
	}
	pagesBothWays(t, read, []int{1, 2, 3, 7, 1000}, all)
	t.Run("by default, the latest 50", func(t *testing.T) {
		var got struct{ EventHistory connPage }
		gw.post(t, `{ eventHistory { edges { cursor node { id: wid } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, nil).ok(t, &got)
		if n := len(got.EventHistory.Edges); n != 14 || got.EventHistory.PageInfo.HasPreviousPage {
			t.Errorf("%d events, pageInfo %+v; want all 14, none before", n, got.EventHistory.PageInfo)
		}
	})

	taCursor := func() string {
		var got struct {
			TopAccounts struct{ Edges []struct{ Cursor string } }
		}
		gw.post(t, `{ topAccounts(first: 1) { edges { cursor } } }`, nil).ok(t, &got)
		if len(got.TopAccounts.Edges) == 0 {
			t.Fatal("no top account to take a cursor of")
		}
		return got.TopAccounts.Edges[0].Cursor
	}()
	first := read(map[string]any{"first": 1})
	good := first.Edges[0].Cursor
	tampered := []byte(good)
	tampered[len(tampered)/2] ^= 'A' ^ 'B'
	for _, tc := range []struct {
		name        string
		vars        map[string]any
		field, want string
	}{
		{"a topAccounts cursor", map[string]any{"after": taCursor}, "after", "after is a cursor of Query.topAccounts, not of Query.eventHistory"},
		{"a forged after", map[string]any{"after": "1700000000000-0"}, "after", "after is not a cursor the gateway made, or it was changed"},
		{"a tampered before", map[string]any{"before": string(tampered)}, "before", "before is not a cursor the gateway made, or it was changed"},
		{"an oversized after", map[string]any{"after": strings.Repeat("A", 2000)}, "after", "after is not a cursor: it is 2000 characters long"},
		{"first beyond 1000", map[string]any{"first": 1001}, "first", "first must be from 1 to 1000, got 1001"},
		{"last of zero", map[string]any{"last": 0}, "last", "last must be from 1 to 1000, got 0"},
		{"first and last", map[string]any{"first": 1, "last": 1}, "last", "first and last can't be given together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := gw.post(t, eventHistoryQuery, tc.vars).wantError(t, "BAD_USER_INPUT", "")
			if e.Extensions["field"] != tc.field || !strings.HasPrefix(e.Message, tc.want) {
				t.Errorf("got %q on %v, want %q on %s", e.Message, e.Extensions["field"], tc.want, tc.field)
			}
		})
	}
}

package cursor

import (
	"fmt"

	"github.com/advisorhq/gateway/internal/apperr"
)

// Args are a connection's paging arguments as the client gave them (nil when left out).
type Args struct {
	First, Last   *int
	After, Before *string
}

// Given reports whether any paging argument was given.
func (a Args) Given() bool {
	return a.First != nil || a.Last != nil || a.After != nil || a.Before != nil
}

// Offsets pages a list by position: a cursor holds an item's offset in the list.
type Offsets struct {
	Kind  Kind
	Scope string
	// Max is the most items a page may hold, Default how many it holds when neither first nor
	// last is given (0: the whole list).
	Max, Default int
}

// maxOffset bounds the offset a cursor may hold, far beyond any list the service keeps.
const maxOffset = 1 << 31

// Request is a page asked for by offset: the items after offset After (−1: from the start) and
// before offset Before (−1: to the end), the first First of them or the last Last.
type Request struct {
	After, Before int
	First, Last   int
}

// Parse checks a's arguments and reads its cursors. first and last are refused together: the
// specification's algorithm allows both, but no client means it.
func (o Offsets) Parse(a Args) (Request, error) {
	r := Request{After: -1, Before: -1}
	var err error
	for _, n := range []struct {
		name string
		v    *int
		to   *int
	}{{"first", a.First, &r.First}, {"last", a.Last, &r.Last}} {
		if n.v == nil {
			continue
		}
		if *n.v < 1 || *n.v > o.Max {
			return r, apperr.Input(n.name, fmt.Sprintf("%s must be from 1 to %d, got %d", n.name, o.Max, *n.v))
		}
		*n.to = *n.v
	}
	if r.First > 0 && r.Last > 0 {
		return r, apperr.Input("last", "first and last can't be given together: page forward with first and after, or back with last and before")
	}
	if r.First == 0 && r.Last == 0 {
		r.First = o.Default
	}
	if a.After != nil {
		if r.After, err = DecodeOffset("after", o.Kind, o.Scope, *a.After, maxOffset); err != nil {
			return r, err
		}
	}
	if a.Before != nil {
		if r.Before, err = DecodeOffset("before", o.Kind, o.Scope, *a.Before, maxOffset); err != nil {
			return r, err
		}
	}
	return r, nil
}

// Window returns the offsets [start, end) of the page in a list of total items, as the
// specification's algorithm pages it: after and before bound the list, then first keeps the
// first of what is left and last the last.
func (r Request) Window(total int) (start, end int) {
	start, end = r.After+1, total
	if r.Before >= 0 && r.Before < end {
		end = r.Before
	}
	start = min(start, end)
	if r.First > 0 {
		end = min(end, start+r.First)
	}
	if r.Last > 0 {
		start = max(start, end-r.Last)
	}
	return start, end
}

// Guess is the range to read of a list whose length is not yet known: the page itself when
// that does not need the length, else the first Last items (which tell the length and hold the
// page when the list is short).
func (r Request) Guess() (start, end int) {
	start = r.After + 1
	switch {
	case r.First > 0:
		end = start + r.First
		if r.Before >= 0 {
			end = min(end, r.Before)
		}
	case r.Before >= 0:
		start = max(start, r.Before-r.Last)
		end = r.Before
	default:
		end = start + r.Last
	}
	return start, max(start, end)
}

// PageInfo is where a page stands in its list, as the specification's PageInfo says it.
type PageInfo struct {
	HasNextPage, HasPreviousPage bool
	StartCursor, EndCursor       *string
}

// Info returns the PageInfo of the page [start, end) of a list of total items.
func (o Offsets) Info(start, end, total int) PageInfo {
	p := PageInfo{HasPreviousPage: start > 0, HasNextPage: end < total}
	if end > start {
		s, e := o.Cursor(start), o.Cursor(end-1)
		p.StartCursor, p.EndCursor = &s, &e
	}
	return p
}

// Cursor is the cursor of the item at offset i.
func (o Offsets) Cursor(i int) string { return EncodeOffset(o.Kind, o.Scope, i) }

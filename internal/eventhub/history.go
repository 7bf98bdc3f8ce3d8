package eventhub

import (
	"context"
	"errors"
	"fmt"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/cursor"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/eventlog"
)

// DefaultHistory is how many events a page of History holds when neither first nor last is
// given: the latest 50, as recentEvents.
const DefaultHistory = 50

// History returns the page of firm's stored events matching filter that a asks for, oldest
// first: the last n before the cursor before (the latest, without it), or the first n after the
// cursor after (from the oldest kept, without it). A cursor holds its event's id in the log,
// bound to the firm. Like Recent, a page looks at maxScan events of all firms at most.
//
// hasPreviousPage when paging forward and hasNextPage when paging back are true when the page
// starts after (ends before) a cursor, which names an event of the list; the other is read, one
// event past the page.
func (h *Hub) History(ctx context.Context, firm string, filter *event.Filter, a cursor.Args) (*event.Connection, error) {
	pages := cursor.Offsets{Kind: cursor.Events, Scope: firm, Max: MaxRecent}
	for _, n := range []struct {
		name string
		v    *int
	}{{"first", a.First}, {"last", a.Last}} {
		if n.v != nil && (*n.v < 1 || *n.v > MaxRecent) {
			return nil, apperr.Input(n.name, fmt.Sprintf("%s must be from 1 to %d, got %d", n.name, MaxRecent, *n.v))
		}
	}
	if a.First != nil && a.Last != nil {
		return nil, apperr.Input("last", "first and last can't be given together: page forward with first and after, or back with last and before")
	}
	after, err := eventCursor("after", pages, a.After)
	if err != nil {
		return nil, err
	}
	before, err := eventCursor("before", pages, a.Before)
	if err != nil {
		return nil, err
	}
	if err := filter.Check(); err != nil {
		return nil, err
	}
	out := &event.Connection{Nodes: []event.Event{}, Scope: firm}
	if firm == "" {
		return out, nil
	}
	forward := a.First != nil
	n := DefaultHistory
	switch {
	case a.First != nil:
		n = *a.First
	case a.Last != nil:
		n = *a.Last
	}
	match := func(rec eventlog.Record) (event.Event, bool) {
		ev, err := h.decode(rec)
		if err != nil || ev.Header().Firm != firm || !filter.Match(ev) {
			return nil, false
		}
		return ev, true
	}
	var found []event.Event
	more := false
	if forward {
		from, scanned := after, 0
	scanForward:
		for scanned < maxScan {
			recs, err := h.log.After(ctx, from, readBatch)
			if err != nil {
				return nil, historyError(err)
			}
			for _, rec := range recs {
				if before != "" && !eventlog.Less(rec.ID, before) {
					break scanForward
				}
				if ev, ok := match(rec); ok {
					if len(found) == n {
						more = true
						break scanForward
					}
					found = append(found, ev)
				}
			}
			scanned += len(recs)
			if len(recs) < readBatch {
				break
			}
			from = recs[len(recs)-1].ID
		}
		out.PageInfo.HasNextPage, out.PageInfo.HasPreviousPage = more, after != ""
	} else {
		from, scanned := before, 0
	scanBack:
		for scanned < maxScan {
			recs, err := h.log.Before(ctx, from, readBatch)
			if err != nil {
				return nil, historyError(err)
			}
			for _, rec := range recs {
				if after != "" && !eventlog.Less(after, rec.ID) {
					break scanBack
				}
				if ev, ok := match(rec); ok {
					if len(found) == n {
						more = true
						break scanBack
					}
					found = append(found, ev)
				}
			}
			scanned += len(recs)
			if len(recs) < readBatch {
				break
			}
			from = recs[len(recs)-1].ID
		}
		for i, j := 0, len(found)-1; i < j; i, j = i+1, j-1 {
			found[i], found[j] = found[j], found[i]
		}
		out.PageInfo.HasPreviousPage, out.PageInfo.HasNextPage = more, before != ""
	}
	out.Nodes = found
	if len(found) > 0 {
		s := cursor.Encode(cursor.Events, firm, found[0].Header().ID)
		e := cursor.Encode(cursor.Events, firm, found[len(found)-1].Header().ID)
		out.PageInfo.StartCursor, out.PageInfo.EndCursor = &s, &e
	}
	return out, nil
}

// eventCursor reads a cursor of eventHistory given as arg: the id of an event in the log, or ""
// without one.
func eventCursor(arg string, pages cursor.Offsets, c *string) (string, error) {
	if c == nil {
		return "", nil
	}
	id, err := cursor.Decode(arg, pages.Kind, pages.Scope, *c)
	if err != nil {
		return "", err
	}
	if _, perr := eventlog.ParseID(id); perr != nil {
		return "", apperr.Input(arg, fmt.Sprintf("%s is not a cursor the gateway made, or it was changed: pass a cursor of %s's edges or pageInfo as it was given", arg, pages.Kind))
	}
	return id, nil
}

func historyError(err error) error {
	if errors.Is(err, eventlog.ErrUnavailable) {
		return unavailable(err)
	}
	return fmt.Errorf("read the event history: %w", err)
}

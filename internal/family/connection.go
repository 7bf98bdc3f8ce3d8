package family

import (
	"context"
	"fmt"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/cursor"
)

// MaxContactPage is the most cards a page of contactsConnection holds. The service lists a
// family's cards in one call, so this bounds the answer, not the call.
const MaxContactPage = 1000

func topAccountOffsets(firm string) cursor.Offsets {
	return cursor.Offsets{Kind: cursor.TopAccounts, Scope: firm, Max: advisorspec.MaxTopPageLimit, Default: advisorspec.DefaultTopPageLimit}
}

// TopAccountsPage answers topAccounts: the numbered page page of limit, or, when any cursor
// argument is given, the page a asks for (TopAccountsConnection). page and limit are refused
// beside the cursor arguments unless they are left at their defaults (1 and 20), which is how
// they arrive when a client leaves them out.
func (s *Service) TopAccountsPage(ctx context.Context, firm string, page, limit int, a cursor.Args) (*TopAccountConnection, error) {
	if !a.Given() {
		return s.TopAccounts(ctx, firm, page, limit)
	}
	switch {
	case page != 1:
		return nil, apperr.Input("page", "page can't be combined with first, after, last or before: page with the cursors alone")
	case limit != advisorspec.DefaultTopPageLimit:
		return nil, apperr.Input("limit", "limit can't be combined with first, after, last or before: use first (or last) for the page size")
	}
	return s.TopAccountsConnection(ctx, firm, a)
}

// TopAccountsConnection returns the page of top accounts that a's cursors and sizes ask for. The
// service pages by number, so a cursor holds an offset: a page that one of the service's pages
// holds costs one call (the smallest page size that holds it, up to 100), any other two. last
// without before needs the list's length first: the first call reads the first last items, which
// tells it, and is the page when the list is that short.
//
// firm is the caller's firm, which the cursors are bound to.
func (s *Service) TopAccountsConnection(ctx context.Context, firm string, a cursor.Args) (*TopAccountConnection, error) {
	offsets := topAccountOffsets(firm)
	r, err := offsets.Parse(a)
	if err != nil {
		return nil, err
	}
	gs, ge := r.Guess()
	got, total, err := s.topAccountRange(ctx, gs, ge)
	if err != nil {
		return nil, err
	}
	start, end := r.Window(total)
	if start < gs || end > gs+len(got) {
		if got, total, err = s.topAccountRange(ctx, start, end); err != nil {
			return nil, err
		}
		gs = start
		// The list may have changed between the calls: keep to what the second one read.
		start, end = r.Window(total)
		start, end = max(start, gs), min(end, gs+len(got))
		end = max(start, end)
	}
	size := max(r.First, r.Last)
	p := topAccountConnection(advisorspec.TopAccountPage{
		TopAccounts: got[start-gs : end-gs],
		Pagination:  advisorspec.Pagination{Page: start/size + 1, Limit: size, TotalCount: total, TotalPages: (total + size - 1) / size},
	}, start, end, offsets)
	return p, nil
}

// topAccountRange reads the top accounts at offsets [start, end) (fewer at the list's end) and
// the list's length: with one call when one of the service's pages holds them all, else with
// two pages of end−start.
func (s *Service) topAccountRange(ctx context.Context, start, end int) ([]advisorspec.TopAccount, int, error) {
	n := max(end-start, 1)
	for limit := n; limit <= advisorspec.MaxTopPageLimit; limit++ {
		if start/limit == (start+n-1)/limit {
			p, err := s.api.TopAccounts(ctx, start/limit+1, limit)
			if err != nil {
				return nil, 0, fmt.Errorf("list top accounts: %w", err)
			}
			from := min(start%limit, len(p.TopAccounts))
			return p.TopAccounts[from:min(from+(end-start), len(p.TopAccounts))], p.Pagination.TotalCount, nil
		}
	}
	page := start/n + 1
	first, err := s.api.TopAccounts(ctx, page, n)
	if err != nil {
		return nil, 0, fmt.Errorf("list top accounts: %w", err)
	}
	second, err := s.api.TopAccounts(ctx, page+1, n)
	if err != nil {
		return nil, 0, fmt.Errorf("list top accounts: %w", err)
	}
	all := append(first.TopAccounts, second.TopAccounts...)
	from := min(start%n, len(all))
	return all[from:min(from+(end-start), len(all))], second.Pagination.TotalCount, nil
}

func topAccountConnection(p advisorspec.TopAccountPage, start, end int, offsets cursor.Offsets) *TopAccountConnection {
	info := offsets.Info(start, end, p.Pagination.TotalCount)
	out := &TopAccountConnection{
		Nodes: make([]*TopAccount, 0, len(p.TopAccounts)),
		PageInfo: OffsetPageInfo{
			HasNextPage: info.HasNextPage, HasPreviousPage: info.HasPreviousPage,
			StartCursor: info.StartCursor, EndCursor: info.EndCursor,
			Page: p.Pagination.Page, Limit: p.Pagination.Limit,
			TotalCount: p.Pagination.TotalCount, TotalPages: p.Pagination.TotalPages,
		},
		offsets: offsets,
		start:   start,
	}
	for _, t := range p.TopAccounts {
		out.Nodes = append(out.Nodes, topAccountFrom(t))
	}
	return out
}

// ContactsConnection returns the page of an owner's cards (of types, if any) that a asks for.
// The service lists the cards in one call, the roster read once per request, so the page is cut
// from it: every page costs that one call. A cursor holds the card's offset among the cards of
// types, bound to the firm and the owner.
func (s *Service) ContactsConnection(ctx context.Context, firm string, owner Owner, types []ContactType, a cursor.Args) (*ContactConnection, error) {
	offsets := cursor.Offsets{Kind: cursor.Contacts, Scope: firm + "\x00" + owner.TopAccount, Max: MaxContactPage}
	r, err := offsets.Parse(a)
	if err != nil {
		return nil, err
	}
	cards, err := s.Contacts(ctx, owner, types)
	if err != nil {
		return nil, err
	}
	// With neither first nor last (Default 0), the window is every card between the cursors.
	start, end := r.Window(len(cards))
	return &ContactConnection{
		Nodes:      cards[start:end],
		TotalCount: len(cards),
		PageInfo:   offsets.Info(start, end, len(cards)),
		offsets:    offsets,
		start:      start,
	}, nil
}

package bulk

import (
	"context"
	"fmt"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
)

// Records is the service's records as one load's validation asks about them, through the
// Advisor API. A client exists when its contacts can be listed; its cards are then known too,
// since a People row names cards of its own client. A top account is found by its external_id
// in the list of top accounts, read once, and its cards with it. A card exists when it is a
// card of a client or top account the load has named so far: rows name their owner before
// anything else, so the owner has been looked up by then.
//
// A Records serves one validation: it keeps what it learned, and it is not safe for
// concurrent use, as bulk.Validate does not need it to be. Its context must carry the
// advisor client's request cache (advisor.WithCache), as every read does; each owner looked
// up is one request, so a load naming many existing owners needs a larger upstream budget
// than one GraphQL operation has (advisor.WithBudget).
type Records struct {
	api *advisor.Client
	// topAccounts maps the top accounts' external_ids to their wids, once listed.
	topAccounts map[string]string
	cards       map[string]bool // the external_ids of the cards of the owners looked up
}

// NewRecords asks api.
func NewRecords(api *advisor.Client) *Records {
	return &Records{api: api, cards: map[string]bool{}}
}

// topAccountPage is as many top accounts as the API lists at once.
const topAccountPage = 100

func (r *Records) Exists(ctx context.Context, kind advisorspec.RefKind, id string) (bool, error) {
	switch kind {
	case advisorspec.RefClient:
		contacts, err := r.api.ClientContacts(ctx, advisor.ClientRef{Ref: id})
		if apperr.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		r.learn(contacts)
		return true, nil
	case advisorspec.RefTopAccount:
		if r.topAccounts == nil {
			if err := r.listTopAccounts(ctx); err != nil {
				return false, err
			}
		}
		wid, ok := r.topAccounts[id]
		if !ok {
			return false, nil
		}
		contacts, err := r.api.Contacts(ctx, wid)
		if err != nil {
			return false, err
		}
		r.learn(contacts)
		return true, nil
	case advisorspec.RefCard:
		return r.cards[id], nil
	}
	return false, fmt.Errorf("unknown kind of record %s", kind)
}

func (r *Records) learn(contacts []advisorspec.Contact) {
	for _, c := range contacts {
		if c.ExternalID != "" {
			r.cards[c.ExternalID] = true
		}
	}
}

func (r *Records) listTopAccounts(ctx context.Context) error {
	found := map[string]string{}
	for page := 1; ; page++ {
		p, err := r.api.TopAccounts(ctx, page, topAccountPage)
		if err != nil {
			return err
		}
		for _, ta := range p.TopAccounts {
			found[ta.ExternalID] = ta.WID
		}
		if page >= p.Pagination.TotalPages || len(p.TopAccounts) == 0 {
			break
		}
	}
	r.topAccounts = found
	return nil
}

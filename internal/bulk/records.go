package bulk

import (
	"context"
	"fmt"
	"strings"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
)

// Records is the service's records as one load's validation asks about them, through the
// Advisor API. A client exists when its contacts can be listed; its cards are then known too,
// since a People row names cards of its own client. A top account is found by its external_id
// in the list of top accounts, read once, and its cards with it. A card is found among the
// cards of its owner, by external_id.
//
// A Records serves one validation: it keeps what it learned, and it is not safe for
// concurrent use, as bulk.Validate does not need it to be. Its context must carry the
// advisor client's request cache (advisor.WithCache), as every read does; each owner looked
// up is one request, so a load naming many existing owners needs a larger upstream budget
// than one GraphQL operation has (advisor.WithBudget).
type Records struct {
	api   *advisor.Client
	scope Scope
	// topAccounts maps the top accounts' external_ids to their wids, once listed.
	topAccounts map[string]string
	// cards maps each owner found to the types of its cards, by external_id.
	cards map[advisorspec.RowRef]map[string]advisorspec.ContactType
}

// Scope is the advisor and team a load's client lookups act for: the v1 client paths are
// scoped by advisor and team, and an API user that reaches several must name them ("advisor_id
// string optional, required when the API user can access multiple advisors"). Empty fields name
// none, which serves an API user that reaches one.
type Scope struct {
	AdvisorID, TeamID string
}

// NewRecords asks api, looking clients up as scope's advisor and team.
func NewRecords(api *advisor.Client, scope Scope) *Records {
	return &Records{api: api, scope: scope, cards: map[advisorspec.RowRef]map[string]advisorspec.ContactType{}}
}

// topAccountPage is as many top accounts as the API lists at once.
const topAccountPage = 100

// Exists reports whether a client or top account exists, and learns its cards.
func (r *Records) Exists(ctx context.Context, kind advisorspec.RefKind, id string) (bool, error) {
	switch kind {
	case advisorspec.RefClient:
		contacts, err := r.api.ClientContacts(ctx, advisor.ClientRef{Ref: id, AdvisorID: r.scope.AdvisorID, TeamID: r.scope.TeamID})
		if apperr.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		r.learn(kind, id, contacts)
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
		r.learn(kind, id, contacts)
		return true, nil
	}
	return false, fmt.Errorf("unknown kind of owner %s", kind)
}

// Card reports whether owner has a card that id names, and its type; an owner not looked up
// yet is looked up first.
func (r *Records) Card(ctx context.Context, owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool, error) {
	key := advisorspec.RowRef{Kind: owner.Kind, ID: owner.ID}
	cards, ok := r.cards[key]
	if !ok {
		found, err := r.Exists(ctx, owner.Kind, owner.ID)
		if err != nil || !found {
			return "", false, err
		}
		cards = r.cards[key]
	}
	typ, found := cards[id]
	return typ, found, nil
}

// advisorProbe is a client id no firm uses: listing its cards while naming no advisor is
// answered "not found" by a service that serves the API user one advisor and team, and refused
// with "advisor_id is required when the API user can access multiple advisors" (or team_id) by
// one that serves several. One cheap request, and the same words the service would refuse each
// row of a Clients file with.
const advisorProbe = "gateway-bulk-advisor-probe"

// ClientsRefusal asks the service whether the API user reaches several advisors or teams, so
// that a Clients file, which names neither, would be refused; the reason is in the schema's
// words (advisorId). The answer depends on the firm, not on the caller: the service applies a
// file as the firm's API user, whatever advisor the gateway's caller acts for.
func (r *Records) ClientsRefusal(ctx context.Context) (string, error) {
	_, err := r.api.ClientContacts(ctx, advisor.ClientRef{Ref: advisorProbe})
	if err == nil || apperr.IsNotFound(err) {
		return "", nil
	}
	if e, ok := apperr.As(err); ok && e.Code == apperr.BadUserInput && e.Upstream != nil &&
		strings.Contains(e.Upstream.Message, "is required when the API user can access multiple") {
		return e.Message, nil
	}
	return "", fmt.Errorf("ask whether the API user reaches several advisors: %w", err)
}

func (r *Records) learn(kind advisorspec.RefKind, id string, contacts []advisorspec.Contact) {
	cards := make(map[string]advisorspec.ContactType, len(contacts))
	for _, c := range contacts {
		if c.ExternalID != "" {
			cards[c.ExternalID] = advisorspec.ContactType(c.Type)
		}
	}
	r.cards[advisorspec.RowRef{Kind: kind, ID: id}] = cards
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

package family

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/memo"
)

// loaderWait is how long a loader collects keys before it calls its batch function. Resolvers
// of one level of a query ask within microseconds of each other; the library's default of
// 16 ms would add that much to every level of nesting. Equal keys share one load whatever the
// window, so a short one costs no extra upstream calls.
const loaderWait = 100 * time.Microsecond

// Loaders are one request's view of the family graph: each owner's cards are listed once and
// every reference by external id is answered from that list.
type Loaders struct {
	svc *Service
	// rosters lists each owner's cards once. It needs no batching window: each owner is one
	// list call, and concurrent askers for the same owner share it.
	rosters memo.Group[Owner, *roster]
	// cards answers references by (owner, external id), primed from each roster.
	cards *dataloader.Loader[cardKey, Contact]
}

type cardKey struct {
	Owner      Owner
	ExternalID string
}

type loadersKey struct{}

// WithLoaders returns a context carrying a fresh set of loaders. Install one per request, and
// one per event of a subscription, so that nothing is served stale across them.
func (s *Service) WithLoaders(ctx context.Context) context.Context {
	return context.WithValue(ctx, loadersKey{}, s.newLoaders())
}

// loaders returns the request's loaders, or a fresh set when the context has none: correct,
// only without sharing.
func (s *Service) loaders(ctx context.Context) *Loaders {
	if l := loadersFrom(ctx); l != nil {
		return l
	}
	return s.newLoaders()
}

func loadersFrom(ctx context.Context) *Loaders {
	l, _ := ctx.Value(loadersKey{}).(*Loaders)
	return l
}

// errNoLoaders is a request that reached the family graph without its loaders: the HTTP
// handler (or the subscription) did not install them.
var errNoLoaders = apperr.Wrap(apperr.Internal, "Internal error", errors.New("the family graph's loaders are not installed in the context"))

func (s *Service) newLoaders() *Loaders {
	l := &Loaders{svc: s}
	l.cards = dataloader.NewBatchedLoader(func(ctx context.Context, keys []cardKey) []*dataloader.Result[Contact] {
		results := make([]*dataloader.Result[Contact], len(keys))
		for i, k := range keys {
			r, err := l.roster(ctx, k.Owner)
			switch c, ok := r.indexOrNil()[k.ExternalID]; {
			case err != nil:
				results[i] = &dataloader.Result[Contact]{Error: err}
			case !ok:
				results[i] = &dataloader.Result[Contact]{Error: apperr.New(apperr.NotFound,
					fmt.Sprintf("No contact card has the external id %q", k.ExternalID))}
			default:
				results[i] = &dataloader.Result[Contact]{Data: c}
			}
		}
		return results
	}, dataloader.WithWait[cardKey, Contact](loaderWait))
	return l
}

// roster returns an owner's cards and graph, listing them the first time the request asks
// and priming the card loader with each of them.
func (l *Loaders) roster(ctx context.Context, owner Owner) (*roster, error) {
	return l.rosters.Do(owner, func() (*roster, error) {
		r, err := l.svc.listRoster(ctx, owner)
		if err != nil {
			return nil, err
		}
		for _, c := range r.cards {
			if id := c.card().ExternalID; id != nil {
				l.cards.Prime(ctx, cardKey{Owner: owner, ExternalID: *id}, c)
			}
		}
		return r, nil
	})
}

func (r *roster) indexOrNil() index {
	if r == nil {
		return nil
	}
	return r.index
}

// clear forgets everything loaded, after a write in the same request.
func (l *Loaders) clear() {
	l.rosters.Clear()
	l.cards.ClearAll()
}

// roster returns an owner's cards and their graph.
func (s *Service) roster(ctx context.Context, owner Owner) (*roster, error) {
	return s.loaders(ctx).roster(ctx, owner)
}

// Contact is the card the reference names, or nil when it dangles. It is a method rather than a
// resolver so gqlgen calls it inline: nearly every reference is answered from memory, and a
// goroutine per reference would cost more than the answer.
func (r *ContactRef) Contact(ctx context.Context) (Contact, error) {
	if r.looked {
		return r.resolved, nil
	}
	l := loadersFrom(ctx)
	if l == nil {
		return nil, errNoLoaders
	}
	c, err := l.cards.Load(ctx, cardKey{Owner: r.Owner, ExternalID: r.ExternalID})()
	if apperr.IsNotFound(err) {
		return nil, nil
	}
	return c, err
}

// Relationships are the card's relationships in both directions, from its owner's roster (a
// method, inline, for the same reason as ContactRef.Contact).
func (c *Card) Relationships(ctx context.Context) ([]*Relationship, error) {
	l := loadersFrom(ctx)
	if l == nil {
		return nil, errNoLoaders
	}
	r, err := l.roster(ctx, c.Owner)
	if err != nil {
		return nil, err
	}
	return r.touching(c), nil
}

// listRoster lists an owner's cards from the upstream.
func (s *Service) listRoster(ctx context.Context, owner Owner) (*roster, error) {
	list, err := s.listContacts(ctx, owner)
	if err != nil {
		return nil, err
	}
	cards, err := contactsFrom(owner, list)
	if err != nil {
		return nil, err
	}
	return newRoster(cards), nil
}

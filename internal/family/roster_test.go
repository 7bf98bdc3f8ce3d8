package family_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/family"
)

// rosterAPI serves one top account "w" of cards and counts the calls made of it.
type rosterAPI struct {
	family.API
	cards []advisorspec.Contact
	mu    sync.Mutex
	lists int
	gets  int
}

func (f *rosterAPI) Contacts(_ context.Context, wid string) ([]advisorspec.Contact, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	if wid != "w" {
		return nil, apperr.New(apperr.NotFound, "Top account not found")
	}
	return f.cards, nil
}

func (f *rosterAPI) Contact(_ context.Context, _, id string) (advisorspec.Contact, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	for _, c := range f.cards {
		if c.ID == id {
			return c, nil
		}
	}
	return advisorspec.Contact{}, apperr.New(apperr.NotFound, "Contact card not found")
}

func (f *rosterAPI) calls() (lists, gets int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists, f.gets
}

// aFamily is a trust made by two people, one of whom is missing from the roster.
func aFamily() *rosterAPI {
	return &rosterAPI{cards: []advisorspec.Contact{
		{ID: "1", Type: "Individual", ExternalID: "pat"},
		{ID: "2", Type: "Individual", ExternalID: "sam"},
		{ID: "3", Type: "Trust", ExternalID: "trust", TrustCreator: []string{"pat", "gone"}, InitialTrustee: []string{"sam"}},
	}}
}

func externalID(c family.Contact) string {
	if c == nil {
		return "<nil>"
	}
	if id := family.CardOf(c).ExternalID; id != nil {
		return *id
	}
	return ""
}

// Every way into an owner's cards within one request lists them once; references are answered
// from that list, and a reference that dangles is nil.
func TestOneRequestListsAnOwnersCardsOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		do        func(ctx context.Context, svc *family.Service) ([]string, error)
		want      []string
		wantLists int
		wantGets  int
	}{
		{"the cards, then each trust's references", func(ctx context.Context, svc *family.Service) ([]string, error) {
			cards, err := svc.Contacts(ctx, family.OfTopAccount("w"), nil)
			if err != nil {
				return nil, err
			}
			var out []string
			for _, c := range cards {
				if tr, ok := c.(*family.Trust); ok {
					for _, r := range append(tr.TrustCreators(), tr.InitialTrustees()...) {
						out = append(out, externalID(r.Contact))
					}
				}
			}
			return out, nil
		}, []string{"pat", "<nil>", "sam"}, 1, 0},
		{"a card by id with its graph: its references and relationships", func(ctx context.Context, svc *family.Service) ([]string, error) {
			c, err := svc.ContactByID(ctx, family.OfTopAccount("w"), "3", true)
			if err != nil {
				return nil, err
			}
			tr := c.(*family.Trust)
			var out []string
			for _, r := range tr.TrustCreators() {
				out = append(out, externalID(r.Contact))
			}
			for _, rel := range tr.Relationships() {
				out = append(out, string(rel.Role))
			}
			return out, nil
		}, []string{"pat", "<nil>", string(family.RoleTrustCreator), string(family.RoleTrustCreator), string(family.RoleInitialTrustee)}, 1, 1},
		{"a card by id without its graph is read alone", func(ctx context.Context, svc *family.Service) ([]string, error) {
			c, err := svc.ContactByID(ctx, family.OfTopAccount("w"), "3", false)
			if err != nil {
				return nil, err
			}
			tr := c.(*family.Trust)
			var out []string
			for _, r := range tr.TrustCreators() {
				out = append(out, r.ExternalID, externalID(r.Contact))
			}
			return out, nil
		}, []string{"pat", "<nil>", "gone", "<nil>"}, 0, 1},
		{"cards by external id, concurrently", func(ctx context.Context, svc *family.Service) ([]string, error) {
			ids := []string{"pat", "sam", "trust", "gone", "pat", "sam"}
			out := make([]string, len(ids))
			errs := make([]error, len(ids))
			var wg sync.WaitGroup
			for i, id := range ids {
				wg.Go(func() {
					c, err := svc.ContactByExternalID(ctx, family.OfTopAccount("w"), id)
					out[i], errs[i] = externalID(c), err
				})
			}
			wg.Wait()
			return out, errors.Join(errs...)
		}, []string{"pat", "sam", "trust", "<nil>", "pat", "sam"}, 1, 0},
		{"a missing owner's card is nil", func(ctx context.Context, svc *family.Service) ([]string, error) {
			c, err := svc.ContactByExternalID(ctx, family.OfTopAccount("nobody"), "pat")
			return []string{externalID(c)}, err
		}, []string{"<nil>"}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := aFamily()
			got, err := tc.do(advisor.WithCache(context.Background()), family.NewService(api))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if lists, gets := api.calls(); lists != tc.wantLists || gets != tc.wantGets {
				t.Errorf("got %d lists and %d gets, want %d and %d", lists, gets, tc.wantLists, tc.wantGets)
			}
		})
	}
}

// Without the request's cache the family graph fails loudly instead of listing the cards once
// per caller.
func TestWithoutTheRequestsCacheTheGraphFails(t *testing.T) {
	t.Parallel()
	api := aFamily()
	svc := family.NewService(api)
	bare := context.Background()
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"Contacts", func() error { _, err := svc.Contacts(bare, family.OfTopAccount("w"), nil); return err }},
		{"Graph", func() error { _, err := svc.Graph(bare, family.OfTopAccount("w")); return err }},
		{"ContactByExternalID", func() error {
			_, err := svc.ContactByExternalID(bare, family.OfTopAccount("w"), "pat")
			return err
		}},
		{"a card by id with its graph", func() error {
			_, err := svc.ContactByID(bare, family.OfTopAccount("w"), "3", true)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if apperr.CodeOf(err) != apperr.Internal || !errors.Is(err, advisor.ErrNoCache) {
				t.Errorf("got %v, want INTERNAL because of advisor.ErrNoCache", err)
			}
		})
	}
	if lists, _ := api.calls(); lists != 0 {
		t.Errorf("got %d lists, want none", lists)
	}
}

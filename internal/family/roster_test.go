package family_test

import (
	"context"
	"errors"
	"fmt"
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

func (f *rosterAPI) LendContacts(_ context.Context, wid string, use func([]advisorspec.Contact) error) error {
	f.mu.Lock()
	f.lists++
	f.mu.Unlock()
	if wid != "w" {
		return apperr.New(apperr.NotFound, "Top account not found")
	}
	// As the client's pooled scratch, the list's array is reused once use returns: cards that
	// kept it would change with it.
	lent := slices.Clone(f.cards)
	err := use(lent)
	for i := range lent {
		lent[i] = advisorspec.Contact{ID: "reused", Type: "Individual"}
	}
	return err
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

// refsText is a card's reference lists, each reference as its external id and the service id
// of the card it names ("-" when it dangles).
func refsText(c family.Contact) []string {
	var lists [][]*family.ContactRef
	switch v := c.(type) {
	case *family.Trust:
		lists = append(lists, v.TrustCreators(), v.InitialTrustees())
	case *family.Entity:
		for _, o := range v.Ownership {
			lists = append(lists, o.Owners())
		}
	case *family.Will:
		lists = append(lists, v.Testators(), v.Executors())
	case *family.Class:
		if v.CurrentParties != nil {
			for _, p := range v.CurrentParties.Parties {
				lists = append(lists, []*family.ContactRef{p.Party()})
			}
		}
	}
	var out []string
	for i, l := range lists {
		for _, r := range l {
			out = append(out, fmt.Sprintf("%d:%s>%s", i, r.ExternalID, cardID(r.Contact)))
		}
	}
	return out
}

func cardID(c family.Contact) string {
	if c == nil {
		return "-"
	}
	return family.CardOf(c).ContactID
}

// relsText is a card's relationships, each as its role, its ends and its percentage.
func relsText(c family.Contact) []string {
	var out []string
	for _, r := range family.CardOf(c).Relationships() {
		pct := "-"
		if r.Percentage != nil {
			pct = fmt.Sprint(*r.Percentage)
		}
		out = append(out, fmt.Sprintf("%s %s(%s)>%s(%s) %s", r.Role, r.Source.ExternalID, cardID(r.Source.Contact),
			r.Target.ExternalID, cardID(r.Target.Contact), pct))
	}
	return out
}

// A listed card's references and relationships, which the roster works out once for all its
// cards, are those a card read alone looks up one by one: for every kind of reference, one
// that dangles, one to the card itself, and an external id two cards share (the later one is
// the one named).
func TestAListedCardsReferencesAreThoseLookedUpAlone(t *testing.T) {
	t.Parallel()
	pct := 25.0
	api := &rosterAPI{cards: []advisorspec.Contact{
		{ID: "1", Type: "Individual", ExternalID: "pat"},
		{ID: "2", Type: "Individual", ExternalID: "twin"},
		{ID: "3", Type: "Individual", ExternalID: "twin"},
		{ID: "4", Type: "Individual"},
		{ID: "5", Type: "Trust", ExternalID: "trust", TrustCreator: []string{"pat", "gone"}, InitialTrustee: []string{"twin", "trust"}},
		{ID: "6", Type: "Entity", ExternalID: "llc", Ownership: []advisorspec.Ownership{
			{Percentage: 60, OwnerID: "trust"}, {Percentage: 40, Subowners: []string{"pat", "twin", "nobody"}}, {Percentage: 0}}},
		{ID: "7", Type: "Will", ExternalID: "will", Testator: []string{"pat"}, Executor: []string{"llc", "will"}},
		{ID: "8", Type: "Class", ExternalID: "kids", CurrentParties: &advisorspec.CurrentParties{Parties: []advisorspec.Party{
			{ContactID: "twin", DistributionPercentage: &pct}, {ContactID: "gone"}}}},
		{ID: "9", Type: "Class", ExternalID: "none"},
		{ID: "10", Type: "Charity", ExternalID: "fund"},
	}}
	ctx := advisor.WithCache(context.Background())
	svc := family.NewService(api)
	listed, err := svc.Contacts(ctx, family.OfTopAccount("w"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range listed {
		id := family.CardOf(c).ContactID
		alone, err := svc.ContactByID(ctx, family.OfTopAccount("w"), id, true)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := refsText(c), refsText(alone); !slices.Equal(got, want) {
			t.Errorf("card %s's references: listed %q, read alone %q", id, got, want)
		}
		if got, want := relsText(c), relsText(alone); !slices.Equal(got, want) {
			t.Errorf("card %s's relationships: listed %q, read alone %q", id, got, want)
		}
		// The roster encodes its cards' ids once; they are the ids cards read alone have.
		if got, want := family.CardOf(c).ID(), family.CardOf(alone).ID(); got != want {
			t.Errorf("card %s's global id: listed %q, read alone %q", id, got, want)
		}
	}
	// What they are for a few: the trust's, which names itself (one relationship, not two), and
	// those of the two cards that share an external id, of which references name the later.
	for _, tc := range []struct {
		id   string
		text func(family.Contact) []string
		want []string
	}{
		{"5", refsText, []string{"0:pat>1", "0:gone>-", "1:twin>3", "1:trust>5"}},
		{"5", relsText, []string{
			"TRUST_CREATOR trust(5)>pat(1) -", "TRUST_CREATOR trust(5)>gone(-) -",
			"INITIAL_TRUSTEE trust(5)>twin(3) -", "INITIAL_TRUSTEE trust(5)>trust(5) -", "OWNER llc(6)>trust(5) 60",
		}},
		{"3", relsText, []string{"INITIAL_TRUSTEE trust(5)>twin(3) -", "JOINT_OWNER llc(6)>twin(3) 40", "CLASS_PARTY kids(8)>twin(3) 25"}},
		{"2", relsText, nil},
	} {
		i := slices.IndexFunc(listed, func(c family.Contact) bool { return family.CardOf(c).ContactID == tc.id })
		if got := tc.text(listed[i]); !slices.Equal(got, tc.want) {
			t.Errorf("card %s: got %q, want %q", tc.id, got, tc.want)
		}
	}
}

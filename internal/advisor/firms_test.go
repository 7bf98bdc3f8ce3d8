package advisor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
	"github.com/advisorhq/gateway/internal/tenant"
)

func TestACallUsesTheCredentialsOfTheFirmItActsForAndNoneWithout(t *testing.T) {
	srv := sandboxtest.Start(t, sandbox.Options{Seed: 3, Firms: []sandbox.Firm{
		{ID: "firm-a", AccessToken: "token-of-firm-a", BasicCredentials: "a:pass-a"},
		{ID: "firm-b", AccessToken: "token-of-firm-b", BasicCredentials: "b:pass-b"},
	}})
	dir, err := tenant.NewDirectory([]tenant.Firm{
		{ID: "firm-a", AccessToken: "token-of-firm-a", BasicCredentials: "a:pass-a"},
		{ID: "firm-b", AccessToken: "token-of-firm-b", BasicCredentials: "b:pass-b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := advisor.New(advisor.Options{BaseURL: srv.URL, Firms: dir})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := dir.Lookup("firm-a")
	b, _ := dir.Lookup("firm-b")
	bg := advisor.WithCache(context.Background())
	ctxA, ctxB := tenant.WithFirm(bg, a), tenant.WithFirm(bg, b)

	made, err := c.CreateTopAccount(ctxA, "only-in-a", "Only in A")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.TopAccount(ctxA, made.WID); err != nil {
		t.Errorf("firm A reads its own top account: %v", err)
	}
	if _, err := c.TopAccount(ctxB, made.WID); err == nil {
		t.Error("firm B read firm A's top account")
	}

	srv.ResetRequests()
	_, err = c.TopAccounts(bg, 1, 10)
	if !errors.Is(err, tenant.ErrNoFirm) {
		t.Errorf("a call outside any firm: %v, want ErrNoFirm", err)
	}
	stranger := tenant.WithFirm(bg, &tenant.Firm{ID: "firm-z", AccessToken: "made-up"})
	if _, err := c.TopAccounts(stranger, 1, 10); !errors.Is(err, tenant.ErrNoFirm) {
		t.Errorf("a call for a firm the client was not given: %v, want ErrNoFirm", err)
	}
	if got := srv.Requests(); len(got) != 0 {
		t.Errorf("calls without a firm reached the service: %v", got)
	}

	if _, err := advisor.New(advisor.Options{BaseURL: srv.URL, Firms: dir, AccessToken: "t"}); err == nil {
		t.Error("a client with firms and one set of credentials besides was made")
	}
}

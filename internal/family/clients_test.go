package family_test

import (
	"context"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/family"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

// Once the API user reaches a second advisor, an addClient that names none is refused as the
// specification says ("An API user with access to several advisors or teams supplies
// advisor_id and team_id"), and the refusal names the argument the caller sets: advisorId.
func TestAddClientWithoutAnAdvisorNamesTheArgument(t *testing.T) {
	t.Parallel()
	up := sandboxtest.Start(t, sandbox.Options{Seed: 3})
	api, err := advisor.New(advisor.Options{BaseURL: up.URL, AccessToken: sandbox.DefaultAccessToken, BasicCredentials: sandbox.DefaultBasicCredentials})
	if err != nil {
		t.Fatal(err)
	}
	svc := family.NewService(api)
	ctx := advisor.WithCache(context.Background())
	other := "adv-other"
	if _, err := svc.AddClient(ctx, family.ClientInput{ID: "CL-OTHER-1", FirstName: "Ada", LastName: "Other"}, &other, nil); err != nil {
		t.Fatalf("add a client for a second advisor: %v", err)
	}
	_, err = svc.AddClient(ctx, family.ClientInput{ID: "CL-NONE-1", FirstName: "Bo", LastName: "None"}, nil, nil)
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.BadUserInput {
		t.Fatalf("addClient naming no advisor: got %v, want BAD_USER_INPUT", err)
	}
	if !strings.Contains(e.Message, "advisorId is required") || strings.Contains(e.Message, "advisor_id") {
		t.Errorf("message %q should name advisorId, not advisor_id", e.Message)
	}
}

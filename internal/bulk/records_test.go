package bulk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulk"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

// Records asks the service (here the sandbox with its demo data) what exists, and knows a card
// by its owner.
func TestRecordsAskTheServiceWhatExists(t *testing.T) {
	t.Parallel()
	up := sandboxtest.Start(t, sandbox.Options{Seed: 3})
	api, err := advisor.New(advisor.Options{BaseURL: up.URL, AccessToken: sandbox.DefaultAccessToken, BasicCredentials: sandbox.DefaultBasicCredentials})
	if err != nil {
		t.Fatal(err)
	}
	r := bulk.NewRecords(api, bulk.Scope{})
	ctx := advisor.WithCache(context.Background()) // as every request to the gateway has
	for _, tc := range []struct {
		kind advisorspec.RefKind
		id   string
		want bool
	}{
		{advisorspec.RefClient, "CL-1001", true},
		{advisorspec.RefClient, "CL-404", false},
		{advisorspec.RefTopAccount, "HARTWELL-001", true},
		{advisorspec.RefTopAccount, "NOBODY-001", false},
	} {
		got, err := r.Exists(ctx, tc.kind, tc.id)
		if err != nil || got != tc.want {
			t.Errorf("%s %s: got %v, %v; want %v", tc.kind, tc.id, got, err, tc.want)
		}
	}
	hartwell := advisorspec.RowRef{Kind: advisorspec.RefTopAccount, ID: "HARTWELL-001"}
	for _, tc := range []struct {
		owner    advisorspec.RowRef
		id       string
		wantType advisorspec.ContactType
		want     bool
	}{
		{hartwell, "hw-eleanor", advisorspec.Individual, true},
		{hartwell, "hw-nobody", "", false},
		{advisorspec.RowRef{Kind: advisorspec.RefTopAccount, ID: "OKAFOR-002"}, "hw-eleanor", "", false}, // another owner's
		{advisorspec.RowRef{Kind: advisorspec.RefClient, ID: "CL-404"}, "hw-eleanor", "", false},
	} {
		typ, got, err := bulk.NewRecords(api, bulk.Scope{}).Card(ctx, tc.owner, tc.id)
		if err != nil || got != tc.want || typ != tc.wantType {
			t.Errorf("card %s of %s: got %q, %v, %v; want %q, %v", tc.id, tc.owner.ID, typ, got, err, tc.wantType, tc.want)
		}
	}
	up.Close() // the service gone: an error, not "does not exist"
	if _, err := bulk.NewRecords(api, bulk.Scope{}).Exists(advisor.WithCache(context.Background()), advisorspec.RefClient, "CL-1001"); err == nil {
		t.Error("a lookup with the service down said the client does not exist")
	}
}

// The service serves the API user one advisor until a client of a second is added; from then a
// Clients file, which names no advisor, would be refused ("advisor_id ... required when the API
// user can access multiple advisors"), and Records says so in the schema's words.
func TestRecordsAskWhetherTheServiceTakesAClientsFile(t *testing.T) {
	t.Parallel()
	up := sandboxtest.Start(t, sandbox.Options{Seed: 3})
	api, err := advisor.New(advisor.Options{BaseURL: up.URL, AccessToken: sandbox.DefaultAccessToken, BasicCredentials: sandbox.DefaultBasicCredentials})
	if err != nil {
		t.Fatal(err)
	}
	ctx := advisor.WithCache(context.Background())
	if why, err := bulk.NewRecords(api, bulk.Scope{}).ClientsRefusal(ctx); why != "" || err != nil {
		t.Fatalf("one advisor: got %q, %v; want no refusal", why, err)
	}
	other := advisor.ClientRef{Ref: "CL-OTHER", AdvisorID: "adv-other"}
	if _, _, err := api.AddClient(ctx, other, []byte(`{"id":"CL-OTHER","first_name":"A","last_name":"B"}`)); err != nil {
		t.Fatalf("add a client for a second advisor: %v", err)
	}
	want := "advisorId is required when the API user can access multiple advisors"
	if why, err := bulk.NewRecords(api, bulk.Scope{}).ClientsRefusal(advisor.WithCache(context.Background())); why != want || err != nil {
		t.Fatalf("two advisors: got %q, %v; want %q", why, err, want)
	}
	// Nor can a People row's client be looked up without an advisor: an error saying so, never
	// "does not exist".
	if _, err := bulk.NewRecords(api, bulk.Scope{}).Exists(advisor.WithCache(context.Background()), advisorspec.RefClient, "CL-1001"); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a client looked up for two advisors: got %v, want an error saying %q", err, want)
	}
	// Named, the advisor is asked for ("advisor_id ... required when the API user can access
	// multiple advisors"): its client exists, another advisor's is not its.
	scoped := bulk.NewRecords(api, bulk.Scope{AdvisorID: "adv-other"})
	for id, want := range map[string]bool{"CL-OTHER": true, "CL-1001": false} {
		if got, err := scoped.Exists(advisor.WithCache(context.Background()), advisorspec.RefClient, id); got != want || err != nil {
			t.Errorf("client %s as adv-other: got %v, %v; want %v", id, got, err, want)
		}
	}
	up.Close() // the service gone: an error, not an answer
	if _, err := bulk.NewRecords(api, bulk.Scope{}).ClientsRefusal(advisor.WithCache(context.Background())); err == nil {
		t.Error("asking with the service down gave no error")
	}
}

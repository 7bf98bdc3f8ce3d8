package tenant_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/tenant"
)

func TestADirectoryRefusesFirmsThatCouldNotBeToldApart(t *testing.T) {
	tests := []struct {
		name  string
		firms []tenant.Firm
		want  string // "" when accepted
	}{
		{"two firms", []tenant.Firm{{ID: "a", AccessToken: "ta", WebhookKey: "ka"}, {ID: "b", AccessToken: "tb", WebhookKey: "kb"}}, ""},
		{"none", nil, "no firm"},
		{"an id twice", []tenant.Firm{{ID: "a", AccessToken: "ta"}, {ID: "a", AccessToken: "tb"}}, `firm "a": listed twice`},
		{"no id", []tenant.Firm{{AccessToken: "ta"}}, "firm 1: the id is empty"},
		{"no token", []tenant.Firm{{ID: "a"}}, `firm "a": the access token is empty`},
		{"a shared token", []tenant.Firm{{ID: "a", AccessToken: "same"}, {ID: "b", AccessToken: "same"}}, `firm "b": its access token is also firm "a"'s`},
		{"a shared webhook key", []tenant.Firm{{ID: "a", AccessToken: "ta", WebhookKey: "k"}, {ID: "b", AccessToken: "tb", WebhookKey: "k"}}, "webhook key"},
		{"a shared SFTP user", []tenant.Firm{{ID: "a", AccessToken: "ta", SFTP: tenant.SFTPLogin{User: "u"}}, {ID: "b", AccessToken: "tb", SFTP: tenant.SFTPLogin{User: "u"}}}, "SFTP user"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tenant.NewDirectory(tc.firms)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "same"):
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}

func TestAdmitPutsTheCallersFirmInTheContextOrRefuses(t *testing.T) {
	dir, err := tenant.NewDirectory([]tenant.Firm{{ID: "a", AccessToken: "ta"}, {ID: "b", AccessToken: "tb"}})
	if err != nil {
		t.Fatal(err)
	}
	one, _ := tenant.NewDirectory([]tenant.Firm{{ID: "a", AccessToken: "ta"}})
	caller := func(firm string) context.Context {
		return callerauth.WithCaller(context.Background(), callerauth.Caller{AdvisorID: "adv", FirmID: firm})
	}
	tests := []struct {
		name     string
		dir      *tenant.Directory
		ctx      context.Context
		wantFirm string // "" when refused
	}{
		{"a caller of a served firm", dir, caller("b"), "b"},
		{"a caller of another firm", dir, caller("z"), ""},
		{"a firm id differing in case", dir, caller("A"), ""},
		{"no caller, one firm (AUTH_DISABLED)", one, context.Background(), "a"},
		{"no caller, several firms", dir, context.Background(), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &tenant.Policy{Firms: tc.dir}
			ctx, err := p.Admit(tc.ctx)
			f, ok := tenant.FromContext(ctx)
			if tc.wantFirm == "" {
				var r *tenant.Refusal
				if !errors.As(err, &r) || r.Status() != http.StatusForbidden || ok {
					t.Fatalf("got firm %v, error %v; want a 403 refusal and no firm", f, err)
				}
				return
			}
			if err != nil || !ok || f.ID != tc.wantFirm {
				t.Fatalf("got firm %v, error %v; want %s", f, err, tc.wantFirm)
			}
		})
	}
}

func TestACallerActsAsItsOwnAdvisorAndTeamUnlessItHasTheAdminRole(t *testing.T) {
	dir, _ := tenant.NewDirectory([]tenant.Firm{{ID: "a", AccessToken: "ta"}})
	me := callerauth.Caller{AdvisorID: "adv-1", FirmID: "a", TeamID: "team-1"}
	admin := callerauth.Caller{AdvisorID: "adv-9", FirmID: "a", Roles: []string{"viewer", "firm-admin"}}
	tests := []struct {
		name                       string
		adminRole                  string
		caller                     *callerauth.Caller // nil: AUTH_DISABLED
		advisor, team              string
		wantAdvisor, wantTeam, err string
	}{
		{"names nobody", "firm-admin", &me, "", "", "adv-1", "team-1", ""},
		{"names itself", "firm-admin", &me, "adv-1", "team-1", "adv-1", "team-1", ""},
		{"names another advisor", "firm-admin", &me, "adv-2", "", "", "", "advisorId names another advisor"},
		{"names another team", "firm-admin", &me, "", "team-2", "", "", "teamId names another team"},
		{"no admin role configured", "", &admin, "adv-2", "", "", "", "advisorId names another advisor"},
		{"the admin names another", "firm-admin", &admin, "adv-2", "team-2", "adv-2", "team-2", ""},
		{"no caller: the request's words", "", nil, "adv-2", "", "adv-2", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.caller != nil {
				ctx = callerauth.WithCaller(ctx, *tc.caller)
			}
			p := &tenant.Policy{Firms: dir, AdminRole: tc.adminRole}
			a, tm, err := p.ActingFor(ctx, tc.advisor, tc.team)
			if tc.err != "" {
				var e *apperr.Error
				if !errors.As(err, &e) || e.Code != apperr.Forbidden || !strings.Contains(e.Message, tc.err) {
					t.Fatalf("got %v, want FORBIDDEN %q", err, tc.err)
				}
				return
			}
			if err != nil || a != tc.wantAdvisor || tm != tc.wantTeam {
				t.Fatalf("got %q %q %v, want %q %q", a, tm, err, tc.wantAdvisor, tc.wantTeam)
			}
		})
	}
}

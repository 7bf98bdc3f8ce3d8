package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// The sandbox is an identity provider a gateway can verify callers against as it would a
// real one: the tokens it mints verify against its JWKS with the gateway's verifier (a JWKS
// library over golang-jwt, not the sandbox's own code), with the issuer and audience it
// names, and carry the advisor and firm asked for.
func TestTheSandboxMintsTokensTheGatewaysVerifierAccepts(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	ctx := context.Background()
	v, err := callerauth.New(ctx, callerauth.Config{
		JWKSURL: up.URL + "/sandbox/jwks.json", Issuer: sandbox.TokenIssuer, Audience: sandbox.TokenAudience,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close() })
	if err := v.Ready(ctx); err != nil {
		t.Fatalf("the sandbox's JWKS: %v", err)
	}
	got := up.rest(t, http.MethodPost, "/sandbox/token", map[string]any{"advisor": "adv-001", "firm": sandbox.DemoFirmID})
	token, _ := got["token"].(string)
	exp, err := time.Parse(time.RFC3339, got["expires_at"].(string))
	if err != nil || time.Until(exp) < 50*time.Minute {
		t.Fatalf("expires_at %v (%v), want about an hour from now", got["expires_at"], err)
	}
	caller, err := v.Verify(ctx, token)
	if err != nil || caller.AdvisorID != "adv-001" || caller.FirmID != sandbox.DemoFirmID {
		t.Fatalf("verified %+v, %v; want adv-001 at firm-west", caller, err)
	}
	// A token with one byte of its signature changed is refused.
	forged := token[:len(token)-2] + map[bool]string{true: "A", false: "B"}[token[len(token)-2] != 'A'] + token[len(token)-1:]
	if _, err := v.Verify(ctx, forged); err == nil {
		t.Fatal("a forged token verified")
	}
}

func TestTheSandboxRefusesBadTokenRequests(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	for _, tc := range []struct {
		name   string
		body   string
		bearer string
		status int
		want   string
	}{
		{"no bearer token", `{"advisor":"a","firm":"f"}`, "", http.StatusForbidden, "Access Denied"},
		{"no advisor", `{"firm":"f"}`, upstreamToken, http.StatusBadRequest, "advisor is required"},
		{"an empty firm", `{"advisor":"a","firm":""}`, upstreamToken, http.StatusBadRequest, "firm must not be empty"},
		{"another firm than the access token's", `{"advisor":"a","firm":"firm-002"}`, upstreamToken, http.StatusForbidden, "Access Denied"},
		{"an advisor over 255 characters", `{"advisor":"` + strings.Repeat("a", 256) + `","firm":"f"}`, upstreamToken, http.StatusBadRequest, "advisor must be at most 255 characters"},
		{"an unknown member", `{"advisor":"a","firm":"f","role":"admin"}`, upstreamToken, http.StatusBadRequest, "role"},
		{"not JSON", `advisor=a`, upstreamToken, http.StatusBadRequest, "The body must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, up.URL+"/sandbox/token", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+tc.bearer)
			}
			status, out := doJSON(t, req)
			if status != tc.status || !strings.Contains(out["message"].(string), tc.want) {
				t.Fatalf("status %d %v, want %d saying %q", status, out, tc.status, tc.want)
			}
		})
	}
}

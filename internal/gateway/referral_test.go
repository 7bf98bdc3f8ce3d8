package gateway_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
)

const referClientMutation = `mutation($partner: ID!, $input: ReferralInput!) {
  referClient(partnerId: $partner, input: $input) {
    referralToken url partnerId product token
    user { email firstName lastName hasPets maritalStatus address { line1 line2 city state zip } }
  }
}`

const (
	referralKey    = "gw-referral-key"
	referralSecret = "gw-referral-secret"
)

// referralUpstream is a sandbox whose referral endpoint takes the gateway's referral settings.
func referralUpstream(t *testing.T) *upstream {
	t.Helper()
	return startUpstream(t, sandbox.Options{Seed: 11, Empty: true, ReferralAPIKey: referralKey, ReferralSecret: referralSecret})
}

func referralEnv(up *upstream, secret string) map[string]string {
	return map[string]string{"REFERRAL_URL": up.URL, "REFERRAL_API_KEY": referralKey, "REFERRAL_SIGNING_SECRET": secret}
}

func referralInput(user map[string]any) map[string]any {
	u := map[string]any{
		"email": "ada@example.com", "firstName": "Ada", "lastName": "Lovelace", "hasPets": true, "maritalStatus": "ENGAGED",
		"address": map[string]any{"line1": "1 Main St", "city": "Springfield", "state": "IL", "zip": "62701"},
	}
	for k, v := range user {
		u[k] = v
	}
	return map[string]any{"token": "tok-1", "user": u}
}

type referClientAnswer struct {
	ReferClient struct {
		ReferralToken, URL, PartnerID, Product string
		Token                                  *string
		User                                   struct {
			FirstName, MaritalStatus string
			Address                  struct{ Line1, Zip string }
		}
	}
}

func TestReferClientReturnsTheServicesTokenAndAddress(t *testing.T) {
	t.Parallel()
	up := referralUpstream(t)
	gw := newGateway(t, up, referralEnv(up, referralSecret))
	var got referClientAnswer
	gw.post(t, referClientMutation, map[string]any{"partner": "demo-partner", "input": referralInput(nil)}).ok(t, &got)
	r := got.ReferClient
	if len(r.ReferralToken) == 0 || len(r.ReferralToken) > 36 || !strings.HasPrefix(r.URL, up.URL+"/onboarding/demo-partner?") {
		t.Errorf("got token %q url %q, want the sandbox's", r.ReferralToken, r.URL)
	}
	if r.Product != "WILL" || r.PartnerID != "demo-partner" || r.User.MaritalStatus != "ENGAGED" || r.User.Address.Zip != "62701" {
		t.Errorf("got %+v, want the referral echoed with product WILL by default", r)
	}
	if reqs := up.Requests(); len(reqs) != 1 || reqs[0] != "POST /v1/refer/demo-partner" {
		t.Errorf("upstream requests %v, want one referral", reqs)
	}
}

func TestReferClientRefusesWhatTheServiceWouldBeforeCallingIt(t *testing.T) {
	t.Parallel()
	up := referralUpstream(t)
	gw := newGateway(t, up, referralEnv(up, referralSecret))
	cases := []struct {
		name    string
		user    map[string]any
		message string
	}{
		{"a long first name", map[string]any{"firstName": strings.Repeat("x", 101)}, "input.user.firstName must be at most 100 characters"},
		{"a long email", map[string]any{"email": strings.Repeat("x", 321)}, "input.user.email must be at most 320 characters"},
		{"a long zip", map[string]any{"address": map[string]any{"line1": "1", "city": "c", "state": "IL", "zip": "12345678901"}}, "input.user.address.zip must be at most 10 characters"},
		{"a state of three letters", map[string]any{"address": map[string]any{"line1": "1", "city": "c", "state": "ILL", "zip": "1"}}, "input.user.address.state must be at most 2 characters"},
		{"widowed", map[string]any{"maritalStatus": "WIDOWED"}, "input.user.maritalStatus: the referral service takes no WIDOWED; it takes SINGLE, MARRIED, DOMESTIC_PARTNERSHIP, CIVIL_UNION, ENGAGED or OTHER_COMMITTED_RELATIONSHIP"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gw.post(t, referClientMutation, map[string]any{"partner": "demo-partner", "input": referralInput(c.user)}).
				wantError(t, "BAD_USER_INPUT", c.message)
		})
	}
	for _, r := range up.Requests() {
		if strings.Contains(r, "/v1/refer") {
			t.Errorf("the referral service was called: %s", r)
		}
	}
}

func TestReferClientMapsTheServicesRefusals(t *testing.T) {
	t.Parallel()
	up := referralUpstream(t)
	good := newGateway(t, up, referralEnv(up, referralSecret))
	good.post(t, referClientMutation, map[string]any{"partner": "nobody", "input": referralInput(nil)}).
		wantError(t, "NOT_FOUND", `The referral service has no partner "nobody"`)
	wrong := newGateway(t, up, referralEnv(up, "another-secret"))
	e := wrong.post(t, referClientMutation, map[string]any{"partner": "demo-partner", "input": referralInput(nil)}).
		wantError(t, "FORBIDDEN", "The referral service refused the gateway's credentials: check REFERRAL_API_KEY and REFERRAL_SIGNING_SECRET")
	if strings.Contains(e.Message, "another-secret") || strings.Contains(e.Message, referralKey) {
		t.Errorf("the error shows a credential: %q", e.Message)
	}
}

func TestReferClientWithoutReferralURLSaysWhichSettingToSet(t *testing.T) {
	t.Parallel()
	up := referralUpstream(t)
	gw := newGateway(t, up, nil)
	e := gw.post(t, referClientMutation, map[string]any{"partner": "demo-partner", "input": referralInput(nil)}).
		wantError(t, "UPSTREAM_UNAVAILABLE", "")
	if !strings.Contains(e.Message, "set REFERRAL_URL") {
		t.Errorf("message %q, want it to name REFERRAL_URL", e.Message)
	}
}

// With no configuration, referrals go to the embedded sandbox with its demo key and secret, and
// the onboarding address it answers is on the gateway's origin, as the caller named it (issue
// 26: "Every address a browser is given must be on the gateway's origin").
func TestReferClientWorksAgainstTheEmbeddedSandbox(t *testing.T) {
	t.Parallel()
	gw := &testGateway{url: started(t, nil, map[string]string{"ADDR": "127.0.0.1:0"}, "gateway serving")}
	var got referClientAnswer
	in := referralInput(nil)
	in["product"] = "FPOA"
	body, _ := json.Marshal(map[string]any{"query": referClientMutation, "variables": map[string]any{"partner": "demo-partner", "input": in}})
	req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Host = "gateway.test:18080" // a published port's name, which the gateway never listens on
	gw.do(t, req).ok(t, &got)
	if got.ReferClient.Product != "FPOA" || !strings.Contains(got.ReferClient.URL, "product=fpoa") {
		t.Errorf("got %+v, want an FPOA referral", got.ReferClient)
	}
	if !strings.HasPrefix(got.ReferClient.URL, "http://gateway.test:18080/sandbox/onboarding/demo-partner?") {
		t.Errorf("the onboarding address is %s, want it on the gateway's origin as the caller named it", got.ReferClient.URL)
	}
}

// The referClient example of docs/callers.md runs as written against the gateway with no configuration.
func TestTheREADMEReferralRunsAgainstTheEmbeddedSandbox(t *testing.T) {
	t.Parallel()
	query := markedGraphQL(t, "referral example")
	gw := &testGateway{url: started(t, nil, map[string]string{"ADDR": "127.0.0.1:0"}, "gateway serving")}
	var got struct {
		ReferClient struct{ ReferralToken, URL string }
	}
	gw.post(t, query, nil).ok(t, &got)
	if got.ReferClient.ReferralToken == "" || !strings.Contains(got.ReferClient.URL, "product=trust") {
		t.Errorf("got %+v, want a trust referral", got.ReferClient)
	}
}

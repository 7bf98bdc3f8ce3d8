package referral_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/family"
	"github.com/advisorhq/gateway/internal/referral"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

const (
	testKey    = "referral-test-key"
	testSecret = "referral-test-secret"
)

func newService(t *testing.T, url string, timeout time.Duration, sign referral.Signer) *referral.Service {
	t.Helper()
	if sign == nil {
		sign = referral.HMACSigner(testSecret)
	}
	c, err := referral.New(referral.Options{URL: url, APIKey: testKey, Sign: sign, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return referral.NewService(c)
}

func ptr[T any](v T) *T { return &v }

func validInput() referral.Input {
	return referral.Input{Product: 2, Token: ptr("tok-1"), User: referral.User{
		Email: "ada@example.com", FirstName: "Ada", LastName: "Lovelace", HasPets: ptr(true),
		MaritalStatus: ptr(family.MaritalStatus("CivilUnion")),
		Address:       &referral.Address{Line1: "1 Main St", Line2: ptr("Apt 2"), City: "Springfield", State: "IL", Zip: "62701"},
	}}
}

func TestReferAgainstTheSandboxAnswersItsTokenAndAddress(t *testing.T) {
	up := sandboxtest.Start(t, sandbox.Options{ReferralAPIKey: testKey, ReferralSecret: testSecret})
	svc := newService(t, up.URL+"/", 0, nil)
	got, err := svc.Refer(context.Background(), "demo-partner", validInput())
	if err != nil {
		t.Fatal(err)
	}
	if err := (advisorspec.ReferralAnswer{ReferralToken: got.ReferralToken, URL: got.URL}).Check(); err != nil {
		t.Errorf("answer %+v: %v", got, err)
	}
	if got.PartnerID != "demo-partner" || got.Product != 2 || got.User.FirstName != "Ada" || *got.Token != "tok-1" {
		t.Errorf("got %+v, want what was referred echoed", got)
	}
	if !strings.Contains(got.URL, "product=trust") {
		t.Errorf("url %q, want the sandbox's address for a trust", got.URL)
	}
}

// The signature is made by the one Signer over exactly the bytes that travel.
func TestReferSignsTheExactBytesSentWithTheReplaceableSigner(t *testing.T) {
	var body []byte
	var header http.Header
	up := sandboxtest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		header = r.Header.Clone()
		_, _ = io.WriteString(w, `{"referralToken":"t-1","url":"https://onboard.example/r/t-1"}`)
	}))
	for _, c := range []struct {
		name string
		sign referral.Signer
		want func([]byte) string
	}{
		{"default HMAC", nil, func(b []byte) string { return advisorspec.SignReferral(testSecret, b) }},
		{"a replaced signer", func(b []byte) string { return "custom-" + string(rune('0'+len(b)%10)) },
			func(b []byte) string { return "custom-" + string(rune('0'+len(b)%10)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := newService(t, up.URL, 0, c.sign).Refer(context.Background(), "p/1", validInput()); err != nil {
				t.Fatal(err)
			}
			if got, want := header.Get("user-data-signature"), c.want(body); got != want {
				t.Errorf("signature %q, want %q over the body received", got, want)
			}
			if got := header.Get("x-api-key"); got != testKey {
				t.Errorf("x-api-key %q, want %q", got, testKey)
			}
			if got := header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q, want application/json", got)
			}
		})
	}
	if reqs := up.Requests(); reqs[len(reqs)-1] != "POST /v1/refer/p/1" {
		t.Errorf("requests %v, want the partner id escaped in one segment", reqs)
	}
}

func TestReferMapsTheServicesAnswersToCodes(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		body    string
		code    apperr.Code
		message string
	}{
		{"refused input in the schema's names", 400, `{"message":"user.address.postal_code must be at most 10 characters"}`, apperr.BadUserInput, "input.user.address.zip must be at most 10 characters"},
		{"a refusal naming no field keeps the service's words", 400, `{"message":"Duplicate referral"}`, apperr.BadUserInput, "The referral service refused the referral: Duplicate referral"},
		{"a plain-text refusal", 422, `bad zip`, apperr.BadUserInput, "The referral service refused the referral: bad zip"},
		{"a wrong key", 401, `{"message":"Missing or invalid x-api-key"}`, apperr.Forbidden, "The referral service refused the gateway's credentials: check REFERRAL_API_KEY and REFERRAL_SIGNING_SECRET"},
		{"a wrong signature", 403, `{"message":"Missing or invalid user-data-signature"}`, apperr.Forbidden, "The referral service refused the gateway's credentials: check REFERRAL_API_KEY and REFERRAL_SIGNING_SECRET"},
		{"an unknown partner", 404, `{"message":"Partner not found"}`, apperr.NotFound, `The referral service has no partner "demo-partner"`},
		{"a failure", 500, `{"message":"panic at db.go:12"}`, apperr.UpstreamUnavailable, "The referral service failed to answer"},
		{"unavailable", 503, ``, apperr.UpstreamUnavailable, "The referral service failed to answer"},
		{"a redirect", 302, ``, apperr.UpstreamUnavailable, "The referral service answered with status 302"},
		{"an answer that is not JSON", 200, `<html>`, apperr.UpstreamUnavailable, "The referral service's answer is not a referral"},
		{"a token over 36 characters", 200, `{"referralToken":"` + strings.Repeat("t", 37) + `","url":"https://x.example"}`, apperr.UpstreamUnavailable, "The referral service's answer is not a referral"},
		{"a relative url", 200, `{"referralToken":"t","url":"/r/t"}`, apperr.UpstreamUnavailable, "The referral service's answer is not a referral"},
		{"an oversized answer", 200, `{"referralToken":"t","url":"https://x.example/` + strings.Repeat("a", 70<<10) + `"}`, apperr.UpstreamUnavailable, "The referral service answered with more than a referral"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := sandboxtest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if c.status == 302 {
					w.Header().Set("Location", "https://elsewhere.example/")
				}
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
			}))
			_, err := newService(t, up.URL, 0, nil).Refer(context.Background(), "demo-partner", validInput())
			e, ok := apperr.As(err)
			if !ok || e.Code != c.code || e.Message != c.message {
				t.Fatalf("got %v, want %s %q", err, c.code, c.message)
			}
			if c.code == apperr.BadUserInput && (e.Upstream == nil || e.Upstream.Status != c.status || !strings.Contains(c.body, e.Upstream.Message)) {
				t.Errorf("upstream %+v, want the service's status and words", e.Upstream)
			}
		})
	}
}

func TestReferNeverShowsTheKeyOrTheSecret(t *testing.T) {
	up := sandboxtest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		_, _ = io.WriteString(w, `{"message":"key `+r.Header.Get("x-api-key")+` sent from `+r.Host+`"}`)
	}))
	_, err := newService(t, up.URL, 0, nil).Refer(context.Background(), "demo-partner", validInput())
	e, _ := apperr.As(err)
	for _, s := range []string{e.Error(), e.Message, e.Upstream.Message} {
		if strings.Contains(s, testKey) || strings.Contains(s, testSecret) || strings.Contains(s, strings.TrimPrefix(up.URL, "http://")) {
			t.Errorf("error shows a secret or the service's address: %q", s)
		}
	}
}

func TestReferToASlowServiceEndsAtTheTimeout(t *testing.T) {
	release := make(chan struct{})
	up := sandboxtest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	start := time.Now()
	_, err := newService(t, up.URL, 100*time.Millisecond, nil).Refer(context.Background(), "demo-partner", validInput())
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.UpstreamUnavailable || !strings.Contains(e.Message, "did not answer in time") || e.Outcome != apperr.OutcomeUnknown {
		t.Fatalf("got %v, want UPSTREAM_UNAVAILABLE saying it did not answer in time, outcome unknown", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("took %v, want about the 100ms timeout", took)
	}
}

func TestReferRefusesInputOverTheLimitsBeforeAnyCall(t *testing.T) {
	up := sandboxtest.Start(t, sandbox.Options{ReferralAPIKey: testKey, ReferralSecret: testSecret})
	svc := newService(t, up.URL, 0, nil)
	long := func(n int) string { return strings.Repeat("x", n+1) }
	cases := []struct {
		name    string
		change  func(*referral.Input)
		partner string
		field   string
		message string
	}{
		{"token", func(in *referral.Input) { in.Token = ptr(long(36)) }, "", "input.token", "input.token must be at most 36 characters"},
		{"blank token", func(in *referral.Input) { in.Token = ptr("") }, "", "input.token", "input.token must not be blank"},
		{"email", func(in *referral.Input) { in.User.Email = long(320) }, "", "input.user.email", "input.user.email must be at most 320 characters"},
		{"firstName", func(in *referral.Input) { in.User.FirstName = long(100) }, "", "input.user.firstName", "input.user.firstName must be at most 100 characters"},
		{"lastName blank", func(in *referral.Input) { in.User.LastName = " " }, "", "input.user.lastName", "input.user.lastName must not be blank"},
		{"line1", func(in *referral.Input) { in.User.Address.Line1 = long(255) }, "", "input.user.address.line1", "input.user.address.line1 must be at most 255 characters"},
		{"line2", func(in *referral.Input) { in.User.Address.Line2 = ptr(long(150)) }, "", "input.user.address.line2", "input.user.address.line2 must be at most 150 characters"},
		{"city", func(in *referral.Input) { in.User.Address.City = long(255) }, "", "input.user.address.city", "input.user.address.city must be at most 255 characters"},
		{"state", func(in *referral.Input) { in.User.Address.State = "ILL" }, "", "input.user.address.state", "input.user.address.state must be at most 2 characters"},
		{"zip", func(in *referral.Input) { in.User.Address.Zip = long(10) }, "", "input.user.address.zip", "input.user.address.zip must be at most 10 characters"},
		{"widowed", func(in *referral.Input) { in.User.MaritalStatus = ptr(family.MaritalStatus("Widowed")) }, "", "input.user.maritalStatus",
			"input.user.maritalStatus: the referral service takes no WIDOWED; it takes SINGLE, MARRIED, DOMESTIC_PARTNERSHIP, CIVIL_UNION, ENGAGED or OTHER_COMMITTED_RELATIONSHIP"},
		{"blank partner", func(*referral.Input) {}, " ", "partnerId", "partnerId must not be blank"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up.ResetRequests()
			in := validInput()
			c.change(&in)
			partner := "demo-partner"
			if c.partner != "" {
				partner = c.partner
			}
			_, err := svc.Refer(context.Background(), partner, in)
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.BadUserInput || e.Field != c.field || e.Message != c.message {
				t.Fatalf("got %v (field %q), want BAD_USER_INPUT %q on %s", err, e.Field, c.message, c.field)
			}
			if reqs := up.Requests(); len(reqs) != 0 {
				t.Errorf("the service was called: %v", reqs)
			}
		})
	}
}

func TestReferWithoutAServiceSaysWhichSettingToSet(t *testing.T) {
	for _, svc := range []*referral.Service{nil, referral.NewService(nil)} {
		_, err := svc.Refer(context.Background(), "demo-partner", validInput())
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.UpstreamUnavailable || !strings.Contains(e.Message, "set REFERRAL_URL") {
			t.Errorf("got %v, want UPSTREAM_UNAVAILABLE naming REFERRAL_URL", err)
		}
	}
}

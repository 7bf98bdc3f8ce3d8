package callerauth_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/goleak"

	"github.com/advisorhq/gateway/internal/callerauth"
)

func TestVerifyAcceptsEachAlgorithm(t *testing.T) {
	p := newIDP(t, "rsa", "ec", "ed")
	v := newVerifier(t, p.config())
	exp := time.Now().Add(5 * time.Minute).Truncate(time.Second)
	for _, name := range []string{"rsa", "ec", "ed"} {
		t.Run(key(name).method.Alg(), func(t *testing.T) {
			claims := goodClaims()
			claims["exp"] = exp.Unix()
			got, err := v.Verify(context.Background(), sign(t, name, claims))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := callerauth.Caller{AdvisorID: "adv-42", FirmID: "firm-7", Subject: "adv-42", ExpiresAt: exp}
			if !got.ExpiresAt.Equal(want.ExpiresAt) || got.AdvisorID != want.AdvisorID || got.FirmID != want.FirmID || got.Subject != want.Subject {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestVerifyWithoutKidTriesEveryKey(t *testing.T) {
	p := newIDP(t, "rsa", "ec", "ed")
	v := newVerifier(t, p.config())
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, goodClaims())
	s, err := tok.SignedString(key("ed").priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), s); err != nil {
		t.Errorf("got %v, want a token without kid accepted by the key that signed it", err)
	}
}

func TestVerifyHonoursLeeway(t *testing.T) {
	p := newIDP(t, "rsa")
	v := newVerifier(t, p.config()) // the default leeway, 30s
	now := time.Now()
	tests := []struct {
		name  string
		claim string
		at    time.Time
	}{
		{"expired 10s ago is accepted", "exp", now.Add(-10 * time.Second)},
		{"not before 10s from now is accepted", "nbf", now.Add(10 * time.Second)},
		{"issued 10s from now is accepted", "iat", now.Add(10 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims := goodClaims()
			claims[tt.claim] = tt.at.Unix()
			if _, err := v.Verify(context.Background(), sign(t, "rsa", claims)); err != nil {
				t.Errorf("got %v, want the token accepted", err)
			}
		})
	}
}

// hs256WithPublicKey is the key-confusion attack: a token signed with HMAC whose secret is the
// RSA public key the JWKS publishes, which a verifier that trusts the token's alg would check
// with that same public key and accept.
func hs256WithPublicKey(t *testing.T) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(key("rsa").priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, goodClaims())
	tok.Header["kid"] = key("rsa").kid
	s, err := tok.SignedString(secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func algNone(t *testing.T) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodNone, goodClaims())
	tok.Header["kid"] = key("rsa").kid
	s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVerifyRefuses(t *testing.T) {
	p := newIDP(t, "rsa", "ec", "ed")
	cfg := p.config()
	// An hour: the unknown kid below must not make this test depend on refresh timing.
	cfg.MinRefreshInterval = time.Hour
	v := newVerifier(t, cfg)
	now := time.Now()
	with := func(k string, val any) jwt.MapClaims {
		c := goodClaims()
		c[k] = val
		return c
	}
	without := func(k string) jwt.MapClaims {
		c := goodClaims()
		delete(c, k)
		return c
	}
	tests := []struct {
		name  string
		token func(t *testing.T) string
		want  callerauth.Reason
		is    error
	}{
		{"expired beyond the leeway", func(t *testing.T) string { return sign(t, "ec", with("exp", now.Add(-2*time.Minute).Unix())) }, callerauth.ReasonExpired, nil},
		{"not before in the future", func(t *testing.T) string { return sign(t, "ec", with("nbf", now.Add(2*time.Minute).Unix())) }, callerauth.ReasonNotYetValid, nil},
		{"issued in the future", func(t *testing.T) string { return sign(t, "ec", with("iat", now.Add(2*time.Minute).Unix())) }, callerauth.ReasonNotYetValid, nil},
		{"wrong issuer", func(t *testing.T) string { return sign(t, "rsa", with("iss", "https://evil.test")) }, callerauth.ReasonWrongIssuer, nil},
		{"wrong audience", func(t *testing.T) string { return sign(t, "ed", with("aud", "someone-else")) }, callerauth.ReasonWrongAudience, nil},
		{"no issuer when one is configured", func(t *testing.T) string { return sign(t, "rsa", without("iss")) }, callerauth.ReasonMissingClaim, nil},
		{"no exp", func(t *testing.T) string { return sign(t, "rsa", without("exp")) }, callerauth.ReasonMissingClaim, nil},
		{"no firm claim", func(t *testing.T) string { return sign(t, "rsa", without("firm_id")) }, callerauth.ReasonMissingClaim, nil},
		{"empty advisor claim", func(t *testing.T) string { return sign(t, "rsa", with("sub", "")) }, callerauth.ReasonMissingClaim, nil},
		{"firm claim not a string", func(t *testing.T) string { return sign(t, "rsa", with("firm_id", 7)) }, callerauth.ReasonMissingClaim, nil},
		{"alg none", algNone, callerauth.ReasonBadSignature, nil},
		{"HS256 with the RSA public key as secret", hs256WithPublicKey, callerauth.ReasonBadSignature, nil},
		{"signed by a key not in the JWKS under a known kid", func(t *testing.T) string { return sign(t, "impostor", goodClaims()) }, callerauth.ReasonBadSignature, nil},
		{"ES256 under an RSA key's kid", func(t *testing.T) string { return signWithKid(t, "ec", "rsa-1", goodClaims()) }, callerauth.ReasonBadSignature, nil},
		{"unknown kid", func(t *testing.T) string { return sign(t, "rotated", goodClaims()) }, callerauth.ReasonUnknownKey, nil},
		{"malformed", func(*testing.T) string { return "not-a.jwt" }, callerauth.ReasonMalformed, nil},
		{"payload not JSON", func(t *testing.T) string {
			parts := strings.Split(sign(t, "rsa", goodClaims()), ".")
			return parts[0] + ".bm90IGpzb24." + parts[2]
		}, callerauth.ReasonMalformed, nil},
		{"oversized", func(t *testing.T) string { return sign(t, "rsa", with("pad", strings.Repeat("x", 9<<10))) }, callerauth.ReasonMalformed, callerauth.ErrTokenTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token := tt.token(t)
			_, err := v.Verify(context.Background(), token)
			t.Log(err) // what an operator would read in the log
			var e *callerauth.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error with reason %s", err, tt.want)
			}
			if e.Reason != tt.want {
				t.Errorf("got reason %s (%v), want %s", e.Reason, err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("got %v, want it to wrap %v", err, tt.is)
			}
			if e.Status() != http.StatusUnauthorized || !e.CallerFault() {
				t.Errorf("got status %d, caller's fault %v; want 401, true", e.Status(), e.CallerFault())
			}
			if h := e.WWWAuthenticate(); !strings.Contains(h, `error="invalid_token"`) {
				t.Errorf("got WWW-Authenticate %q, want error=\"invalid_token\"", h)
			}
			assertTokenNotIn(t, err, token)
		})
	}
}

// assertTokenNotIn fails when err's message, or that of anything it wraps, holds the token or
// its signature.
func assertTokenNotIn(t *testing.T, err error, token string) {
	t.Helper()
	sig := token[strings.LastIndex(token, ".")+1:]
	for e := err; e != nil; e = errors.Unwrap(e) {
		msg := e.Error()
		if strings.Contains(msg, token) || (len(sig) > 8 && strings.Contains(msg, sig)) {
			t.Errorf("error %q contains the token", msg)
		}
	}
	if e, ok := err.(*callerauth.Error); ok && strings.Contains(e.WWWAuthenticate(), token) {
		t.Errorf("WWW-Authenticate %q contains the token", e.WWWAuthenticate())
	}
}

func TestWWWAuthenticateValues(t *testing.T) {
	tests := []struct {
		reason     callerauth.Reason
		wantStatus int
		want       string
	}{
		{callerauth.ReasonMissing, 401, `Bearer realm="advisor-gateway"`},
		{callerauth.ReasonExpired, 401, `Bearer realm="advisor-gateway", error="invalid_token", error_description="the token has expired"`},
		{callerauth.ReasonKeysUnavailable, 503, ``},
	}
	for _, tt := range tests {
		t.Run(string(tt.reason), func(t *testing.T) {
			status, h := callerauth.Challenge(fmt.Errorf("wrapped: %w", &callerauth.Error{Reason: tt.reason}))
			if status != tt.wantStatus || h != tt.want {
				t.Errorf("got %d %q, want %d %q", status, h, tt.wantStatus, tt.want)
			}
		})
	}
}

func TestCustomClaimNames(t *testing.T) {
	p := newIDP(t, "ec")
	cfg := p.config()
	cfg.AdvisorClaim, cfg.FirmClaim = "advisor_external_id", "https://advisor.test/firm"
	v := newVerifier(t, cfg)

	claims := goodClaims()
	claims["advisor_external_id"], claims["https://advisor.test/firm"] = "adv-9", "firm-3"
	got, err := v.Verify(context.Background(), sign(t, "ec", claims))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got.AdvisorID != "adv-9" || got.FirmID != "firm-3" || got.Subject != "adv-42" {
		t.Errorf("got %+v, want advisor adv-9, firm firm-3, subject adv-42", got)
	}

	// The default claims are no longer what is read.
	_, err = v.Verify(context.Background(), sign(t, "ec", goodClaims()))
	if r := reason(err); r != callerauth.ReasonMissingClaim {
		t.Errorf("with only sub and firm_id: got %v, want %s", err, callerauth.ReasonMissingClaim)
	}
}

func reason(err error) callerauth.Reason {
	var e *callerauth.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

func TestUnknownKidRefreshesTheJWKSOnce(t *testing.T) {
	p := newIDP(t, "rsa")
	cfg := p.config()
	cfg.MinRefreshInterval = 300 * time.Millisecond // long enough that a slow machine does not cross it by accident
	v := newVerifier(t, cfg)
	ctx := context.Background()
	token := sign(t, "rotated", goodClaims())
	assertHits(t, p, 1) // the fetch at start

	// Within the refresh limit of the fetch at start, an unknown kid is refused without a request.
	if _, err := v.Verify(ctx, token); reason(err) != callerauth.ReasonUnknownKey {
		t.Fatalf("right after start: got %v, want %s", err, callerauth.ReasonUnknownKey)
	}
	assertHits(t, p, 1)

	// Not published yet: one refresh, and still unknown.
	time.Sleep(cfg.MinRefreshInterval + 10*time.Millisecond)
	if _, err := v.Verify(ctx, token); reason(err) != callerauth.ReasonUnknownKey {
		t.Fatalf("before rotation: got %v, want %s", err, callerauth.ReasonUnknownKey)
	}
	assertHits(t, p, 2)

	// The provider rotates the new key in; once the refresh limit allows, one refresh finds it.
	p.publish(t, "rsa", "rotated")
	time.Sleep(cfg.MinRefreshInterval + 10*time.Millisecond)
	if _, err := v.Verify(ctx, token); err != nil {
		t.Fatalf("after rotation: got %v, want the token accepted", err)
	}
	assertHits(t, p, 3)

	// Cached now: no more requests.
	if _, err := v.Verify(ctx, token); err != nil {
		t.Fatalf("again: %v", err)
	}
	if _, err := v.Verify(ctx, sign(t, "rsa", goodClaims())); err != nil {
		t.Fatalf("the old key: %v", err)
	}
	assertHits(t, p, 3)
}

func assertHits(t *testing.T, p *idp, want int64) {
	t.Helper()
	if got := p.hits.Load(); got != want {
		t.Errorf("got %d JWKS requests, want %d", got, want)
	}
}

func TestUnknownKidFloodIsRateLimited(t *testing.T) {
	p := newIDP(t, "rsa")
	cfg := p.config()
	cfg.MinRefreshInterval = time.Hour
	v := newVerifier(t, cfg)

	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for g := range 20 {
		wg.Go(func() {
			for i := range 10 {
				token := signWithKid(t, "rsa", fmt.Sprintf("made-up-%d-%d", g, i), goodClaims())
				_, err := v.Verify(context.Background(), token)
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if r := reason(err); r != callerauth.ReasonUnknownKey {
			t.Fatalf("got %v, want %s", err, callerauth.ReasonUnknownKey)
		}
	}
	// One at start and at most one for the whole flood.
	if got := p.hits.Load(); got > 2 {
		t.Errorf("got %d JWKS requests for 200 unknown kids, want at most 2", got)
	}
}

func TestJWKSUnavailableAtStart(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	tests := []struct {
		name    string
		setup   func(p *idp)
		url     func(p *idp) string
		wantErr string
	}{
		{"server error", func(p *idp) { p.serve(http.StatusServiceUnavailable, nil) }, (*idp).url, "status 503"},
		{"unreachable", func(*idp) {}, func(*idp) string { return closedURL + "/jwks.json" }, "connect"},
		{"not a JWK Set", func(p *idp) { p.serve(http.StatusOK, []byte("<html>")) }, (*idp).url, "not a JWK Set"},
		{"no usable key", func(p *idp) { p.serve(http.StatusOK, []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)) }, (*idp).url, "no usable key"},
		{"over the size limit", func(p *idp) {
			p.serve(http.StatusOK, []byte(`{"keys":[],"pad":"`+strings.Repeat("x", 300<<10)+`"}`))
		}, (*idp).url, "over the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newIDP(t, "rsa")
			tt.setup(p)
			cfg := p.config()
			cfg.JWKSURL = tt.url(p)
			cfg.MinRefreshInterval = time.Hour
			v := newVerifier(t, cfg)

			err := v.Ready(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), cfg.JWKSURL) {
				t.Errorf("Ready: got %v, want an error naming the URL and %q", err, tt.wantErr)
			}
			token := sign(t, "rsa", goodClaims())
			_, err = v.Verify(context.Background(), token)
			var e *callerauth.Error
			if !errors.As(err, &e) || e.Reason != callerauth.ReasonKeysUnavailable {
				t.Fatalf("Verify: got %v, want %s", err, callerauth.ReasonKeysUnavailable)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Verify: got %q, want the fetch's fault %q for the log", err, tt.wantErr)
			}
			if e.Status() != http.StatusServiceUnavailable || e.CallerFault() || e.WWWAuthenticate() != "" {
				t.Errorf("got status %d, caller's fault %v, challenge %q; want 503, false, none", e.Status(), e.CallerFault(), e.WWWAuthenticate())
			}
			assertTokenNotIn(t, err, token)
		})
	}
}

func TestJWKSRecoversAfterStart(t *testing.T) {
	p := newIDP(t, "rsa")
	p.serve(http.StatusBadGateway, nil)
	cfg := p.config()
	cfg.MinRefreshInterval = 20 * time.Millisecond
	v := newVerifier(t, cfg)
	if err := v.Ready(context.Background()); err == nil {
		t.Fatal("Ready: got nil while the JWKS is down, want an error")
	}

	p.publish(t, "rsa")
	// The background retry or Ready's own fetch picks the keys up within a few intervals.
	deadline := time.Now().Add(2 * time.Second)
	for v.Ready(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("Ready: still %v after the JWKS came back", v.Ready(context.Background()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := v.Verify(context.Background(), sign(t, "rsa", goodClaims())); err != nil {
		t.Errorf("Verify: got %v, want the token accepted", err)
	}
}

func TestJWKSDownLaterKeepsCachedKeys(t *testing.T) {
	p := newIDP(t, "rsa")
	cfg := p.config()
	cfg.MinRefreshInterval = time.Millisecond
	v := newVerifier(t, cfg)
	p.serve(http.StatusInternalServerError, nil)
	time.Sleep(2 * time.Millisecond)

	if err := v.Ready(context.Background()); err != nil {
		t.Errorf("Ready: got %v, want nil while cached keys verify", err)
	}
	if _, err := v.Verify(context.Background(), sign(t, "rsa", goodClaims())); err != nil {
		t.Errorf("known kid: got %v, want the token accepted from the cache", err)
	}
	// A kid the cache lacks may be a key just published: the gateway cannot tell, so 503.
	_, err := v.Verify(context.Background(), sign(t, "rotated", goodClaims()))
	if r := reason(err); r != callerauth.ReasonKeysUnavailable {
		t.Errorf("unknown kid: got %v, want %s", err, callerauth.ReasonKeysUnavailable)
	}
}

func TestJWKSFetchTimesOut(t *testing.T) {
	p := newIDP(t, "rsa")
	p.setDelay(time.Minute)
	cfg := p.config()
	cfg.FetchTimeout = 100 * time.Millisecond
	cfg.MinRefreshInterval = time.Hour
	start := time.Now()
	v := newVerifier(t, cfg)
	if took := time.Since(start); took > time.Second {
		t.Errorf("New took %s, want it bounded by the 100ms fetch timeout", took)
	}
	if err := v.Ready(context.Background()); err == nil || !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Errorf("Ready: got %v, want a timeout", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestFromRequest(t *testing.T) {
	p := newIDP(t, "rsa")
	v := newVerifier(t, p.config())
	token := sign(t, "rsa", goodClaims())
	tests := []struct {
		name      string
		header    []string
		want      callerauth.Reason
		is        error
		challenge string
	}{
		{"no header", nil, callerauth.ReasonMissing, callerauth.ErrNoAuthorization, `Bearer realm="advisor-gateway"`},
		{"another scheme", []string{"Basic YWxpY2U6c2VjcmV0"}, callerauth.ReasonMissing, callerauth.ErrNotBearer, `Bearer realm="advisor-gateway"`},
		{"empty token", []string{"Bearer "}, callerauth.ReasonMalformed, callerauth.ErrEmptyToken, `Bearer realm="advisor-gateway", error="invalid_token", error_description="the token is malformed"`},
		{"two headers", []string{"Bearer " + token, "Bearer " + token}, callerauth.ReasonMalformed, nil, `Bearer realm="advisor-gateway", error="invalid_token", error_description="the token is malformed"`},
		{"bearer token", []string{"Bearer " + token}, "", nil, ""},
		{"scheme in lower case", []string{"bearer " + token}, "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			for _, h := range tt.header {
				r.Header.Add("Authorization", h)
			}
			got, err := v.FromRequest(r)
			if tt.want == "" {
				if err != nil || got.AdvisorID != "adv-42" || got.FirmID != "firm-7" {
					t.Errorf("got %+v, %v; want advisor adv-42 of firm firm-7", got, err)
				}
				return
			}
			if r := reason(err); r != tt.want {
				t.Errorf("got %v, want %s", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("got %v, want it to wrap %v", err, tt.is)
			}
			if _, h := callerauth.Challenge(err); h != tt.challenge {
				t.Errorf("got WWW-Authenticate %q, want %q", h, tt.challenge)
			}
			assertTokenNotIn(t, err, token)
		})
	}
}

func TestConfigValidateNamesTheSetting(t *testing.T) {
	tests := []struct {
		name string
		cfg  callerauth.Config
		want string // empty: valid
	}{
		{"only the JWKS URL", callerauth.Config{JWKSURL: "https://idp.test/jwks.json"}, ""},
		{"no JWKS URL", callerauth.Config{}, "AUTH_JWKS_URL is required"},
		{"relative JWKS URL", callerauth.Config{JWKSURL: "/jwks.json"}, "AUTH_JWKS_URL must be an absolute http or https URL"},
		{"JWKS URL of another scheme", callerauth.Config{JWKSURL: "file:///etc/jwks.json"}, "AUTH_JWKS_URL must be"},
		{"advisor claim is the default firm claim", callerauth.Config{JWKSURL: "https://idp.test/j", AdvisorClaim: "firm_id"}, "AUTH_ADVISOR_CLAIM and AUTH_FIRM_CLAIM"},
		{"same custom claims", callerauth.Config{JWKSURL: "https://idp.test/j", AdvisorClaim: "id", FirmClaim: "id"}, "AUTH_ADVISOR_CLAIM and AUTH_FIRM_CLAIM"},
		{"negative leeway", callerauth.Config{JWKSURL: "https://idp.test/j", Leeway: -time.Second}, "leeway must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := callerauth.New(context.Background(), callerauth.Config{}); err == nil || !strings.Contains(err.Error(), "AUTH_JWKS_URL") {
		t.Errorf("New with no URL: got %v, want the Validate error", err)
	}
}

func TestCloseEndsEveryGoroutine(t *testing.T) {
	p := newIDP(t, "rsa", "ec")
	ignore := goleak.IgnoreCurrent()
	cfg := p.config()
	cfg.RefreshInterval = 5 * time.Millisecond // so the loop is busy when Close comes
	cfg.MinRefreshInterval = time.Millisecond
	v, err := callerauth.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), sign(t, "ec", goodClaims())); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	// The test server's side of the JWKS connections ends once the verifier closed its own.
	goleak.VerifyNone(t, ignore)
}

func TestCloseAfterTheContextEnded(t *testing.T) {
	p := newIDP(t, "rsa")
	ignore := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(context.Background())
	v, err := callerauth.New(ctx, p.config())
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	// Close after the context ended is still what releases the connections; it must not block.
	_ = v.Close()
	goleak.VerifyNone(t, ignore)
}

func TestWithdrawnKeyIsRefusedAfterTheBackgroundRefresh(t *testing.T) {
	p := newIDP(t, "rsa", "ec")
	cfg := p.config()
	cfg.RefreshInterval = 20 * time.Millisecond
	cfg.MinRefreshInterval = 10 * time.Millisecond
	v := newVerifier(t, cfg)
	token := sign(t, "rsa", goodClaims())
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatalf("before withdrawal: %v", err)
	}

	p.publish(t, "ec")
	deadline := time.Now().Add(2 * time.Second)
	for {
		_, err := v.Verify(context.Background(), token)
		if reason(err) == callerauth.ReasonUnknownKey {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after withdrawal: still %v, want %s", err, callerauth.ReasonUnknownKey)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestJWKSKeyTheGatewayCannotUseLeavesTheOthers(t *testing.T) {
	p := newIDP(t, "ec")
	// An encryption key and a symmetric key beside the ES256 key.
	p.serve(http.StatusOK, []byte(`{"keys":[`+
		`{"kty":"oct","kid":"hmac","k":"c2VjcmV0"},`+
		`{"kty":"RSA","kid":"enc","use":"enc","n":"AQAB","e":"AQAB"},`+
		strings.TrimSuffix(strings.TrimPrefix(string(p.jwks(t, "ec")), `{"keys":[`), `]}`)+`]}`))
	v := newVerifier(t, p.config())
	if err := v.Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	if _, err := v.Verify(context.Background(), sign(t, "ec", goodClaims())); err != nil {
		t.Errorf("got %v, want the ES256 token accepted", err)
	}
}

func TestCloseCancelsABackgroundFetch(t *testing.T) {
	p := newIDP(t, "rsa")
	cfg := p.config()
	cfg.FetchTimeout = 10 * time.Second
	cfg.RefreshInterval = 10 * time.Millisecond
	cfg.MinRefreshInterval = time.Millisecond
	v, err := callerauth.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.setDelay(time.Minute) // the next background fetch hangs
	for p.hits.Load() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	_ = v.Close()
	if took := time.Since(start); took > time.Second {
		t.Errorf("Close took %s with a fetch under way, want it cancelled rather than waited for", took)
	}
}

func TestTeamAndRolesClaimsAreOptionalButWellFormed(t *testing.T) {
	p := newIDP(t, "ec")
	v := newVerifier(t, p.config())
	tests := []struct {
		name      string
		team      any // nil: absent
		roles     any
		wantTeam  string
		wantRoles []string
		refused   bool
	}{
		{"neither", nil, nil, "", nil, false},
		{"a team and a list of roles", "team-1", []any{"firm-admin", "viewer"}, "team-1", []string{"firm-admin", "viewer"}, false},
		{"roles as one spaced string", nil, "firm-admin viewer", "", []string{"firm-admin", "viewer"}, false},
		{"a blank team", "  ", nil, "", nil, true},
		{"a team that is a number", 7, nil, "", nil, true},
		{"roles that are not strings", nil, []any{"a", 1}, "", nil, true},
		{"roles that are an object", nil, map[string]any{"a": true}, "", nil, true},
		{"too many roles", nil, strings.Fields(strings.Repeat("r ", 65)), "", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			claims := goodClaims()
			if tc.team != nil {
				claims["team_id"] = tc.team
			}
			if tc.roles != nil {
				claims["roles"] = tc.roles
			}
			got, err := v.Verify(context.Background(), sign(t, "ec", claims))
			if tc.refused {
				if err == nil {
					t.Fatalf("accepted %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if got.TeamID != tc.wantTeam || strings.Join(got.Roles, ",") != strings.Join(tc.wantRoles, ",") {
				t.Errorf("got team %q roles %v, want %q %v", got.TeamID, got.Roles, tc.wantTeam, tc.wantRoles)
			}
		})
	}
}

package callerauth_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/callerauth"
)

func TestAuthenticatorPutsTheCallerInTheContext(t *testing.T) {
	p := newIDP(t, "rsa")
	v := newVerifier(t, p.config())
	token := sign(t, "rsa", goodClaims())
	demo := &callerauth.Caller{AdvisorID: "demo", FirmID: "demo-firm"}
	for _, tc := range []struct {
		name      string
		anonymous *callerauth.Caller
		header    string
		want      string // the advisor; empty: refused
	}{
		{"a good token", nil, "Bearer " + token, "adv-42"},
		{"no header and no anonymous caller", nil, "", ""},
		{"no header acts as the anonymous caller", demo, "", "demo"},
		{"a bad token never acts as the anonymous caller", demo, "Bearer " + token + "x", ""},
		{"another scheme never acts as the anonymous caller", demo, "Basic YTpi", ""},
		{"a good token wins over the anonymous caller", demo, "Bearer " + token, "adv-42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			a := &callerauth.Authenticator{Verifier: v, Anonymous: tc.anonymous, Log: slog.New(slog.NewTextHandler(&log, nil))}
			h := http.Header{}
			if tc.header != "" {
				h.Set("Authorization", tc.header)
			}
			ctx, err := a.Authenticate(t.Context(), h)
			c, ok := callerauth.FromContext(ctx)
			switch {
			case tc.want == "" && err == nil:
				t.Fatalf("accepted as %+v", c)
			case tc.want == "":
				if !strings.Contains(log.String(), "caller refused") || strings.Contains(log.String(), token[:16]) {
					t.Errorf("the log says %q: want the refusal, without the token", log.String())
				}
			case err != nil || !ok || c.AdvisorID != tc.want:
				t.Fatalf("got %+v (%v), %v; want %s", c, ok, err, tc.want)
			}
		})
	}
}

// The context a token gives ends when the token does, with the leeway that let it in, so a
// stream opened with it does not outlive it.
func TestAuthenticatorsContextEndsWithTheToken(t *testing.T) {
	p := newIDP(t, "rsa")
	cfg := p.config()
	cfg.Leeway = time.Second
	v := newVerifier(t, cfg)
	exp := time.Now().Add(time.Hour).Truncate(time.Second)
	claims := goodClaims()
	claims["exp"] = exp.Unix()
	a := &callerauth.Authenticator{Verifier: v}
	parent, cancel := context.WithCancel(t.Context())
	ctx, err := a.Authenticate(parent, http.Header{"Authorization": {"Bearer " + sign(t, "rsa", claims)}})
	if err != nil {
		t.Fatal(err)
	}
	if dl, ok := ctx.Deadline(); !ok || !dl.Equal(exp.Add(time.Second)) {
		t.Errorf("deadline %v (%v), want the token's exp and the leeway, %v", dl, ok, exp.Add(time.Second))
	}
	cancel()
	<-ctx.Done()
	if context.Cause(ctx) != context.Canceled {
		t.Errorf("cause %v after the request ended, want context.Canceled", context.Cause(ctx))
	}
}

package assistant_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/assistant"
	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/sandbox"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// host is a sandbox's session host served on a counting listener.
type host struct {
	url   string
	sb    *sandbox.Sandbox
	sh    *sandbox.SessionHost
	conns atomic.Int64 // connections accepted
	stop  func()
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func startHost(t *testing.T, env string) *host {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Empty: true, FileDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sh, err := sb.SessionHost(env)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &host{url: "https://" + ln.Addr().String(), sb: sb, sh: sh}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sh.Serve(ctx, countingListener{ln, &h.conns}) }()
	var once sync.Once
	h.stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(func() { h.stop(); _ = sb.Close() })
	return h
}

// client enrols with h (in env) and returns a client of it.
func (h *host) client(t *testing.T, e sandbox.Enrollment) *assistant.Client {
	t.Helper()
	cert, err := e.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	c, err := assistant.New(assistant.Options{URL: h.url, Certificate: cert, ServerCAs: e.ServerCAs(), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func (h *host) enroll(t *testing.T) sandbox.Enrollment {
	t.Helper()
	e, err := h.sh.Enroll("gateway")
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestMintAndHealthShareOneHTTP2Connection(t *testing.T) {
	h := startHost(t, sandbox.EnvUAT)
	c := h.client(t, h.enroll(t))
	ctx := t.Context()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s, err := c.Mint(ctx, fmt.Sprintf("adv-%d", i%2), "firm-1")
			if err != nil || s.Token == "" || time.Until(s.ExpiresAt) < 14*time.Minute {
				t.Errorf("mint: %v, %v", s, err)
			}
		})
	}
	wg.Wait()
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if n := h.conns.Load(); n != 1 {
		t.Errorf("%d connections for 8 mints and a health check, want 1", n)
	}
	if n := h.sb.AssistantAdvisors(); n != 2 {
		t.Errorf("%d advisor records, want 2: one per advisor id", n)
	}
	if s, _ := c.Mint(ctx, "adv-0", "firm-1"); strings.Contains(fmt.Sprint(s), s.Token) {
		t.Errorf("a Session prints its token: %v", s)
	}
}

func TestSessionsMintForTheCallerOnly(t *testing.T) {
	h := startHost(t, sandbox.EnvUAT)
	s := &assistant.Sessions{Client: h.client(t, h.enroll(t))}
	ctx := callerauth.WithCaller(t.Context(), callerauth.Caller{AdvisorID: "adv-9", FirmID: "firm-9"})
	if _, err := s.ForCaller(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		sessions *assistant.Sessions
		ctx      context.Context
		code     apperr.Code
		says     string
	}{
		{"no caller", s, t.Context(), apperr.Unauthenticated, "AUTH_DISABLED"},
		{"no session host", &assistant.Sessions{}, ctx, apperr.UpstreamUnavailable, "ASSISTANT_SESSION_URL"},
		{"a caller id the service cannot take", s, callerauth.WithCaller(t.Context(), callerauth.Caller{AdvisorID: strings.Repeat("a", 256), FirmID: "f"}),
			apperr.Unauthenticated, "advisor id must be 1 to 255 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.sessions.ForCaller(tc.ctx)
			e, ok := apperr.As(err)
			if !ok || e.Code != tc.code || !strings.Contains(e.Message, tc.says) {
				t.Errorf("got %v, want %s saying %q", err, tc.code, tc.says)
			}
		})
	}
}

// Every way the session host can fail is UPSTREAM_UNAVAILABLE with a message that says which
// setting to look at, and never the token.
func TestSessionHostFailuresNameTheSettingToCheck(t *testing.T) {
	uat := startHost(t, sandbox.EnvUAT)
	good := uat.enroll(t)
	now := time.Now()
	otherEnv, err := sandbox.Enroll(uat.sh.Dir, sandbox.EnvProduction, "gateway", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// Its certificate, trusting the UAT host: only the client certificate is wrong.
	otherEnv.ServerCAPEM = good.ServerCAPEM
	expired, err := sandbox.Enroll(uat.sh.Dir, sandbox.EnvUAT, "gateway", now.Add(-48*time.Hour), now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	stranger := startHost(t, sandbox.EnvUAT) // another sandbox: another CA
	down := startHost(t, sandbox.EnvUAT)
	down.stop()

	for _, tc := range []struct {
		name string
		c    *assistant.Client
		says string
	}{
		{"the other environment's certificate", uat.client(t, otherEnv), "ASSISTANT_CLIENT_CERT (enrolled for the host's environment"},
		{"an expired certificate", uat.client(t, expired), "client certificate (ASSISTANT_CLIENT_CERT) expired on"},
		{"a host whose certificate is not of ASSISTANT_SERVER_CA", stranger.client(t, good), "not trusted: check ASSISTANT_SERVER_CA"},
		{"a host that is down", down.client(t, good), "could not be reached: check ASSISTANT_SESSION_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.Mint(t.Context(), "adv-1", "firm-1")
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.UpstreamUnavailable || !strings.Contains(e.Message, tc.says) {
				t.Fatalf("got %v, want UPSTREAM_UNAVAILABLE saying %q", err, tc.says)
			}
			if herr := tc.c.Health(t.Context()); herr == nil {
				t.Error("the health check passed")
			}
		})
	}
	if uat.sb.AssistantAdvisors() != 0 {
		t.Error("a refused client reached the service")
	}
}

// standIn is a session host that answers every request with handler, over TLS and HTTP/2,
// and a client of it.
func standIn(t *testing.T, e sandbox.Enrollment, handler http.HandlerFunc) *assistant.Client {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cert, err := e.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c, err := assistant.New(assistant.Options{URL: srv.URL, Certificate: cert, ServerCAs: pool, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestSessionHostAnswersThatAreNotSessions(t *testing.T) {
	e := startHost(t, sandbox.EnvUAT).enroll(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		says    string
	}{
		{"464 from a load balancer", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(assistant.StatusHTTP2Required) }, "requires HTTP/2"},
		{"a server error", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, `{"message":"boom"}`, 500) }, "failed to answer"},
		{"a refusal", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, `{"message":"no"}`, 400) }, "refused the request with status 400"},
		{"200 without a token", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"expires_at":"2026-11-23T10:00:00Z"}`))
		}, "not a session"},
		{"a time that is not one", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"token":"t0k3n-secret","expires_at":"soon"}`))
		}, "not a session"},
		{"an endless answer", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(strings.Repeat("x", 1<<20))) }, "more than a session"},
		{"no answer in time", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}, "did not answer in time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := standIn(t, e, tc.handler).Mint(t.Context(), "adv-1", "firm-1")
			ae, ok := apperr.As(err)
			if !ok || ae.Code != apperr.UpstreamUnavailable || !strings.Contains(ae.Message, tc.says) {
				t.Fatalf("got %v, want UPSTREAM_UNAVAILABLE saying %q", err, tc.says)
			}
			if strings.Contains(err.Error(), "t0k3n-secret") {
				t.Errorf("the error quotes the answer's token: %v", err)
			}
		})
	}
}

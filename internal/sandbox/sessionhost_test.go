package sandbox_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// sessionHost serves sb's session host of env on a free loopback port until the test ends.
func sessionHost(t *testing.T, sb *sandbox.Sandbox, env string) (*sandbox.SessionHost, string) {
	t.Helper()
	h, err := sb.SessionHost(env)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve the session host: %v", err)
		}
	})
	return h, "https://" + ln.Addr().String()
}

// sessionClient is a client speaking only the protocols given, with an enrollment's
// certificate (none when cert is nil), trusting the session host's CA.
func sessionClient(t *testing.T, e sandbox.Enrollment, cert *tls.Certificate, protos ...string) *http.Client {
	t.Helper()
	cfg := &tls.Config{RootCAs: e.ServerCAs(), MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	tr := &http.Transport{TLSClientConfig: cfg}
	p := new(http.Protocols)
	for _, proto := range protos {
		switch proto {
		case "h2":
			p.SetHTTP2(true)
		case "http/1.1":
			p.SetHTTP1(true)
		}
	}
	tr.Protocols = p
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 5 * time.Second}
}

func certOf(t *testing.T, e sandbox.Enrollment) *tls.Certificate {
	t.Helper()
	c, err := e.TLSCertificate()
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

func mint(t *testing.T, c *http.Client, base, body string) (int, map[string]any, error) {
	t.Helper()
	resp, err := c.Post(base+"/v1/assistant/auth", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(data, &out)
	return resp.StatusCode, out, nil
}

const mintBody = `{"advisor": {"external_id": "adv-1"}, "firm": {"external_id": "firm-1"}}`

func TestTheSessionHostMintsOverMutualTLSAndHTTP2(t *testing.T) {
	f := newSandbox(t, sandbox.Options{Empty: true}, false)
	sb := f.sb
	h, base := sessionHost(t, sb, sandbox.EnvUAT)
	e, err := h.Enroll("gateway")
	if err != nil {
		t.Fatal(err)
	}
	c := sessionClient(t, e, certOf(t, e), "h2")

	status, out, err := mint(t, c, base, mintBody)
	if err != nil || status != http.StatusOK {
		t.Fatalf("mint: %d %v %v", status, out, err)
	}
	token, _ := out["token"].(string)
	exp, perr := time.Parse(time.RFC3339, out["expires_at"].(string))
	if token == "" || perr != nil || !exp.Equal(f.clock.Now().Add(15*time.Minute)) {
		t.Errorf("got %v, want a token expiring in 15 minutes", out)
	}
	if n := sb.AssistantAdvisors(); n != 1 {
		t.Errorf("%d advisor records after the first mint, want 1", n)
	}
	if status, _, _ := mint(t, c, base, mintBody); status != http.StatusOK || sb.AssistantAdvisors() != 1 {
		t.Errorf("a second mint for the same advisor: %d, %d advisor records; want it reused", status, sb.AssistantAdvisors())
	}

	resp, err := c.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 || !strings.Contains(string(body), `"status":"ok"`) {
		t.Errorf("healthz: %s %d %s", resp.Proto, resp.StatusCode, body)
	}
	if sb.AssistantAdvisors() != 1 {
		t.Error("healthz made a session")
	}
}

func TestTheSessionHostRefusesAnHTTP1ClientWith464(t *testing.T) {
	f := newSandbox(t, sandbox.Options{Empty: true}, false)
	sb := f.sb
	h, base := sessionHost(t, sb, sandbox.EnvUAT)
	e, _ := h.Enroll("gateway")
	c := sessionClient(t, e, certOf(t, e), "http/1.1")
	status, out, err := mint(t, c, base, mintBody)
	if err != nil || status != sandbox.StatusHTTP2Required {
		t.Fatalf("HTTP/1.1 mint: %d %v %v, want 464", status, out, err)
	}
	if sb.AssistantAdvisors() != 0 {
		t.Error("an HTTP/1.1 request reached the service")
	}
}

func TestTheSessionHostRefusesCertificatesAtTheHandshake(t *testing.T) {
	f := newSandbox(t, sandbox.Options{Empty: true}, false)
	sb := f.sb
	h, base := sessionHost(t, sb, sandbox.EnvUAT)
	good, _ := h.Enroll("gateway")
	now := time.Now()
	other, err := sandbox.Enroll(h.Dir, sandbox.EnvProduction, "gateway", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	expired, err := sandbox.Enroll(h.Dir, sandbox.EnvUAT, "gateway", now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cert *tls.Certificate
	}{
		{"no client certificate", nil},
		{"the other environment's certificate", certOf(t, other)},
		{"an expired certificate", certOf(t, expired)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sessionClient(t, good, tc.cert, "h2")
			status, _, err := mint(t, c, base, mintBody)
			if err == nil {
				t.Fatalf("answered %d, want the handshake refused", status)
			}
			if sb.AssistantAdvisors() != 0 {
				t.Error("a refused client reached the service")
			}
		})
	}
}

func TestTheSessionHostRefusesBadMintBodies(t *testing.T) {
	f := newSandbox(t, sandbox.Options{Empty: true}, false)
	sb := f.sb
	h, base := sessionHost(t, sb, sandbox.EnvUAT)
	e, _ := h.Enroll("gateway")
	c := sessionClient(t, e, certOf(t, e), "h2")
	long := strings.Repeat("a", 256)
	for _, tc := range []struct {
		name, body, want string
		status           int
	}{
		{"not JSON", `{"advisor":`, "it is not JSON", 400},
		{"no advisor", `{"firm": {"external_id": "f"}}`, "advisor.external_id is required", 400},
		{"an empty firm id", `{"advisor": {"external_id": "a"}, "firm": {"external_id": ""}}`, "firm.external_id is required", 400},
		{"an advisor id over 255", `{"advisor": {"external_id": "` + long + `"}, "firm": {"external_id": "f"}}`, "advisor.external_id must be at most 255 characters", 400},
		{"an id of the wrong type", `{"advisor": {"external_id": 7}, "firm": {"external_id": "f"}}`, "has the wrong type", 400},
		{"an unknown member", `{"advisor": {"external_id": "a"}, "firm": {"external_id": "f"}, "admin": true}`, "unknown field", 400},
		{"an oversized body", `{"pad": "` + strings.Repeat("x", 20<<10) + `"}`, "larger than", 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out, err := mint(t, c, base, tc.body)
			if err != nil || status != tc.status || !strings.Contains(out["message"].(string), tc.want) {
				t.Errorf("got %d %v %v, want %d with %q", status, out, err, tc.status, tc.want)
			}
		})
	}
	if sb.AssistantAdvisors() != 0 {
		t.Error("a refused body made an advisor record")
	}
}

// `sandbox enroll` and a sandbox started on the same directory agree on the CA; the files
// enrolling writes are what a client needs.
func TestEnrollmentFilesAuthenticateAgainstTheHost(t *testing.T) {
	dir := t.TempDir()
	f := newSandbox(t, sandbox.Options{Empty: true, FileDir: dir}, false)
	sb := f.sb
	_, base := sessionHost(t, sb, sandbox.EnvProduction)
	now := time.Now()
	e, err := sandbox.Enroll(dir, sandbox.EnvProduction, "firm-gateway", now.Add(-time.Minute), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "certs")
	if err := sandbox.WriteEnrollment(e, out); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(out, "client.key")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("client.key: %v %v, want mode 0600", info, err)
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(out, "client.crt"), filepath.Join(out, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := os.ReadFile(filepath.Join(out, "ca.crt"))
	c := sessionClient(t, sandbox.Enrollment{ServerCAPEM: ca}, &cert, "h2")
	if status, out, err := mint(t, c, base, mintBody); err != nil || status != http.StatusOK {
		t.Errorf("mint with the enrolled files: %d %v %v", status, out, err)
	}
	if _, err := sandbox.Enroll(dir, "staging", "x", now, now.Add(time.Hour)); err == nil || !strings.Contains(err.Error(), `"staging"`) {
		t.Errorf("an unknown environment: %v", err)
	}
}

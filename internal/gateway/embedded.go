package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/advisorhq/gateway/internal/config"
	"github.com/advisorhq/gateway/internal/loglevel"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxserve"
	"github.com/advisorhq/gateway/internal/tenant"
)

// useEmbeddedSandbox starts the embedded sandbox and points cfg at it: its firms, its SFTP
// server for bulk files, its referral endpoint and its chat. It prints how to reach the sandbox
// and returns its URL, the gateway's upstream. Close stops it.
func (g *Gateway) useEmbeddedSandbox(ctx context.Context, cfg *config.Gateway) (string, error) {
	// The gateway serves the sandbox's firms, each with a webhook key made for this run (the
	// first firm's is WEBHOOK_API_KEY when set, so deliveries can be played by hand).
	firms := sandbox.DefaultFirms()
	for i := range firms {
		firms[i].WebhookKey = randomKey()
	}
	if cfg.WebhookAPIKey != "" {
		firms[0].WebhookKey = cfg.WebhookAPIKey
	}
	// The gateway's own pages (the pop-out assistant) may embed the sandbox's chat: on the
	// gateway's origin, whatever the browser calls it, and on its usual addresses.
	origins := append(slices.Clone(sandbox.DefaultEmbedOrigins), g.base, loopbackURL(g.ln.Addr()))
	sb, err := startEmbeddedSandbox(ctx, g.log, loopbackURL(g.ln.Addr())+"/webhooks", firms, origins)
	if err != nil {
		return "", err
	}
	// Closed before the gateway serves, so the sandbox stops after the gateway has drained.
	g.onClose(sb.stop)
	g.embedded = sb
	cfg.Firms = sandboxFirms(firms)
	// Bulk files go to the sandbox's own SFTP server, whose host key is trusted because the
	// gateway made it; nothing else is ever trusted without configuration.
	user, pass, _ := strings.Cut(sandbox.DefaultSFTPCredentials, ":")
	cfg.Bulk = config.BulkSFTP{Addr: sb.sftpAddr, User: user, Password: pass, Dir: config.DefaultBulkDir, HostKeyFingerprint: sb.fingerprint}
	if cfg.ReferralURL == "" {
		// Referrals go to the sandbox's referral endpoint with its demo key and secret, below
		// the mount path, so the onboarding address it answers is on the gateway's origin too.
		cfg.ReferralURL = sb.url + sandbox.MountPath
		cfg.ReferralAPIKey, cfg.ReferralSigningSecret = sandbox.DefaultReferralAPIKey, sandbox.DefaultReferralSecret
	}
	// Its addresses are the gateway's: one port is all a newcomer needs, whatever else holds
	// the sandbox's usual ones.
	fmt.Fprintf(g.stdout, "No ADVISOR_BASE_URL: the upstream is the embedded Advisor sandbox at %s%s (firms %s and %s)\n",
		g.base, sandbox.MountPath, sandbox.DemoFirmID, sandbox.SecondFirmID)
	fmt.Fprintf(g.stdout, "  its bulk files: sftp://%s@%s (password %s, host key %s)\n", user, sb.sftpAddr, pass, sb.fingerprint)
	fmt.Fprintf(g.stdout, "  play live events: curl -fsS -H \"Authorization: Bearer %s\" -H \"Content-Type: application/json\" -d '{\"scenario\":\"onboarding\"}' %s/sandbox/events\n",
		sandbox.DefaultAccessToken, g.base)
	if cfg.ReferralURL == sb.url+sandbox.MountPath {
		fmt.Fprintf(g.stdout, "  its referral partners (referClient): %s\n", strings.Join(sandbox.DefaultReferralPartners, ", "))
	}
	return sb.url, nil
}

// embeddedSandbox is the sandbox the gateway runs when it has no ADVISOR_BASE_URL.
type embeddedSandbox struct {
	// url is its loopback listener, which the gateway's own calls go to; browsers and curl
	// reach it below sandbox.MountPath on the gateway's origin, served by handler.
	url, sftpAddr, fingerprint string
	handler                    http.Handler
	// demoWID is the demo family's wid, which the start-up links the family page to.
	demoWID string
	// sessionURL is its session host, and enrollment the gateway's certificate for it.
	sessionURL string
	enrollment sandbox.Enrollment
	stop       func()
}

// startEmbeddedSandbox serves a demo sandbox on a free loopback port, sending its webhook events
// to the gateway, and its SFTP server for bulk files.
func startEmbeddedSandbox(ctx context.Context, log *slog.Logger, webhookURL string, firms []sandbox.Firm, embedOrigins []string) (*embeddedSandbox, error) {
	sb, err := sandbox.New(sandbox.Options{
		Firms:           firms,
		EmbedOrigins:    embedOrigins,
		EmbedSameOrigin: true,
		// Its request lines at debug: they would bury the gateway's own, which say the same.
		Logger:     slog.New(loglevel.Demote(log.Handler())).With("component", "sandbox"),
		WebhookURL: webhookURL,
	})
	if err != nil {
		return nil, fmt.Errorf("start the embedded sandbox: %w", err)
	}
	// Free loopback ports, never the sandbox's usual ones: what a browser or curl needs of the
	// sandbox the gateway serves on its own origin (gateway.front), and the SFTP server and the
	// session host are the gateway's to use (the start-up line prints the SFTP address).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = sb.Close()
		return nil, fmt.Errorf("listen for the embedded sandbox: %w", err)
	}
	sftpSrv, sftpLn, err := sandboxserve.ListenSFTP(sb, "127.0.0.1:0", true)
	if err != nil {
		_ = ln.Close()
		_ = sb.Close()
		return nil, fmt.Errorf("the embedded sandbox: %w", err)
	}
	sessions, sessionLn, err := sandboxserve.ListenSessionHost(sb, sandbox.EnvUAT, "127.0.0.1:0", true)
	var enrollment sandbox.Enrollment
	if err == nil {
		// The gateway enrols itself, as an integrator does once at the enrollment host.
		enrollment, err = sessions.Enroll("advisor-gateway")
		if err != nil {
			_ = sessionLn.Close()
		}
	}
	if err != nil {
		_ = ln.Close()
		_ = sftpLn.Close()
		_ = sb.Close()
		return nil, fmt.Errorf("the embedded sandbox: %w", err)
	}
	// Not the signal's context: the gateway drains its in-flight requests after the signal, and
	// they may still need the sandbox; the caller stops it (stop) once the gateway has stopped.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() {
		done <- sandboxserve.Servers{Sandbox: sb, HTTP: ln, SFTP: sftpSrv, SFTPListener: sftpLn, Sessions: sessions, SessionListener: sessionLn}.Serve(ctx)
	}()
	demoWID, _ := sb.TopAccountWID(sandbox.DemoFamilyExternalID)
	return &embeddedSandbox{
		demoWID:     demoWID,
		url:         "http://" + ln.Addr().String(),
		handler:     sb,
		sftpAddr:    sftpLn.Addr().String(),
		fingerprint: sftpSrv.Fingerprint(),
		sessionURL:  "https://" + sessionLn.Addr().String(),
		enrollment:  enrollment,
		stop: func() {
			cancel()
			<-done
			_ = sb.Close()
		},
	}, nil
}

// transport carries calls to the embedded sandbox over next, saying they came to the host
// the caller's request came to, or to the gateway at base outside of one (sandboxTransport).
func (sb *embeddedSandbox) transport(next http.RoundTripper, base string) http.RoundTripper {
	return &sandboxTransport{next: next, loopback: strings.TrimPrefix(sb.url, "http://"), host: strings.TrimPrefix(base, "http://")}
}

// sandboxFirms are the embedded sandbox's firms as the gateway serves them: the same
// credentials, on both sides of the loopback.
func sandboxFirms(firms []sandbox.Firm) []tenant.Firm {
	out := make([]tenant.Firm, len(firms))
	for i, f := range firms {
		user, pass, _ := strings.Cut(f.SFTPCredentials, ":")
		out[i] = tenant.Firm{
			ID: f.ID, AccessToken: f.AccessToken, BasicCredentials: f.BasicCredentials, WebhookKey: f.WebhookKey,
			SFTP: tenant.SFTPLogin{User: user, Password: pass},
		}
	}
	return out
}

// randomKey is a webhook key for the embedded sandbox, which shares it with the gateway.
func randomKey() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	return hex.EncodeToString(b)
}

// loopbackURL is the gateway's address as the embedded sandbox, on this machine, reaches it.
func loopbackURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return "http://" + a.String()
	}
	return "http://" + net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

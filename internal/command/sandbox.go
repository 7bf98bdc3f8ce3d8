package command

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxserve"
)

// runSandbox serves the sandbox alone (`sandbox`), printing how to reach each of its
// interfaces with which credentials, or (`sandbox enroll`) issues a certificate of its session host.
func runSandbox(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "enroll" {
		return runEnroll(args[1:], stdout, stderr)
	}
	cfg, err := sandbox.ParseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	cfg.Options.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	sb, err := sandbox.New(cfg.Options)
	if err != nil {
		return fmt.Errorf("start the sandbox: %w", err)
	}
	defer sb.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on -addr %s: %w", cfg.Addr, err)
	}
	// A credential set in the environment is the user's secret: say where it is, not what.
	token, creds := sandbox.DefaultAccessToken, sandbox.DefaultBasicCredentials
	if cfg.TokenFromEnv {
		token = "$SANDBOX_ACCESS_TOKEN"
	}
	if cfg.CredentialsFromEnv {
		creds = "$SANDBOX_BASIC_CREDENTIALS"
	}
	sftpLogin := "user and password " + sandbox.DefaultSFTPCredentials
	if cfg.SFTPCredentialsFromEnv {
		sftpLogin = "user and password $SANDBOX_SFTP_CREDENTIALS"
	}
	referralLogin := "x-api-key " + sandbox.DefaultReferralAPIKey + ", signing secret " + sandbox.DefaultReferralSecret
	if cfg.ReferralFromEnv {
		referralLogin = "x-api-key $SANDBOX_REFERRAL_API_KEY, signing secret $SANDBOX_REFERRAL_SECRET"
	}
	sftpSrv, sftpLn, err := sandboxserve.ListenSFTP(sb, cfg.SFTPAddr, cfg.SFTPAddr != sandbox.DefaultSFTPAddr)
	if err != nil {
		_ = ln.Close()
		return err
	}
	sessions, sessionLn, err := sandboxserve.ListenSessionHost(sb, cfg.SessionEnv, cfg.SessionAddr, cfg.SessionAddr != sandbox.DefaultSessionAddr)
	if err != nil {
		_ = ln.Close()
		_ = sftpLn.Close()
		return err
	}
	fmt.Fprintf(stdout, `Advisor sandbox serving http://%[1]s
  v2 paths: Authorization: Bearer %[2]s
  v1 paths: Basic credentials %[3]s
  try:      curl -H "Authorization: Bearer %[2]s" http://%[1]s/v2/top-accounts/
  bulk:     sftp://%[4]s (%[5]s), host key %[6]s
  referral: POST /v1/refer/{%[7]s} (%[8]s)
  sessions: https://%[9]s (mutual TLS, HTTP/2; %[10]s certificates: go run . sandbox enroll -file-dir %[11]s -env %[10]s -out DIR)
  firms:    %[12]s with the credentials above; %[13]s with Bearer %[14]s, Basic and SFTP %[15]s, webhook key %[16]s
`, ln.Addr(), token, creds, sftpLn.Addr(), sftpLogin, sftpSrv.Fingerprint(), strings.Join(cfg.Options.Partners, ","), referralLogin,
		sessionLn.Addr(), sessions.Env, sessions.Dir,
		sandbox.DemoFirmID, sandbox.SecondFirmID, sandbox.SecondAccessToken, sandbox.SecondBasicCredentials, sandbox.SecondWebhookKey)
	return sandboxserve.Servers{Sandbox: sb, HTTP: ln, SFTP: sftpSrv, SFTPListener: sftpLn, Sessions: sessions, SessionListener: sessionLn}.Serve(ctx)
}

// runEnroll issues a client certificate of the sandbox's session host (`sandbox enroll`).
func runEnroll(args []string, stdout, stderr io.Writer) error {
	cfg, err := sandbox.ParseEnrollFlags(args, stderr)
	if err != nil {
		return err
	}
	now := time.Now()
	e, err := sandbox.Enroll(cfg.FileDir, cfg.Env, cfg.Name, now.Add(-time.Minute), now.Add(cfg.TTL))
	if err != nil {
		return fmt.Errorf("sandbox enroll: %w", err)
	}
	if err := sandbox.WriteEnrollment(e, cfg.Out); err != nil {
		return fmt.Errorf("sandbox enroll: %w", err)
	}
	fmt.Fprintf(stdout, "Enrolled %q for %s until %s: %s/client.crt, client.key and the host's CA ca.crt\n",
		cfg.Name, cfg.Env, e.NotAfter.UTC().Format(time.RFC3339), cfg.Out)
	return nil
}

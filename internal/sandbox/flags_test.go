package sandbox_test

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox"
)

func TestParseFlagsDefaults(t *testing.T) {
	cfg, err := sandbox.ParseFlags(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatalf("got %v, want no error", err)
	}
	want := sandbox.Config{Addr: "127.0.0.1:9090", SFTPAddr: "127.0.0.1:2222", Options: sandbox.Options{MaxFileSize: advisorspec.MaxFileSize}}
	if cfg.Addr != want.Addr || cfg.Options.MaxFileSize != want.Options.MaxFileSize || cfg.Options.AccessToken != "" ||
		cfg.Options.BasicCredentials != "" || cfg.Options.WebhookURL != "" || cfg.TokenFromEnv || cfg.CredentialsFromEnv ||
		cfg.SFTPAddr != want.SFTPAddr || cfg.Options.SFTPCredentials != "" || cfg.Options.SFTPAuthorizedKeys != "" || cfg.SFTPCredentialsFromEnv {
		t.Errorf("got %+v, want %+v", cfg, want)
	}
}

func TestParseFlagsReadsFlagsAndEnvironment(t *testing.T) {
	args := []string{"-addr", "0.0.0.0:9999", "-seed", "7", "-empty", "-max-file-size", "2MiB", "-processing-delay", "3s",
		"-file-dir", "/tmp/files", "-public-url", "https://sandbox.example", "-webhook-url", "http://localhost:8080/webhooks",
		"-sftp-addr", "0.0.0.0:2022", "-sftp-authorized-keys", "/etc/keys", "-partners", "p-1, p-2"}
	env := map[string]string{
		"SANDBOX_ACCESS_TOKEN": "tok", "SANDBOX_BASIC_CREDENTIALS": "ann:pw", "SANDBOX_WEBHOOK_KEY": "key-1",
		"SANDBOX_SFTP_CREDENTIALS": "bob:pw:with:colons",
		"SANDBOX_REFERRAL_API_KEY": "ref-key", "SANDBOX_REFERRAL_SECRET": "ref-secret",
	}
	cfg, err := sandbox.ParseFlags(args, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("got %v, want no error", err)
	}
	o := cfg.Options
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"addr", cfg.Addr, "0.0.0.0:9999"},
		{"seed", o.Seed, uint64(7)},
		{"empty", o.Empty, true},
		{"max-file-size", o.MaxFileSize, int64(2 << 20)},
		{"processing-delay", o.ProcessingDelay, 3 * time.Second},
		{"file-dir", o.FileDir, "/tmp/files"},
		{"public-url", o.PublicURL, "https://sandbox.example"},
		{"webhook-url", o.WebhookURL, "http://localhost:8080/webhooks"},
		{"SANDBOX_ACCESS_TOKEN", o.AccessToken, "tok"},
		{"SANDBOX_BASIC_CREDENTIALS", o.BasicCredentials, "ann:pw"},
		{"SANDBOX_WEBHOOK_KEY", o.WebhookKey, "key-1"},
		{"token from the environment", cfg.TokenFromEnv, true},
		{"credentials from the environment", cfg.CredentialsFromEnv, true},
		{"sftp-addr", cfg.SFTPAddr, "0.0.0.0:2022"},
		{"sftp-authorized-keys", o.SFTPAuthorizedKeys, "/etc/keys"},
		{"SANDBOX_SFTP_CREDENTIALS", o.SFTPCredentials, "bob:pw:with:colons"},
		{"SFTP credentials from the environment", cfg.SFTPCredentialsFromEnv, true},
		{"partners", strings.Join(o.Partners, ","), "p-1,p-2"},
		{"SANDBOX_REFERRAL_API_KEY", o.ReferralAPIKey, "ref-key"},
		{"SANDBOX_REFERRAL_SECRET", o.ReferralSecret, "ref-secret"},
		{"referral credentials from the environment", cfg.ReferralFromEnv, true},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestParseFlagsRefusesWithTheSettingsName(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"basic credentials without a colon", nil, map[string]string{"SANDBOX_BASIC_CREDENTIALS": "nocolon"}, "SANDBOX_BASIC_CREDENTIALS"},
		{"basic credentials without a password", nil, map[string]string{"SANDBOX_BASIC_CREDENTIALS": "ann:"}, "SANDBOX_BASIC_CREDENTIALS"},
		{"SFTP credentials without a colon", nil, map[string]string{"SANDBOX_SFTP_CREDENTIALS": "nocolon"}, "SANDBOX_SFTP_CREDENTIALS"},
		{"SFTP credentials without a user", nil, map[string]string{"SANDBOX_SFTP_CREDENTIALS": ":pw"}, "SANDBOX_SFTP_CREDENTIALS"},
		{"SFTP credentials without a password", nil, map[string]string{"SANDBOX_SFTP_CREDENTIALS": "bob:"}, "SANDBOX_SFTP_CREDENTIALS"},
		{"an access token with a space", nil, map[string]string{"SANDBOX_ACCESS_TOKEN": "a b"}, "SANDBOX_ACCESS_TOKEN"},
		{"a webhook URL without a key", []string{"-webhook-url", "http://localhost:8080/webhooks"}, nil, "SANDBOX_WEBHOOK_KEY"},
		{"a referral key with a space", nil, map[string]string{"SANDBOX_REFERRAL_API_KEY": "a b"}, "SANDBOX_REFERRAL_API_KEY"},
		{"a referral secret with a space", nil, map[string]string{"SANDBOX_REFERRAL_SECRET": "a b"}, "SANDBOX_REFERRAL_SECRET"},
		{"no partners", []string{"-partners", " , "}, nil, "-partners"},
		{"a size that is not one", []string{"-max-file-size", "lots"}, nil, "max-file-size"},
		{"an unknown flag", []string{"-colour"}, nil, "colour"},
		{"a listen port that is no number", []string{"-addr", "127.0.0.1:not-a-port"}, nil, "-addr"},
		{"an SFTP port beyond the ports", []string{"-sftp-addr", "127.0.0.1:70000"}, nil, "-sftp-addr"},
		{"a session address with no port", []string{"-session-addr", "127.0.0.1"}, nil, "-session-addr"},
		{"a webhook URL with a bad port", []string{"-webhook-url", "http://localhost:port/webhooks"}, map[string]string{"SANDBOX_WEBHOOK_KEY": "k"}, "-webhook-url"},
		{"a public URL that is a path", []string{"-public-url", "/files"}, nil, "-public-url"},
		{"an argument that is not a flag", []string{"extra"}, nil, `unexpected argument "extra"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sandbox.ParseFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

func TestParseFlagsHelpNamesTheDefaultCredentials(t *testing.T) {
	var out strings.Builder
	_, err := sandbox.ParseFlags([]string{"-h"}, func(string) string { return "" }, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("got %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"Usage: go run . sandbox [flags]", sandbox.DefaultAccessToken, sandbox.DefaultBasicCredentials, "-webhook-url", "(default 5GiB)",
		"SANDBOX_SFTP_CREDENTIALS", "-sftp-addr", `(default "127.0.0.1:2222")`, "-sftp-authorized-keys"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help does not mention %q:\n%s", want, out.String())
		}
	}
}

func TestParseFlagsReadsEmbedOrigins(t *testing.T) {
	env := map[string]string{"SANDBOX_EMBED_ORIGINS": "https://crm.example.com, http://localhost:3000"}
	cfg, err := sandbox.ParseFlags(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil || strings.Join(cfg.Options.EmbedOrigins, " ") != "https://crm.example.com http://localhost:3000" {
		t.Errorf("got %q, %v; want the two origins", cfg.Options.EmbedOrigins, err)
	}
	env["SANDBOX_EMBED_ORIGINS"] = "crm.example.com"
	if _, err := sandbox.ParseFlags(nil, func(k string) string { return env[k] }, io.Discard); err == nil || !strings.Contains(err.Error(), "SANDBOX_EMBED_ORIGINS") {
		t.Errorf("got %v, want an error naming SANDBOX_EMBED_ORIGINS", err)
	}
}

package sandbox

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// DefaultAddr is where `go run . sandbox` listens unless told otherwise, and where the gateway's
// embedded sandbox listens when the address is free.
const DefaultAddr = "127.0.0.1:9090"

// DefaultSFTPAddr is where the sandbox's SFTP server listens unless told otherwise, and where
// the embedded sandbox's does when the address is free.
const DefaultSFTPAddr = sftpd.DefaultAddr

// Config is how the sandbox runs alone (`go run . sandbox`).
type Config struct {
	Addr string
	// SFTPAddr is where the SFTP server for bulk files listens.
	SFTPAddr string
	// SessionAddr is where the session host (mutual TLS, HTTP/2) listens, and SessionEnv the
	// environment whose client certificates it accepts.
	SessionAddr string
	SessionEnv  string
	Options     Options
	// TokenFromEnv, CredentialsFromEnv and SFTPCredentialsFromEnv say the credentials were set
	// by the environment, so their values are not printed.
	TokenFromEnv           bool
	CredentialsFromEnv     bool
	SFTPCredentialsFromEnv bool
	// ReferralFromEnv says the referral key or secret was set by the environment.
	ReferralFromEnv bool
}

// ParseFlags reads the sandbox's flags from args and its credentials from the environment, as
// a remote service reads its own configuration. Usage and flag errors are written to output.
// It returns flag.ErrHelp when help was asked for.
func ParseFlags(args []string, getenv func(string) string, output io.Writer) (Config, error) {
	cfg := Config{Addr: DefaultAddr, SFTPAddr: DefaultSFTPAddr, SessionAddr: DefaultSessionAddr, SessionEnv: EnvUAT}
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() {
		fmt.Fprint(output, `Usage: go run . sandbox [flags]

Serves the Advisor service's REST interface from memory, seeded with demo data, for two
firms, each seeing only its own data. For the first, `+DemoFirmID+`:
v2 paths take "Authorization: Bearer $SANDBOX_ACCESS_TOKEN" (default `+DefaultAccessToken+`);
v1 paths take Basic credentials $SANDBOX_BASIC_CREDENTIALS (default `+DefaultBasicCredentials+`).
Bulk files arrive over SFTP with the password of $SANDBOX_SFTP_CREDENTIALS (default `+DefaultSFTPCredentials+`)
or a key of -sftp-authorized-keys; its host key is kept in -file-dir. Its webhook key is $SANDBOX_WEBHOOK_KEY.
The second, `+SecondFirmID+`, takes bearer token `+SecondAccessToken+`, Basic credentials
`+SecondBasicCredentials+` and SFTP credentials `+SecondSFTPCredentials+`; its webhook key is `+SecondWebhookKey+`.
Pages that may embed the chat: $SANDBOX_EMBED_ORIGINS, comma-separated origins
(default `+strings.Join(DefaultEmbedOrigins, ",")+`).
POST /v1/refer/{partner_id} takes x-api-key $SANDBOX_REFERRAL_API_KEY (default `+DefaultReferralAPIKey+`)
and user-data-signature, the hex HMAC-SHA256 of the body with $SANDBOX_REFERRAL_SECRET (default `+DefaultReferralSecret+`).

Flags:
`)
		fs.PrintDefaults()
	}
	maxFile := sizeFlag(advisorspec.MaxFileSize)
	fs.StringVar(&cfg.Addr, "addr", DefaultAddr, "`host:port` to listen on")
	fs.Uint64Var(&cfg.Options.Seed, "seed", 0, "non-zero: the same ids and demo data on every run")
	fs.BoolVar(&cfg.Options.Empty, "empty", false, "start with no data instead of the demo data")
	fs.Var(&maxFile, "max-file-size", "largest upload accepted, in bytes or with a unit (KiB, MiB, GiB, KB, MB, GB)")
	fs.DurationVar(&cfg.Options.ProcessingDelay, "processing-delay", 0, "how long an uploaded file is \"not ready\"")
	fs.StringVar(&cfg.Options.FileDir, "file-dir", "", "directory for uploaded files (default: a temporary one, removed on exit)")
	fs.StringVar(&cfg.Options.PublicURL, "public-url", "", "base `URL` of presigned addresses (default: the host each request came to)")
	fs.StringVar(&cfg.Options.WebhookURL, "webhook-url", "", "`URL` to POST webhook events to, such as http://localhost:8080/webhooks (key: $SANDBOX_WEBHOOK_KEY)")
	fs.StringVar(&cfg.SFTPAddr, "sftp-addr", DefaultSFTPAddr, "`host:port` the SFTP server for bulk files listens on")
	fs.StringVar(&cfg.Options.SFTPAuthorizedKeys, "sftp-authorized-keys", "", "authorized_keys `file` of public keys that may log in to SFTP as the user of $SANDBOX_SFTP_CREDENTIALS")
	fs.StringVar(&cfg.SessionAddr, "session-addr", DefaultSessionAddr, "`host:port` the session host (mutual TLS, HTTP/2 only) listens on")
	fs.StringVar(&cfg.SessionEnv, "session-env", EnvUAT, "the `environment` (uat or production) whose client certificates the session host accepts")
	fs.DurationVar(&cfg.Options.SessionTTL, "session-ttl", DefaultSessionTTL, "how long an assistant session token lasts")
	partners := fs.String("partners", strings.Join(DefaultReferralPartners, ","), "comma-separated referral partner `ids` the sandbox knows")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return cfg, fmt.Errorf("sandbox: unexpected argument %q", fs.Arg(0))
	}
	cfg.Options.MaxFileSize = int64(maxFile)
	// A malformed address would start the sandbox and fail later (a webhook never sent, a
	// listener on a port nobody asked for); refuse it here, naming the flag.
	for _, a := range []struct{ flag, value string }{
		{"-addr", cfg.Addr}, {"-sftp-addr", cfg.SFTPAddr}, {"-session-addr", cfg.SessionAddr},
	} {
		if err := checkListenAddr(a.value); err != nil {
			return cfg, fmt.Errorf("%s: %w", a.flag, err)
		}
	}
	for _, u := range []struct{ flag, value string }{
		{"-public-url", cfg.Options.PublicURL}, {"-webhook-url", cfg.Options.WebhookURL},
	} {
		if err := checkURL(u.value); u.value != "" && err != nil {
			return cfg, fmt.Errorf("%s %q: %w", u.flag, u.value, err)
		}
	}
	if !slices.Contains(Environments, cfg.SessionEnv) {
		return cfg, fmt.Errorf("-session-env %q: want %s or %s", cfg.SessionEnv, EnvUAT, EnvProduction)
	}
	if cfg.Options.SessionTTL <= 0 {
		return cfg, fmt.Errorf("-session-ttl %s: want a positive duration", cfg.Options.SessionTTL)
	}
	cfg.Options.Partners = []string{}
	for _, p := range strings.Split(*partners, ",") {
		if p = strings.TrimSpace(p); p != "" {
			cfg.Options.Partners = append(cfg.Options.Partners, p)
		}
	}
	if len(cfg.Options.Partners) == 0 {
		return cfg, errors.New("-partners must name at least one partner id")
	}

	if v := getenv("SANDBOX_ACCESS_TOKEN"); v != "" {
		if strings.TrimSpace(v) != v || strings.ContainsAny(v, " \t\r\n") {
			return cfg, errors.New("SANDBOX_ACCESS_TOKEN must not contain spaces")
		}
		cfg.Options.AccessToken, cfg.TokenFromEnv = v, true
	}
	if v := getenv("SANDBOX_BASIC_CREDENTIALS"); v != "" {
		if user, pass, ok := strings.Cut(v, ":"); !ok || user == "" || pass == "" {
			return cfg, errors.New(`SANDBOX_BASIC_CREDENTIALS must have the form "user:password"`)
		}
		cfg.Options.BasicCredentials, cfg.CredentialsFromEnv = v, true
	}
	if v := getenv("SANDBOX_SFTP_CREDENTIALS"); v != "" {
		if user, pass, ok := strings.Cut(v, ":"); !ok || user == "" || pass == "" {
			return cfg, errors.New(`SANDBOX_SFTP_CREDENTIALS must have the form "user:password"`)
		}
		cfg.Options.SFTPCredentials, cfg.SFTPCredentialsFromEnv = v, true
	}
	if v := getenv("SANDBOX_EMBED_ORIGINS"); v != "" {
		origins, err := ParseEmbedOrigins(v)
		if err != nil {
			return cfg, fmt.Errorf("SANDBOX_EMBED_ORIGINS: %w", err)
		}
		cfg.Options.EmbedOrigins = origins
	}
	for _, s := range []struct {
		name string
		dst  *string
	}{
		{"SANDBOX_REFERRAL_API_KEY", &cfg.Options.ReferralAPIKey},
		{"SANDBOX_REFERRAL_SECRET", &cfg.Options.ReferralSecret},
	} {
		if v := getenv(s.name); v != "" {
			if strings.ContainsAny(v, " \t\r\n") {
				return cfg, fmt.Errorf("%s must not contain spaces", s.name)
			}
			*s.dst, cfg.ReferralFromEnv = v, true
		}
	}
	cfg.Options.WebhookKey = getenv("SANDBOX_WEBHOOK_KEY")
	if cfg.Options.WebhookURL != "" && cfg.Options.WebhookKey == "" {
		return cfg, errors.New("-webhook-url needs SANDBOX_WEBHOOK_KEY: the service-api-key the receiver expects")
	}
	return cfg, nil
}

// ParseEmbedOrigins reads a comma-separated list of origins, such as
// "https://crm.example.com,http://localhost:8080": the pages that may embed the chat.
func ParseEmbedOrigins(v string) ([]string, error) {
	var origins []string
	for _, o := range strings.Split(v, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil || u.Fragment != "" {
			return nil, fmt.Errorf("%q is not an origin such as https://crm.example.com", o)
		}
		origins = append(origins, u.Scheme+"://"+u.Host)
	}
	if len(origins) == 0 {
		return nil, errors.New("names no origin")
	}
	return origins, nil
}

// checkListenAddr accepts a host:port to listen on; port 0 asks for a free one.
func checkListenAddr(v string) error {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("%q is not a host:port such as 127.0.0.1:9090", v)
	}
	return checkPort(port, true)
}

// checkURL accepts an absolute http or https URL naming a host and, if any, a real port.
func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return errors.New("not an absolute http or https URL")
	}
	if p := u.Port(); p != "" {
		return checkPort(p, false)
	}
	return nil
}

func checkPort(port string, zero bool) error {
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 || n == 0 && !zero {
		return fmt.Errorf("port %q is not a port number (1 to 65535)", port)
	}
	return nil
}

// sizeFlag is a byte count written as a number with an optional unit.
type sizeFlag int64

// String writes the size as Set reads it, in the largest binary unit that divides it.
func (s *sizeFlag) String() string { return strings.ReplaceAll(formatSize(int64(*s)), " ", "") }

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// EnrollConfig is what `sandbox enroll` does: issue a client certificate of Env's CA, kept in
// FileDir, into Out.
type EnrollConfig struct {
	Env, FileDir, Out, Name string
	TTL                     time.Duration
}

// ParseEnrollFlags reads `sandbox enroll`'s flags.
func ParseEnrollFlags(args []string, output io.Writer) (EnrollConfig, error) {
	cfg := EnrollConfig{}
	fs := flag.NewFlagSet("sandbox enroll", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() {
		fmt.Fprint(output, `Usage: go run . sandbox enroll -file-dir DIR -env uat|production -out DIR

Issues a client certificate for the sandbox's session host, as the service's enrollment host
does: client.crt, client.key and the host's CA, ca.crt, written to -out. The CA of each
environment is kept in the -file-dir the sandbox runs with; a certificate of one environment
is refused by a session host of the other.

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.Env, "env", EnvUAT, "the `environment`: uat or production")
	fs.StringVar(&cfg.FileDir, "file-dir", "", "the sandbox's -file-dir, where the CAs are kept (required)")
	fs.StringVar(&cfg.Out, "out", "", "`directory` to write client.crt, client.key and ca.crt to (required)")
	fs.StringVar(&cfg.Name, "name", "gateway", "the certificate's common name")
	fs.DurationVar(&cfg.TTL, "ttl", DefaultClientCertTTL, "how long the certificate is valid")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("sandbox enroll: unexpected argument %q", fs.Arg(0))
	case cfg.FileDir == "":
		return cfg, errors.New("sandbox enroll: -file-dir is required: the directory the sandbox runs with, which keeps its CAs")
	case cfg.Out == "":
		return cfg, errors.New("sandbox enroll: -out is required: the directory to write the certificate to")
	case !slices.Contains(Environments, cfg.Env):
		return cfg, fmt.Errorf("sandbox enroll: -env %q: want %s or %s", cfg.Env, EnvUAT, EnvProduction)
	case cfg.TTL <= 0:
		return cfg, fmt.Errorf("sandbox enroll: -ttl %s: want a positive duration", cfg.TTL)
	}
	return cfg, nil
}

package config_test

import (
	"encoding/json"
	"flag"
	"maps"
	"net"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/config"
	"github.com/advisorhq/gateway/internal/oplimit"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Without settings the gateway answers a caller with no token as the demo advisor, so it
// listens on this machine only; listening beyond it is the operator's choice (ADDR=:8080).
func TestWithoutSettingsTheGatewayListensOnLoopbackOnly(t *testing.T) {
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Errorf("default ADDR = %q, want a loopback address", cfg.Addr)
	}
}

// The defaults are what production gets when a setting is left out: the golden file makes a
// change to any of them visible in review. Run go test ./internal/config -update to rewrite it.
func TestGatewayDefaultsMatchTheirGoldenFile(t *testing.T) {
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(cfg, "", "  ")
	got = append(got, '\n')
	const golden = "testdata/defaults.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read %s (create it with -update): %v", golden, err)
	}
	if string(got) != string(want) {
		t.Errorf("defaults changed:\n%s\nwant\n%s", got, want)
	}
}

func TestInvalidSettingsAreAllReportedByName(t *testing.T) {
	env := map[string]string{
		"ADDR": "nope", "UPSTREAM_TIMEOUT": "-1s", "CORS_ALLOWED_ORIGINS": "https://ok.example, not an origin",
		"MAX_REQUEST_BYTES": "lots", "MAX_UPLOAD_FILES": "0", "GRAPHQL_INTROSPECTION": "maybe",
		"ADVISOR_BASE_URL": "ftp://x", "ADVISOR_BASIC_CREDENTIALS": "nocolon",
		"REDIS_URL": "http://user:hunter2@redis.example", "WEBHOOK_API_KEY": "short",
		"EVENT_HISTORY": "0", "EVENT_DEDUP_WINDOW": "forever", "SUBSCRIBER_BUFFER": "-3",
		"STREAM_KEEPALIVE": "0s", "GRAPHQL_MAX_TOKENS": "many", "GRAPHQL_MAX_DEPTH": "0",
		"GRAPHQL_MAX_ALIASES": "-1", "GRAPHQL_MAX_ROOT_FIELDS": "x", "GRAPHQL_MAX_COST": "1.5",
		"MAX_RESPONSE_BYTES": "huge", "UPSTREAM_REQUEST_BUDGET": "0", "UPSTREAM_MAX_CONNECTIONS": "none",
		"MAX_SUBSCRIPTIONS_PER_SOCKET": "-5", "UPLOAD_DISK_BUDGET": "some", "REQUEST_BODY_TIMEOUT": "0s",
		"MAX_CONNECTIONS": "unlimited", "EVENTS_OUTAGE_GRACE": "long",
		"GRAPHQL_COMPLEXITY_LIMIT": "5000", "GRAPHQL_BATCH_LIMIT": "-1", "PERSISTED_QUERIES": "sometimes",
		"PERSISTED_QUERY_TTL": "0s", "PERSISTED_QUERY_MAX_AGE": "1.5s", "PERSISTED_OPERATIONS_ONLY": "true",
		"RATE_LIMIT": "-1", "RATE_LIMIT_BURST": "many", "RATE_LIMIT_SUBSCRIPTIONS": "x", "RATE_LIMIT_COST": "5",
	}
	_, err := config.Load(func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("Load accepted invalid settings")
	}
	for name := range env {
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("the error does not name %s:\n%v", name, err)
		}
	}
	for _, secret := range []string{"hunter2", "short"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the secret %q:\n%v", secret, err)
		}
	}
	_, err = config.Load(func(k string) string {
		return map[string]string{"UPLOAD_DISK_BUDGET": "1GiB", "MAX_UPLOAD_BYTES": "2GiB"}[k]
	})
	if err == nil || !strings.Contains(err.Error(), "UPLOAD_DISK_BUDGET: 1 GiB is less than MAX_UPLOAD_BYTES (2 GiB)") {
		t.Errorf("a disk budget below the largest upload: %v, want it refused", err)
	}
	_, err = config.Load(func(k string) string {
		return map[string]string{"ADVISOR_BASE_URL": "https://advisor.example"}[k]
	})
	if err == nil || !strings.Contains(err.Error(), "ADVISOR_ACCESS_TOKEN: required") {
		t.Errorf("a base URL without a token: %v, want ADVISOR_ACCESS_TOKEN required", err)
	}
	_, err = config.Load(func(k string) string {
		return map[string]string{"ADVISOR_BASE_URL": "https://advisor.example", "ADVISOR_FIRM": "firm-1", "ADVISOR_ACCESS_TOKEN": "t"}[k]
	})
	if err == nil || !strings.Contains(err.Error(), "WEBHOOK_API_KEY: required") {
		t.Errorf("production without a webhook key: %v, want WEBHOOK_API_KEY required", err)
	}
	_, err = config.Load(func(k string) string { return map[string]string{"ADVISOR_ACCESS_TOKEN": "t"}[k] })
	if err == nil || !strings.Contains(err.Error(), "ADVISOR_BASE_URL: required") {
		t.Errorf("a token without a base URL: %v, want ADVISOR_BASE_URL required", err)
	}
}

func TestEventSettingsAreRead(t *testing.T) {
	env := map[string]string{
		"REDIS_URL": "redis://127.0.0.1:6379/3", "REDIS_KEY_PREFIX": "staging:",
		"WEBHOOK_API_KEY": "0123456789abcdef", "EVENT_HISTORY": "500", "EVENT_DEDUP_WINDOW": "96h",
		"SUBSCRIBER_BUFFER": "32", "STREAM_KEEPALIVE": "5s",
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RedisURL != env["REDIS_URL"] || cfg.RedisKeyPrefix != "staging:" || cfg.WebhookAPIKey != env["WEBHOOK_API_KEY"] ||
		cfg.EventHistory != 500 || cfg.DedupWindow != 96*time.Hour || cfg.SubscriberBuffer != 32 || cfg.KeepAlive != 5*time.Second {
		t.Errorf("event settings not read: %+v", cfg)
	}
}

// The operation limits' defaults are declared here, once; oplimit's own Defaults (which its
// tests use) must say the same.
func TestOperationLimitDefaultsAgreeWithOplimit(t *testing.T) {
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	want := oplimit.Defaults()
	got := oplimit.Limits{Tokens: cfg.MaxTokens, Depth: cfg.MaxDepth, Aliases: cfg.MaxAliases,
		RootFields: cfg.MaxRootFields, Cost: cfg.MaxCost, ResponseBytes: cfg.MaxResponseBytes, ListSizes: want.ListSizes}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config's limits %+v, oplimit.Defaults() %+v", got, want)
	}
}

func TestBulkSFTPSettingsNeedALoginAndAHostKey(t *testing.T) {
	t.Parallel()
	prod := map[string]string{
		"ADVISOR_BASE_URL": "https://advisor.example", "ADVISOR_FIRM": "firm-1", "ADVISOR_ACCESS_TOKEN": "t", "WEBHOOK_API_KEY": "0123456789abcdef",
		"AUTH_DISABLED": "true",
	}
	fp := "SHA256:" + strings.Repeat("A", 43)
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // in the error; empty: accepted
	}{
		{"none against the service: bulk off", nil, ""},
		{"a password and a fingerprint", map[string]string{"BULK_SFTP_ADDR": "sftp.example:22", "BULK_SFTP_USER": "firm", "BULK_SFTP_PASSWORD": "pw", "BULK_SFTP_HOST_KEY_FINGERPRINT": fp}, ""},
		{"a key and known hosts", map[string]string{"BULK_SFTP_ADDR": "sftp.example:22", "BULK_SFTP_USER": "firm", "BULK_SFTP_KEY_FILE": "/k", "BULK_SFTP_KNOWN_HOSTS": "/kh"}, ""},
		{"no address", map[string]string{"BULK_SFTP_USER": "firm"}, "BULK_SFTP_ADDR: required when BULK_SFTP_USER is set"},
		{"a bad address", map[string]string{"BULK_SFTP_ADDR": "sftp.example"}, "BULK_SFTP_ADDR: \"sftp.example\" is not a host:port"},
		{"no user", map[string]string{"BULK_SFTP_ADDR": "s:22", "BULK_SFTP_PASSWORD": "pw", "BULK_SFTP_KNOWN_HOSTS": "/kh"}, "BULK_SFTP_USER: required"},
		{"no password or key", map[string]string{"BULK_SFTP_ADDR": "s:22", "BULK_SFTP_USER": "u", "BULK_SFTP_KNOWN_HOSTS": "/kh"}, "BULK_SFTP_PASSWORD: required"},
		{"both password and key", map[string]string{"BULK_SFTP_ADDR": "s:22", "BULK_SFTP_USER": "u", "BULK_SFTP_PASSWORD": "pw", "BULK_SFTP_KEY_FILE": "/k", "BULK_SFTP_KNOWN_HOSTS": "/kh"}, "BULK_SFTP_KEY_FILE: set it or BULK_SFTP_PASSWORD, not both"},
		{"no host key", map[string]string{"BULK_SFTP_ADDR": "s:22", "BULK_SFTP_USER": "u", "BULK_SFTP_PASSWORD": "pw"}, "BULK_SFTP_KNOWN_HOSTS: required"},
		{"both host keys", map[string]string{"BULK_SFTP_ADDR": "s:22", "BULK_SFTP_USER": "u", "BULK_SFTP_PASSWORD": "pw", "BULK_SFTP_KNOWN_HOSTS": "/kh", "BULK_SFTP_HOST_KEY_FINGERPRINT": fp}, "not both"},
		{"a bad fingerprint", map[string]string{"BULK_SFTP_HOST_KEY_FINGERPRINT": "MD5:aa:bb"}, "BULK_SFTP_HOST_KEY_FINGERPRINT: must be a SHA256 fingerprint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			maps.Copy(env, prod)
			maps.Copy(env, tc.env)
			cfg, err := config.Load(func(k string) string { return env[k] })
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			case tc.want != "" && strings.Contains(err.Error(), "pw"):
				t.Fatalf("the error shows the password: %v", err)
			case tc.want == "" && cfg.Bulk.Configured() != (tc.env != nil):
				t.Fatalf("configured %v for %v", cfg.Bulk.Configured(), tc.env)
			}
		})
	}
	// Against the embedded sandbox, its own SFTP server takes the files.
	_, err := config.Load(func(k string) string { return map[string]string{"BULK_SFTP_ADDR": "s:22"}[k] })
	if err == nil || !strings.Contains(err.Error(), "ADVISOR_BASE_URL: required when BULK_SFTP_ADDR is set") {
		t.Errorf("bulk settings without the service: %v", err)
	}
}

func TestCallerAuthenticationIsRequiredAgainstTheService(t *testing.T) {
	t.Parallel()
	prod := map[string]string{
		"ADVISOR_BASE_URL": "https://advisor.example", "ADVISOR_FIRM": "firm-1", "ADVISOR_ACCESS_TOKEN": "t", "WEBHOOK_API_KEY": "0123456789abcdef",
	}
	jwks := "https://idp.example/.well-known/jwks.json"
	for _, tc := range []struct {
		name    string
		sandbox bool
		env     map[string]string
		want    string // in the error; empty: accepted
	}{
		{"nothing against the service", false, nil, "AUTH_JWKS_URL: required when ADVISOR_BASE_URL is set"},
		{"a JWKS", false, map[string]string{"AUTH_JWKS_URL": jwks, "AUTH_ISSUER": "https://idp.example", "AUTH_AUDIENCE": "gw"}, ""},
		{"disabled behind a proxy", false, map[string]string{"AUTH_DISABLED": "true"}, ""},
		{"disabled and a JWKS", false, map[string]string{"AUTH_DISABLED": "true", "AUTH_JWKS_URL": jwks}, "AUTH_DISABLED: true says nothing is verified"},
		{"disabled is not a bool", false, map[string]string{"AUTH_DISABLED": "yes please"}, "AUTH_DISABLED: \"yes please\" is not true or false"},
		{"a JWKS that is not a URL", false, map[string]string{"AUTH_JWKS_URL": "idp.example/jwks"}, "AUTH_JWKS_URL: must be an absolute http or https URL"},
		{"the same claim twice", false, map[string]string{"AUTH_JWKS_URL": jwks, "AUTH_FIRM_CLAIM": "sub"}, "AUTH_FIRM_CLAIM: names the claim \"sub\""},
		{"an issuer without a JWKS", false, map[string]string{"AUTH_DISABLED": "true", "AUTH_ISSUER": "x"}, "AUTH_ISSUER: needs AUTH_JWKS_URL"},
		{"the sandbox needs nothing", true, nil, ""},
		{"the sandbox with an audience of its own", true, map[string]string{"AUTH_AUDIENCE": "x"}, "AUTH_AUDIENCE: needs AUTH_JWKS_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ok := load(t, prodUnless(tc.sandbox, prod), tc.env, tc.want)
			if ok && (cfg.Auth.AdvisorClaim != "sub" || cfg.Auth.FirmClaim != "firm_id") {
				t.Fatalf("claims %q and %q, want the defaults sub and firm_id", cfg.Auth.AdvisorClaim, cfg.Auth.FirmClaim)
			}
		})
	}
}

func TestReferralSettingsGoTogether(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want string // "" for accepted
	}{
		{"none", nil, ""},
		{"all three", map[string]string{"REFERRAL_URL": "https://ref.example/", "REFERRAL_API_KEY": "k", "REFERRAL_SIGNING_SECRET": "s"}, ""},
		{"a URL that is not http", map[string]string{"REFERRAL_URL": "ftp://ref.example", "REFERRAL_API_KEY": "k", "REFERRAL_SIGNING_SECRET": "s"}, "REFERRAL_URL: must be an absolute http or https URL"},
		{"a relative URL", map[string]string{"REFERRAL_URL": "/refer", "REFERRAL_API_KEY": "k", "REFERRAL_SIGNING_SECRET": "s"}, "REFERRAL_URL: must be an absolute http or https URL"},
		{"a URL without a key", map[string]string{"REFERRAL_URL": "https://ref.example", "REFERRAL_SIGNING_SECRET": "s"}, "REFERRAL_API_KEY: required when REFERRAL_URL is set"},
		{"a URL without a secret", map[string]string{"REFERRAL_URL": "https://ref.example", "REFERRAL_API_KEY": "k"}, "REFERRAL_SIGNING_SECRET: required when REFERRAL_URL is set"},
		{"credentials without a URL", map[string]string{"REFERRAL_API_KEY": "k"}, "REFERRAL_URL: required when REFERRAL_API_KEY or REFERRAL_SIGNING_SECRET is set"},
		{"a key with a space", map[string]string{"REFERRAL_URL": "https://ref.example", "REFERRAL_API_KEY": "k k", "REFERRAL_SIGNING_SECRET": "s"}, "REFERRAL_API_KEY: must not contain spaces"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := config.Load(func(k string) string { return c.env[k] })
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("got %v, want no error", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			case c.want == "" && c.env["REFERRAL_URL"] != "" && cfg.ReferralURL != "https://ref.example":
				t.Errorf("got REFERRAL_URL %q, want it without the trailing slash", cfg.ReferralURL)
			}
			if err != nil && strings.Contains(err.Error(), "k k") {
				t.Errorf("the error shows the key: %v", err)
			}
		})
	}
}

func TestAssistantSessionSettingsGoTogether(t *testing.T) {
	t.Parallel()
	prod := map[string]string{
		"ADVISOR_BASE_URL": "https://advisor.example", "ADVISOR_FIRM": "firm-1", "ADVISOR_ACCESS_TOKEN": "t", "WEBHOOK_API_KEY": "0123456789abcdef",
		"AUTH_DISABLED": "true",
	}
	for _, tc := range []struct {
		name    string
		sandbox bool
		env     map[string]string
		want    string // in the error; empty: accepted
	}{
		{"none: sessions off", false, nil, ""},
		{"all four", false, map[string]string{"ASSISTANT_SESSION_URL": "https://session.example/", "ASSISTANT_CLIENT_CERT": "/c", "ASSISTANT_CLIENT_KEY": "/k", "ASSISTANT_SERVER_CA": "/ca"}, ""},
		{"the system's roots", false, map[string]string{"ASSISTANT_SESSION_URL": "https://session.example", "ASSISTANT_CLIENT_CERT": "/c", "ASSISTANT_CLIENT_KEY": "/k"}, ""},
		{"plain http", false, map[string]string{"ASSISTANT_SESSION_URL": "http://session.example", "ASSISTANT_CLIENT_CERT": "/c", "ASSISTANT_CLIENT_KEY": "/k"}, "ASSISTANT_SESSION_URL: must be an absolute https URL"},
		{"no certificate", false, map[string]string{"ASSISTANT_SESSION_URL": "https://session.example", "ASSISTANT_CLIENT_KEY": "/k"}, "ASSISTANT_CLIENT_CERT: required"},
		{"no key", false, map[string]string{"ASSISTANT_SESSION_URL": "https://session.example", "ASSISTANT_CLIENT_CERT": "/c"}, "ASSISTANT_CLIENT_KEY: required"},
		{"a certificate without the host", false, map[string]string{"ASSISTANT_CLIENT_CERT": "/c", "ASSISTANT_CLIENT_KEY": "/k"}, "ASSISTANT_SESSION_URL: required when ASSISTANT_CLIENT_CERT, ASSISTANT_CLIENT_KEY is set"},
		{"against the embedded sandbox", true, map[string]string{"ASSISTANT_SESSION_URL": "https://session.example"}, "ADVISOR_BASE_URL: required when ASSISTANT_SESSION_URL is set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ok := load(t, prodUnless(tc.sandbox, prod), tc.env, tc.want)
			switch {
			case ok && cfg.AssistantSession.Configured() != (tc.env != nil):
				t.Fatalf("configured %v for %v", cfg.AssistantSession.Configured(), tc.env)
			case ok && tc.env != nil && cfg.AssistantSession.URL != "https://session.example":
				t.Errorf("URL %q, want it without the trailing slash", cfg.AssistantSession.URL)
			}
		})
	}
}

// prodUnless is prod, or nothing for a case run against the embedded sandbox.
func prodUnless(sandbox bool, prod map[string]string) map[string]string {
	if sandbox {
		return nil
	}
	return prod
}

// load is config.Load of base and env together, which must be accepted when want is empty
// and refused with an error containing want otherwise; ok reports an accepted load.
func load(t *testing.T, base, env map[string]string, want string) (cfg config.Gateway, ok bool) {
	t.Helper()
	all := map[string]string{}
	maps.Copy(all, base)
	maps.Copy(all, env)
	cfg, err := config.Load(func(k string) string { return all[k] })
	switch {
	case want == "" && err != nil:
		t.Fatalf("refused: %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("got %v, want an error with %q", err, want)
	}
	return cfg, want == ""
}

// A cluster is named by REDIS_URL with more than one address, or by one address and
// REDIS_CLUSTER=true; a URL that is neither a server's nor a cluster's is refused by name.
func TestRedisClusterSettingsAreRead(t *testing.T) {
	for _, tc := range []struct {
		env         map[string]string
		wantCluster bool
		wantErr     string
	}{
		{map[string]string{"REDIS_URL": "redis://10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000"}, false, ""},
		{map[string]string{"REDIS_URL": "rediss://cfg.cache.example:6379", "REDIS_CLUSTER": "true"}, true, ""},
		{map[string]string{"REDIS_URL": "redis://10.0.0.1:7000?addr=10.0.0.2:7000&bogus=1"}, false, "REDIS_URL: must be a Redis URL"},
		{map[string]string{"REDIS_URL": "redis://10.0.0.1:7000", "REDIS_CLUSTER": "maybe"}, false, "REDIS_CLUSTER"},
		{map[string]string{"REDIS_URL": "redis://10.0.0.1:7000", "REDIS_KEY_PREFIX": "x{}"}, false, "REDIS_KEY_PREFIX: may not contain"},
	} {
		env := map[string]string{"WEBHOOK_API_KEY": "0123456789abcdef"}
		for k, v := range tc.env {
			env[k] = v
		}
		cfg, err := config.Load(func(k string) string { return env[k] })
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: got %v, want an error naming %s", tc.env, err, tc.wantErr)
			}
			continue
		}
		if err != nil || cfg.RedisURL != tc.env["REDIS_URL"] || cfg.RedisCluster != tc.wantCluster {
			t.Errorf("%v: got %+v, %v", tc.env, cfg.RedisCluster, err)
		}
	}
}

func TestRateLimitSettingsGoTogether(t *testing.T) {
	cases := []struct {
		env     map[string]string
		wantErr string
	}{
		{map[string]string{"RATE_LIMIT_BURST": "5"}, "RATE_LIMIT_BURST: needs RATE_LIMIT"},
		{map[string]string{"RATE_LIMIT_COST": "1000"}, "RATE_LIMIT_COST: 1000 a minute is less than GRAPHQL_MAX_COST (20000)"},
		{map[string]string{"RATE_LIMIT": "10"}, ""},
	}
	for _, tc := range cases {
		cfg, err := config.Load(func(k string) string { return tc.env[k] })
		if tc.wantErr == "" {
			if err != nil || cfg.RateLimitBurst != cfg.RateLimit {
				t.Errorf("%v: %v, burst %d; want it accepted with the burst the rate", tc.env, err, cfg.RateLimitBurst)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: got %v, want %q", tc.env, err, tc.wantErr)
		}
	}
}

// LOG_FORMAT is text or json; anything else is refused by name, with the formats there are.
func TestLogFormatIsTextOrJSON(t *testing.T) {
	for _, tc := range []struct {
		name, value, want, wantErr string
	}{
		{name: "unset is text", value: "", want: config.LogText},
		{name: "json", value: "json", want: config.LogJSON},
		{name: "text", value: "text", want: config.LogText},
		{name: "anything else is named", value: "logfmt", wantErr: `LOG_FORMAT: "logfmt" is not a log format: use text or json`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, ok := load(t, nil, map[string]string{"LOG_FORMAT": tc.value}, tc.wantErr)
			if ok && cfg.LogFormat != tc.want {
				t.Errorf("got %q, want %q", cfg.LogFormat, tc.want)
			}
		})
	}
}

// A malformed address would otherwise start the gateway and fail at the first request that
// uses it (the first bulk load, the first event); start-up stops instead, naming the setting.
func TestMalformedAddressesAndURLsStopStartUpNamingTheSetting(t *testing.T) {
	production := map[string]string{
		"ADVISOR_BASE_URL": "https://advisor.example", "ADVISOR_FIRM": "firm-1", "ADVISOR_ACCESS_TOKEN": "t",
		"WEBHOOK_API_KEY": "a-webhook-key-long-enough-to-pass", "AUTH_JWKS_URL": "https://idp.example/jwks.json",
		"BULK_SFTP_ADDR": "sftp.advisor.example:22", "BULK_SFTP_USER": "u", "BULK_SFTP_PASSWORD": "p",
		"BULK_SFTP_HOST_KEY_FINGERPRINT": "SHA256:" + strings.Repeat("A", 43),
	}
	if _, err := config.Load(func(k string) string { return production[k] }); err != nil {
		t.Fatalf("the valid production settings the cases start from are refused: %v", err)
	}
	for _, tc := range []struct{ name, value string }{
		{"ADDR", "127.0.0.1:not-a-port"},
		{"ADDR", ":99999"},
		{"ADDR", "127.0.0.1:-1"},
		{"BULK_SFTP_ADDR", "127.0.0.1:not-a-port"},
		{"BULK_SFTP_ADDR", "sftp.advisor.example:0"},
		{"BULK_SFTP_ADDR", "sftp.advisor.example:65536"},
		{"BULK_SFTP_ADDR", "[::1:22"},
		{"ADVISOR_BASE_URL", "https://advisor.example:99999"},
		{"ADVISOR_BASE_URL", "https://advisor.example:port"},
		{"ADVISOR_BASE_URL", "https://:443"},
		{"AUTH_JWKS_URL", "https://idp.example:0/jwks.json"},
		{"REDIS_URL", "redis://127.0.0.1:not-a-port"},
		{"REDIS_URL", "redis://127.0.0.1:70000/0"},
		{"REDIS_URL", "redis://127.0.0.1:7000?addr=127.0.0.1:not-a-port"},
		{"REFERRAL_URL", "https://referrals.example:65536"},
		{"ASSISTANT_EMBED_URL", "https://embed.example:123456"},
		{"ASSISTANT_SESSION_URL", "https://session.example:0"},
		{"CORS_ALLOWED_ORIGINS", "https://app.example:99999"},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			env := maps.Clone(production)
			env[tc.name] = tc.value
			_, err := config.Load(func(k string) string { return env[k] })
			if err == nil || !strings.Contains(err.Error(), tc.name+":") {
				t.Errorf("Load() = %v, want an error naming %s", err, tc.name)
			}
		})
	}
}

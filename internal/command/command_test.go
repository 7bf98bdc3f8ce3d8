package command_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/command"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sftpupload"
	"github.com/advisorhq/gateway/internal/testrun"
)

// The command line's tests run it as a user does, through command.Run with arguments and an
// environment, and read what it prints. The gateway's own behaviour is tested beside
// internal/gateway.

const webhookKey = "test-webhook-key-0123456789"

// run is the command line with args and env, until ctx ends.
func run(ctx context.Context, args []string, env map[string]string, stdout, stderr io.Writer) error {
	return command.Run(ctx, args, func(k string) string { return env[k] }, stdout, stderr)
}

// startedLines runs the command line with args and env until the test ends, its log going to
// logs, and returns the first line holding each marker, in the order the markers are given,
// once all have been printed.
func startedLines(t testing.TB, args []string, env map[string]string, logs io.Writer, markers ...string) []string {
	t.Helper()
	lines, _ := testrun.Start(t, func(ctx context.Context, stdout io.Writer) error { return run(ctx, args, env, stdout, logs) },
		func(line string) string { return line }, markers...)
	return lines
}

// started runs the command line and returns the first URL printed on a line that contains
// marker.
func started(t testing.TB, args []string, env map[string]string, marker string) string {
	t.Helper()
	return testrun.URL(startedLines(t, args, env, io.Discard, marker)[0])
}

// sample is a sample bulk file of the README's.
func sample(name string) string { return filepath.Join("..", "..", "docs", "examples", "bulk", name) }

func TestSandboxCommandServesTheDemoData(t *testing.T) {
	t.Parallel()
	base := started(t, []string{"sandbox", "-addr", "127.0.0.1:0", "-seed", "7"}, nil, "sandbox serving")
	req, _ := http.NewRequest("GET", base+"/v2/top-accounts/", nil)
	req.Header.Set("Authorization", "Bearer sandbox-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		TopAccounts []struct{ Name string } `json:"top_accounts"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != 200 {
		t.Fatalf("list top accounts: status %d, err %v", resp.StatusCode, err)
	}
	if len(page.TopAccounts) == 0 || page.TopAccounts[0].Name != "Hartwell Family" {
		t.Errorf("got top accounts %+v, want the demo families", page.TopAccounts)
	}
}

func TestSandboxCommandTakesCredentialsFromTheEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SANDBOX_ACCESS_TOKEN": "s3cret", "SANDBOX_BASIC_CREDENTIALS": "ann:pw"}
	base := started(t, []string{"sandbox", "-addr", "127.0.0.1:0"}, env, "sandbox serving")
	for _, tc := range []struct {
		name, path string
		auth       func(*http.Request)
		want       int
	}{
		{"the default token is refused", "/v2/top-accounts/", func(r *http.Request) { r.Header.Set("Authorization", "Bearer sandbox-token") }, 403},
		{"the configured token is accepted", "/v2/top-accounts/", func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }, 200},
		{"the configured basic credentials are accepted", "/v1/clients/CL-1001/contacts", func(r *http.Request) { r.SetBasicAuth("ann", "pw") }, 200},
		{"the default basic credentials are refused", "/v1/clients/CL-1001/contacts", func(r *http.Request) { r.SetBasicAuth("sandbox", "sandbox") }, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", base+tc.path, nil)
			tc.auth(req)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}

func TestGatewayServesGraphQLBesideTheEmbeddedSandbox(t *testing.T) {
	t.Parallel()
	base := started(t, nil, map[string]string{"ADDR": "127.0.0.1:0"}, "gateway serving")
	resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(`{"query":"{ version }"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Data struct{ Version string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || got.Data.Version == "" {
		t.Errorf("query { version }: %+v, %v", got, err)
	}
}

func TestInvalidSettingsStopStartUpNamingTheSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"ADDR that is not host:port", nil, map[string]string{"ADDR": "8080"}, "ADDR"},
		{"basic credentials without a colon", []string{"sandbox"}, map[string]string{"SANDBOX_BASIC_CREDENTIALS": "nocolon"}, "SANDBOX_BASIC_CREDENTIALS"},
		{"basic credentials without a password", []string{"sandbox"}, map[string]string{"SANDBOX_BASIC_CREDENTIALS": "ann:"}, "SANDBOX_BASIC_CREDENTIALS"},
		{"access token with a space", []string{"sandbox"}, map[string]string{"SANDBOX_ACCESS_TOKEN": "a b"}, "SANDBOX_ACCESS_TOKEN"},
		{"a size that is not one", []string{"sandbox", "-max-file-size", "lots"}, nil, "max-file-size"},
		{"an unknown flag", []string{"sandbox", "-colour"}, nil, "colour"},
		{"a public URL that is not absolute", []string{"sandbox", "-addr", "127.0.0.1:0", "-public-url", "example.com"}, nil, "-public-url"},
		{"an unknown command", []string{"serve"}, nil, `unknown command "serve"`},
		{"a session environment that is not one", []string{"sandbox", "-session-env", "staging"}, nil, `-session-env "staging"`},
		{"a client certificate file that is not there", nil, map[string]string{"ADDR": "127.0.0.1:0", "ADVISOR_BASE_URL": "http://127.0.0.1:1",
			"ADVISOR_FIRM": sandbox.DemoFirmID, "ADVISOR_ACCESS_TOKEN": "t", "WEBHOOK_API_KEY": webhookKey, "AUTH_DISABLED": "true", "ASSISTANT_SESSION_URL": "https://127.0.0.1:1",
			"ASSISTANT_CLIENT_CERT": "/nonexistent/client.crt", "ASSISTANT_CLIENT_KEY": "/nonexistent/client.key"}, "ASSISTANT_CLIENT_CERT and ASSISTANT_CLIENT_KEY"},
		{"enrolling without the sandbox's directory", []string{"sandbox", "enroll", "-out", "certs"}, nil, "-file-dir is required"},
		{"enrolling without a place to write", []string{"sandbox", "enroll", "-file-dir", "d"}, nil, "-out is required"},
		{"enrolling for an environment that is not one", []string{"sandbox", "enroll", "-file-dir", "d", "-out", "o", "-env", "qa"}, nil, `-env "qa"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := run(ctx, tc.args, tc.env, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// `go run . sandbox` says where its SFTP server is and which host key it presents, and names
// the setting its password came from rather than printing it.
func TestTheSandboxCommandTakesBulkFilesWithTheConfiguredLogin(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SANDBOX_SFTP_CREDENTIALS": "bob:hunter22"}
	lines := startedLines(t, []string{"sandbox", "-addr", "127.0.0.1:0", "-sftp-addr", "127.0.0.1:0"}, env, io.Discard, "bulk:")
	if strings.Contains(lines[0], "hunter22") || !strings.Contains(lines[0], "$SANDBOX_SFTP_CREDENTIALS") {
		t.Fatalf("the start-up line %q prints the password, or does not say where it came from", lines[0])
	}
	m := regexp.MustCompile(`sftp://(\S+) .*host key (SHA256:\S+)`).FindStringSubmatch(lines[0])
	if m == nil {
		t.Fatalf("the start-up line %q does not give the SFTP server's address and host key", lines[0])
	}
	for _, tc := range []struct {
		name, password string
		ok             bool
	}{{"the configured password", "hunter22", true}, {"the default password", "sandbox", false}} {
		t.Run(tc.name, func(t *testing.T) {
			up, err := sftpupload.New(sftpupload.Config{Addr: m[1], User: "bob", Password: tc.password, Dir: ".", HostKeyFingerprint: m[2]}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = up.Upload(ctx, sftpupload.File{Kind: sftpupload.Clients, Body: strings.NewReader(`{"id":"C-9","first_name":"A","last_name":"B"}` + "\n")})
			if (err == nil) != tc.ok {
				t.Fatalf("upload: %v, want success %v", err, tc.ok)
			}
		})
	}
}

// `go run . bulk` loads files from a shell through the gateway: validate lists invalid rows
// and fails; upload follows the load until the sandbox has processed it.
func TestTheBulkCommandValidatesAndUploadsThroughTheGateway(t *testing.T) {
	t.Parallel()
	gw := started(t, nil, map[string]string{"ADDR": "127.0.0.1:0"}, "gateway serving")
	dir := t.TempDir()
	bad := filepath.Join(dir, "people.jsonl")
	if err := os.WriteFile(bad, []byte(`{"type":"Individual","id":"P-1","client_id":"C-404","first_name":"A","last_name":"B"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		ok    bool
		inOut []string
	}{
		{"validate the sample files", []string{"validate", "-clients", sample("clients.jsonl"), "-people", sample("people.jsonl")}, true,
			[]string{"clients: 2 rows, 2 valid, 0 invalid", "people: 6 rows, 6 valid, 0 invalid"}},
		{"validate a file naming an unknown client", []string{"validate", "-people", bad}, false,
			[]string{"people: 1 rows, 0 valid, 1 invalid", "line 1 (id P-1), client_id:", "C-404"}},
		{"upload the sample files", []string{"upload", "-clients", sample("clients.jsonl"), "-people", sample("people.jsonl")}, true,
			[]string{"started", "people-", "6 applied, 0 invalid", "done in", "8 of 8 rows applied, from 2 files"}},
		// "an existing top account or one in the Add/Update Top Accounts file", in the deprecated model.
		{"validate the container model's sample files", []string{"validate", "-model", "top_accounts",
			"-top-accounts", sample("top-accounts.jsonl"), "-people", sample("people-top-accounts.jsonl")}, true,
			[]string{"top accounts: 2 rows, 2 valid, 0 invalid", "people: 4 rows, 4 valid, 0 invalid"}},
		{"validate a People file naming a top account of no file", []string{"validate", "-model", "top_accounts", "-people", sample("people-top-accounts.jsonl")}, false,
			[]string{`top_account_id "RIVERA-010" names no top account of the Top Accounts file and no existing one`}},
		{"upload the container model's sample files", []string{"upload", "-model", "top_accounts",
			"-top-accounts", sample("top-accounts.jsonl"), "-people", sample("people-top-accounts.jsonl")}, true,
			[]string{"top-accounts-", "2 rows, 2 applied, 0 invalid", "4 rows, 4 applied, 0 invalid", "6 of 6 rows applied, from 2 files"}},
		{"no file", []string{"validate"}, false, nil},
		{"an unknown model", []string{"validate", "-people", bad, "-model", "families"}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			err := run(ctx, append([]string{"bulk"}, append(tc.args, "-gateway", gw+"/graphql")...), nil, &out, &errOut)
			if (err == nil) != tc.ok {
				t.Fatalf("bulk %v: %v\n%s%s", tc.args, err, out.String(), errOut.String())
			}
			for _, want := range tc.inOut {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the report lacks %q:\n%s", want, out.String())
				}
			}
			// The progress on stderr ends each sending step at 100%, never where a poll left it.
			for line := range strings.Lines(errOut.String()) {
				if strings.HasPrefix(line, "sending") && strings.Contains(line, "%") && !strings.Contains(line, "100%") {
					if next := errOut.String()[strings.Index(errOut.String(), line)+len(line):]; !strings.HasPrefix(next, "sending") {
						t.Errorf("a sending step ended short of 100%%: %q\n%s", line, errOut.String())
					}
				}
			}
		})
	}
}

// `go run . sandbox` takes its referral credentials from the environment and its partners
// from -partners, and prints where the credentials are, not what they are.
func TestSandboxCommandTakesReferralSettings(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SANDBOX_REFERRAL_API_KEY": "env-referral-key", "SANDBOX_REFERRAL_SECRET": "env-referral-secret"}
	lines := startedLines(t, []string{"sandbox", "-addr", "127.0.0.1:0", "-partners", "p-9"}, env, io.Discard, "sandbox serving", "referral:")
	if strings.Contains(lines[1], "env-referral") || !strings.Contains(lines[1], "{p-9}") {
		t.Errorf("start-up line %q, want the partner and no credential", lines[1])
	}
	base := testrun.URL(lines[0])
	for _, c := range []struct {
		partner, key string
		want         int
	}{
		{"p-9", "env-referral-key", 200},
		{"demo-partner", "env-referral-key", 404},
		{"p-9", sandbox.DefaultReferralAPIKey, 401},
	} {
		body := []byte(`{"user":{"email":"a@example.com","firstName":"A","lastName":"B"}}`)
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/refer/"+c.partner, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", c.key)
		req.Header.Set("user-data-signature", advisorspec.SignReferral("env-referral-secret", body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("partner %s, key %s: status %d %s, want %d", c.partner, c.key, resp.StatusCode, out, c.want)
		}
	}
}

// `go run . bulk` sends $GATEWAY_TOKEN to a gateway that authenticates its callers: one run
// against `go run . sandbox` as its upstream and identity provider, as production runs.
func TestTheBulkCommandSendsTheTokenOfGATEWAY_TOKEN(t *testing.T) {
	t.Parallel()
	sb := started(t, []string{"sandbox", "-addr", "127.0.0.1:0", "-sftp-addr", "127.0.0.1:0", "-session-addr", "127.0.0.1:0"}, nil, "sandbox serving")
	log := &testrun.Buffer{}
	gw := testrun.URL(startedLines(t, nil, map[string]string{
		"ADDR": "127.0.0.1:0", "ADVISOR_BASE_URL": sb, "ADVISOR_FIRM": sandbox.DemoFirmID, "ADVISOR_ACCESS_TOKEN": sandbox.DefaultAccessToken,
		"ADVISOR_BASIC_CREDENTIALS": sandbox.DefaultBasicCredentials, "WEBHOOK_API_KEY": webhookKey,
		"AUTH_JWKS_URL": sb + "/sandbox/jwks.json", "AUTH_ISSUER": sandbox.TokenIssuer, "AUTH_AUDIENCE": sandbox.TokenAudience,
	}, log, "gateway serving")[0])
	token := mintToken(t, sb, "adv-bulk", sandbox.DemoFirmID)
	for _, tc := range []struct {
		name, token, want string
		ok                bool
	}{
		{"with the token", token, "clients: 2 rows, 2 valid", true},
		{"without it", "", "UNAUTHENTICATED", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			args := []string{"bulk", "validate", "-clients", sample("clients.jsonl"), "-gateway", gw + "/graphql"}
			err := run(ctx, args, map[string]string{"GATEWAY_TOKEN": tc.token}, &out, &errOut)
			if (err == nil) != tc.ok {
				t.Fatalf("bulk validate: %v\n%s%s", err, out.String(), errOut.String())
			}
			if got := out.String() + fmt.Sprint(err); !strings.Contains(got, tc.want) {
				t.Errorf("got %s, want %q in it", got, tc.want)
			}
		})
	}
	if strings.Contains(log.String(), token[:20]) {
		t.Error("the gateway's log holds the token")
	}
}

// mintToken has the sandbox at base mint a caller's token for advisor of firm.
func mintToken(t *testing.T, base, advisor, firm string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"advisor": advisor, "firm": firm})
	req, _ := http.NewRequest(http.MethodPost, base+"/sandbox/token", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+sandbox.DefaultAccessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Token == "" {
		t.Fatalf("the sandbox minted no token: status %d, %v", resp.StatusCode, err)
	}
	return out.Token
}

// `go run . config` prints the settings reference, which is docs/configuration.md's generated
// part: a setting the gateway reads cannot be missing from what an operator reads.
func TestTheConfigCommandPrintsTheSettingsReference(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"config"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| `ADDR` |", "| `FIRMS_FILE` |", "| `WRITE_TIMEOUT` |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("go run . config lacks %s", want)
		}
	}
	if !strings.Contains(string(doc), out.String()) {
		t.Error("docs/configuration.md does not hold what go run . config prints; run go test ./internal/config -update")
	}
}

// Help is there at every level, on stdout, and asking for it is not a failure.
func TestHelpIsAnsweredAtEveryLevel(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // what the help must mention
	}{
		{[]string{"-h"}, []string{"Usage: go run . [command]", "sandbox", "bulk", "config"}},
		{[]string{"--help"}, []string{"Usage: go run . [command]"}},
		{[]string{"help"}, []string{"Usage: go run . [command]"}},
		{[]string{"sandbox", "-h"}, []string{"-addr", "-sftp-addr", "-webhook-url"}},
		{[]string{"sandbox", "enroll", "-h"}, []string{"-file-dir", "-env", "-out"}},
		{[]string{"config", "-h"}, []string{"Usage: go run . config"}},
		{[]string{"bulk", "-h"}, []string{"validate|upload", "-clients", "-people", "-top-accounts", "-gateway", "-timeout"}},
		{[]string{"bulk", "upload", "-h"}, []string{"-valid-rows-only", "-advisor"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, nil, &stdout, &stderr)
			if err != nil && !errors.Is(err, flag.ErrHelp) {
				t.Fatalf("got %v, want help (flag.ErrHelp, which the program takes as success)", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout does not mention %q:\n%s\nstderr:\n%s", w, stdout.String(), stderr.String())
				}
			}
		})
	}
	if err := run(context.Background(), []string{"-x"}, nil, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "-h for help") {
		t.Errorf("an unknown command: %v, want an error pointing at -h", err)
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/command"
	"github.com/advisorhq/gateway/internal/config"
	gw "github.com/advisorhq/gateway/internal/gateway"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// run is the command line, as main runs it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return command.Run(ctx, args, getenv, stdout, stderr)
}

// serveGateway runs a gateway configured by getenv until ctx ends, printing to stdout and
// logging to logs, as the command does but for tracing, which opts may add.
func serveGateway(ctx context.Context, getenv func(string) string, stdout, logs io.Writer, opts ...gw.Option) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	g, err := gw.New(ctx, cfg, append([]gw.Option{gw.Output(stdout), gw.LogTo(logs)}, opts...)...)
	if err != nil {
		return err
	}
	defer g.Close()
	return g.Serve(ctx)
}

// started runs the program with args and environment until the test ends, and returns the
// first URL printed on a line that contains marker.
func started(t testing.TB, args []string, env map[string]string, marker string) string {
	t.Helper()
	return startedURLs(t, args, env, marker)[0]
}

// startedURLs runs the program and returns the first URL of the first line holding each
// marker, in the order the markers are given, once all have been printed.
func startedURLs(t testing.TB, args []string, env map[string]string, markers ...string) []string {
	t.Helper()
	urls, _ := launch(t, args, env, markers...)
	return urls
}

// startedLines runs the program and returns the first line holding each marker, in the order
// the markers are given, once all have been printed.
func startedLines(t testing.TB, args []string, env map[string]string, markers ...string) []string {
	t.Helper()
	lines, _ := launchFor(t, args, env, func(line string) string { return line }, markers...)
	return lines
}

var urlPattern = regexp.MustCompile(`(?:https?|sftp)://\S+`)

// launch is startedURLs that also returns what stops the program (as SIGTERM does) and
// reports what run returned. The test's cleanup stops it too, if the test did not.
func launch(t testing.TB, args []string, env map[string]string, markers ...string) ([]string, func() error) {
	t.Helper()
	return launchFor(t, args, env, urlPattern.FindString, markers...)
}

// launchFor is launch with what is taken of each marker's line.
func launchFor(t testing.TB, args []string, env map[string]string, take func(line string) string, markers ...string) ([]string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, func(k string) string { return env[k] }, outW, io.Discard)
		outW.Close()
	}()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("run returned %v after cancel, want nil", err)
		}
	})
	urls := make(chan []string, 1)
	go func() {
		found := make([]string, len(markers))
		left := len(markers)
		sc := bufio.NewScanner(out)
		// left first: Scan would wait for a line after the last one wanted, which may never come.
		for left > 0 && sc.Scan() {
			for i, m := range markers {
				if found[i] == "" && strings.Contains(sc.Text(), m) {
					found[i] = take(sc.Text())
					left--
				}
			}
		}
		urls <- found
		_, _ = io.Copy(io.Discard, out) // keep the program's writes from blocking
	}()
	select {
	case u := <-urls:
		return u, stop
	case err := <-done:
		done <- err // for stop
		t.Fatalf("run ended before serving: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatalf("no lines with %q within 10 s", markers)
	}
	return nil, nil
}

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
		{"a public URL that is not absolute", []string{"sandbox", "-addr", "127.0.0.1:0", "-public-url", "example.com"}, nil, "public URL"},
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
			err := run(ctx, tc.args, func(k string) string { return tc.env[k] }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run: %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

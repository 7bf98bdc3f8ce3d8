package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/testrun"
)

// logBuffer is the program's log, written by it and read by the test.
type logBuffer struct {
	testrun.Buffer
}

// lines returns the log's lines whose message is msg, waiting a little for the first: the
// gateway logs an operation after it has answered it.
func (l *logBuffer) lines(msg string) []string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var out []string
		for line := range strings.Lines(l.String()) {
			if strings.Contains(line, " msg="+msg+" ") || strings.HasSuffix(strings.TrimSpace(line), " msg="+msg) {
				out = append(out, strings.TrimSpace(line))
			}
		}
		if len(out) > 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runWithLog runs the gateway with env and returns the lines it printed up to and including
// the Metrics address, its log, and what stops it as SIGTERM does, returning what run
// returned. The test's cleanup stops it too.
func runWithLog(t *testing.T, env map[string]string) ([]string, *logBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, outW := io.Pipe()
	log := &logBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, func(k string) string { return env[k] }, outW, log)
		outW.Close()
	}()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() { cancel(); runErr = <-done })
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	printed := make(chan []string, 1)
	go func() {
		var lines []string
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			if strings.Contains(sc.Text(), "Metrics:") {
				break
			}
		}
		printed <- lines
		_, _ = io.Copy(io.Discard, out) // keep the program's writes from blocking
	}()
	select {
	case lines := <-printed:
		return lines, log, stop
	case err := <-done:
		t.Fatalf("run ended before serving: %v\n%s", err, log)
	case <-time.After(10 * time.Second):
		t.Fatalf("no Metrics address printed within 10 s\n%s", log)
	}
	return nil, nil, nil
}

// logValue is the value of key on a log line written by slog's text handler.
func logValue(line, key string) string {
	m := regexp.MustCompile(`(?:^| )` + regexp.QuoteMeta(key) + `=("(?:[^"\\]|\\.)*"|\S*)`).FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return strings.Trim(m[1], `"`)
}

func TestStartUpNamesEveryAddressAndShutdownIsLogged(t *testing.T) {
	t.Parallel()
	lines, log, stop := runWithLog(t, map[string]string{"ADDR": "127.0.0.1:0"})
	url := regexp.MustCompile(`https?://\S+`)
	addresses := map[string]string{}
	for _, line := range lines {
		if label, rest, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.Contains(label, " ") {
			addresses[label] = url.FindString(rest)
		}
	}
	tests := []struct {
		label, path string
		method      string
		want        int
	}{
		{"GraphQL", "/graphql", http.MethodPost, http.StatusOK},
		{"Webhooks", "/webhooks", http.MethodPost, http.StatusUnauthorized}, // there, and wants its key
		{"IDE", "/", http.MethodGet, http.StatusOK},
		{"Schema", "/graphql/schema.graphql", http.MethodGet, http.StatusOK},
		{"Health", "/healthz", http.MethodGet, http.StatusOK},
		{"Ready", "/readyz", http.MethodGet, http.StatusOK},
		{"Metrics", "/metrics", http.MethodGet, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			addr := addresses[tt.label]
			if !strings.HasSuffix(addr, tt.path) {
				t.Fatalf("got %s address %q, want one ending in %s; printed:\n%s", tt.label, addr, tt.path, strings.Join(lines, "\n"))
			}
			req, _ := http.NewRequest(tt.method, addr, strings.NewReader(`{"query":"{ version }"}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s: got status %d, want %d", tt.method, addr, resp.StatusCode, tt.want)
			}
		})
	}

	// The embedded sandbox answered the GraphQL request's upstream calls, if any, at debug
	// level, which the default log leaves out; the gateway's own lines are there.
	if got := log.lines("operation"); len(got) == 0 {
		t.Errorf("got no operation line, want one; log:\n%s", log)
	}
	if strings.Contains(log.String(), "sandbox request") {
		t.Errorf("got the sandbox's request lines in the default log, want them at debug level:\n%s", log)
	}

	if err := stop(); err != nil {
		t.Fatalf("run returned %v after the signal, want nil", err)
	}
	all := log.String()
	shutting, stopped := strings.Index(all, "msg=\"shutting down\""), strings.Index(all, "msg=stopped")
	if shutting < 0 || stopped < shutting {
		t.Fatalf("got shutting down at %d and stopped at %d, want both, in that order; log:\n%s", shutting, stopped, all)
	}
	if d, err := time.ParseDuration(logValue(log.lines("stopped")[0], "draining")); err != nil || d < 0 {
		t.Errorf("got draining=%q on the stopped line, want how long draining took", logValue(log.lines("stopped")[0], "draining"))
	}
}

func TestEachOperationIsLoggedWithTheUpstreamRequestsItMade(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	wid := up.family(t, "LOGGED", 5)
	printed, log, _ := runWithLog(t, map[string]string{
		"ADDR":                      "127.0.0.1:0",
		"ADVISOR_BASE_URL":          up.URL,
		"ADVISOR_FIRM":              sandbox.DemoFirmID,
		"ADVISOR_ACCESS_TOKEN":      upstreamToken,
		"ADVISOR_BASIC_CREDENTIALS": upstreamBasic,
		"WEBHOOK_API_KEY":           webhookKey,
		"AUTH_DISABLED":             "true",
	})
	base := regexp.MustCompile(`http://\S+`).FindString(printed[0])
	up.ResetRequests()
	body := fmt.Sprintf(`{"query":%q,"variables":{"wid":%q}}`, familyQuery, wid)
	resp, err := http.Post(base+"/graphql", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	lines := log.lines("operation")
	if len(lines) != 1 {
		t.Fatalf("got %d operation lines, want 1; log:\n%s", len(lines), log)
	}
	if len(up.Requests()) == 0 {
		t.Fatalf("the upstream saw no request, want the family query's; log:\n%s", log)
	}
	want := map[string]string{
		"name": "Family", "type": "query", "status": "ok",
		// What the upstream saw is what the line says the operation cost.
		"upstream_calls": fmt.Sprint(len(up.Requests())),
	}
	for k, v := range want {
		if got := logValue(lines[0], k); got != v {
			t.Errorf("got %s=%q, want %q on %s", k, got, v, lines[0])
		}
	}
	if strings.Contains(log.String(), wid) || strings.Contains(log.String(), "topAccount(") {
		t.Errorf("got the operation's variables or query in the log, want neither:\n%s", log)
	}
}

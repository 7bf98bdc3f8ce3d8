package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The README's example query is what a newcomer pastes into the IDE first: it must run as
// written and show the demo family with its relationships.
func TestTheREADMEExampleQueryShowsTheDemoFamily(t *testing.T) {
	t.Parallel()
	query := readmeGraphQL(t, "README example query")
	gw := newGateway(t, newUpstream(t, true), nil)
	var got struct {
		TopAccounts struct {
			Nodes []struct {
				Name          string
				Contacts      []struct{ DisplayName string }
				Relationships []struct {
					Role   string
					Target struct{ Contact *struct{ DisplayName string } }
				}
				Documents struct{ TotalCount int }
			}
		}
	}
	gw.post(t, query, nil).ok(t, &got)
	if len(got.TopAccounts.Nodes) != 1 {
		t.Fatalf("got %d top accounts, want the demo family", len(got.TopAccounts.Nodes))
	}
	fam := got.TopAccounts.Nodes[0]
	roles := map[string]bool{}
	for _, r := range fam.Relationships {
		if r.Target.Contact == nil {
			t.Errorf("a %s relationship's target did not resolve", r.Role)
		}
		roles[r.Role] = true
	}
	if fam.Name != "Hartwell Family" || len(fam.Contacts) < 10 || len(roles) != 7 || fam.Documents.TotalCount != 8 {
		t.Errorf("got %s with %d cards, relationship roles %v and %d documents; want the Hartwell family with every role",
			fam.Name, len(fam.Contacts), roles, fam.Documents.TotalCount)
	}
}

// readmeGraphQL is the README's graphql block that follows the comment starting with marker
// (<!-- marker ... -->), as written.
func readmeGraphQL(t *testing.T, marker string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(marker) + ".*?```graphql\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatalf("README.md has no graphql block after <!-- %s", marker)
	}
	return string(block[1])
}

// The README's live-events walk-through: its subscription, then its curl line to the sandbox,
// run as written, show the scenario's events arriving. Only the first two are awaited: the
// scenario spaces them a second apart.
func TestTheREADMESubscriptionShowsTheSandboxScenarioLive(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sub := regexp.MustCompile("(?s)<!-- README subscription.*?```graphql\n(.*?)```").FindSubmatch(readme)
	curl := regexp.MustCompile(`(?m)^curl (.*)/sandbox/events$`).FindSubmatch(readme)
	if sub == nil || curl == nil {
		t.Fatal("README.md has no subscription block or no curl line for /sandbox/events")
	}
	req := curlRequest(t, "curl "+string(curl[1])+"/sandbox/events")

	gw, sb := sandboxed(t)
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("live", string(sub[1]), nil)
	waitSubscribers(t, gw, 1)
	req.URL.Host = strings.TrimPrefix(sb, "http://") // the embedded sandbox's port may differ
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the README's curl line got %d", resp.StatusCode)
	}
	for _, want := range []string{"CLIENT_ACCEPTED_INVITATION", "USER_SUBSCRIPTION_CREATED"} {
		ev := c.nextData("live")["events"].(map[string]any)
		if ev["eventType"] != want || ev["id"] == "" {
			t.Fatalf("got %v, want %s", ev, want)
		}
	}
}

// curlRequest reads a one-line curl command of the form curl -H 'h: v' ... -d 'body' URL.
func curlRequest(t *testing.T, line string) *http.Request {
	t.Helper()
	args := regexp.MustCompile(`"[^"]*"|'[^']*'|\S+`).FindAllString(line, -1)
	unquote := func(s string) string { return strings.Trim(s, `'"`) }
	header := http.Header{}
	var body, url string
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-H":
			i++
			k, v, _ := strings.Cut(unquote(args[i]), ":")
			header.Add(k, strings.TrimSpace(v))
		case "-d":
			i++
			body = unquote(args[i])
		default:
			url = unquote(args[i])
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatalf("the README's curl line: %v", err)
	}
	req.Header = header
	return req
}

// readmeAddrs are the addresses the README's commands call: the gateway as `go run .` serves
// it, and its embedded sandbox (or `go run . sandbox`).
var readmeAddrs = map[string]string{
	"localhost:8080": "gateway", "127.0.0.1:8080": "gateway",
	"localhost:9090": "sandbox", "127.0.0.1:9090": "sandbox",
}

// readmeServes matches the blocks that run the project itself (servers, the test suite, an
// image build): the test stands in for them by starting the gateway.
var readmeServes = regexp.MustCompile(`(?m)^(go run|go test|docker) `)

// shBlock is one ```sh block of the README and the line it starts on.
type shBlock struct {
	line int
	text string
}

// readmeShellBlocks returns the README's ```sh blocks in order.
func readmeShellBlocks(t *testing.T) []shBlock {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []shBlock
	for _, m := range regexp.MustCompile("(?ms)^```sh\n(.*?)^```$").FindAllSubmatchIndex(readme, -1) {
		blocks = append(blocks, shBlock{line: bytes.Count(readme[:m[0]], []byte("\n")) + 2, text: string(readme[m[2]:m[3]])})
	}
	return blocks
}

// A newcomer pastes the README's commands in order into a shell. Each ```sh block runs in its
// own bash (so each stands on its own) with -euo pipefail, from one working directory, and
// must exit 0; the two upload walk-throughs must leave the file they created, not an empty
// one, in the vault.
//
// The gateway and its embedded sandbox listen on free ports, not the README's 8080 and 9090:
// those may be held by a developer's own `go run .` or by another test run. A curl
// configuration (CURL_HOME) connects the README's addresses to them, so the commands run
// byte for byte as written, Host headers included, and the sandbox's presigned addresses
// (built from the Host it was asked on) lead back to it too.
func TestTheREADMEShellCommandsRunAsPasted(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's commands need %s: %v", tool, err)
		}
	}
	blocks := readmeShellBlocks(t)
	gw, sb := sandboxed(t)
	curlHome, work := t.TempDir(), t.TempDir()
	writeCurlRedirects(t, curlHome, map[string]string{"gateway": gw.url, "sandbox": sb})
	// The commands run from the repository's root, as the README says: the sample bulk files
	// are where it says they are.
	if err := os.CopyFS(filepath.Join(work, "docs", "examples", "bulk"), os.DirFS(filepath.Join(repoRoot, "docs", "examples", "bulk"))); err != nil {
		t.Fatal(err)
	}

	var stdout strings.Builder
	ran := 0
	for _, b := range blocks {
		if readmeServes.MatchString(b.text) {
			t.Logf("README line %d: not run; the test starts the gateway instead", b.line)
			continue
		}
		for _, m := range regexp.MustCompile(`https?://([^/\s"'$]+)`).FindAllStringSubmatch(b.text, -1) {
			if readmeAddrs[m[1]] == "" {
				t.Fatalf("README line %d calls %s, which is neither the gateway's address nor the sandbox's", b.line, m[0])
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-x", "-euo", "pipefail", "-c", b.text)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "CURL_HOME="+curlHome)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("README line %d: %v\n--- stdout\n%s--- trace and stderr\n%s", b.line, err, out, errOut.String())
		}
		stdout.Write(out)
		ran++
	}

	csv, err := os.ReadFile(filepath.Join(work, "notes.csv"))
	if err != nil || len(csv) == 0 {
		t.Fatalf("the README's commands left notes.csv %q (%v), want the file they upload", csv, err)
	}
	for _, want := range []string{`"fileStatus":"UPLOADED"`, `"file_status":"Uploaded"`, string(csv), `"phase":"DONE"`, `"applied":6`, `"advisorId":"adv-002"`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the README's commands (%d blocks) printed no %q:\n%s", ran, want, stdout.String())
		}
	}
	// Both walk-throughs reached this gateway's vault, each with the bytes of notes.csv.
	var got struct {
		TopAccounts struct {
			Nodes []struct {
				Documents struct {
					Nodes []struct{ Name, FileStatus, DownloadURI string }
				}
			}
		}
	}
	gw.post(t, `{ topAccounts(limit: 1) { nodes { documents(first: 1000) { nodes { name fileStatus downloadUri } } } } }`, nil).ok(t, &got)
	notes := 0
	for _, a := range got.TopAccounts.Nodes {
		for _, d := range a.Documents.Nodes {
			if d.Name != "Notes" {
				continue
			}
			notes++
			if _, body := docDownload(t, d.DownloadURI); string(body) != string(csv) {
				t.Errorf("an uploaded Notes document holds %q (%s), want %q", body, d.FileStatus, csv)
			}
		}
	}
	if notes != 2 {
		t.Errorf("the first top account has %d Notes documents, want one from each upload walk-through", notes)
	}
}

// writeCurlRedirects writes a .curlrc in dir that connects each README address to the URL of
// the server it names.
func writeCurlRedirects(t *testing.T, dir string, servers map[string]string) {
	t.Helper()
	var rc strings.Builder
	for addr, name := range readmeAddrs {
		u, err := url.Parse(servers[name])
		if err != nil {
			t.Fatal(err)
		}
		host, port, _ := strings.Cut(addr, ":")
		fmt.Fprintf(&rc, "connect-to = \"%s:%s:%s:%s\"\n", host, port, u.Hostname(), u.Port())
	}
	// A proxy from the environment must not carry loopback calls elsewhere.
	rc.WriteString("noproxy = \"*\"\n")
	if err := os.WriteFile(filepath.Join(dir, ".curlrc"), []byte(rc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

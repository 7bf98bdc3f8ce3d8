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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The README's example query is what a newcomer pastes into the IDE first: it must run as
// written and show the demo family with its relationships.
func TestTheREADMEExampleQueryShowsTheDemoFamily(t *testing.T) {
	t.Parallel()
	query := markedGraphQL(t, "README example query")
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
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
	up.ResetRequests()
	gw.post(t, query, nil).ok(t, &got)
	// The README says what the query costs the upstream: "eight requests: the page of top
	// accounts, the family's cards, its documents, and one per document whose fileStatus is
	// asked for (five here)".
	if reqs := up.Requests(); len(reqs) != 8 {
		t.Errorf("the README's query made %d upstream requests, the README says eight: %v", len(reqs), reqs)
	}
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

// markedGraphQL is the graphql block of README.md or docs/ that follows the comment starting
// with marker (<!-- marker ... -->), as written.
func markedGraphQL(t *testing.T, marker string) string {
	t.Helper()
	re := regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(marker) + ".*?```graphql\n(.*?)```")
	for _, p := range mdPages(t) {
		if block := re.FindSubmatch(p.text); block != nil {
			return string(block[1])
		}
	}
	t.Fatalf("neither README.md nor docs/ has a graphql block after <!-- %s", marker)
	return ""
}

// The README's live-events walk-through: its subscription, then its curl line to the sandbox,
// run as written, show the scenario's events arriving. Only the first two are awaited: the
// scenario spaces them a second apart.
func TestTheREADMESubscriptionShowsTheSandboxScenarioLive(t *testing.T) {
	t.Parallel()
	sub := markedGraphQL(t, "README subscription")
	var curl [][]byte
	for _, p := range mdPages(t) {
		if curl = regexp.MustCompile(`(?m)^curl (.*)/sandbox/events$`).FindSubmatch(p.text); curl != nil {
			break
		}
	}
	if curl == nil {
		t.Fatal("neither README.md nor docs/ has a curl line for /sandbox/events")
	}
	req := curlRequest(t, "curl "+string(curl[1])+"/sandbox/events")
	if readmeAddrs[req.URL.Host] != "gateway" {
		t.Fatalf("the README's curl line posts to %s, want the gateway's address, which serves the sandbox on its origin", req.URL)
	}

	stray := holdSandboxPorts(t)
	gw, _ := sandboxed(t)
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("live", sub, nil)
	waitSubscribers(t, gw, 1)
	// To this gateway's port, as its Host the README's, as curl with a --connect-to would.
	req.Host, req.URL.Host = req.URL.Host, strings.TrimPrefix(gw.url, "http://")
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
	if n := stray(); n > 0 {
		t.Errorf("%d requests reached the services holding the sandbox's usual ports", n)
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

// readmeAddrs are the addresses the documentation's commands call: the gateway as `go run .`
// serves it, with its embedded sandbox below /sandbox. Nothing else: the embedded sandbox has
// no address of its own that a reader could know (issue 26: "The README's sandbox address is a
// guess").
var readmeAddrs = map[string]string{
	"localhost:8080": "gateway", "127.0.0.1:8080": "gateway",
}

// mdPage is one page of the project's documentation: README.md or a Markdown file of docs/.
type mdPage struct {
	name string // its path from the repository's root, as a reader names it
	text []byte
}

// mdPages returns README.md, then docs/*.md by name: the front door first, then the rooms.
func mdPages(t *testing.T) []mdPage {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	var pages []mdPage
	for _, path := range append([]string{filepath.Join(repoRoot, "README.md")}, names...) {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name, err := filepath.Rel(repoRoot, path)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, mdPage{name: filepath.ToSlash(name), text: text})
	}
	return pages
}

// mdBlock is one fenced block of a page: its language, the comment on the line before its
// fence (if any), where it starts, and what it holds.
type mdBlock struct {
	page    string
	line    int // of its first line inside the fence
	lang    string
	comment string // the text of an <!-- ... --> comment on the line before the fence
	text    string
}

func (b mdBlock) String() string { return fmt.Sprintf("%s line %d", b.page, b.line) }

var (
	fencedBlock   = regexp.MustCompile("(?ms)^ *```([a-z]*)\n(.*?)^ *```$")
	blockComment  = regexp.MustCompile(`<!--\s*(.*?)\s*-->\s*$`)
	shellLanguage = map[string]bool{"sh": true, "bash": true, "shell": true}
)

// mdBlocks returns every fenced block of the pages, in order.
func mdBlocks(pages []mdPage) []mdBlock {
	var blocks []mdBlock
	for _, p := range pages {
		for _, m := range fencedBlock.FindAllSubmatchIndex(p.text, -1) {
			b := mdBlock{
				page: p.name,
				line: bytes.Count(p.text[:m[0]], []byte("\n")) + 2,
				lang: string(p.text[m[2]:m[3]]),
				text: string(p.text[m[4]:m[5]]),
			}
			before := bytes.TrimSuffix(p.text[:m[0]], []byte("\n"))
			if c := blockComment.FindSubmatch(before[bytes.LastIndexByte(before, '\n')+1:]); c != nil {
				b.comment = string(c[1])
			}
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// notRun is the marker of a shell block no test can run as written (it starts a server the
// test stands in for, builds an image, or runs for minutes): <!-- not run: why -->, on the
// line before its fence.
const notRun = "not run:"

// startsServer matches commands that start the project itself (servers, the test suite, a
// benchmark, an image build): a block holding one must be marked notRun, saying why.
var startsServer = regexp.MustCompile(`(?m)^\s*(go run|go test|docker|kubectl) `)

// A newcomer pastes the commands of the README, then of docs/, in order into a shell. Each
// shell block runs in its own bash (so each stands on its own) with -euo pipefail, from one
// working directory, and must exit 0; the two upload walk-throughs must leave the file they
// created, not an empty one, in the vault. A block the test cannot run must say why, in a
// <!-- not run: why --> comment before its fence; one that starts a server without saying so
// fails the test rather than being skipped quietly.
//
// Issue 26: "Every block in the README and `docs/` runs in a test as written, with 9090, 9443
// and 2222 held by another process". They are (holdSandboxPorts), by a service that refuses
// whatever reaches it, and nothing may. The gateway listens on a free port, not the README's
// 8080, which may be held by a developer's own `go run .` or by another test run: a curl
// configuration (CURL_HOME) connects the README's address to it, so the commands run byte for
// byte as written, Host headers included, and the addresses the gateway gives (built on the
// Host it was asked on) lead back to it too.
func TestTheShellCommandsOfTheREADMEAndDocsRunAsPasted(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's commands need %s: %v", tool, err)
		}
	}
	var blocks []mdBlock
	for _, b := range mdBlocks(mdPages(t)) {
		if !shellLanguage[b.lang] {
			continue
		}
		if why, ok := strings.CutPrefix(b.comment, notRun); ok {
			if strings.TrimSpace(why) == "" {
				t.Errorf("%s is marked %q without saying why", b, notRun)
			}
			t.Logf("%s: not run: %s", b, strings.TrimSpace(why))
			continue
		}
		if startsServer.MatchString(b.text) {
			t.Errorf("%s starts the project (%q); mark it <!-- %s why --> if a test cannot run it",
				b, strings.TrimSpace(startsServer.FindString(b.text)), notRun)
			continue
		}
		for _, m := range regexp.MustCompile(`https?://([^/\s"'$]+)`).FindAllStringSubmatch(b.text, -1) {
			if readmeAddrs[m[1]] == "" {
				t.Errorf("%s calls %s, which is not the gateway's address (it serves the embedded sandbox below /sandbox)", b, m[0])
			}
		}
		blocks = append(blocks, b)
	}
	if t.Failed() {
		t.FailNow()
	}
	stray := holdSandboxPorts(t)
	gw, _ := sandboxed(t)
	curlHome, work := t.TempDir(), t.TempDir()
	writeCurlRedirects(t, curlHome, map[string]string{"gateway": gw.url})
	// The commands run from the repository's root, as the docs say: the sample bulk files
	// are where they say they are.
	if err := os.CopyFS(filepath.Join(work, "docs", "examples", "bulk"), os.DirFS(filepath.Join(repoRoot, "docs", "examples", "bulk"))); err != nil {
		t.Fatal(err)
	}

	var stdout strings.Builder
	for _, b := range blocks {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-x", "-euo", "pipefail", "-c", b.text)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "CURL_HOME="+curlHome)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		out, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n--- stdout\n%s--- trace and stderr\n%s", b, err, out, errOut.String())
		}
		stdout.Write(out)
	}

	csv, err := os.ReadFile(filepath.Join(work, "notes.csv"))
	if err != nil || len(csv) == 0 {
		t.Fatalf("the docs' commands left notes.csv %q (%v), want the file they upload", csv, err)
	}
	for _, want := range []string{`"fileStatus":"UPLOADED"`, `"file_status":"Uploaded"`, string(csv), `"phase":"DONE"`, `"applied":6`, `"advisorId":"adv-002"`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the docs' commands (%d blocks) printed no %q:\n%s", len(blocks), want, stdout.String())
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
	if n := stray(); n > 0 {
		t.Errorf("%d requests reached the services holding the sandbox's usual ports", n)
	}
}

// ranBy matches the comment of a block that a test of its own runs:
// <!-- label: internal/gateway/x_test.go runs it ... -->.
var ranBy = regexp.MustCompile(`^([^:]+): (\S+_test\.go) runs`)

// Every GraphQL operation of the README and docs/ runs as written against the gateway with no
// configuration, as pasted into its IDE, and answers without errors. A block a test of its own
// runs (and checks what it answers) says so in the comment before its fence, naming the test's
// file, which must hold the comment's label; a subscription must be one of those, since only a
// test that makes events happen can show one working.
func TestEveryGraphQLBlockOfTheREADMEAndDocsRuns(t *testing.T) {
	t.Parallel()
	var run []mdBlock
	for _, b := range mdBlocks(mdPages(t)) {
		if b.lang != "graphql" {
			continue
		}
		if m := ranBy.FindStringSubmatch(b.comment); m != nil {
			src, err := os.ReadFile(filepath.Join(repoRoot, m[2]))
			if err != nil {
				t.Errorf("%s says %s runs it: %v", b, m[2], err)
			} else if !bytes.Contains(src, []byte(strconv.Quote(m[1]))) {
				t.Errorf("%s says %s runs it, but that file does not name %q", b, m[2], m[1])
			}
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(b.text), "subscription") {
			t.Errorf("%s is a subscription no test runs; give it a test and say which in a comment before it", b)
			continue
		}
		run = append(run, b)
	}
	if len(run) == 0 {
		return
	}
	holdSandboxPorts(t)
	gw, _ := sandboxed(t)
	for _, b := range run {
		t.Run(b.String(), func(t *testing.T) {
			gw.post(t, b.text, nil).ok(t, nil)
		})
	}
}

// Every link of the README and docs/ names a file of the repository that exists (and, with
// #anchor, a heading of it), relative to the page, as a reader of a clone follows it; none
// leaves the repository, except to the gateway or sandbox a reader runs.
func TestTheLinksOfTheREADMEAndDocsResolveInsideTheRepository(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	scheme := regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	inlineCode := regexp.MustCompile("`[^`]+`") // a code span may wrap onto the next line
	checked := 0
	for _, p := range mdPages(t) {
		// Links in code are not links: blank fenced blocks and code spans out first, keeping
		// the lines where they are.
		onlyLines := func(b []byte) []byte { return bytes.Repeat([]byte("\n"), bytes.Count(b, []byte("\n"))) }
		prose := inlineCode.ReplaceAllFunc(fencedBlock.ReplaceAllFunc(p.text, onlyLines), onlyLines)
		for _, m := range link.FindAllSubmatchIndex(prose, -1) {
			target := string(prose[m[2]:m[3]])
			where := fmt.Sprintf("%s line %d", p.name, bytes.Count(prose[:m[0]], []byte("\n"))+1)
			checked++
			if scheme.MatchString(target) {
				u, err := url.Parse(target)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || readmeAddrs[u.Host] == "" {
					t.Errorf("%s links to %s, outside the repository", where, target)
				}
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := filepath.Join(root, filepath.Dir(p.name), filepath.FromSlash(path))
			if path == "" {
				file = filepath.Join(root, p.name)
			}
			if rel, err := filepath.Rel(root, file); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				t.Errorf("%s links to %s, outside the repository", where, target)
				continue
			}
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%s links to %s, which does not exist", where, target)
				continue
			}
			if anchor == "" {
				continue
			}
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(headingAnchors(text), anchor) {
				t.Errorf("%s links to %s, whose file has no heading with that anchor (it has %v)", where, target, headingAnchors(text))
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no links in the README and docs/; the pattern is wrong")
	}
}

// headingAnchors are the anchors GitHub gives a Markdown file's headings: lower case, with
// everything but letters, digits, spaces, hyphens and underscores dropped, spaces as hyphens,
// and -1, -2, ... after a repeated one.
func headingAnchors(md []byte) []string {
	prose := fencedBlock.ReplaceAll(md, nil)
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	seen := map[string]int{}
	var anchors []string
	for _, m := range regexp.MustCompile(`(?m)^#{1,6} +(.*?) *#* *$`).FindAllSubmatch(prose, -1) {
		a := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(string(m[1])), ""), " ", "-")
		if n := seen[a]; n > 0 {
			anchors = append(anchors, fmt.Sprintf("%s-%d", a, n))
		} else {
			anchors = append(anchors, a)
		}
		seen[a]++
	}
	return anchors
}

// The README and docs/ name tests to show that what they say holds (docs/authorization.md, a
// test for every operation): each name must be a test of this repository, so a page cannot go
// stale quietly when a test is renamed or removed.
func TestEveryTestTheREADMEAndDocsNameExists(t *testing.T) {
	t.Parallel()
	defined := map[string]bool{}
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != repoRoot || d.IsDir() && d.Name() == "node_modules" {
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return err
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Benchmark)\w+)\(`).FindAllSubmatch(src, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	testName := regexp.MustCompile("`((?:Test|Benchmark)[A-Z]\\w*)")
	for _, p := range mdPages(t) {
		named := testName.FindAllSubmatch(p.text, -1)
		if p.name == "docs/authorization.md" && len(named) < 10 {
			t.Errorf("docs/authorization.md names %d tests; its table should name one for every operation", len(named))
		}
		for _, m := range named {
			if !defined[string(m[1])] {
				t.Errorf("%s names %s, which no test file defines", p.name, m[1])
			}
		}
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

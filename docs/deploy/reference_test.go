package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The repository's files this module's tests read. The module is nested in the gateway's, and
// imports none of it: it reads what the gateway publishes about itself (the generated
// configuration reference, the sandbox's page, the drain in the code) as a reader would.
const (
	configurationMD = "../configuration.md"
	sandboxMD       = "../sandbox.md"
	deploymentMD    = "../deployment.md"
	composeFile     = "compose.yaml"
	kubernetesDir   = "kubernetes"
)

// Who reads a setting, by the section of docs/configuration.md that lists it.
const (
	readByGateway = "the gateway"
	readBySandbox = "go run . sandbox"
	readByBulk    = "go run . bulk"
	readByTests   = "the test suite"
)

// setting is one row of docs/configuration.md.
type setting struct {
	name, def, meaning string
	readBy             string
}

// reference is docs/configuration.md: every setting by name.
type reference map[string]setting

var (
	settingRow = regexp.MustCompile("^\\| `([A-Z][A-Z0-9_]*)` \\|(.*?)\\|(.*)\\|$")
	codeSpan   = regexp.MustCompile("^`([^`]*)`$")
)

// readReference reads the settings tables of docs/configuration.md, which internal/config's
// test keeps identical to the declarations the gateway reads its settings with.
func readReference(t *testing.T) reference {
	t.Helper()
	text, err := os.ReadFile(configurationMD)
	if err != nil {
		t.Fatal(err)
	}
	ref := reference{}
	readBy := readByGateway
	for _, line := range strings.Split(string(text), "\n") {
		if heading, ok := strings.CutPrefix(line, "## "); ok {
			switch {
			case strings.Contains(heading, "`go run . sandbox`"):
				readBy = readBySandbox
			case strings.Contains(heading, "`go run . bulk`"):
				readBy = readByBulk
			case strings.Contains(heading, "test suite"):
				readBy = readByTests
			default:
				readBy = readByGateway
			}
			continue
		}
		m := settingRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		def := strings.TrimSpace(m[2])
		if c := codeSpan.FindStringSubmatch(def); c != nil {
			def = c[1]
		}
		ref[m[1]] = setting{name: m[1], def: def, meaning: strings.TrimSpace(m[3]), readBy: readBy}
	}
	// What the reading must have found, so that a change of the page's layout fails here
	// rather than letting every name through or none.
	for name, want := range map[string]string{"ADDR": readByGateway, "REDIS_URL": readByGateway, "OTEL_SERVICE_NAME": readByGateway,
		"SANDBOX_WEBHOOK_KEY": readBySandbox, "GATEWAY_TOKEN": readByBulk, "REQUIRE_REDIS": readByTests} {
		if got := ref[name]; got.readBy != want {
			t.Fatalf("%s: %s is read by %q, want %q: has the page's layout changed?", configurationMD, name, got.readBy, want)
		}
	}
	if ref["SANDBOX_ACCESS_TOKEN"].def != "sandbox-token" {
		t.Fatalf("%s: SANDBOX_ACCESS_TOKEN's default reads %q, want sandbox-token", configurationMD, ref["SANDBOX_ACCESS_TOKEN"].def)
	}
	return ref
}

// check reports a name that where sets for a program of reader's that is not one of reader's
// settings, saying whose it is if it is anyone's.
func (ref reference) check(t *testing.T, where, name, reader string) {
	t.Helper()
	s, ok := ref[name]
	switch {
	case !ok:
		t.Errorf("%s sets %s, which is no setting (%s lists every one)", where, name, configurationMD)
	case s.readBy != reader:
		t.Errorf("%s sets %s for %s, but it is read by %s (%s)", where, name, reader, s.readBy, configurationMD)
	}
}

// sandboxDoc is what docs/sandbox.md says of the sandbox that the gateway's settings must match.
type sandboxDoc struct {
	flags            map[string]bool
	firm             string // the first firm, whose credentials are the defaults
	issuer, audience string // of the tokens it mints
}

func readSandboxDoc(t *testing.T) sandboxDoc {
	t.Helper()
	text, err := os.ReadFile(sandboxMD)
	if err != nil {
		t.Fatal(err)
	}
	doc := sandboxDoc{flags: map[string]bool{}}
	for _, m := range regexp.MustCompile("(?m)^\\| `(-[a-z-]+)` \\|").FindAllStringSubmatch(string(text), -1) {
		doc.flags[m[1]] = true
	}
	if !doc.flags["-addr"] || !doc.flags["-webhook-url"] {
		t.Fatalf("%s: found the flags %v, without -addr and -webhook-url: has its table changed?", sandboxMD, doc.flags)
	}
	// "The sandbox serves two firms, ...: `firm-001` (the credentials above, ..."
	if m := regexp.MustCompile("`([^`]+)` \\(the credentials\\s+above").FindStringSubmatch(string(text)); m != nil {
		doc.firm = m[1]
	}
	// "a JWT signed with EdDSA, `iss` `advisor-sandbox`, `aud` `advisor-gateway`"
	if m := regexp.MustCompile("`iss` `([^`]+)`,\\s+`aud` `([^`]+)`").FindStringSubmatch(string(text)); m != nil {
		doc.issuer, doc.audience = m[1], m[2]
	}
	if doc.firm == "" || doc.issuer == "" {
		t.Fatalf("%s no longer names the first firm (%q) or the tokens' issuer (%q) as this test reads them", sandboxMD, doc.firm, doc.issuer)
	}
	return doc
}

// stopTimes are how long the gateway may take to stop after SIGTERM, read from its code: it
// stops accepting and gives in-flight requests their time, then waits for its WebSockets to
// close, then flushes its last spans. A container's grace period must exceed their sum.
type stopTimes struct {
	drain, streams, flush time.Duration
}

func (s stopTimes) total() time.Duration { return s.drain + s.streams + s.flush }

func (s stopTimes) String() string {
	return s.total().String() + " (" + s.drain.String() + " draining requests, " + s.streams.String() +
		" for WebSockets, " + s.flush.String() + " flushing spans)"
}

func readStopTimes(t *testing.T) stopTimes {
	t.Helper()
	timeout := func(file, ctxName string) time.Duration {
		t.Helper()
		src, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(regexp.QuoteMeta(ctxName) + `, cancel := context\.WithTimeout\(context\.Background\(\), (\d+)\*time\.Second\)`)
		m := re.FindSubmatch(src)
		if m == nil {
			t.Fatalf("%s no longer sets %s's timeout in whole seconds as this test reads it: read the stop sequence again and update the test",
				file, ctxName)
		}
		n, _ := strconv.Atoi(string(m[1]))
		return time.Duration(n) * time.Second
	}
	return stopTimes{
		drain:   timeout("internal/graceful/graceful.go", "shutdownCtx"),
		streams: timeout("internal/gateway/gateway.go", "waitCtx"),
		flush:   timeout("internal/command/command.go", "flushCtx"),
	}
}

// The reading of the gateway's own documents finds what it depends on.
func TestTheReferencesThisModuleReadsAreFound(t *testing.T) {
	ref := readReference(t)
	if n := len(ref); n < 60 {
		t.Errorf("%s has %d settings as read here, want its whole tables", configurationMD, n)
	}
	readSandboxDoc(t)
	if st := readStopTimes(t); st.drain <= 0 || st.streams <= 0 || st.flush <= 0 {
		t.Errorf("the gateway's stop times read as %s", st)
	}
}

package gateway_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/advisorhq/gateway/internal/config"
	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// deployModule is the module of the deployment files (docs/deployment.md): nested, so that the
// Kubernetes API modules its test decodes with stay out of the gateway's go.mod, and so not
// reached by the repository's `go test ./...`, which runs it from here.
const deployModule = repoRoot + "/docs/deploy"

// deployProgram is a process a deployment file starts from the gateway's image: the gateway
// (no arguments) or the sandbox (`sandbox ...`), with its environment.
type deployProgram struct {
	Where string
	Args  []string
	Env   map[string]string
}

// errNoGo says there is no go command to run the deploy module's tests with.
var errNoGo = errors.New("no go on PATH")

// deployPrograms runs the deploy module's tests once for this process and returns the
// programs they report the deployment files start.
var deployPrograms = sync.OnceValues(func() ([]deployProgram, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoGo, err)
	}
	dir, err := os.MkdirTemp("", "deploy-programs-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "programs.json")
	cmd := exec.Command(goTool, "test", "-count=1", ".", "-args", "-programs", out)
	cmd.Dir = deployModule
	// The module stands alone: a go.work of the developer's must not pull it into the gateway's.
	// GOFLAGS and the rest of the environment pass on as they are.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if text, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("the deploy module's tests (cd docs/deploy && go test ./...) failed: %v\n%s", err, text)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("the deploy module's tests passed but reported no programs: %w", err)
	}
	var progs []deployProgram
	if err := json.Unmarshal(data, &progs); err != nil {
		return nil, err
	}
	return progs, nil
})

// deployProgramsOrSkip is deployPrograms for a test: what the module's test reads is read here
// too, so that go test's cache of this package's result ends when a deployment file changes.
func deployProgramsOrSkip(t *testing.T) []deployProgram {
	t.Helper()
	err := filepath.WalkDir(deployModule, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		_, err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	progs, err := deployPrograms()
	if errors.Is(err, errNoGo) {
		// go test puts its own go on PATH; only a test binary run by hand has none.
		t.Skipf("cannot run the deploy module's tests: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return progs
}

// The done-when: "the manifests and the Compose file pass the strict decoding test",
// in a fresh clone's `go test ./...`. The deploy module's tests decode every manifest strictly
// against the Kubernetes API types and check that every environment name they set is a setting
// (docs/configuration.md); then each program they start from the image is given its arguments
// and environment here, and the gateway's own parsers must take them: config.Load for the
// gateway, the sandbox's flags for `gateway sandbox`. So a deployment file whose gateway would
// refuse to start fails here, not at a deploy.
func TestTheDeploymentFilesDecodeStrictlyAndTheirSettingsLoad(t *testing.T) {
	t.Parallel()
	gateways, sandboxes := 0, 0
	for _, p := range deployProgramsOrSkip(t) {
		getenv := func(name string) string { return p.Env[name] }
		switch {
		case len(p.Args) == 0:
			gateways++
			cfg, err := config.Load(getenv)
			if err != nil {
				t.Errorf("%s: the gateway would not start with its settings: %v", p.Where, err)
				continue
			}
			if cfg.Sandboxed() {
				t.Errorf("%s: the gateway would run its embedded sandbox; a deployment sets ADVISOR_BASE_URL", p.Where)
			}
		case p.Args[0] == "sandbox":
			sandboxes++
			if _, err := sandbox.ParseFlags(p.Args[1:], getenv, io.Discard); err != nil {
				t.Errorf("%s: the sandbox would not start with %q: %v", p.Where, p.Args, err)
			}
		default:
			t.Errorf("%s runs the gateway's image as %q, which is neither the gateway nor the sandbox", p.Where, p.Args)
		}
	}
	if gateways < 2 || sandboxes < 1 {
		t.Errorf("the deploy module reported %d gateways and %d sandboxes; want Compose's gateway and sandbox and the Kubernetes Deployment's gateway", gateways, sandboxes)
	}
}

// The Compose file's fleet, run as written but for its network: its services' names become
// this machine's addresses. Two gateway replicas share Redis; the sandbox stands in for the
// Advisor service and the identity provider and sends its webhooks to one replica. A token the
// sandbox mints is the caller's on either replica, a caller without one is refused (this is a
// production configuration, not the demo), and a subscriber on the other replica receives the
// events posted to the first ("Replicas are interchangeable ... A webhook may reach any
// replica; it is stored once, and every replica's subscribers get it", docs/operations.md).
func TestTheComposeFleetServesCallersAndSharesEventsAcrossItsReplicas(t *testing.T) {
	t.Parallel()
	var gw, sb *deployProgram
	progs := deployProgramsOrSkip(t)
	for i, p := range progs {
		if !strings.HasPrefix(p.Where, "compose.yaml service ") {
			continue
		}
		if len(p.Args) == 0 {
			gw = &progs[i]
		} else {
			sb = &progs[i]
		}
	}
	if gw == nil || sb == nil {
		t.Fatalf("the deploy module reported no Compose gateway or sandbox: %+v", progs)
	}
	service := func(p *deployProgram) string { return strings.TrimPrefix(p.Where, "compose.yaml service ") }

	// Where each service is reached inside the Compose network, and where here.
	redisURL, err := url.Parse(gw.Env["REDIS_URL"])
	if err != nil {
		t.Fatal(err)
	}
	sharedRedis, err := url.Parse(eventlogtest.SharedURL(t))
	if err != nil {
		t.Fatal(err)
	}
	addrFlag := slices.Index(sb.Args, "-addr")
	if addrFlag < 0 || addrFlag+1 == len(sb.Args) {
		t.Fatalf("the Compose sandbox runs %q, without -addr", sb.Args)
	}
	_, sbPort, _ := net.SplitHostPort(sb.Args[addrFlag+1])
	_, gwPort, _ := net.SplitHostPort(gw.Env["ADDR"])
	replica1 := reservePort(t)
	here := map[string]string{
		net.JoinHostPort(service(gw), gwPort): replica1,
		redisURL.Host:                         sharedRedis.Host,
	}
	rewrite := func(v string) string {
		for inCompose, local := range here {
			v = strings.ReplaceAll(v, "//"+inCompose, "//"+local)
		}
		return v
	}

	args := slices.Clone(sb.Args)
	for i := range args {
		args[i] = rewrite(args[i])
	}
	args[addrFlag+1] = "127.0.0.1:0"
	// The sandbox's other servers, which the fleet does not use, on ports of their own.
	args = append(args, "-sftp-addr", "127.0.0.1:0", "-session-addr", "127.0.0.1:0")
	sbURL := started(t, args, sb.Env, "Advisor sandbox serving")
	here[net.JoinHostPort(service(sb), sbPort)] = strings.TrimPrefix(sbURL, "http://")

	env := map[string]string{}
	for k, v := range gw.Env {
		env[k] = rewrite(v)
		if strings.Contains(env[k], "//"+service(sb)+":") || strings.Contains(env[k], "//"+service(gw)+":") {
			t.Fatalf("%s=%s still names a Compose service after naming them here as %v", k, env[k], here)
		}
	}
	// The test's own keys in the shared Redis, so that nothing else's events arrive.
	env["REDIS_KEY_PREFIX"] = eventlogtest.KeyPrefix("compose-fleet")
	env1, env2 := maps.Clone(env), maps.Clone(env)
	env1["ADDR"], env2["ADDR"] = replica1, "127.0.0.1:0"
	first := &testGateway{url: started(t, nil, env1, "gateway serving")}
	second := &testGateway{url: started(t, nil, env2, "gateway serving")}

	token := sandboxToken(t, sbURL, gw.Env["ADVISOR_ACCESS_TOKEN"], "adv-001", gw.Env["ADVISOR_FIRM"])
	for _, r := range []*testGateway{first, second} {
		var got struct {
			TopAccounts struct{ Nodes []struct{ Name string } }
		}
		r.postAs(t, "Bearer "+token, `{ topAccounts(limit: 3) { nodes { name } } }`).ok(t, &got)
		if len(got.TopAccounts.Nodes) == 0 || got.TopAccounts.Nodes[0].Name != "Hartwell Family" {
			t.Errorf("%s answered the sandbox's caller with %+v; want the demo families", r.url, got)
		}
		if res := r.postAs(t, "", `{ viewer { advisorId } }`); res.status != http.StatusUnauthorized {
			t.Errorf("%s answered a caller without a token with status %d; the fleet authenticates every caller", r.url, res.status)
		}
	}

	c := dialWS(t, second, "graphql-transport-ws", nil)
	c.send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + token}})
	if m := c.read(); m["type"] != "connection_ack" {
		t.Fatalf("got %v, want connection_ack", m)
	}
	c.subscribe("live", `subscription { events { eventType } }`, nil)
	waitSubscribers(t, second, 1)
	sandboxPost(t, sbURL+"/sandbox/events", map[string]any{"scenario": "onboarding", "interval": "10ms"})
	for _, want := range []string{"CLIENT_ACCEPTED_INVITATION", "USER_SUBSCRIPTION_CREATED"} {
		if ev := c.nextData("live")["events"].(map[string]any); ev["eventType"] != want {
			t.Fatalf("the subscriber on the second replica got %v, want %s", ev, want)
		}
	}
}

// reservePort returns a free address on loopback, for a server that must be named before it
// starts (the sandbox's webhooks go to the first replica).
func reservePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

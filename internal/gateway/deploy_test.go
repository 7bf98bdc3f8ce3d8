package gateway_test

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/advisorhq/gateway/internal/config"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// deployModule is the module of the deployment files (docs/deployment.md): nested, so that the
// Kubernetes API modules its test decodes with stay out of the gateway's go.mod, and so not
// reached by the repository's `go test ./...`, which runs it from here.
const deployModule = repoRoot + "/docs/deploy"

// The done-when: "the manifests and the Compose file pass the strict decoding test",
// in a fresh clone's `go test ./...`. The deploy module's tests decode every manifest strictly
// against the Kubernetes API types and check that every environment name they set is a setting
// (docs/configuration.md); then each program they start from the image is given its arguments
// and environment here, and the gateway's own parsers must take them: config.Load for the
// gateway, the sandbox's flags for `gateway sandbox`. So a deployment file whose gateway would
// refuse to start fails here, not at a deploy.
func TestTheDeploymentFilesDecodeStrictlyAndTheirSettingsLoad(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		// go test puts its own go on PATH; only a test binary run by hand has none.
		t.Skipf("no go on PATH to run the deploy module's tests with: %v", err)
	}
	// What the module's test reads is read here too, so that go test's cache of this package's
	// result ends when a deployment file changes.
	err = filepath.WalkDir(deployModule, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		_, err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	programs := filepath.Join(t.TempDir(), "programs.json")
	cmd := exec.CommandContext(t.Context(), goTool, "test", "-count=1", ".", "-args", "-programs", programs)
	cmd.Dir = deployModule
	// The module stands alone: a go.work of the developer's must not pull it into the gateway's.
	// GOFLAGS and the rest of the environment pass on as they are.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the deploy module's tests (cd docs/deploy && go test ./...) failed: %v\n%s", err, out)
	}

	data, err := os.ReadFile(programs)
	if err != nil {
		t.Fatalf("the deploy module's tests passed but wrote no programs: %v\n%s", err, out)
	}
	var progs []struct {
		Where string
		Args  []string
		Env   map[string]string
	}
	if err := json.Unmarshal(data, &progs); err != nil {
		t.Fatal(err)
	}
	gateways, sandboxes := 0, 0
	for _, p := range progs {
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

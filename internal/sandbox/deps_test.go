package sandbox_test

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The sandbox stands for a remote service: of this module it may use the specification's
// vocabulary and its own packages, nothing else (DESIGN.md, Dependency rule). Not even small
// helpers of the gateway's: its bulk files were once checked by the gateway's own checker, which
// could then never be caught out by the service it stands for. Its tests are held to the same
// rule, so that they check the sandbox against the specification rather than against the
// gateway's reading of it.
func TestTheSandboxImportsNoGatewayPackage(t *testing.T) {
	const module = "github.com/advisorhq/gateway/"
	allowed := map[string]bool{
		module + "internal/sandbox":             true,
		module + "internal/sandbox/sandboxtest": true, // the tests' harness
		module + "internal/sandbox/sftpd":       true, // its SFTP server, held to this rule by its own test
		module + "internal/advisorspec":         true, // the specification's vocabulary
		module + "internal/graceful":            true, // a leaf: serving until stopped, then draining
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("got %v, want the go tool on PATH to list the sandbox's dependencies", err)
	}
	// -test adds the packages the tests import; a test binary is listed as "p.test" and a test
	// package as "p [p.test]" or "p_test [p.test]".
	out, err := exec.Command(goTool, "list", "-deps", "-test", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var found []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, _, _ := strings.Cut(line, " ")
		path = strings.TrimSuffix(strings.TrimSuffix(path, ".test"), "_test")
		if strings.HasPrefix(path, module) && !allowed[path] {
			found = append(found, line)
		}
	}
	if len(found) > 0 {
		t.Errorf("got gateway packages among the sandbox's dependencies:\n  %s\nwant only %s",
			strings.Join(found, "\n  "), strings.Join(slices.Sorted(maps.Keys(allowed)), ", "))
	}
}

package sandboxserve_test

import (
	"os/exec"
	"strings"
	"testing"
)

// What puts the sandbox on the network is part of the sandbox, which stands for a remote
// service: it may import the sandbox's own packages and what the sandbox itself may import (its
// deps_test.go holds that list), and nothing else of the gateway.
func TestServingTheSandboxImportsNothingTheSandboxMayNot(t *testing.T) {
	const module = "github.com/advisorhq/gateway/"
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("got %v, want the go tool on PATH to list the package's dependencies", err)
	}
	list := func(args ...string) []string {
		out, err := exec.Command(goTool, append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		var paths []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			path, _, _ := strings.Cut(line, " ")
			paths = append(paths, strings.TrimSuffix(strings.TrimSuffix(path, ".test"), "_test"))
		}
		return paths
	}
	allowed := map[string]bool{}
	for _, p := range list("..") {
		allowed[p] = true
	}
	// The leaf that drains a server, which the sandbox's own list allows it.
	allowed[module+"internal/graceful"] = true
	for _, p := range list("-test", ".") {
		if strings.HasPrefix(p, module) && !allowed[p] && !strings.HasPrefix(p, module+"internal/sandbox/") {
			t.Errorf("got %s among the dependencies of what serves the sandbox, want only what the sandbox may import", p)
		}
	}
}

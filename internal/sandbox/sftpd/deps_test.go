package sftpd_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The SFTP server is part of the sandbox, which stands for a remote service: like the sandbox
// (see its deps_test.go) it and its tests import the specification's vocabulary and the
// sandbox's own packages, nothing of the gateway's, not even its small helpers.
func TestTheSFTPServerImportsNoGatewayPackage(t *testing.T) {
	const module = "github.com/advisorhq/gateway/"
	allowed := map[string]bool{
		module + "internal/sandbox/sftpd": true,
		module + "internal/advisorspec":   true, // the specification's vocabulary
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("got %v, want the go tool on PATH to list the package's dependencies", err)
	}
	out, err := exec.Command(goTool, "list", "-deps", "-test", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, _, _ := strings.Cut(line, " ")
		path = strings.TrimSuffix(strings.TrimSuffix(path, ".test"), "_test")
		if strings.HasPrefix(path, module) && !allowed[path] {
			t.Errorf("got %s among the SFTP server's dependencies, want only the sandbox's allowed packages", line)
		}
	}
}

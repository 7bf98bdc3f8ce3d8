package testnpm

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
)

// RunJSON runs a script that prints one JSON value (a node script driving a client or a
// browser) and decodes it into v. The test fails with the script's stderr when the script
// fails, and with what it printed when that is not JSON.
func RunJSON(t testing.TB, cmd *exec.Cmd, v any) {
	t.Helper()
	name := cmd.Path
	if len(cmd.Args) > 1 {
		name = filepath.Base(cmd.Args[1])
	}
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s: %v\n%s", name, err, stderr)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%s printed %q: %v", name, out, err)
	}
}

package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gqlgen's templates change between versions; ours must follow, with our changes carried over
// by hand. The test fails when go.mod names a gqlgen whose templates differ from the ones ours
// derive from (templates/UPSTREAM), and when a template we did not change differs from
// gqlgen's.
func TestTemplatesFollowGqlgen(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/99designs/gqlgen").Output()
	if err != nil {
		t.Fatalf("find gqlgen's module: %v", err)
	}
	upstream := filepath.Join(strings.TrimSpace(string(out)), "codegen")
	recorded := upstreamHashes(t)
	names, err := filepath.Glob(filepath.Join(upstream, "*.gotpl"))
	if err != nil || len(names) == 0 {
		t.Fatalf("gqlgen's templates in %s: %v", upstream, err)
	}
	for _, path := range names {
		name := filepath.Base(path)
		theirs, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(theirs)
		want, ok := recorded[name]
		switch {
		case !ok:
			t.Errorf("gqlgen has a template %s that templates/ lacks: copy it, and its hash to UPSTREAM", name)
			continue
		case hex.EncodeToString(sum[:]) != want:
			t.Errorf("gqlgen's %s changed since the version templates/ derives from: port the lines marked execgen: to the new template and update UPSTREAM", name)
		}
		delete(recorded, name)
		ours, err := os.ReadFile(filepath.Join("templates", name))
		if err != nil {
			t.Errorf("templates/%s: %v", name, err)
			continue
		}
		if !bytes.Contains(ours, []byte("execgen:")) && !bytes.Equal(ours, theirs) {
			t.Errorf("templates/%s differs from gqlgen's without an execgen: mark saying why", name)
		}
	}
	for name := range recorded {
		t.Errorf("gqlgen no longer has %s: drop it from templates/ and UPSTREAM", name)
	}
}

func upstreamHashes(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("templates", "UPSTREAM"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hashes := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("UPSTREAM: %q is not a sha256sum line", line)
		}
		hashes[name] = sum
	}
	return hashes
}

package testnpm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeNPM stands in for npm ci on PATH: it records each run in $FAKE_NPM_LOG, records
// "overlap" (and fails) when two run in one directory at once, makes the packages'
// directories, takes $FAKE_NPM_SLEEP seconds, fails there when the file "fail" is beside the
// log, and then fills them in.
const fakeNPM = `#!/bin/sh
log=$FAKE_NPM_LOG
mkdir "$log.running" 2>/dev/null || { echo overlap >>"$log"; exit 1; }
echo run >>"$log"
rm -rf node_modules
mkdir -p node_modules/left-pad node_modules/right-pad
sleep "${FAKE_NPM_SLEEP:-0.3}"
if [ -e "$(dirname "$log")/fail" ]; then rmdir "$log.running"; echo "npm error code E500" >&2; exit 1; fi
touch node_modules/left-pad/index.js node_modules/right-pad/index.js
rmdir "$log.running"
`

// TestMain lets a test run Install in another process, as `go test ./...` does from the
// test binaries of other packages.
func TestMain(m *testing.M) {
	if dir := os.Getenv("TESTNPM_INSTALL_DIR"); dir != "" {
		if err := Install(context.Background(), dir, "right-pad"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// project is a directory with a package.json and lockfile, and the fake npm first on PATH.
type project struct {
	dir, log string
}

func newProject(t *testing.T) *project {
	t.Helper()
	root := t.TempDir()
	bin, dir := filepath.Join(root, "bin"), filepath.Join(root, "client")
	for _, d := range []string{bin, dir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(fakeNPM), 0o755); err != nil {
		t.Fatal(err)
	}
	p := &project{dir: dir, log: filepath.Join(root, "npm.log")}
	p.write(t, "package.json", `{"dependencies": {"left-pad": "1.3.0", "right-pad": "1.0.1"}}`)
	p.write(t, "package-lock.json", `{"lockfileVersion": 3}`)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_NPM_LOG", p.log)
	return p
}

func (p *project) write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(p.dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runs is what the fake npm recorded: "run" for each install, "overlap" for each clash.
func (p *project) runs(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(p.log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(data)), " ")
}

func (p *project) install(t *testing.T) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Install(ctx, p.dir, "right-pad")
}

// otherProcess runs Install for p.dir in a new process of this test binary.
func (p *project) otherProcess(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TESTNPM_INSTALL_DIR="+p.dir)
	return cmd
}

func TestInstallRunsNpmOnceForManyProcessesAndGoroutinesAtOnce(t *testing.T) {
	p := newProject(t)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 3 {
		cmd := p.otherProcess(t)
		wg.Go(func() {
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("another process: %v: %s", err, out)
			}
		})
		wg.Go(func() { errs <- p.install(t) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := p.runs(t); got != "run" {
		t.Errorf("npm ran %q, want one run", got)
	}
}

func TestInstallRedoesAnInstallThatFailed(t *testing.T) {
	p := newProject(t)
	if err := os.WriteFile(filepath.Join(filepath.Dir(p.log), "fail"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.install(t); err == nil || !strings.Contains(err.Error(), "E500") {
		t.Fatalf("got %v, want npm's error", err)
	}
	// What the failed run left looks installed to a check for a package's directory.
	if _, err := os.Stat(filepath.Join(p.dir, "node_modules", "right-pad")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(filepath.Dir(p.log), "fail")); err != nil {
		t.Fatal(err)
	}
	if err := p.install(t); err != nil {
		t.Fatal(err)
	}
	if got := p.runs(t); got != "run run" {
		t.Errorf("npm ran %q, want a failed run and a second one", got)
	}
}

// A test process killed mid-install (^C, a timeout) leaves npm running on its own, and then a
// half-made node_modules. The next install waits for that npm, then installs again.
func TestInstallRedoesAnInstallWhoseProcessWasKilled(t *testing.T) {
	p := newProject(t)
	t.Setenv("FAKE_NPM_SLEEP", "1")
	cmd := p.otherProcess(t)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); p.runs(t) == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the other process never started npm")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := p.install(t); err != nil {
		t.Fatal(err)
	}
	if got := p.runs(t); got != "run run" {
		t.Errorf("npm ran %q, want the killed process's run, then one after it ended", got)
	}
}

func TestInstallRunsAgainOnlyWhenWhatItInstalledChanged(t *testing.T) {
	p := newProject(t)
	steps := []struct {
		name   string
		change func()
		runs   string
	}{
		{"first", func() {}, "run"},
		{"unchanged", func() {}, "run"},
		{"a new lockfile", func() { p.write(t, "package-lock.json", `{"lockfileVersion": 3, "packages": {}}`) }, "run run"},
		{"a new package.json", func() { p.write(t, "package.json", `{"dependencies": {"right-pad": "1.0.1"}}`) }, "run run run"},
		{"a package removed by hand", func() { os.RemoveAll(filepath.Join(p.dir, "node_modules", "right-pad")) }, "run run run run"},
		{"the marker removed", func() { os.Remove(filepath.Join(p.dir, "node_modules", Marker)) }, "run run run run run"},
	}
	for _, s := range steps {
		s.change()
		if err := p.install(t); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := p.runs(t); got != s.runs {
			t.Errorf("after %s: npm ran %q, want %q", s.name, got, s.runs)
		}
	}
}

func TestInstallGivesUpWaitingWhenItsContextEnds(t *testing.T) {
	p := newProject(t)
	held, err := os.Open(p.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := syscall.Flock(int(held.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := Install(ctx, p.dir); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the context's deadline", err)
	}
	if got := p.runs(t); got != "" {
		t.Errorf("npm ran %q while another held the lock", got)
	}
}

// Tests import this package; the gateway's binary must not.
func TestTheGatewayBinaryDoesNotLinkThisPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/advisorhq/gateway").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/advisorhq/gateway/internal/testnpm" {
			t.Fatal("the gateway's main package depends on internal/testnpm: import it only from _test.go files")
		}
	}
}

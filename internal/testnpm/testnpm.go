// Package testnpm installs the npm packages that tests drive (JavaScript clients, a browser
// driver), pinned by a directory's package-lock.json, once per lockfile, however many test
// processes ask at the same time.
//
// Only _test.go files import it, so the gateway's binary never carries it; a test of this
// package checks that.
package testnpm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Marker is the file, inside node_modules, that says an install finished and of which
// package.json and package-lock.json.
const Marker = ".gateway-installed"

// Install makes dir/node_modules what dir/package-lock.json pins, running `npm ci` unless a
// finished install of the same package.json and lockfile is there and holds every one of
// packages (names under node_modules). It waits while another process or goroutine installs
// into dir, for at most as long as ctx allows.
func Install(ctx context.Context, dir string, packages ...string) error {
	lock, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("npm install in %s: %w", dir, err)
	}
	defer lock.Close()
	// `go test ./...` runs each package's tests in its own process, and tests of one process
	// run in parallel; two `npm ci` in one directory break each other (ENOTEMPTY). flock is
	// held per open file, so it serializes both kinds, and the kernel drops it when its holders
	// die, so a killed test leaves no stale lock. It is taken on the directory itself, so there
	// is no lock file to keep out of git.
	if err := lockExclusive(ctx, lock); err != nil {
		return fmt.Errorf("npm install in %s: wait for another install: %w", dir, err)
	}
	want, err := lockfileHash(dir)
	if err != nil {
		return fmt.Errorf("npm install in %s: %w", dir, err)
	}
	if installed(dir, want, packages) {
		return nil
	}
	marker := filepath.Join(dir, "node_modules", Marker)
	if err := os.Remove(marker); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("npm install in %s: %w", dir, err)
	}
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	// npm holds the lock too: if this process is killed, an npm that outlives it still keeps
	// the next install out of the directory until it has ended.
	cmd.ExtraFiles = []*os.File{lock}
	// Anything npm started that holds its output open must not hold this call open after npm.
	cmd.WaitDelay = 10 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out)
	}
	for _, p := range packages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p)); err != nil {
			return fmt.Errorf("npm ci in %s did not install %s: is it in package.json?", dir, p)
		}
	}
	// Written last: until it is there, whatever node_modules holds counts as not installed.
	if err := os.WriteFile(marker, []byte(want+"\n"), 0o644); err != nil {
		return fmt.Errorf("npm install in %s: %w", dir, err)
	}
	return nil
}

// installed reports whether a finished install of the lockfile with hash want is in dir, with
// every one of packages.
func installed(dir, want string, packages []string) bool {
	got, err := os.ReadFile(filepath.Join(dir, "node_modules", Marker))
	if err != nil || string(got) != want+"\n" {
		return false
	}
	for _, p := range packages {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", p)); err != nil {
			return false
		}
	}
	return true
}

// lockfileHash identifies what npm ci would install: it reads package.json as well as the
// lockfile, and refuses the two when they disagree.
func lockfileHash(dir string) (string, error) {
	h := sha256.New()
	for _, name := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// lockExclusive takes an exclusive flock on f, giving up when ctx ends. It polls rather than
// blocks, because a blocked flock cannot be interrupted.
func lockExclusive(ctx context.Context, f *os.File) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-tick.C:
		}
	}
}

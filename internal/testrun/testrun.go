// Package testrun runs a server's entry point in-process for a test, as a user runs it, and
// waits for the lines it prints on starting: that is how end-to-end tests learn the addresses a
// server took on 127.0.0.1:0. The gateway's tests and the command line's share it.
package testrun

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Func is an entry point: it serves until ctx ends, printing its start-up lines to stdout, and
// returns nil after a shutdown that ctx asked for.
type Func func(ctx context.Context, stdout io.Writer) error

// urlPattern matches an address a server prints.
var urlPattern = regexp.MustCompile(`(?:https?|sftp)://\S+`)

// URL is the first address on line, or "".
func URL(line string) string { return urlPattern.FindString(line) }

// Start runs f until the test ends and returns, for each marker in the order given, what take
// makes of the first line holding it, once all have been printed; and what stops f (as SIGTERM
// does) and returns what f returned. The test's cleanup stops f too, if the test did not, and
// fails the test if f then returns an error.
func Start(t testing.TB, f Func, take func(line string) string, markers ...string) ([]string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- f(ctx, outW)
		outW.Close()
	}()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("run returned %v after cancel, want nil", err)
		}
	})
	found := make(chan []string, 1)
	go func() {
		taken := make([]string, len(markers))
		left := len(markers)
		sc := bufio.NewScanner(out)
		// left first: Scan would wait for a line after the last one wanted, which may never come.
		for left > 0 && sc.Scan() {
			for i, m := range markers {
				if taken[i] == "" && strings.Contains(sc.Text(), m) {
					taken[i] = take(sc.Text())
					left--
				}
			}
		}
		found <- taken
		_, _ = io.Copy(io.Discard, out) // keep the program's writes from blocking
	}()
	select {
	case lines := <-found:
		return lines, stop
	case err := <-done:
		done <- err // for stop
		t.Fatalf("run ended before serving: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatalf("no lines with %q within 10 s", markers)
	}
	return nil, nil
}

// Buffer holds what a program writes (its log, say) for the test to read while it runs.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is what has been written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

package gateway_test

import (
	"context"
	"io"
	"testing"

	"github.com/advisorhq/gateway/internal/command"
	"github.com/advisorhq/gateway/internal/config"
	"github.com/advisorhq/gateway/internal/gateway"
	"github.com/advisorhq/gateway/internal/testrun"
)

// serve runs a gateway configured by getenv until ctx ends, printing to stdout and logging to
// logs, as the command does but for tracing, which opts may add.
func serve(ctx context.Context, getenv func(string) string, stdout, logs io.Writer, opts ...gateway.Option) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	g, err := gateway.New(ctx, cfg, append([]gateway.Option{gateway.Output(stdout), gateway.LogTo(logs)}, opts...)...)
	if err != nil {
		return err
	}
	defer g.Close()
	return g.Serve(ctx)
}

// started runs a gateway configured by env (or, with args, the command line) until the test
// ends, and returns the first URL printed on a line that contains marker.
func started(t testing.TB, args []string, env map[string]string, marker string) string {
	t.Helper()
	return startedURLs(t, args, env, marker)[0]
}

// startedURLs runs a gateway (or the command line) and returns the first URL of the first line
// holding each marker, in the order the markers are given, once all have been printed.
func startedURLs(t testing.TB, args []string, env map[string]string, markers ...string) []string {
	t.Helper()
	urls, _ := launch(t, args, env, markers...)
	return urls
}

// startedLines runs a gateway (or the command line) and returns the first line holding each
// marker, in the order the markers are given, once all have been printed.
func startedLines(t testing.TB, args []string, env map[string]string, markers ...string) []string {
	t.Helper()
	lines, _ := launchFor(t, args, env, func(line string) string { return line }, markers...)
	return lines
}

// launch is startedURLs that also returns what stops the gateway (as SIGTERM does) and reports
// what it returned. The test's cleanup stops it too, if the test did not.
func launch(t testing.TB, args []string, env map[string]string, markers ...string) ([]string, func() error) {
	t.Helper()
	return launchFor(t, args, env, testrun.URL, markers...)
}

// launchFor is launch with what is taken of each marker's line. With args it runs the command
// line instead of a gateway: the sandbox on its own, as an operator runs it (`go run . sandbox`),
// for tests of a gateway against it.
func launchFor(t testing.TB, args []string, env map[string]string, take func(line string) string, markers ...string) ([]string, func() error) {
	t.Helper()
	getenv := func(k string) string { return env[k] }
	run := func(ctx context.Context, stdout io.Writer) error { return serve(ctx, getenv, stdout, io.Discard) }
	if args != nil {
		run = func(ctx context.Context, stdout io.Writer) error {
			return command.Run(ctx, args, getenv, stdout, io.Discard)
		}
	}
	return testrun.Start(t, run, take, markers...)
}

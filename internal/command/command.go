// Package command is the gateway's command line: with no arguments it serves the gateway, with
// "sandbox" the sandbox alone (and "sandbox enroll" a client certificate of its session host),
// with "bulk" a bulk load through a running gateway, with "config" the reference of every setting.
package command

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/advisorhq/gateway/internal/bulkcli"
	"github.com/advisorhq/gateway/internal/config"
	"github.com/advisorhq/gateway/internal/gateway"
	"github.com/advisorhq/gateway/internal/tracing"
)

// Run starts what args ask for and serves until ctx ends. Configuration comes from args and
// getenv only, so tests run the real thing on 127.0.0.1:0 and read its address from stdout.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "sandbox" {
		return runSandbox(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "bulk" {
		return bulkcli.Run(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) == 1 && args[0] == "config" {
		// The same declarations config.Load reads, as docs/configuration.md shows them.
		return config.Reference(stdout)
	}
	if len(args) > 0 {
		return fmt.Errorf("unknown command %q: run with no arguments for the gateway, or \"sandbox\", \"bulk\" or \"config\"", args[0])
	}
	return runGateway(ctx, getenv, stdout, stderr)
}

// runGateway serves the gateway, its spans going where the OTEL_* settings say.
func runGateway(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	tp, shutdown, err := tracing.Setup(ctx, getenv)
	if err != nil {
		return err
	}
	// Deferred first, so it runs last: the spans of the draining requests are flushed too.
	defer func() {
		// Not ctx, which has ended by now.
		flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(flushCtx); err != nil {
			gateway.NewLogger(cfg.LogFormat, stderr).Warn("flush the last spans", "error", err)
		}
	}()
	g, err := gateway.New(ctx, cfg, gateway.Output(stdout), gateway.LogTo(stderr), gateway.Tracer(tp))
	if err != nil {
		return err
	}
	defer g.Close()
	return g.Serve(ctx)
}

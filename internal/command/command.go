// Package command is the gateway's command line: with no arguments it serves the gateway, with
// "sandbox" the sandbox alone (and "sandbox enroll" a client certificate of its session host),
// with "bulk" a bulk load through a running gateway, with "config" the reference of every setting.
package command

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/advisorhq/gateway/internal/bulkcli"
	"github.com/advisorhq/gateway/internal/config"
	"github.com/advisorhq/gateway/internal/gateway"
	"github.com/advisorhq/gateway/internal/tracing"
)

// Run starts what args ask for and serves until ctx ends. Configuration comes from args and
// getenv only, so tests run the real thing on 127.0.0.1:0 and read its address from stdout.
// Help asked for (-h, --help, help) goes to stdout and returns flag.ErrHelp, which is success.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return runGateway(ctx, getenv, stdout, stderr)
	}
	switch cmd, rest := args[0], args[1:]; {
	case isHelp(cmd):
		fmt.Fprint(stdout, usage)
		return flag.ErrHelp
	case cmd == "sandbox":
		if slices.ContainsFunc(rest, isHelp) {
			stderr = stdout
		}
		return runSandbox(ctx, rest, getenv, stdout, stderr)
	case cmd == "bulk":
		return bulkcli.Run(ctx, rest, getenv, stdout, stderr)
	case cmd == "config" && len(rest) == 0:
		// The same declarations config.Load reads, as docs/configuration.md shows them.
		return config.Reference(stdout)
	case cmd == "config" && len(rest) == 1 && isHelp(rest[0]):
		fmt.Fprint(stdout, configUsage)
		return flag.ErrHelp
	case cmd == "config":
		return fmt.Errorf("config takes no arguments, not %q: %s", rest[0], strings.TrimSpace(configUsage))
	}
	return fmt.Errorf("unknown command %q: run with no arguments for the gateway, or \"sandbox\", \"bulk\" or \"config\" (-h for help)", args[0])
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

const usage = `Usage: go run . [command]

With no command: the Advisor GraphQL gateway. With no settings it runs against an embedded
sandbox of the Advisor service on 127.0.0.1:8080; settings come from the environment.

Commands:
  sandbox          the Advisor sandbox alone (go run . sandbox -h lists its flags)
  sandbox enroll   a client certificate of the sandbox's session host (go run . sandbox enroll -h)
  bulk             check or load bulk files through a running gateway (go run . bulk -h)
  config           every setting with its default and meaning (docs/configuration.md)
  help             this help; -h and --help too
`

const configUsage = `Usage: go run . config

Prints every setting the gateway reads, with its default and meaning, as a Markdown table
(docs/configuration.md is this output).
`

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

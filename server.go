// Command gateway is the Advisor GraphQL gateway. With no configuration it runs against an
// embedded sandbox of the Advisor service; `gateway sandbox` serves that sandbox alone, and
// `gateway bulk` loads files through a running gateway (internal/command).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/advisorhq/gateway/internal/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := command.Run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

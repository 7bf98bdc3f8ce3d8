// Package graceful runs an HTTP server until its context ends and then lets what it is serving
// finish. It is a leaf: the gateway and the sandbox, which may share nothing else, both use it.
package graceful

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Serve runs srv on ln until ctx ends, then gives in-flight requests a few seconds to finish
// (the drain a deployment's grace period must cover; docs/deployment.md adds it up).
func Serve(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

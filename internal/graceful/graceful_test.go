package graceful_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/graceful"
)

// A request in flight when the context ends is answered before Serve returns, and Serve
// returns nil: stopping is not an error.
func TestServeLetsARequestInFlightFinishWhenStopped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-release
		io.WriteString(w, "done")
	})}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- graceful.Serve(ctx, srv, ln) }()
	answered := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String())
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- string(b)
	}()
	<-arrived
	cancel()
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v with a request in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if got := <-answered; got != "done" {
		t.Errorf("the request in flight got %q, want its answer", got)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v after a stop, want nil", err)
	}
}

// A listener that fails is Serve's error, without waiting for the context.
func TestServeReturnsTheListenersError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := graceful.Serve(context.Background(), &http.Server{}, ln); err == nil || errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve on a closed listener = %v, want the listener's error", err)
	}
}

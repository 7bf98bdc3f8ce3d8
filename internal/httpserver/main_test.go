package httpserver

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/advisorhq/gateway/internal/transport"
)

// TestMain fails the package's tests when a goroutine outlives them: every goroutine this
// package starts (streams, sockets, keep-alives) must have an owner that stops it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testTransport is the transports' configuration the tests' handlers share: bodies and messages
// of a MiB, a keep-alive that never fires during a test.
func testTransport() transport.Config {
	return transport.Config{MaxRequestBytes: 1 << 20, MaxMessageBytes: 1 << 20, KeepAlive: time.Minute}
}

package transport

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every goroutine this
// package starts (streams, sockets, keep-alives) must have an owner that stops it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

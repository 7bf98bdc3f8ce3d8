package webhook_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them, such as a connection of a
// test server that a test left open.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

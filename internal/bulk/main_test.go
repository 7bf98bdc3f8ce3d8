package bulk_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every load must end
// with Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

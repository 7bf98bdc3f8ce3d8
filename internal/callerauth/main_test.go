package callerauth_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: a Verifier's refresh loop
// that Close did not end, or a JWKS connection left open.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

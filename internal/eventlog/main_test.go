package eventlog_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every goroutine this
// package starts must have an owner that stops it. It stops the Redis Cluster the tests shared.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(stopping{m})
}

type stopping struct{ m *testing.M }

func (s stopping) Run() int {
	code := s.m.Run()
	if clusterDir == "" {
		return code // no test asked for the cluster
	}
	if c, err := sharedCluster(); err == nil {
		c.Stop()
		_ = os.RemoveAll(clusterDir)
	}
	return code
}

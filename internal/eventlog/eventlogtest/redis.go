// Package eventlogtest runs a redis-server of a test's own, for tests of what the gateway does
// while Redis is down or frozen. Such a test must never stop the Redis other tests share.
package eventlogtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a redis-server on a loopback port of its own, without persistence, so a restart
// comes back empty, as a Redis that lost its data would.
type Redis struct {
	t    testing.TB
	port int
	cmd  *exec.Cmd
}

// StartRedis starts a redis-server for t, stopped when t ends. Without redis-server installed
// the test is skipped, or fails when REQUIRE_REDIS is set (as in CI).
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("REQUIRE_REDIS") != "" {
			t.Fatal("redis-server is not installed")
		}
		t.Skip("redis-server is not installed")
	}
	r := &Redis{t: t, port: freePort(t)}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// Addr is the server's host:port.
func (r *Redis) Addr() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

// URL is the server's address as REDIS_URL takes it.
func (r *Redis) URL() string { return "redis://" + r.Addr() }

// Start starts the server (again, after Stop) on its port and waits until it answers.
func (r *Redis) Start() {
	r.t.Helper()
	if r.cmd != nil {
		r.t.Fatal("redis-server is already running")
	}
	cmd := exec.Command("redis-server", "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	r.cmd = cmd
	client := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer client.Close()
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatal("redis-server did not answer within 5 s of starting")
}

// Stop kills the server, as a crash would; it does nothing when the server is not running.
func (r *Redis) Stop() {
	if r.cmd == nil {
		return
	}
	// A frozen process still dies of SIGKILL; SIGCONT first lets it go at once.
	_ = r.cmd.Process.Signal(syscall.SIGCONT)
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// Freeze stops the process with SIGSTOP: connections stay open and new ones are accepted by the
// kernel, but nothing is answered, as with a Redis stuck in a long command or a lost network.
func (r *Redis) Freeze() { r.signal(syscall.SIGSTOP) }

// Thaw lets a frozen server go on with SIGCONT.
func (r *Redis) Thaw() { r.signal(syscall.SIGCONT) }

func (r *Redis) signal(sig os.Signal) {
	r.t.Helper()
	if r.cmd == nil {
		r.t.Fatal("redis-server is not running")
	}
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatalf("signal redis-server: %v", err)
	}
}

// freePort finds a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

package sftpd_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh"

	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// TestMain fails the package's tests when a goroutine outlives them: every connection's
// goroutines must end with it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	testUser     = "sandbox"
	testPassword = "s3cret-pass"
)

// server is a Server serving on loopback for one test, with what it handed over and logged.
type server struct {
	*sftpd.Server
	addr    string
	fileDir string // holds the root ("sftp") and the host key, as the sandbox's -file-dir does
	root    string
	logs    *syncBuffer
	cancel  context.CancelFunc
	done    chan error

	mu  sync.Mutex
	got []sftpd.File
}

// startServer serves cfg (Dir, HostKeyFile, and User and Password unless there are Users,
// defaulted) on a free loopback port until the test ends.
func startServer(t *testing.T, cfg sftpd.Config) *server {
	t.Helper()
	s := &server{fileDir: t.TempDir(), logs: &syncBuffer{}}
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(s.fileDir, "sftp")
	}
	if cfg.HostKeyFile == "" {
		cfg.HostKeyFile = filepath.Join(s.fileDir, "ssh_host_ed25519_key")
	}
	if cfg.User == "" && len(cfg.Users) == 0 {
		cfg.User, cfg.Password = testUser, testPassword
	}
	s.root = cfg.Dir
	cfg.Logger = slog.New(slog.NewTextHandler(s.logs, nil))
	cfg.OnFile = func(f sftpd.File) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.got = append(s.got, f)
	}
	srv, err := sftpd.New(cfg)
	if err != nil {
		t.Fatalf("New: got %v, want no error", err)
	}
	s.Server = srv
	s.serve(t)
	return s
}

// serve starts Serve on a new listener; the test's end stops it and checks it returned nil.
func (s *server) serve(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	s.cancel, s.done = cancel, done
	t.Cleanup(func() { s.stop(t) })
}

// stop cancels Serve and waits for it; it may be called more than once.
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.cancel()
	select {
	case err, ok := <-s.done:
		if ok && err != nil {
			t.Errorf("Serve: got %v, want nil after cancel", err)
		}
		if ok {
			close(s.done)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return within 5s of its context's end")
	}
}

func (s *server) files() []sftpd.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sftpd.File(nil), s.got...)
}

// clientConfig trusts only the server's host key, by its fingerprint, as the gateway pins it.
func (s *server) clientConfig(user string, auth ...ssh.AuthMethod) *ssh.ClientConfig {
	return &ssh.ClientConfig{
		User: user,
		Auth: auth,
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			if got := ssh.FingerprintSHA256(key); got != s.Fingerprint() {
				return fmt.Errorf("got host key %s, want %s", got, s.Fingerprint())
			}
			return nil
		},
		Timeout: 5 * time.Second,
	}
}

// dial logs in with auth and returns an SFTP client that the test's end closes.
func (s *server) dial(t *testing.T, user string, auth ...ssh.AuthMethod) (*sftp.Client, error) {
	t.Helper()
	conn, err := ssh.Dial("tcp", s.addr, s.clientConfig(user, auth...))
	if err != nil {
		return nil, err
	}
	c, err := sftp.NewClient(conn)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	t.Cleanup(func() { _ = c.Close(); _ = conn.Close() })
	return c, nil
}

// login logs in with the password, failing the test if it cannot.
func (s *server) login(t *testing.T) *sftp.Client {
	t.Helper()
	c, err := s.dial(t, testUser, ssh.Password(testPassword))
	if err != nil {
		t.Fatalf("login: got %v, want no error", err)
	}
	return c
}

// upload writes data to name and closes it.
func upload(t *testing.T, c *sftp.Client, name, data string) {
	t.Helper()
	f, err := c.Create(name)
	if err != nil {
		t.Fatalf("create %s: got %v, want no error", name, err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatalf("write %s: got %v, want no error", name, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close %s: got %v, want no error", name, err)
	}
}

// eventually waits up to 5s for cond, as resources are released after the peer is gone.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: after 5s %s", what, state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd to count descriptors: %v", err)
	}
	return len(entries)
}

// settled waits until the process's descriptors and goroutines are back to a baseline.
func settled(t *testing.T, what string, fds, goroutines int) {
	t.Helper()
	eventually(t, what, func() (bool, string) {
		f, g := openFDs(t), runtime.NumGoroutine()
		if f <= fds && g <= goroutines {
			return true, ""
		}
		msg := fmt.Sprintf("got %d descriptors and %d goroutines, want at most %d and %d", f, g, fds, goroutines)
		if g > goroutines { // which goroutine stayed is what a failure needs to say
			buf := make([]byte, 1<<16)
			msg += "; the goroutines:\n" + string(buf[:runtime.Stack(buf, true)])
		}
		return false, msg
	})
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

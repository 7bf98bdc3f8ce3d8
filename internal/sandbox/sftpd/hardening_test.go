package sftpd_test

import (
	"bufio"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// tryLogin logs in with the password, giving up after 5s, and closes the connection.
func tryLogin(s *server, user, password string) error {
	nc, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	conn, chans, reqs, err := ssh.NewClientConn(nc, s.addr, s.clientConfig(user, ssh.Password(password)))
	if err != nil {
		return err
	}
	return ssh.NewClient(conn, chans, reqs).Close()
}

// Wrong passwords from one address block it for a while, even with the right password: the
// issue measured 751 guesses a second with nothing in the way.
func TestFailedLoginsAreThrottledPerAddress(t *testing.T) {
	clk := sftpd.NewFakeClock(time.Now())
	s := startServer(t, sftpd.Config{MaxLoginFailures: 3, LoginFailureWindow: time.Minute, LoginBlock: 5 * time.Minute, Now: clk.Now})
	fail := func(n int) {
		t.Helper()
		for range n {
			if err := tryLogin(s, testUser, "guess"); err == nil {
				t.Fatal("got a login with a wrong password")
			}
		}
	}
	login := func(want bool, when string) {
		t.Helper()
		err := tryLogin(s, testUser, testPassword)
		if want && err != nil {
			t.Fatalf("%s: got %v, want the right password to log in", when, err)
		}
		if !want && err == nil {
			t.Fatalf("%s: got a login, want the address blocked", when)
		}
	}
	fail(2)
	login(true, "after 2 failures")
	clk.Advance(time.Minute) // a new window: the 2 failures no longer count
	fail(2)
	login(true, "after 2 failures in each of two windows")
	fail(1)
	login(false, "after 3 failures in a window")
	if !strings.Contains(s.logs.String(), "sftp logins blocked") {
		t.Errorf("got logs without the block:\n%s", s.logs)
	}
	clk.Advance(5*time.Minute - time.Second)
	login(false, "a second before the block ends")
	clk.Advance(time.Second)
	login(true, "once the block ended")

	// On one connection: the right password after the failures that blocked the address.
	tries := []string{"guess-1", "guess-2", "guess-3", testPassword}
	auth := ssh.RetryableAuthMethod(ssh.PasswordCallback(func() (string, error) {
		pw := tries[0]
		tries = tries[1:]
		return pw, nil
	}), len(tries))
	if c, err := s.dial(t, testUser, auth); err == nil {
		_ = c.Close()
		t.Fatal("got a login by the password tried after the address was blocked on the same connection")
	}
	if len(tries) != 0 {
		t.Fatalf("got %d passwords not tried, want all four tried", len(tries))
	}
}

// Connections that never log in do not hold the places of logged-in sessions: with more
// silent connections than MaxConns open, a real login is served.
func TestSilentConnectionsDoNotKeepLoginsOut(t *testing.T) {
	const maxConns = 4
	s := startServer(t, sftpd.Config{MaxConns: maxConns, HandshakeTimeout: time.Minute})
	runtime.GC()
	fds, goroutines := openFDs(t), runtime.NumGoroutine()

	var silent []net.Conn
	for i := range maxConns + 8 {
		nc, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		silent = append(silent, nc)
		// The server's version line says it accepted the connection and waits for ours.
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if line, err := bufio.NewReader(nc).ReadString('\n'); err != nil || !strings.HasPrefix(line, "SSH-2.0-") {
			t.Fatalf("silent connection %d: got %q, %v, want it accepted and greeted", i+1, line, err)
		}
	}
	if err := tryLogin(s, testUser, testPassword); err != nil {
		t.Fatalf("got %v, want a login beside %d silent connections", err, len(silent))
	}
	conn, err := ssh.Dial("tcp", s.addr, s.clientConfig(testUser, ssh.Password(testPassword)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := sftp.NewClient(conn)
	if err != nil {
		t.Fatal(err)
	}
	upload(t, c, clientsName, "{}\n")
	for i, nc := range silent {
		_ = nc.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		var b [1]byte
		if _, err := nc.Read(b[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("silent connection %d: got %v, want it still open (its handshake has a minute)", i+1, err)
		}
	}
	for _, nc := range silent {
		_ = nc.Close()
	}
	_ = c.Close()
	_ = conn.Close()
	settled(t, "after the silent connections left", fds, goroutines)
}

// Beyond MaxPreAuthConns, connections wait in the listen queue until a place frees.
func TestConnectionsNotLoggedInAreBounded(t *testing.T) {
	s := startServer(t, sftpd.Config{MaxPreAuthConns: 2, HandshakeTimeout: time.Minute})
	greeted := func(nc net.Conn, wait time.Duration) bool {
		_ = nc.SetReadDeadline(time.Now().Add(wait))
		line, err := bufio.NewReader(nc).ReadString('\n')
		return err == nil && strings.HasPrefix(line, "SSH-2.0-")
	}
	var conns []net.Conn
	for range 3 {
		nc, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		conns = append(conns, nc)
	}
	for i, nc := range conns[:2] {
		if !greeted(nc, 5*time.Second) {
			t.Fatalf("connection %d: got no greeting, want it accepted", i+1)
		}
	}
	if greeted(conns[2], 300*time.Millisecond) {
		t.Fatal("got a third connection accepted beyond MaxPreAuthConns 2")
	}
	_ = conns[0].Close()
	if !greeted(conns[2], 5*time.Second) {
		t.Fatal("got the third connection still waiting after one left")
	}
}

// isFailure reports whether err is an SFTP failure whose message says want.
func isFailure(err error, want string) bool {
	var se *sftp.StatusError
	return errors.As(err, &se) && se.FxCode() == sftp.ErrSSHFxFailure && strings.Contains(err.Error(), want)
}

// write writes data to name, returning the first error of the write or the close.
func write(c *sftp.Client, name string, data []byte) error {
	f, err := c.Create(name)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

func TestQuota(t *testing.T) {
	const quota, maxFile = 64 << 10, 32 << 10
	kib := func(n int) []byte { return []byte(strings.Repeat("x", n<<10)) }
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s *server, c *sftp.Client)
	}{
		{"a file beyond the per-file maximum is refused and removed", func(t *testing.T, s *server, c *sftp.Client) {
			if err := write(c, clientsName, kib(40)); !isFailure(err, "file too large") {
				t.Fatalf("got %v, want an SFTP failure saying the file is too large", err)
			}
			if _, err := os.Stat(filepath.Join(s.root, clientsName)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("got %v, want the partial file removed", err)
			}
			if got := s.files(); len(got) != 0 {
				t.Errorf("got %v handed over, want nothing", got)
			}
			if err := write(c, clientsName, kib(28)); err != nil {
				t.Errorf("got %v, want a file within the limits written", err)
			}
		}},
		{"files beyond the quota are refused until some are removed", func(t *testing.T, s *server, c *sftp.Client) {
			// Each 20 KiB file counts 24 KiB: two fit in 64 KiB, a third does not.
			for _, n := range []string{"1.txt", "2.txt"} {
				if err := write(c, n, kib(20)); err != nil {
					t.Fatalf("%s: got %v, want it written", n, err)
				}
			}
			if err := write(c, "3.txt", kib(20)); !isFailure(err, "quota exceeded") {
				t.Fatalf("got %v, want an SFTP failure saying the quota is exceeded", err)
			}
			if _, err := os.Stat(filepath.Join(s.root, "3.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("got %v, want the partial file removed", err)
			}
			if err := c.Remove("1.txt"); err != nil {
				t.Fatal(err)
			}
			if err := write(c, "3.txt", kib(20)); err != nil {
				t.Errorf("got %v after a removal, want the file written", err)
			}
		}},
		{"what was already on disk counts", func(t *testing.T, s *server, c *sftp.Client) {
			// old.txt, 56 KiB, was there before Serve started.
			if err := write(c, "new.txt", kib(8)); !isFailure(err, "quota exceeded") {
				t.Errorf("got %v, want the quota exceeded by a file the server did not write", err)
			}
		}},
		{"empty files and directories count", func(t *testing.T, s *server, c *sftp.Client) {
			var err error
			n := 0
			for ; n < 100 && err == nil; n++ {
				err = c.Mkdir(strings.Repeat("d", n+1))
			}
			if !isFailure(err, "quota exceeded") || n != quota/4096+1 {
				t.Errorf("got %v at directory %d, want the quota exceeded at %d", err, n, quota/4096+1)
			}
		}},
		{"a truncation beyond the limits", func(t *testing.T, s *server, c *sftp.Client) {
			if err := write(c, "t.txt", nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Truncate("t.txt", 1<<30); !isFailure(err, "file too large") {
				t.Errorf("got %v, want the truncation refused", err)
			}
		}},
		{"a write at a huge offset", func(t *testing.T, s *server, c *sftp.Client) {
			f, err := c.Create("sparse.txt")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, off := range []int64{1 << 40, 1<<63 - 2} {
				if _, err := f.WriteAt([]byte("xx"), off); err == nil {
					t.Errorf("got a write at offset %d, want it refused", off)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "old.txt"), kib(56), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := sftpd.Config{Quota: quota, MaxFileSize: maxFile}
			if strings.HasPrefix(tc.name, "what was already") {
				cfg.Dir = dir
			}
			s := startServer(t, cfg)
			tc.run(t, s, s.login(t))
		})
	}
	t.Run("with the limits off, sizes beyond int64 are still refused", func(t *testing.T) {
		s := startServer(t, sftpd.Config{Quota: -1, MaxFileSize: -1})
		c := s.login(t)
		if err := write(c, "t.txt", kib(40)); err != nil {
			t.Fatalf("got %v, want no limit", err)
		}
		if err := c.Truncate("t.txt", -1); !isFailure(err, "out of range") {
			t.Errorf("got %v, want the size refused", err)
		}
	})
	t.Run("each user has its own quota", func(t *testing.T) {
		s := startServer(t, sftpd.Config{Users: firms, Quota: quota, MaxFileSize: maxFile})
		a, b := loginAs(t, s, firms[0]), loginAs(t, s, firms[1])
		for _, n := range []string{"1.txt", "2.txt"} {
			if err := write(a, n, kib(20)); err != nil {
				t.Fatal(err)
			}
		}
		if err := write(a, "3.txt", kib(20)); !isFailure(err, "quota exceeded") {
			t.Fatalf("got %v, want firm-a over its quota", err)
		}
		if err := write(b, "1.txt", kib(20)); err != nil {
			t.Errorf("got %v, want firm_b.2 unaffected by firm-a's quota", err)
		}
	})
}

// The root's attributes are the operator's; modes elsewhere stay within what the server makes.
func TestAttributesAreConfined(t *testing.T) {
	s := startServer(t, sftpd.Config{})
	c := s.login(t)
	before, err := os.Stat(s.root)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		do   func() error
	}{
		{"chmod /", func() error { return c.Chmod("/", 0o777) }},
		{"chmod .", func() error { return c.Chmod(".", 0o700) }},
		{"chown /", func() error { return c.Chown("/", 0, 0) }},
		{"chtimes /", func() error { return c.Chtimes("/", time.Unix(0, 0), time.Unix(0, 0)) }},
		{"remove /", func() error { return c.Remove("/") }},
		{"rmdir /", func() error { return c.RemoveDirectory("/") }},
		{"rename /", func() error { return c.Rename("/", "/x") }},
		{"posix-rename /", func() error { return c.PosixRename("/", "/x") }},
		{"rename onto /", func() error { return write(c, "f.txt", nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "rename onto /" {
				if err := tc.do(); err != nil {
					t.Fatal(err)
				}
				if err := c.PosixRename("f.txt", "/"); err == nil {
					t.Error("got no error, want it refused")
				}
				return
			}
			if err := tc.do(); err == nil {
				t.Error("got no error, want it refused")
			}
		})
	}
	after, err := os.Stat(s.root)
	if err != nil || after.Mode() != before.Mode() || after.ModTime().Before(before.ModTime()) {
		t.Errorf("got the root %v, %v, %v, want it as it was, %v, %v", after.Mode(), after.ModTime(), err, before.Mode(), before.ModTime())
	}

	if err := c.Mkdir("d"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		mode os.FileMode
		want os.FileMode
	}{
		{"f.txt", 0o777, 0o640},
		{"f.txt", 0o000, 0o600},
		{"f.txt", 0o644, 0o640},
		{"d", 0o777, 0o750},
		{"d", 0o000, 0o700},
	} {
		if err := c.Chmod(tc.path, tc.mode); err != nil {
			t.Errorf("chmod %s %o: got %v, want no error", tc.path, tc.mode, err)
			continue
		}
		fi, err := os.Stat(filepath.Join(s.root, tc.path))
		if err != nil || fi.Mode().Perm() != tc.want {
			t.Errorf("chmod %s %o: got mode %o, %v, want %o", tc.path, tc.mode, fi.Mode().Perm(), err, tc.want)
		}
	}
	if err := c.Chown("f.txt", 0, 0); err != nil {
		t.Errorf("chown of a file: got %v, want it accepted and ignored, as clients preserving attributes send it", err)
	}
}

// abandon starts writing name on a connection that then breaks off, as a client that crashed
// or lost its network does.
func abandon(t *testing.T, s *server, name string) {
	t.Helper()
	breakOff(t, s, name)()
}

// breakOff opens name for writing on a connection of its own and writes to it, and returns
// what breaks that connection off with the file still open.
func breakOff(t *testing.T, s *server, name string) func() {
	t.Helper()
	nc, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	conn, chans, reqs, err := ssh.NewClientConn(nc, s.addr, s.clientConfig(testUser, ssh.Password(testPassword)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := sftp.NewClient(ssh.NewClient(conn, chans, reqs))
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(strings.Repeat(`{"id":"c"}`+"\n", 1000))); err != nil {
		t.Fatal(err)
	}
	// The server has the file open: a Stat on the same connection is answered after the write.
	if _, err := c.Stat(name); err != nil {
		t.Fatal(err)
	}
	return func() {
		_ = nc.Close() // no close of the file, no goodbye
		_ = c.Close()
	}
}

// A .part file whose writer's connection broke off is removed; a file under its own name is
// left (it may be an older version being appended to), and neither is handed over.
func TestAnAbandonedUploadLeavesNoPartFile(t *testing.T) {
	s := startServer(t, sftpd.Config{})
	runtime.GC()
	fds, goroutines := openFDs(t), runtime.NumGoroutine()
	for _, tc := range []struct {
		name string
		kept bool
	}{
		{clientsName + ".part", false},
		{peopleName, true},
	} {
		abandon(t, s, tc.name)
		settled(t, "after the connection broke off", fds, goroutines)
		_, err := os.Stat(filepath.Join(s.root, tc.name))
		if kept := err == nil; kept != tc.kept {
			t.Errorf("%s: got kept %v (%v), want %v", tc.name, kept, err, tc.kept)
		}
	}
	if got := s.files(); len(got) != 0 {
		t.Errorf("got %v handed over, want nothing", got)
	}

	// A .part that another writer still has open is that writer's to finish.
	c := s.login(t)
	part := peopleName + ".part"
	f, err := c.OpenFile(part, os.O_WRONLY|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	abandon(t, s, part)
	if _, err := f.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.PosixRename(part, peopleName); err != nil {
		t.Errorf("got %v, want the .part still there for the writer that finished it", err)
	}

	// The same when the writer finishes before the server learns that the other's connection
	// broke off: which of the two it hears of first must not decide.
	c.Remove(peopleName)
	f, err = c.OpenFile(part, os.O_WRONLY|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	fds, goroutines = openFDs(t), runtime.NumGoroutine()
	broken := breakOff(t, s, part)
	if _, err := f.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	broken()
	settled(t, "after the other connection broke off", fds, goroutines)
	if err := c.PosixRename(part, peopleName); err != nil {
		t.Errorf("got %v, want the .part kept for the writer that finished it before the other broke off", err)
	}
}

// Serve sweeps .part files older than PartMaxAge that nobody has open: when it starts, for
// those an earlier run left, and while it serves.
func TestStalePartFilesAreSwept(t *testing.T) {
	t.Run("when Serve starts", func(t *testing.T) {
		dir := t.TempDir()
		root := filepath.Join(dir, "sftp")
		old := time.Now().Add(-2 * time.Hour)
		for _, n := range []string{"stale.part", "in/stale.part", "fresh.part", "old.txt"} {
			p := filepath.Join(root, filepath.FromSlash(n))
			if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			if n != "fresh.part" {
				if err := os.Chtimes(p, old, old); err != nil {
					t.Fatal(err)
				}
			}
		}
		s := startServer(t, sftpd.Config{Dir: root, HostKeyFile: filepath.Join(dir, "key"), PartMaxAge: time.Hour})
		s.login(t) // the sweep runs before the first connection is accepted
		for n, want := range map[string]bool{"stale.part": false, "in/stale.part": false, "fresh.part": true, "old.txt": true} {
			_, err := os.Stat(filepath.Join(root, filepath.FromSlash(n)))
			if kept := err == nil; kept != want {
				t.Errorf("%s: got kept %v, want %v", n, kept, want)
			}
		}
		if !strings.Contains(s.logs.String(), "sftp stale upload removed") {
			t.Errorf("got logs without the removals:\n%s", s.logs)
		}
	})
	t.Run("while Serve serves", func(t *testing.T) {
		s := startServer(t, sftpd.Config{PartMaxAge: 40 * time.Millisecond})
		c := s.login(t)
		open, err := c.Create("a-open.part")
		if err != nil {
			t.Fatal(err)
		}
		defer open.Close()
		if _, err := open.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		upload(t, c, "b-closed.part", "x")
		eventually(t, "the closed .part swept", func() (bool, string) {
			_, err := os.Stat(filepath.Join(s.root, "b-closed.part"))
			return errors.Is(err, os.ErrNotExist), "got it still there"
		})
		if _, err := os.Stat(filepath.Join(s.root, "a-open.part")); err != nil {
			t.Errorf("got %v, want the .part still being written kept", err)
		}
	})
}

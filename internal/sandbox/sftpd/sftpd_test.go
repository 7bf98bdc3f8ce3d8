package sftpd_test

import (
	"bufio"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	iofs "io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

const (
	clientsName = "clients-20261123T204500Z.jsonl"
	peopleName  = "people-20261123T204500Z.jsonl"
)

func newKey(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signer
}

func TestLogin(t *testing.T) {
	key, otherKey := newKey(t), newKey(t)
	keys := filepath.Join(t.TempDir(), "authorized_keys")
	if err := os.WriteFile(keys, []byte("# the gateway\n\n"+string(ssh.MarshalAuthorizedKey(key.PublicKey()))+"  # the end\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, sftpd.Config{AuthorizedKeysFile: keys})
	for _, tc := range []struct {
		name string
		user string
		auth ssh.AuthMethod
		ok   bool
	}{
		{"the password", testUser, ssh.Password(testPassword), true},
		{"an authorized key", testUser, ssh.PublicKeys(key), true},
		{"a wrong password", testUser, ssh.Password("wrong-password"), false},
		{"the password of another user", "root", ssh.Password(testPassword), false},
		{"an authorized key for another user", "root", ssh.PublicKeys(key), false},
		{"an unknown key", testUser, ssh.PublicKeys(otherKey), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := s.dial(t, tc.user, tc.auth)
			if !tc.ok {
				if err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
					t.Fatalf("got %v, want the login refused", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want a login", err)
			}
			if _, err := c.ReadDir("/"); err != nil {
				t.Errorf("list /: got %v, want no error", err)
			}
		})
	}
	logs := s.logs.String()
	if !strings.Contains(logs, "sftp login failed") || !strings.Contains(logs, "user=root") {
		t.Errorf("got logs without the failed logins:\n%s", logs)
	}
	if strings.Contains(logs, "wrong-password") || strings.Contains(logs, testPassword) {
		t.Errorf("got a password in the logs:\n%s", logs)
	}
}

func TestNewRefusesWhatItCannotUse(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	corrupt := write("corrupt_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nnot base64\n-----END OPENSSH PRIVATE KEY-----\n")
	empty := write("empty_key", "")
	badKeys := write("bad_keys", string(ssh.MarshalAuthorizedKey(newKey(t).PublicKey()))+"ssh-ed25519 notakey\n")
	noKeys := write("no_keys", "# none yet\n")
	optionKeys := write("option_keys", `from="10.0.0.1" `+string(ssh.MarshalAuthorizedKey(newKey(t).PublicKey())))
	for _, tc := range []struct {
		name string
		cfg  sftpd.Config
		want string
	}{
		{"a corrupt host key", sftpd.Config{HostKeyFile: corrupt}, "corrupt_key is not an unencrypted OpenSSH private key (remove it to make a new one)"},
		{"an empty host key", sftpd.Config{HostKeyFile: empty}, "empty_key is not an unencrypted OpenSSH private key"},
		{"a line that is not a key", sftpd.Config{AuthorizedKeysFile: badKeys}, "bad_keys, line 2"},
		{"an authorized keys file without keys", sftpd.Config{AuthorizedKeysFile: noKeys}, "no_keys: no key in the file"},
		{"authorized keys with options", sftpd.Config{AuthorizedKeysFile: optionKeys}, "not supported"},
		{"a missing authorized keys file", sftpd.Config{AuthorizedKeysFile: filepath.Join(dir, "none")}, "read the SFTP authorized keys"},
		{"no user", sftpd.Config{User: "", Password: "x"}, "user is required"},
		{"no way to log in", sftpd.Config{User: "u"}, "password or an authorized key is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Dir = filepath.Join(t.TempDir(), "sftp")
			if cfg.HostKeyFile == "" {
				cfg.HostKeyFile = filepath.Join(t.TempDir(), "key")
			}
			if cfg.User == "" && cfg.Password == "" && tc.name != "no user" {
				cfg.User, cfg.Password = testUser, testPassword
			}
			_, err := sftpd.New(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if data, _ := os.ReadFile(corrupt); !strings.Contains(string(data), "not base64") {
		t.Errorf("got the corrupt host key replaced, want it left for the operator")
	}
}

func TestHostKeyPersistsAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	cfg := sftpd.Config{Dir: filepath.Join(dir, "sftp"), HostKeyFile: filepath.Join(dir, "ssh_host_ed25519_key"), User: testUser, Password: testPassword}
	first, err := sftpd.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.Fingerprint(), "SHA256:") {
		t.Errorf("got fingerprint %q, want the SHA256:... form", first.Fingerprint())
	}
	info, err := os.Stat(cfg.HostKeyFile)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("got host key file %v, %v, want it there with mode 0600", info, err)
	}
	// A restart, with a client that pinned the first fingerprint.
	s := startServer(t, cfg)
	if s.Fingerprint() != first.Fingerprint() {
		t.Fatalf("got fingerprint %s after a restart, want %s", s.Fingerprint(), first.Fingerprint())
	}
	conf := s.clientConfig(testUser, ssh.Password(testPassword))
	pinned := first.Fingerprint()
	conf.HostKeyCallback = func(_ string, _ net.Addr, key ssh.PublicKey) error {
		if ssh.FingerprintSHA256(key) != pinned {
			return errors.New("host key changed")
		}
		return nil
	}
	conn, err := ssh.Dial("tcp", s.addr, conf)
	if err != nil {
		t.Fatalf("got %v, want the restarted server to present the pinned key", err)
	}
	_ = conn.Close()
	if _, err := os.Stat(filepath.Join(cfg.Dir, "ssh_host_ed25519_key")); err == nil {
		t.Error("got the host key inside the user's root, want it outside")
	}
}

// A bulk file is handed over once, when it is complete, under its final name; nothing else
// is.
func TestBulkFilesAreHandedOverOnceComplete(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps func(t *testing.T, c *sftp.Client)
		want  []string // names handed over, in order
	}{
		{"uploaded and closed", func(t *testing.T, c *sftp.Client) {
			upload(t, c, clientsName, `{"id":"c1"}`+"\n")
		}, []string{"/" + clientsName}},
		{"both kinds", func(t *testing.T, c *sftp.Client) {
			upload(t, c, "/"+clientsName, "{}\n")
			upload(t, c, peopleName, "{}\n")
		}, []string{"/" + clientsName, "/" + peopleName}},
		{"uploaded as .part and renamed", func(t *testing.T, c *sftp.Client) {
			upload(t, c, clientsName+".part", "{}\n")
			if err := c.Rename(clientsName+".part", clientsName); err != nil {
				t.Fatal(err)
			}
		}, []string{"/" + clientsName}},
		{"uploaded as .part and renamed over a file (posix-rename)", func(t *testing.T, c *sftp.Client) {
			upload(t, c, "old.txt", "old\n")
			upload(t, c, peopleName+".part", "{}\n")
			if err := c.PosixRename(peopleName+".part", "old.txt"); err != nil {
				t.Fatal(err)
			}
			if err := c.PosixRename("old.txt", peopleName); err != nil {
				t.Fatal(err)
			}
		}, []string{"/" + peopleName}},
		{"in a directory", func(t *testing.T, c *sftp.Client) {
			if err := c.Mkdir("incoming"); err != nil {
				t.Fatal(err)
			}
			upload(t, c, "incoming/"+peopleName, "{}\n")
		}, []string{"/incoming/" + peopleName}},
		{"empty: complete, for the ingester to refuse", func(t *testing.T, c *sftp.Client) {
			upload(t, c, clientsName, "")
		}, []string{"/" + clientsName}},
		{"uploaded again: a new version", func(t *testing.T, c *sftp.Client) {
			upload(t, c, clientsName, "{}\n")
			upload(t, c, clientsName, "{}\n{}\n")
		}, []string{"/" + clientsName, "/" + clientsName}},
		{"other names, never", func(t *testing.T, c *sftp.Client) {
			for _, n := range []string{"clients.jsonl", clientsName + ".part", "people-2026-11-23T20:45:00Z.jsonl", "notes.txt", clientsName + ".result.json"} {
				upload(t, c, n, "{}\n")
			}
			if err := c.Rename("notes.txt", "notes-2.txt"); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"opened and closed without writing", func(t *testing.T, c *sftp.Client) {
			upload(t, c, clientsName+".part", "{}\n")
			if err := c.Rename(clientsName+".part", clientsName); err != nil {
				t.Fatal(err)
			}
			f, err := c.OpenFile(clientsName, os.O_WRONLY)
			if err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
			f, err = c.Open(clientsName)
			if err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
		}, []string{"/" + clientsName}},
		{"a directory renamed to a bulk name", func(t *testing.T, c *sftp.Client) {
			if err := c.Mkdir("d"); err != nil {
				t.Fatal(err)
			}
			if err := c.Rename("d", clientsName); err != nil {
				t.Fatal(err)
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, sftpd.Config{})
			c := s.login(t)
			tc.steps(t, c)
			// OnFile runs before the close or rename is answered: no waiting.
			got := s.files()
			var names []string
			for _, f := range got {
				names = append(names, f.Name)
				want := filepath.Join(s.root, filepath.FromSlash(f.Name))
				if f.Path != want {
					t.Errorf("got path %s, want %s", f.Path, want)
				}
				if _, err := os.Stat(f.Path); err != nil {
					t.Errorf("got %v for the handed-over file, want it on disk", err)
				}
				if kind, _, _ := sftpd.ParseName(filepath.Base(f.Name)); f.Kind != kind {
					t.Errorf("got kind %q, want %q", f.Kind, kind)
				}
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("got handed over %q, want %q", names, tc.want)
			}
		})
	}
}

// A file is not complete while anyone still writes it, whatever its name becomes meanwhile.
func TestAFileOpenForWritingIsNotHandedOver(t *testing.T) {
	s := startServer(t, sftpd.Config{})
	c1, c2 := s.login(t), s.login(t)
	f1, err := c1.Create(clientsName + ".part")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f1.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := c1.Rename(clientsName+".part", clientsName); err != nil {
		t.Fatal(err)
	}
	f2, err := c2.OpenFile(clientsName, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f2.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := f1.Close(); err != nil {
		t.Fatal(err)
	}
	if got := s.files(); len(got) != 0 {
		t.Fatalf("got %v handed over with a writer still open, want nothing", got)
	}
	if err := f2.Close(); err != nil {
		t.Fatal(err)
	}
	if got := s.files(); len(got) != 1 || got[0].Name != "/"+clientsName {
		t.Fatalf("got %v, want %s handed over once, when its last writer closed", got, clientsName)
	}
	data, err := os.ReadFile(s.files()[0].Path)
	if err != nil || string(data) != "{}\n{}\n" {
		t.Errorf("got %q, %v, want both writers' lines", data, err)
	}
}

func TestTreeOperations(t *testing.T) {
	s := startServer(t, sftpd.Config{})
	c := s.login(t)
	step := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: got %v, want no error", what, err)
		}
	}
	step("mkdir", c.MkdirAll("/a/b"))
	upload(t, c, "/a/b/one.txt", "1")
	upload(t, c, "/a/two.txt", "22")
	entries, err := c.ReadDir("/a")
	step("list", err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"b", "two.txt"}; !slices.Equal(names, want) {
		t.Errorf("list /a: got %q, want %q", names, want)
	}
	fi, err := c.Stat("/a/two.txt")
	step("stat", err)
	if fi.Size() != 2 {
		t.Errorf("stat: got size %d, want 2", fi.Size())
	}
	if err := c.Rename("/a/two.txt", "/a/b/one.txt"); err == nil {
		t.Error("rename onto an existing file: got no error, want it refused (SFTP v3)")
	}
	step("rename", c.Rename("/a/two.txt", "/a/b/three.txt"))
	step("truncate", c.Truncate("/a/b/three.txt", 1))
	step("chmod", c.Chmod("/a/b/three.txt", 0o600))
	step("chtimes", c.Chtimes("/a/b/three.txt", time.Unix(1e9, 0), time.Unix(1e9, 0)))
	fi, err = c.Stat("/a/b/three.txt")
	step("stat", err)
	if fi.Size() != 1 || fi.Mode().Perm() != 0o600 || !fi.ModTime().Equal(time.Unix(1e9, 0)) {
		t.Errorf("got %d bytes, mode %v, modified %v, want 1, -rw-------, %v", fi.Size(), fi.Mode().Perm(), fi.ModTime(), time.Unix(1e9, 0))
	}
	f, err := c.Open("/a/b/one.txt")
	step("open", err)
	data, err := io.ReadAll(f)
	_ = f.Close()
	if err != nil || string(data) != "1" {
		t.Errorf("download: got %q, %v, want \"1\"", data, err)
	}
	if err := c.RemoveDirectory("/a/b"); err == nil {
		t.Error("rmdir of a full directory: got no error, want it refused")
	}
	if err := c.Remove("/a/b"); err == nil {
		t.Error("remove of a directory: got no error, want it refused")
	}
	step("remove", c.Remove("/a/b/one.txt"))
	step("remove", c.Remove("/a/b/three.txt"))
	step("rmdir", c.RemoveDirectory("/a/b"))
	if _, err := os.Stat(filepath.Join(s.root, "a", "b")); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("got %v, want /a/b gone from disk", err)
	}
	for _, p := range []string{"/", "."} {
		if err := c.RemoveDirectory(p); err == nil {
			t.Errorf("rmdir %s: got no error, want the root kept", p)
		}
	}
}

// Every path is inside the root, as under chroot: ".." stops at the root, absolute paths
// start at it, and links cannot lead out of it.
func TestPathsStayInsideTheRoot(t *testing.T) {
	s := startServer(t, sftpd.Config{})
	// Beside the root, in the directory that also holds the host key.
	secret := filepath.Join(s.fileDir, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A link someone made on the host, pointing out of the root.
	if err := os.Symlink(s.fileDir, filepath.Join(s.root, "out")); err != nil {
		t.Fatal(err)
	}
	c := s.login(t)

	for _, p := range []string{"../secret.txt", "/../secret.txt", "a/../../secret.txt", "/out/secret.txt", "out/../../secret.txt", "/../ssh_host_ed25519_key", "/out/ssh_host_ed25519_key"} {
		t.Run("read "+p, func(t *testing.T) {
			f, err := c.Open(p)
			if err == nil {
				data, _ := io.ReadAll(f)
				_ = f.Close()
				t.Fatalf("got %q, want the read refused", data)
			}
		})
	}
	for _, tc := range []struct{ path, lands string }{
		{"../escape.txt", "escape.txt"},
		{"/../../escape-2.txt", "escape-2.txt"},
		{"x/../../../escape-3.txt", "escape-3.txt"},
	} {
		t.Run("write "+tc.path, func(t *testing.T) {
			upload(t, c, tc.path, "x")
			if _, err := os.Stat(filepath.Join(s.root, tc.lands)); err != nil {
				t.Errorf("got %v, want the file at %s inside the root", err, tc.lands)
			}
		})
	}
	t.Run("write through a link", func(t *testing.T) {
		if f, err := c.Create("/out/planted.txt"); err == nil {
			_ = f.Close()
			t.Error("got a file created through the link, want it refused")
		}
	})
	t.Run("rename out through a link", func(t *testing.T) {
		if err := c.Rename("/escape.txt", "/out/escape.txt"); err == nil {
			t.Error("got the rename done, want it refused")
		}
	})
	t.Run("make links", func(t *testing.T) {
		if err := c.Symlink("/etc/passwd", "/passwd"); err == nil {
			t.Error("symlink: got no error, want it refused")
		}
		if err := c.Link("/escape.txt", "/hard"); err == nil {
			t.Error("link: got no error, want it refused")
		}
	})
	t.Run("the root cannot be renamed", func(t *testing.T) {
		if err := c.Rename("/", "/moved"); err == nil {
			t.Error("got no error, want it refused")
		}
	})
	outside, err := os.ReadDir(s.fileDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range outside {
		names = append(names, e.Name())
	}
	if want := []string{"secret.txt", "sftp", "ssh_host_ed25519_key"}; !slices.Equal(names, want) {
		t.Errorf("got %q beside the root, want %q: nothing written outside it", names, want)
	}
	if data, _ := os.ReadFile(secret); string(data) != "secret" {
		t.Errorf("got %q in the file outside the root, want it untouched", data)
	}
}

// TestHelperUploadAndHang is the client of TestAClientKilledMidUploadLeavesNothing, run in
// its own process so that killing it is what a crash is: the kernel closes its socket.
func TestHelperUploadAndHang(t *testing.T) {
	addr := os.Getenv("SFTPD_TEST_HANG_ADDR")
	if addr == "" {
		t.Skip("only as the helper process of TestAClientKilledMidUploadLeavesNothing")
	}
	conn, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User: testUser, Auth: []ssh.AuthMethod{ssh.Password(testPassword)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), // the parent checks the key in its own tests
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := sftp.NewClient(conn)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.Create(clientsName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(strings.Repeat(`{"id":"c"}`+"\n", 1000))); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("written\n")
	time.Sleep(time.Hour) // killed long before
}

func TestAClientKilledMidUploadLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	s := startServer(t, sftpd.Config{})
	// The baseline is the serving server, with its test's helpers idle.
	runtime.GC()
	fds, goroutines := openFDs(t), runtime.NumGoroutine()

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperUploadAndHang$", "-test.v")
	cmd.Env = append(os.Environ(), "SFTPD_TEST_HANG_ADDR="+s.addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(out)
	written := false
	for lines.Scan() {
		if lines.Text() == "written" {
			written = true
			break
		}
	}
	if !written {
		t.Fatal("the helper did not write its file")
	}
	// The pipe was one descriptor; the connection and the open file are the server's.
	if f := openFDs(t); f < fds+2 {
		t.Fatalf("got %d descriptors mid-upload, want at least %d: the connection and the file", f, fds+2)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // closes the pipe
	settled(t, "after the client was killed", fds, goroutines)
	if got := s.files(); len(got) != 0 {
		t.Errorf("got %v handed over, want nothing: the file is partial", got)
	}
	// The server still serves.
	upload(t, s.login(t), peopleName, "{}\n")
	if got := s.files(); len(got) != 1 {
		t.Errorf("got %v, want the next upload handed over", got)
	}
}

func TestTimeouts(t *testing.T) {
	s := startServer(t, sftpd.Config{HandshakeTimeout: 200 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	runtime.GC()
	fds, goroutines := openFDs(t), runtime.NumGoroutine()

	t.Run("a connection that never says hello", func(t *testing.T) {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		// The server sends its version line, then waits for ours, which never comes.
		if _, err := io.ReadAll(conn); err != nil {
			t.Fatalf("got %v, want the server to close the connection", err)
		}
	})
	t.Run("a logged-in client that goes quiet", func(t *testing.T) {
		conn, err := ssh.Dial("tcp", s.addr, s.clientConfig(testUser, ssh.Password(testPassword)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c, err := sftp.NewClient(conn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		done := make(chan error, 1)
		go func() { done <- conn.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("got the idle connection still open after 5s, want it closed after 300ms")
		}
	})
	settled(t, "after the timeouts", fds, goroutines)
}

// A login beyond MaxConns waits, logged in, until a session ends; it is not refused.
func TestConnectionsBeyondTheCapWait(t *testing.T) {
	s := startServer(t, sftpd.Config{MaxConns: 1})
	first, err := ssh.Dial("tcp", s.addr, s.clientConfig(testUser, ssh.Password(testPassword)))
	if err != nil {
		t.Fatal(err)
	}
	// Served, so that it holds the slot before the second logs in.
	firstClient, err := sftp.NewClient(first)
	if err != nil {
		t.Fatal(err)
	}
	defer firstClient.Close()
	second := make(chan error, 1)
	go func() {
		conn, err := ssh.Dial("tcp", s.addr, s.clientConfig(testUser, ssh.Password(testPassword)))
		if err != nil {
			second <- err
			return
		}
		defer conn.Close()
		c, err := sftp.NewClient(conn)
		if err == nil {
			_, err = c.Getwd()
			_ = c.Close()
		}
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("got the second connection served (%v) while the first held the only slot", err)
	case <-time.After(300 * time.Millisecond):
	}
	_ = first.Close()
	select {
	case err := <-second:
		if err != nil {
			t.Errorf("got %v, want the second connection served once the first left", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("got the second connection still waiting 5s after the first left")
	}
}

func TestServeStopsWhenItsContextEnds(t *testing.T) {
	s := startServer(t, sftpd.Config{})
	c := s.login(t)
	f, err := c.Create(clientsName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.stop(t) // fails the test unless Serve returns nil within 5s
	if d := time.Since(start); d > time.Second {
		t.Errorf("got Serve returning after %v, want it prompt", d)
	}
	if _, err := c.Getwd(); err == nil {
		t.Error("got the open connection still served, want it ended")
	}
	if conn, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		_ = conn.Close()
		t.Error("got a connection accepted after the stop, want the listener closed")
	}
	if got := s.files(); len(got) != 0 {
		t.Errorf("got %v handed over, want nothing: the upload was cut off", got)
	}

	// Serve again, on a new listener: the same server, the same files.
	s.serve(t)
	c = s.login(t)
	if _, err := c.Stat(clientsName); err != nil {
		t.Errorf("got %v, want the earlier file still there", err)
	}
}

// Uploads on many connections at once each hand over their own file, once.
func TestConcurrentUploads(t *testing.T) {
	s := startServer(t, sftpd.Config{})
	const n = 8
	at := time.Date(2026, 11, 23, 20, 45, 0, 0, time.UTC)
	want := make([]string, n)
	errs := make(chan error, n)
	for i := range n {
		name := sftpd.Name(sftpd.People, at.Add(time.Duration(i)*time.Second))
		want[i] = "/" + name
		c := s.login(t)
		go func() {
			f, err := c.Create(name + ".part")
			if err == nil {
				_, err = f.Write([]byte(strings.Repeat(`{"id":"p"}`+"\n", 5000)))
				err = errors.Join(err, f.Close())
			}
			if err == nil {
				err = c.PosixRename(name+".part", name)
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	var got []string
	for _, f := range s.files() {
		got = append(got, f.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("got handed over %q, want %q", got, want)
	}
}

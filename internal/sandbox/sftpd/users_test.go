package sftpd_test

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

var firms = []sftpd.User{
	{Name: "firm-a", Password: "pass-a"},
	{Name: "firm_b.2", Password: "pass-b"},
}

func loginAs(t *testing.T, s *server, u sftpd.User) *sftp.Client {
	t.Helper()
	c, err := s.dial(t, u.Name, ssh.Password(u.Password))
	if err != nil {
		t.Fatalf("login as %s: got %v, want no error", u.Name, err)
	}
	return c
}

// Each user has its own root, Dir/<Name>: it sees, reads and replaces nothing of another's,
// and the files it hands over say who wrote them.
func TestUsersAreKeptApart(t *testing.T) {
	s := startServer(t, sftpd.Config{Users: firms})
	a, b := loginAs(t, s, firms[0]), loginAs(t, s, firms[1])
	upload(t, a, clientsName, "from a\n")
	upload(t, a, "a-only.txt", "a\n")
	upload(t, b, clientsName, "from b\n")

	for _, tc := range []struct {
		user      sftpd.User
		c         *sftp.Client
		want      []string
		wantBytes string
	}{
		{firms[0], a, []string{"a-only.txt", clientsName}, "from a\n"},
		{firms[1], b, []string{clientsName}, "from b\n"},
	} {
		t.Run(tc.user.Name, func(t *testing.T) {
			entries, err := tc.c.ReadDir("/")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("list /: got %q, want %q", names, tc.want)
			}
			f, err := tc.c.Open(clientsName)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(f)
			_ = f.Close()
			if string(data) != tc.wantBytes {
				t.Errorf("read %s: got %q, want %q", clientsName, data, tc.wantBytes)
			}
			onDisk, err := os.ReadFile(filepath.Join(s.root, tc.user.Name, clientsName))
			if err != nil || string(onDisk) != tc.wantBytes {
				t.Errorf("on disk: got %q, %v, want %q in Dir/%s", onDisk, err, tc.wantBytes, tc.user.Name)
			}
		})
	}
	for _, p := range []string{"/../firm-a/a-only.txt", "../firm-a/a-only.txt", "/firm-a/a-only.txt"} {
		if f, err := b.Open(p); err == nil {
			data, _ := io.ReadAll(f)
			_ = f.Close()
			t.Errorf("firm_b.2 read %s: got %q, want the other user's file out of reach", p, data)
		}
	}
	if _, err := s.dial(t, firms[1].Name, ssh.Password(firms[0].Password)); err == nil {
		t.Error("got a login with another user's password, want it refused")
	}

	got := s.files()
	if len(got) != 2 {
		t.Fatalf("got %d files handed over, want 2: %v", len(got), got)
	}
	for i, u := range firms {
		if got[i].User != u.Name || got[i].Name != "/"+clientsName || got[i].Path != filepath.Join(s.root, u.Name, clientsName) {
			t.Errorf("file %d: got user %q, name %q, path %q, want %q, %q, %q", i, got[i].User, got[i].Name, got[i].Path,
				u.Name, "/"+clientsName, filepath.Join(s.root, u.Name, clientsName))
		}
	}
}

// The one-user shorthand keeps Dir itself as its root, where its files always were.
func TestTheOneUserShorthandKeepsDirAsItsRoot(t *testing.T) {
	s := startServer(t, sftpd.Config{})
	upload(t, s.login(t), clientsName, "{}\n")
	got := s.files()
	if len(got) != 1 || got[0].User != testUser || got[0].Path != filepath.Join(s.root, clientsName) {
		t.Fatalf("got %+v, want %s handed over as written by %s, in Dir", got, clientsName, testUser)
	}
}

func TestNewRefusesBadUsers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		users []sftpd.User
		one   string // the shorthand's User, besides
		want  string
	}{
		{"no name", []sftpd.User{{Password: "p"}}, "", "user 1: a name is required"},
		{"a dot-dot name", []sftpd.User{{Name: "..", Password: "p"}}, "", "must start with a letter or a digit"},
		{"a hidden name", []sftpd.User{{Name: ".ssh", Password: "p"}}, "", "must start with a letter or a digit"},
		{"a path", []sftpd.User{{Name: "a/b", Password: "p"}}, "", "may hold only letters"},
		{"a backslash", []sftpd.User{{Name: `a\b`, Password: "p"}}, "", "may hold only letters"},
		{"a space", []sftpd.User{{Name: "a b", Password: "p"}}, "", "may hold only letters"},
		{"a NUL", []sftpd.User{{Name: "a\x00", Password: "p"}}, "", "may hold only letters"},
		{"not ASCII", []sftpd.User{{Name: "firmé", Password: "p"}}, "", "may hold only letters"},
		{"too long", []sftpd.User{{Name: strings.Repeat("a", 65), Password: "p"}}, "", "longer than 64 bytes"},
		{"the same name twice", []sftpd.User{{Name: "firm", Password: "p"}, {Name: "firm", Password: "q"}}, "", `users "firm" and "firm" would share a directory`},
		{"names that differ in case", []sftpd.User{{Name: "Firm", Password: "p"}, {Name: "firm", Password: "q"}}, "", "names must differ by more than case"},
		{"no way to log in", []sftpd.User{{Name: "firm"}}, "", `user "firm": a password or an authorized key is required`},
		{"both Users and User", firms, testUser, "set either Users or the one user's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := sftpd.Config{Dir: filepath.Join(dir, "sftp"), HostKeyFile: filepath.Join(dir, "key"), Users: tc.users, User: tc.one}
			_, err := sftpd.New(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if entries, _ := os.ReadDir(cfg.Dir); len(entries) > 0 {
				t.Errorf("got %d directories made for a refused configuration, want none", len(entries))
			}
		})
	}
	t.Run("a host key inside Dir", func(t *testing.T) {
		dir := t.TempDir()
		_, err := sftpd.New(sftpd.Config{Dir: dir, HostKeyFile: filepath.Join(dir, "firm-a", "key"), Users: firms})
		if err == nil || !strings.Contains(err.Error(), "inside the SFTP root") {
			t.Fatalf("got %v, want the host key refused inside Dir", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "firm-a", "key")); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("got %v, want no key made", err)
		}
	})
}

// One user cannot take every connection: beyond MaxConnsPerUser its logins are closed, and
// other users still get in.
func TestEachUserHasItsOwnConnectionCap(t *testing.T) {
	s := startServer(t, sftpd.Config{Users: firms, MaxConnsPerUser: 2})
	var a []*ssh.Client
	for range 2 {
		conn, err := ssh.Dial("tcp", s.addr, s.clientConfig(firms[0].Name, ssh.Password(firms[0].Password)))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		c, err := sftp.NewClient(conn)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		a = append(a, conn)
	}
	if c, err := s.dial(t, firms[0].Name, ssh.Password(firms[0].Password)); err == nil {
		_, err = c.Getwd()
		t.Fatalf("got a third connection of firm-a served (%v), want it closed", err)
	}
	if !strings.Contains(s.logs.String(), "too many connections") {
		t.Errorf("got logs without the refusal:\n%s", s.logs)
	}
	if _, err := loginAs(t, s, firms[1]).Getwd(); err != nil {
		t.Errorf("got %v, want firm_b.2 served beside firm-a's connections", err)
	}
	_ = a[0].Close()
	eventually(t, "a place freed for firm-a", func() (bool, string) {
		c, err := s.dial(t, firms[0].Name, ssh.Password(firms[0].Password))
		if err == nil {
			_, err = c.Getwd()
		}
		return err == nil, fmt.Sprintf("got %v", err)
	})
}

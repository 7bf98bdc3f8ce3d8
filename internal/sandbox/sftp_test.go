package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sandboxtest"
)

// The SFTP server of a sandbox started with -file-dir keeps the first firm's files in
// file-dir/sftp/<its user> and its host key beside them, so a restart presents the same key.
func TestSandboxSFTPKeepsItsFilesAndKeyInTheFileDir(t *testing.T) {
	dir := t.TempDir()
	var fingerprints []string
	for range 2 {
		sb, err := sandbox.New(sandbox.Options{Empty: true, FileDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = sb.Close() })
		addr, fp := sandboxtest.ServeSFTP(t, sb)
		fingerprints = append(fingerprints, fp)
		c, err := sandboxtest.DialSFTP(t, addr, fp, "sandbox", "sandbox")
		if err != nil {
			t.Fatalf("login with the default credentials: got %v, want no error", err)
		}
		f, err := c.Create("/clients-20261123T204500Z.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if fingerprints[0] != fingerprints[1] {
		t.Errorf("got fingerprints %q, want the same key after a restart", fingerprints)
	}
	for _, p := range []string{"sftp/sandbox/clients-20261123T204500Z.jsonl", "ssh_host_ed25519_key"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("got %v, want %s in the file directory", err, p)
		}
	}
}

func TestSandboxSFTPTakesTheConfiguredCredentials(t *testing.T) {
	sb, err := sandbox.New(sandbox.Options{Empty: true, SFTPCredentials: "bulk:pa:ss"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	addr, fp := sandboxtest.ServeSFTP(t, sb)
	for _, tc := range []struct {
		user, password string
		ok             bool
	}{
		{"bulk", "pa:ss", true},
		{"sandbox", "sandbox", false},
		{"bulk", "pa", false},
	} {
		_, err := sandboxtest.DialSFTP(t, addr, fp, tc.user, tc.password)
		if (err == nil) != tc.ok {
			t.Errorf("%s:%s: got %v, want a login %v", tc.user, tc.password, err, tc.ok)
		}
	}
	if again, err := sb.SFTP(); err != nil || again.Fingerprint() != fp {
		t.Errorf("got %v, %v from a second SFTP call, want the same server", again, err)
	}
}

func TestSandboxRefusesMalformedSFTPSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts sandbox.Options
		want string
	}{
		{"credentials without a password", sandbox.Options{Empty: true, SFTPCredentials: "bulk"}, `SFTP credentials must have the form "user:password"`},
		{"a missing authorized keys file", sandbox.Options{Empty: true, SFTPAuthorizedKeys: "/nonexistent/keys"}, "read the SFTP authorized keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := sandbox.New(tc.opts)
			if err == nil {
				t.Cleanup(func() { _ = sb.Close() })
				_, err = sb.SFTP()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

package sftpupload_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sftpupload"
)

func validConfig() sftpupload.Config {
	return sftpupload.Config{
		Addr: "sftp.example.com:22", User: "advisor", Password: testPassword, Dir: "/inbound",
		HostKeyFingerprint: "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
	}
}

func TestValidateNamesTheSettingToFix(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *sftpupload.Config)
		want []string // each must appear in the error; none means valid
	}{
		{name: "valid with password and fingerprint", edit: func(*sftpupload.Config) {}},
		{name: "valid with key file and known_hosts", edit: func(c *sftpupload.Config) {
			c.Password, c.KeyFile, c.HostKeyFingerprint, c.KnownHostsFile = "", "/etc/gw/id_ed25519", "", "/etc/gw/known_hosts"
		}},
		{name: "fingerprint with base64 padding", edit: func(c *sftpupload.Config) { c.HostKeyFingerprint += "=" }},
		{name: "address missing", edit: func(c *sftpupload.Config) { c.Addr = "" },
			want: []string{"BULK_SFTP_ADDR is not set"}},
		{name: "address without port", edit: func(c *sftpupload.Config) { c.Addr = "sftp.example.com" },
			want: []string{`BULK_SFTP_ADDR "sftp.example.com" is not host:port`}},
		{name: "address without host", edit: func(c *sftpupload.Config) { c.Addr = ":22" },
			want: []string{`BULK_SFTP_ADDR ":22" is not host:port`}},
		{name: "user missing", edit: func(c *sftpupload.Config) { c.User = "" },
			want: []string{"BULK_SFTP_USER is not set"}},
		{name: "neither password nor key", edit: func(c *sftpupload.Config) { c.Password = "" },
			want: []string{"neither BULK_SFTP_PASSWORD nor BULK_SFTP_KEY_FILE is set"}},
		{name: "directory missing", edit: func(c *sftpupload.Config) { c.Dir = "" },
			want: []string{"BULK_SFTP_DIR is not set"}},
		{name: "no host key check", edit: func(c *sftpupload.Config) { c.HostKeyFingerprint = "" },
			want: []string{"neither BULK_SFTP_KNOWN_HOSTS nor BULK_SFTP_HOST_KEY_FINGERPRINT is set: the server's host key is never trusted without one"}},
		{name: "fingerprint in MD5 form", edit: func(c *sftpupload.Config) {
			c.HostKeyFingerprint = "MD5:16:27:ac:a5:76:28:2d:36:63:1b:56:4d:eb:df:a6:48"
		},
			want: []string{`BULK_SFTP_HOST_KEY_FINGERPRINT "MD5:16:27`}},
		{name: "fingerprint too short", edit: func(c *sftpupload.Config) { c.HostKeyFingerprint = "SHA256:abc" },
			want: []string{`BULK_SFTP_HOST_KEY_FINGERPRINT "SHA256:abc" is not a SHA256 fingerprint`}},
		{name: "negative timeout", edit: func(c *sftpupload.Config) { c.IdleTimeout = -time.Second },
			want: []string{"the SFTP idle timeout -1s is negative"}},
		{name: "every problem at once", edit: func(c *sftpupload.Config) { *c = sftpupload.Config{} },
			want: []string{"BULK_SFTP_ADDR", "BULK_SFTP_USER", "BULK_SFTP_PASSWORD", "BULK_SFTP_DIR", "BULK_SFTP_KNOWN_HOSTS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.edit(&c)
			err := c.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error naming %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Errorf("Validate() = %q holds the password", err)
			}
		})
	}
}

func TestNewNamesTheUnusableFile(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("-----BEGIN NOTHING-----\nc2VjcmV0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	locked, _ := newClientKey(t, "passphrase")
	for _, tc := range []struct {
		name string
		edit func(c *sftpupload.Config)
		want string
	}{
		{"key file missing", func(c *sftpupload.Config) { c.KeyFile = filepath.Join(dir, "absent") }, "BULK_SFTP_KEY_FILE"},
		{"key file not a key", func(c *sftpupload.Config) { c.KeyFile = garbage }, "is not an SSH private key"},
		{"key file with a passphrase", func(c *sftpupload.Config) { c.KeyFile = locked }, "is protected by a passphrase"},
		{"known_hosts missing", func(c *sftpupload.Config) { c.KnownHostsFile = filepath.Join(dir, "absent") }, "BULK_SFTP_KNOWN_HOSTS"},
		{"invalid config", func(c *sftpupload.Config) { c.Dir = "" }, "BULK_SFTP_DIR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.edit(&c)
			u, err := sftpupload.New(c, nil)
			if err == nil {
				t.Fatalf("New() = %v, nil, want an error saying %q", u, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New() error = %q, want it to say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "c2VjcmV0") {
				t.Errorf("New() error = %q quotes the key file", err)
			}
		})
	}
}

func TestConfigStringHidesThePassword(t *testing.T) {
	c := validConfig()
	for _, s := range []string{c.String(), fmtAll(c)} {
		if strings.Contains(s, testPassword) {
			t.Errorf("formatted Config %q holds the password", s)
		}
	}
}

func fmtAll(c sftpupload.Config) string {
	return fmt.Sprintf("%v %+v %#v %s %v", c, c, c, c, &c)
}

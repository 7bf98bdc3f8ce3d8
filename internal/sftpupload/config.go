// Package sftpupload puts the bulk Clients and People files on the Advisor service's SFTP
// server: each file is written under a ".part" name and renamed into place only when it is
// complete, so the service never ingests half a file. It knows nothing of GraphQL or of the
// environment: the caller maps its settings to a Config.
package sftpupload

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// Defaults for the timeouts a Config leaves at zero.
const (
	DefaultDialTimeout      = 10 * time.Second
	DefaultHandshakeTimeout = 15 * time.Second
	DefaultIdleTimeout      = 30 * time.Second
)

// Config is what an Uploader needs to reach the server. Each field names the setting it is read
// from, so that errors can tell an operator which one to fix.
type Config struct {
	Addr     string // BULK_SFTP_ADDR: host:port
	User     string // BULK_SFTP_USER
	Password string // BULK_SFTP_PASSWORD; a password, a key file, or both
	KeyFile  string // BULK_SFTP_KEY_FILE: an unencrypted private key (OpenSSH or PEM)
	Dir      string // BULK_SFTP_DIR: the remote directory the files are put in

	// The server's host key is checked against a known_hosts file, a pinned fingerprint in
	// ssh.FingerprintSHA256 form ("SHA256:..."), or both (then both must accept it). With
	// neither the Uploader refuses to connect: no host key is trusted without configuration.
	// The embedded sandbox is trusted by its caller passing the sandbox's fingerprint here.
	KnownHostsFile     string // BULK_SFTP_KNOWN_HOSTS
	HostKeyFingerprint string // BULK_SFTP_HOST_KEY_FINGERPRINT

	// Zero means the Default of the same name.
	DialTimeout      time.Duration // to open the TCP connection
	HandshakeTimeout time.Duration // for the SSH handshake, host key check and login
	IdleTimeout      time.Duration // for any one remote operation (a write, a rename) to answer
}

// String describes c without its password, so that a Config logged by mistake leaks nothing.
func (c Config) String() string {
	pw := ""
	if c.Password != "" {
		pw = "[redacted]"
	}
	return fmt.Sprintf("sftpupload.Config{Addr:%q User:%q Password:%q KeyFile:%q Dir:%q KnownHostsFile:%q HostKeyFingerprint:%q}",
		c.Addr, c.User, pw, c.KeyFile, c.Dir, c.KnownHostsFile, c.HostKeyFingerprint)
}

// GoString is String, so that %#v hides the password too.
func (c Config) GoString() string { return c.String() }

// Validate reports every missing or malformed setting at once, each error naming the setting,
// so that start-up can stop with a message an operator can act on. It does not read the key
// or known_hosts files; New does, and names the setting when they are unusable.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if c.Addr == "" {
		add("BULK_SFTP_ADDR is not set: give the SFTP server as host:port, e.g. sftp.example.com:22")
	} else if host, port, err := net.SplitHostPort(c.Addr); err != nil || host == "" || port == "" {
		add("BULK_SFTP_ADDR %q is not host:port, e.g. sftp.example.com:22", c.Addr)
	}
	if c.User == "" {
		add("BULK_SFTP_USER is not set: give the SFTP login name")
	}
	if c.Password == "" && c.KeyFile == "" {
		add("neither BULK_SFTP_PASSWORD nor BULK_SFTP_KEY_FILE is set: give a password or a private key file")
	}
	if c.Dir == "" {
		add("BULK_SFTP_DIR is not set: give the remote directory the bulk files go to")
	}
	if c.KnownHostsFile == "" && c.HostKeyFingerprint == "" {
		add("neither BULK_SFTP_KNOWN_HOSTS nor BULK_SFTP_HOST_KEY_FINGERPRINT is set: the server's host key is never trusted without one")
	}
	if c.HostKeyFingerprint != "" && !validFingerprint(c.HostKeyFingerprint) {
		add("BULK_SFTP_HOST_KEY_FINGERPRINT %q is not a SHA256 fingerprint like SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 (ssh-keygen -lf)", c.HostKeyFingerprint)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"dial", c.DialTimeout}, {"handshake", c.HandshakeTimeout}, {"idle", c.IdleTimeout}} {
		if d.v < 0 {
			add("the SFTP %s timeout %v is negative", d.name, d.v)
		}
	}
	return errors.Join(errs...)
}

// validFingerprint accepts what ssh.FingerprintSHA256 and ssh-keygen -l print: "SHA256:" and
// 32 bytes of unpadded base64. Padding is tolerated because some tools print it.
func validFingerprint(fp string) bool {
	b64, ok := strings.CutPrefix(fp, "SHA256:")
	if !ok {
		return false
	}
	sum, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "="))
	return err == nil && len(sum) == 32
}

func (c Config) withDefaults() Config {
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	c.HostKeyFingerprint = strings.TrimRight(c.HostKeyFingerprint, "=")
	return c
}

package sftpupload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/pkg/sftp"
)

// Reason says why an upload failed, in classes a caller can map to a code or a retry policy.
type Reason string

const (
	ReasonUnreachable    Reason = "unreachable"     // nothing answers at the address
	ReasonHostKey        Reason = "host_key"        // the server's host key is unknown or does not match
	ReasonAuth           Reason = "auth"            // the server refused the user, password or key
	ReasonTimeout        Reason = "timeout"         // a dial, handshake or remote operation took too long
	ReasonCancelled      Reason = "cancelled"       // the caller's context ended
	ReasonConnectionLost Reason = "connection_lost" // the connection closed or broke under the upload
	ReasonRemote         Reason = "remote"          // the server refused an operation (permissions, missing directory, full disk)
	ReasonInput          Reason = "input"           // reading the caller's file failed
	ReasonUsage          Reason = "usage"           // the call itself was wrong (unknown kind, a kind given twice)
)

// Error is every error Upload returns. Step says what the uploader was doing, Msg says in words
// an operator can act on what went wrong, and Err is the cause underneath. None of them holds
// the password or the key.
type Error struct {
	Step   string
	Reason Reason
	Msg    string
	Err    error
	// Leftover lists ".part" files that could not be removed because the connection no longer
	// allowed it. They are never renamed, the service ignores them, and they may be deleted.
	Leftover []string
}

func (e *Error) Error() string {
	s := "sftp upload: " + e.Step + ": " + e.Msg
	if len(e.Leftover) > 0 {
		s += fmt.Sprintf(" (partial files left unrenamed: %v)", e.Leftover)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// dialError explains why the TCP connection could not be opened.
func dialError(ctx context.Context, cfg Config, err error) *Error {
	e := &Error{Step: "connect to " + cfg.Addr, Err: err}
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case ctx.Err() != nil:
		e.Reason, e.Msg, e.Err = ReasonCancelled, "the upload was cancelled", context.Cause(ctx)
	case errors.As(err, &dnsErr):
		e.Reason, e.Msg = ReasonUnreachable, "the host name cannot be resolved: check BULK_SFTP_ADDR"
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Reason, e.Msg = ReasonUnreachable, "nothing is listening there (connection refused): is the SFTP server running, and is BULK_SFTP_ADDR right?"
	case errors.As(err, &netErr) && netErr.Timeout():
		e.Reason, e.Msg = ReasonTimeout, fmt.Sprintf("no answer within %v: check BULK_SFTP_ADDR and that no firewall drops the connection", cfg.DialTimeout)
	default:
		e.Reason, e.Msg = ReasonUnreachable, "the server cannot be reached: check BULK_SFTP_ADDR and the network"
	}
	return e
}

// handshakeError explains why the SSH handshake, the host key check or the login failed.
func handshakeError(ctx context.Context, cfg Config, hk *hostKeyCheck, err error) *Error {
	e := &Error{Step: "log in to " + cfg.Addr, Err: err}
	var netErr net.Error
	switch {
	case hk.rejected != nil:
		// The check's own message is the useful one; the ssh error only repeats it.
		e.Step, e.Reason, e.Msg, e.Err = "check the host key of "+cfg.Addr, ReasonHostKey, hk.rejected.Error(), nil
	case ctx.Err() != nil:
		e.Reason, e.Msg, e.Err = ReasonCancelled, "the upload was cancelled", context.Cause(ctx)
	case errors.As(err, &netErr) && netErr.Timeout():
		e.Reason, e.Msg = ReasonTimeout, fmt.Sprintf("the SSH handshake did not finish within %v: is BULK_SFTP_ADDR an SSH server?", cfg.HandshakeTimeout)
	case hk.accepted && isAuthFailure(err):
		e.Reason = ReasonAuth
		e.Msg = fmt.Sprintf("the server refused user %q with the configured %s: check BULK_SFTP_USER and %s", cfg.User, credentialWords(cfg), credentialSettings(cfg))
	case hk.accepted:
		e.Reason, e.Msg = ReasonConnectionLost, "the server closed the connection during login"
	default:
		e.Reason, e.Msg = ReasonConnectionLost, "the SSH handshake failed: is BULK_SFTP_ADDR an SSH server?"
	}
	return e
}

// isAuthFailure recognises x/crypto's refusal of every offered method; the package has no typed
// error for it, so its message is the only signal.
func isAuthFailure(err error) bool {
	return err != nil && containsAny(err.Error(), "unable to authenticate", "no supported methods remain")
}

func credentialWords(cfg Config) string {
	switch {
	case cfg.Password != "" && cfg.KeyFile != "":
		return "key and password"
	case cfg.KeyFile != "":
		return "key"
	default:
		return "password"
	}
}

func credentialSettings(cfg Config) string {
	switch {
	case cfg.Password != "" && cfg.KeyFile != "":
		return "BULK_SFTP_KEY_FILE and BULK_SFTP_PASSWORD"
	case cfg.KeyFile != "":
		return "BULK_SFTP_KEY_FILE (and that its public key is authorised on the server)"
	default:
		return "BULK_SFTP_PASSWORD"
	}
}

// opError explains why a remote operation on an open session failed.
func (s *session) opError(ctx context.Context, step string, err error) *Error {
	e := &Error{Step: step, Err: err}
	var status *sftp.StatusError
	switch {
	case ctx.Err() != nil:
		e.Reason, e.Msg, e.Err = ReasonCancelled, "the upload was cancelled", context.Cause(ctx)
	case s.timedOut.Load():
		e.Reason, e.Msg = ReasonTimeout, fmt.Sprintf("the server did not answer within %v, so the connection was closed", s.idle)
	case errors.Is(err, fs.ErrPermission):
		e.Reason, e.Msg = ReasonRemote, "the server denied permission: check that BULK_SFTP_USER may write to BULK_SFTP_DIR"
	case errors.Is(err, fs.ErrNotExist):
		e.Reason, e.Msg = ReasonRemote, "no such file or directory on the server: check BULK_SFTP_DIR"
	case errors.As(err, &status):
		e.Reason, e.Msg = ReasonRemote, "the server refused the operation: check that BULK_SFTP_USER may write to BULK_SFTP_DIR and that the server's disk has room"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, os.ErrClosed), errors.Is(err, sftp.ErrSSHFxConnectionLost), errors.Is(err, syscall.ECONNRESET):
		e.Reason, e.Msg = ReasonConnectionLost, "the connection to the server was lost; retrying is safe"
	default:
		e.Reason, e.Msg = ReasonConnectionLost, "the connection to the server failed; retrying is safe"
	}
	return e
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

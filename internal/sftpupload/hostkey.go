package sftpupload

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// hostKeyCheck verifies the server's host key for one connection and remembers the outcome,
// because x/crypto reports a rejected key only as a handshake failure, and a refused login
// can be told from a refused host key only by knowing that the key was accepted first.
type hostKeyCheck struct {
	addr      string
	known     ssh.HostKeyCallback
	knownFile string
	pin       string

	accepted bool
	rejected error
}

func (h *hostKeyCheck) check(hostname string, remote net.Addr, key ssh.PublicKey) error {
	if err := h.verify(hostname, remote, key); err != nil {
		h.rejected = err
		return err
	}
	h.accepted = true
	return nil
}

func (h *hostKeyCheck) verify(hostname string, remote net.Addr, key ssh.PublicKey) error {
	got := ssh.FingerprintSHA256(key)
	if h.known == nil && h.pin == "" {
		// Validate refuses such a Config; this keeps a zero Uploader from trusting anything.
		return errors.New("no host key is configured: set BULK_SFTP_KNOWN_HOSTS or BULK_SFTP_HOST_KEY_FINGERPRINT")
	}
	if h.pin != "" && got != h.pin {
		return fmt.Errorf("the server presented host key %s, which is not BULK_SFTP_HOST_KEY_FINGERPRINT %s: if the server's key was changed on purpose, update the setting; otherwise someone may be intercepting the connection", got, h.pin)
	}
	if h.known != nil {
		err := h.known(hostname, remote, key)
		var keyErr *knownhosts.KeyError
		var revoked *knownhosts.RevokedError
		switch {
		case err == nil:
		case errors.As(err, &keyErr) && len(keyErr.Want) == 0:
			return fmt.Errorf("the server's host key %s (%s) is not in BULK_SFTP_KNOWN_HOSTS %q: check the fingerprint with the server's operator, then add the key (ssh-keyscan)", got, key.Type(), h.knownFile)
		case errors.As(err, &keyErr):
			w := keyErr.Want[0]
			return fmt.Errorf("the server presented host key %s, but BULK_SFTP_KNOWN_HOSTS %q line %d holds %s for it: if the server's key was changed on purpose, update the file; otherwise someone may be intercepting the connection", got, w.Filename, w.Line, ssh.FingerprintSHA256(w.Key))
		case errors.As(err, &revoked):
			return fmt.Errorf("the server's host key %s is marked revoked in BULK_SFTP_KNOWN_HOSTS %q", got, h.knownFile)
		default:
			return fmt.Errorf("the server's host key %s could not be checked against BULK_SFTP_KNOWN_HOSTS %q: %w", got, h.knownFile, err)
		}
	}
	return nil
}

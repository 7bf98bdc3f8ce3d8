package sftpupload

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"slices"

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
		return fmt.Errorf("the server presented %s host key %s, which is not BULK_SFTP_HOST_KEY_FINGERPRINT %s: if the server's key was changed on purpose, update the setting; otherwise someone may be intercepting the connection", key.Type(), got, h.pin)
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
			return fmt.Errorf("the server presented %s host key %s, but BULK_SFTP_KNOWN_HOSTS %q line %d holds %s for it: if the server's key was changed on purpose, update the file; otherwise someone may be intercepting the connection", key.Type(), got, w.Filename, w.Line, ssh.FingerprintSHA256(w.Key))
		case errors.As(err, &revoked):
			return fmt.Errorf("the server's host key %s is marked revoked in BULK_SFTP_KNOWN_HOSTS %q", got, h.knownFile)
		default:
			return fmt.Errorf("the server's host key %s could not be checked against BULK_SFTP_KNOWN_HOSTS %q: %w", got, h.knownFile, err)
		}
	}
	return nil
}

// knownAlgorithms returns the host key algorithms of the keys known_hosts holds for addr, so
// that the handshake asks the server for one of those. Without it a server with several host
// keys (OpenSSH has RSA, ECDSA and Ed25519 by default) presents the one x/crypto prefers, RSA,
// and a known_hosts line for its Ed25519 key would be reported as a mismatch. x/crypto has no
// lookup, but checking a key that cannot be in the file makes it list the ones it wants. It
// returns nil (x/crypto's defaults) when the file knows nothing of addr.
func knownAlgorithms(known ssh.HostKeyCallback, addr string, remote net.Addr) []string {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil
	}
	probe, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil
	}
	var keyErr *knownhosts.KeyError
	if err := known(addr, remote, probe.PublicKey()); !errors.As(err, &keyErr) {
		return nil
	}
	var algos []string
	add := func(a ...string) {
		for _, x := range a {
			if !slices.Contains(algos, x) {
				algos = append(algos, x)
			}
		}
	}
	for _, k := range keyErr.Want {
		if t := k.Key.Type(); t == ssh.KeyAlgoRSA {
			// An RSA key is used with SHA-2 signatures; plain ssh-rsa (SHA-1) only as a last resort.
			add(ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
		} else {
			add(t)
		}
	}
	return algos
}

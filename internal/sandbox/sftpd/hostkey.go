package sftpd

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"
)

// loadHostKey reads the host key at path, or makes an ed25519 one there when there is none, so
// that clients that pinned the fingerprint keep trusting the server across restarts. A file
// that is there but is not a private key is refused rather than replaced: replacing it would
// silently change the server's identity.
func loadHostKey(path string) (ssh.Signer, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return makeHostKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read the SFTP host key: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("the SFTP host key %s is not an unencrypted OpenSSH private key (remove it to make a new one): %w", path, err)
	}
	return signer, nil
}

func makeHostKey(path string) (ssh.Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make an SFTP host key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "sandbox SFTP host key")
	if err != nil {
		return nil, fmt.Errorf("encode the SFTP host key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("make the directory of the SFTP host key: %w", err)
	}
	// Written aside and linked into place: a reader never sees half a key, and when two
	// sandboxes share a file directory and start together, the second one's link fails and it
	// reads the first one's key instead of replacing it.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".hostkey-*")
	if err != nil {
		return nil, fmt.Errorf("write the SFTP host key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(pem.EncodeToMemory(block))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if errors.Is(err, iofs.ErrExist) {
		return loadHostKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("write the SFTP host key: %w", err)
	}
	return ssh.NewSignerFromKey(priv)
}

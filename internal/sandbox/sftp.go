package sandbox

import (
	"errors"
	"path/filepath"

	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// Where the SFTP server keeps its files, in the sandbox's file directory: the users' roots,
// each firm's user in sftp/<user>, and beside them (out of every user's reach) the host key,
// so that a sandbox started again with the same -file-dir presents the same key. Document
// files there are named by UUID, so these names cannot collide with them.
const (
	sftpRootName    = "sftp"
	sftpHostKeyName = "ssh_host_ed25519_key"
)

// SFTP returns the sandbox's SFTP server for bulk files, making it (its root directories and,
// the first time, its host key) on the first call, and starting the ingestion of the files it
// receives, which Close stops. Every firm with SFTP credentials has its own login, jailed in
// its own directory; a file one firm's user uploads is ingested into that firm's data only.
// The caller serves it with Serve on a listener of its choice (DefaultSFTPAddr, or a free port
// when that is taken) and prints its Fingerprint. With no FileDir the host key lives in the
// temporary directory and so changes at every start.
func (s *Sandbox) SFTP() (*sftpd.Server, error) {
	s.sftpMu.Lock()
	defer s.sftpMu.Unlock()
	if s.sftp != nil {
		return s.sftp, nil
	}
	var users []sftpd.User
	for _, t := range s.firms {
		if t.sftpUser == "" {
			continue
		}
		users = append(users, sftpd.User{Name: t.sftpUser, Password: t.sftpPass, AuthorizedKeysFile: t.firm.SFTPAuthorizedKeys})
	}
	if len(users) == 0 {
		return nil, errors.New("sftp: no firm has SFTP credentials")
	}
	srv, err := sftpd.New(sftpd.Config{
		Dir:         filepath.Join(s.files.dir, sftpRootName),
		HostKeyFile: filepath.Join(s.files.dir, sftpHostKeyName),
		Users:       users,
		OnFile:      s.receiveBulkFile,
		Logger:      s.opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	s.sftp = srv
	s.ingest = startIngester(s.ingestFile)
	return srv, nil
}

// sftpFirm is the firm whose SFTP user wrote a file, or nil.
func (s *Sandbox) sftpFirm(user string) *Tenant {
	for _, t := range s.firms {
		if t.sftpUser != "" && t.sftpUser == user {
			return t
		}
	}
	return nil
}

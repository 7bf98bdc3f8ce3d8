package sandbox

import (
	"path/filepath"
	"strings"

	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// Where the SFTP server keeps its files, in the sandbox's file directory: the user's root,
// and beside it (out of the user's reach) the host key, so that a sandbox started again with
// the same -file-dir presents the same key. Document files there are named by UUID, so these
// names cannot collide with them.
const (
	sftpRootName    = "sftp"
	sftpHostKeyName = "ssh_host_ed25519_key"
)

// SFTP returns the sandbox's SFTP server for bulk files, making it (its root directory and,
// the first time, its host key) on the first call, and starting the ingestion of the files it
// receives, which Close stops. The caller serves it with Serve on a
// listener of its choice (DefaultSFTPAddr, or a free port when that is taken) and prints its
// Fingerprint. With no FileDir the host key lives in the temporary directory and so changes
// at every start.
func (s *Sandbox) SFTP() (*sftpd.Server, error) {
	s.sftpMu.Lock()
	defer s.sftpMu.Unlock()
	if s.sftp != nil {
		return s.sftp, nil
	}
	user, pass, _ := strings.Cut(s.opts.SFTPCredentials, ":") // checked by New
	srv, err := sftpd.New(sftpd.Config{
		Dir:                filepath.Join(s.files.dir, sftpRootName),
		HostKeyFile:        filepath.Join(s.files.dir, sftpHostKeyName),
		User:               user,
		Password:           pass,
		AuthorizedKeysFile: s.opts.SFTPAuthorizedKeys,
		OnFile:             s.receiveBulkFile,
		Logger:             s.opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	s.sftp = srv
	s.ingest = startIngester(s.ingestFile)
	return srv, nil
}

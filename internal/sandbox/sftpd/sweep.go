package sftpd

import (
	"context"
	iofs "io/fs"
	"path/filepath"
	"strings"
	"time"
)

// isPart reports whether p names a file being uploaded under a temporary name, as OpenSSH's
// sftp, the gateway and most clients do before renaming it to its name.
func isPart(p string) bool { return strings.HasSuffix(p, ".part") }

// sweepInterval is how often Serve sweeps: a quarter of the age, so that a file is removed
// soon after it is old enough, between 10ms and an hour.
func sweepInterval(maxAge time.Duration) time.Duration {
	return min(max(maxAge/4, 10*time.Millisecond), time.Hour)
}

// sweepEvery sweeps every user's root until ctx ends.
func (s *Server) sweepEvery(ctx context.Context, roots map[string]*files) {
	t := time.NewTicker(sweepInterval(s.cfg.PartMaxAge))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sweep(roots)
		}
	}
}

// sweep removes, in every user's root, the ".part" files older than PartMaxAge that nobody
// has open: uploads abandoned, by a client that closed a file it never renamed or by an
// earlier run of the server. The same walk corrects the user's quota count.
func (s *Server) sweep(roots map[string]*files) {
	cutoff := s.cfg.Now().Add(-s.cfg.PartMaxAge)
	for _, fs := range roots {
		fs.mu.Lock()
		sum := fs.walk(func(p string, fi iofs.FileInfo) bool {
			p = filepath.FromSlash(p)
			if !isPart(p) || fs.writing[p] != nil || !fi.ModTime().Before(cutoff) {
				return false
			}
			if err := fs.root.Remove(p); err != nil {
				s.log.Warn("sftp stale upload not removed", "user", fs.acct.name, "name", "/"+filepath.ToSlash(p), "err", err)
				return false
			}
			s.log.Info("sftp stale upload removed", "user", fs.acct.name, "name", "/"+filepath.ToSlash(p), "modified", fi.ModTime())
			return true
		})
		fs.used, fs.counted = sum+fs.pending, time.Now()
		fs.mu.Unlock()
	}
}

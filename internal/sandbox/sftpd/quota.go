package sftpd

import (
	"fmt"
	iofs "io/fs"
	"time"

	"github.com/pkg/sftp"
)

// entryCost is what each file and directory counts against the quota beside its bytes, about
// the block and inode it takes, so that a user cannot fill the disk's inodes with empty files.
const entryCost = 4096

// recountEvery bounds how often a write that would go beyond the quota has the user's root
// walked again to correct the count (the ingester adds result files, and operators remove
// files), so that a user at its quota cannot make every write a walk of its tree.
const recountEvery = time.Second

// usage is what a user's root holds, as the quota counts it. The count follows the server's
// own changes and is corrected by walking the root: when Serve starts, at each sweep, and
// when a write would go beyond the quota.
type usage struct {
	used    int64 // bytes counted; -1 until the root was walked
	pending int64 // bytes of writes under way, which a walk may not see on disk yet
	counted time.Time
}

// cost is what an entry of the tree counts against the quota.
func cost(fi iofs.FileInfo) int64 {
	if fi.Mode().IsRegular() {
		return fi.Size() + entryCost
	}
	return entryCost
}

// reserve takes n bytes of the user's quota, or says why not. The caller holds fs.mu.
func (fs *files) reserve(n int64) error {
	if fs.cfg.Quota < 0 {
		return nil
	}
	if fs.used < 0 || fs.used+n > fs.cfg.Quota {
		fs.recount(fs.used < 0)
	}
	if fs.used+n > fs.cfg.Quota {
		return fmt.Errorf("%w: quota exceeded: user %s may keep at most %d bytes (each file and directory counts 4096 bytes more than its size)", sftp.ErrSSHFxFailure, fs.acct.name, fs.cfg.Quota)
	}
	fs.used += n
	return nil
}

// add changes the count by n, freed (negative) or taken without a check. The caller holds
// fs.mu.
func (fs *files) add(n int64) {
	if fs.used >= 0 {
		fs.used = max(0, fs.used+n)
	}
}

// recount walks the user's root for what it holds, unless it was walked within recountEvery
// and force is false. The caller holds fs.mu.
func (fs *files) recount(force bool) {
	now := time.Now()
	if !force && now.Sub(fs.counted) < recountEvery {
		return
	}
	fs.used, fs.counted = fs.walk(nil)+fs.pending, now
}

// walk sums what the user's root holds, calling visit (when not nil) for each regular file
// first; visit reports whether it removed the file. The caller holds fs.mu.
func (fs *files) walk(visit func(p string, fi iofs.FileInfo) bool) int64 {
	var sum int64
	_ = iofs.WalkDir(fs.root.FS(), ".", func(p string, d iofs.DirEntry, err error) error {
		if p == "." {
			return nil
		}
		if err != nil {
			// Unreadable: counted as an entry, and the walk goes on.
			sum += entryCost
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		if visit != nil && fi.Mode().IsRegular() && visit(p, fi) {
			return nil
		}
		sum += cost(fi)
		return nil
	})
	return sum
}

// checkSize refuses a file size beyond the per-file maximum.
func (fs *files) checkSize(size uint64) error {
	if fs.cfg.MaxFileSize >= 0 && size > uint64(fs.cfg.MaxFileSize) {
		return fmt.Errorf("%w: file too large: at most %d bytes per file", sftp.ErrSSHFxFailure, fs.cfg.MaxFileSize)
	}
	return nil
}

// grow takes from the quota what a write of n bytes at off adds to w's file, and returns it
// for settle once the write is done. A write beyond a limit fails, and so does every later
// write of the file, which is removed: a partial file is of no use to anyone.
func (fs *files) grow(w *writing, n, off int64, appending bool) (int64, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if w.failed != nil {
		return 0, w.failed
	}
	end := off + n
	if appending {
		end = w.size + n
	}
	if off < 0 || end < off {
		return 0, fmt.Errorf("%w: offset %d out of range", sftp.ErrSSHFxFailure, off)
	}
	if err := fs.checkSize(uint64(end)); err != nil {
		return 0, fs.failWrite(w, err)
	}
	growth := max(0, end-w.size)
	if growth == 0 {
		return 0, nil
	}
	if err := fs.reserve(growth); err != nil {
		return 0, fs.failWrite(w, err)
	}
	fs.pending += growth
	w.size = end
	return growth, nil
}

// settle ends a write that grew its file by growth.
func (fs *files) settle(growth int64) {
	if growth == 0 {
		return
	}
	fs.mu.Lock()
	fs.pending -= growth
	fs.mu.Unlock()
}

// failWrite marks w's file failed with err and removes it. The caller holds fs.mu.
func (fs *files) failWrite(w *writing, err error) error {
	w.failed = fmt.Errorf("%w; the file was removed", err)
	if w.path != "" {
		if rerr := fs.root.Remove(w.path); rerr == nil {
			fs.add(-w.size - entryCost)
		}
		if fs.writing[w.path] == w {
			delete(fs.writing, w.path)
		}
		w.path = ""
	}
	return w.failed
}

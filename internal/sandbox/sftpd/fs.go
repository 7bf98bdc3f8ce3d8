package sftpd

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pkg/sftp"
)

// File is a bulk file handed over for ingestion.
type File struct {
	Kind Kind
	// Time is the timestamp in its name.
	Time time.Time
	// User is the login that wrote it (Config.User for the one-user shorthand).
	User string
	// Name is its path as the SFTP user sees it, such as "/clients-20261123T204500Z.jsonl".
	Name string
	// Path is where it is on disk.
	Path string
}

// files serves the request server's handlers from one user's root. Every path goes through an
// os.Root, which refuses ".." and symbolic links that lead out of it, so the root holds even
// against links someone made on the host; the client's own paths arrive cleaned and absolute
// ("/../x" is "/x"), so they name places inside it, as under chroot.
type files struct {
	root   *os.Root
	acct   *account
	cfg    *Config
	onFile func(File)
	*userState
}

// userState is what a user's connections share across every Serve: the files open for
// writing, by path inside the root, so that a file is handed over when its last writer closes
// it and never while one still writes, and what the user's root holds, for the quota. Its lock
// also makes each change of the tree and its record one step.
type userState struct {
	conns atomic.Int64 // logged-in connections, for MaxConnsPerUser

	mu      sync.Mutex
	writing map[string]*writing
	usage
}

func newUserState() *userState {
	return &userState{writing: map[string]*writing{}, usage: usage{used: -1}}
}

// writing is one file's open writers.
type writing struct {
	path    string // "" once the file was removed or replaced: its writers write to no name
	writers int
	changed atomic.Bool // written, or opened truncated: closing makes a new version
	aborted bool        // a writer's connection ended with the file open
	// finished: a writer closed the file itself while others had it open. Such a file is
	// that writer's, whichever of them closes last: the order in which the server learns of
	// a broken connection and of a close must not decide whether a finished file survives.
	finished bool
	size     int64 // the most its writers have made of it, for the quota
	failed   error // a write went beyond a limit: the file is gone and stays so
}

func (fs *files) handlers() sftp.Handlers {
	return sftp.Handlers{FileGet: fs, FilePut: fs, FileCmd: fs, FileList: fs}
}

// rel maps an SFTP path to a path inside the root.
func rel(p string) string {
	r := strings.TrimPrefix(path.Clean("/"+p), "/")
	if r == "" {
		return "."
	}
	return filepath.FromSlash(r)
}

// handOver calls onFile for the file at rel when its name is a bulk file's.
func (fs *files) handOver(r string) {
	k, t, ok := ParseName(filepath.Base(r))
	if !ok || fs.onFile == nil {
		return
	}
	fs.onFile(File{Kind: k, Time: t, User: fs.acct.name, Name: "/" + filepath.ToSlash(r), Path: filepath.Join(fs.acct.dir, r)})
}

// Fileread opens a file to download.
func (fs *files) Fileread(r *sftp.Request) (io.ReaderAt, error) {
	f, err := fs.root.Open(rel(r.Filepath))
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Filewrite opens a file to write only.
func (fs *files) Filewrite(r *sftp.Request) (io.WriterAt, error) { return fs.open(r, os.O_WRONLY) }

// OpenFile opens a file to read and write: the pkg/sftp client's Create asks for both.
func (fs *files) OpenFile(r *sftp.Request) (sftp.WriterAtReaderAt, error) {
	return fs.open(r, os.O_RDWR)
}

func (fs *files) open(r *sftp.Request, mode int) (*writeHandle, error) {
	pf := r.Pflags()
	flags := mode
	if pf.Creat {
		flags |= os.O_CREATE
	}
	if pf.Trunc {
		flags |= os.O_TRUNC
	}
	if pf.Excl {
		flags |= os.O_EXCL
	}
	if pf.Append {
		flags |= os.O_APPEND
	}
	p := rel(r.Filepath)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	before, statErr := fs.root.Lstat(p)
	reserved := errors.Is(statErr, iofs.ErrNotExist) && pf.Creat
	if reserved {
		// A new file takes its entry's share of the quota before it is made.
		if err := fs.reserve(entryCost); err != nil {
			return nil, err
		}
	}
	f, err := fs.root.OpenFile(p, flags, 0o640)
	if err != nil {
		if reserved {
			fs.add(-entryCost)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || fi.IsDir() {
		_ = f.Close()
		return nil, errors.Join(err, sftp.ErrSSHFxFailure)
	}
	if statErr == nil && pf.Trunc {
		fs.add(-before.Size())
	}
	w := fs.writing[p]
	if w == nil {
		w = &writing{path: p, size: fi.Size()}
		fs.writing[p] = w
	}
	w.writers++
	if pf.Trunc {
		w.changed.Store(true)
		w.size = 0
	}
	return &writeHandle{File: f, fs: fs, w: w, append: pf.Append}, nil
}

// release ends one writer of w; the last one hands the file over when it changed and no
// writer's connection broke off.
func (fs *files) release(w *writing, aborted bool) {
	fs.mu.Lock()
	w.writers--
	w.aborted = w.aborted || aborted
	w.finished = w.finished || !aborted
	last := w.writers == 0
	if last && w.path != "" && fs.writing[w.path] == w {
		delete(fs.writing, w.path)
	}
	handOver := last && w.path != "" && w.changed.Load() && !w.aborted
	p := w.path // read under the lock: a rename may move it
	if last && aborted && !w.finished && isPart(w.path) {
		// Its last writer's connection broke off: nobody will finish or rename it.
		if err := fs.root.Remove(w.path); err == nil {
			fs.add(-w.size - entryCost)
		}
		w.path = ""
	}
	fs.mu.Unlock()
	if handOver {
		fs.handOver(p)
	}
}

// writeHandle is an open file being written. The request server closes it when the client
// does, and also when the connection ends with the file open, after telling it so through
// TransferError: that file is partial and is not handed over.
type writeHandle struct {
	*os.File
	fs      *files
	w       *writing
	aborted atomic.Bool
	once    sync.Once

	append bool
	mu     sync.Mutex // one append at a time
}

// WriteAt writes at off, or, on a file opened to append, at its end whatever off says: the
// pkg/sftp client counts its offsets from zero when it appends, and OpenSSH's server on Linux
// appends the same way. Writes of one handle may run at once, so a client that appends sends
// one write at a time.
func (h *writeHandle) WriteAt(p []byte, off int64) (int, error) {
	if h.append {
		h.mu.Lock()
		defer h.mu.Unlock()
	}
	growth, err := h.fs.grow(h.w, int64(len(p)), off, h.append)
	if err != nil {
		return 0, err
	}
	defer h.fs.settle(growth)
	h.w.changed.Store(true)
	if h.append {
		return h.File.Write(p)
	}
	return h.File.WriteAt(p, off)
}

// TransferError is called by the request server when the connection ended with the file open.
func (h *writeHandle) TransferError(error) { h.aborted.Store(true) }

func (h *writeHandle) Close() error {
	err := iofs.ErrClosed
	h.once.Do(func() {
		err = h.File.Close()
		// A file whose last bytes may not have reached the disk is not a finished file.
		h.fs.release(h.w, h.aborted.Load() || err != nil)
	})
	return err
}

// Filecmd changes the tree. Links are refused: a bulk upload needs none, and a tree without
// them is simpler to confine.
func (fs *files) Filecmd(r *sftp.Request) error {
	p := rel(r.Filepath)
	switch r.Method {
	case "Setstat":
		return fs.setstat(p, r)
	case "Rename":
		return fs.rename(p, rel(r.Target), false)
	case "Mkdir":
		return fs.mkdir(p)
	case "Rmdir", "Remove":
		return fs.remove(p, r.Method == "Rmdir")
	case "Link", "Symlink":
		return sftp.ErrSSHFxPermissionDenied
	}
	return sftp.ErrSSHFxOpUnsupported
}

// PosixRename replaces the target when it exists, as rename(2) does; plain Rename does not.
func (fs *files) PosixRename(r *sftp.Request) error {
	return fs.rename(rel(r.Filepath), rel(r.Target), true)
}

func (fs *files) mkdir(p string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.reserve(entryCost); err != nil {
		return err
	}
	if err := fs.root.Mkdir(p, 0o750); err != nil {
		fs.add(-entryCost)
		return err
	}
	return nil
}

// setstat changes a file's size, mode or times. The root's attributes are the operator's and
// are not changed at all; a mode is confined to what the server would make (no bit for other
// users, nothing group-writable, the owner's own access kept), because the files sit on a
// machine others share and the server must still be able to read, count and sweep them.
func (fs *files) setstat(p string, r *sftp.Request) error {
	if p == "." {
		return sftp.ErrSSHFxPermissionDenied
	}
	attrs, set := r.Attributes(), r.AttrFlags()
	if set.Size {
		if err := fs.truncate(p, attrs.Size); err != nil {
			return err
		}
	}
	if set.Permissions {
		fi, err := fs.root.Lstat(p)
		if err != nil {
			return err
		}
		mode := iofs.FileMode(attrs.Mode).Perm()&0o640 | 0o600
		if fi.IsDir() {
			mode = iofs.FileMode(attrs.Mode).Perm()&0o750 | 0o700
		}
		if err := fs.root.Chmod(p, mode); err != nil {
			return err
		}
	}
	if set.Acmodtime {
		if err := fs.root.Chtimes(p, time.Unix(int64(attrs.Atime), 0), time.Unix(int64(attrs.Mtime), 0)); err != nil {
			return err
		}
	}
	// Ownership is the server process's; a request to change it is accepted and ignored, as
	// clients that preserve attributes send it with every upload.
	return nil
}

// truncate sets a file's size, which counts against the quota as written bytes do.
func (fs *files) truncate(p string, size uint64) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fi, err := fs.root.Lstat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return sftp.ErrSSHFxFailure
	}
	if err := fs.checkSize(size); err != nil {
		return err
	}
	if size > math.MaxInt64 {
		return fmt.Errorf("%w: size %d out of range", sftp.ErrSSHFxFailure, size)
	}
	old := fi.Size()
	w := fs.writing[p]
	if w != nil {
		old = max(old, w.size)
	}
	growth := int64(size) - old
	if growth > 0 {
		if err := fs.reserve(growth); err != nil {
			return err
		}
	}
	f, err := fs.root.OpenFile(p, os.O_WRONLY, 0)
	if err == nil {
		err = f.Truncate(int64(size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		if growth > 0 {
			fs.add(-growth)
		}
		return err
	}
	if growth < 0 {
		fs.add(growth)
	}
	// Truncating a file open for writing is part of writing it. Truncating a closed one
	// changes it without a close, so it hands nothing over: a client writes a new file.
	if w != nil {
		w.changed.Store(true)
		w.size = int64(size)
	}
	return nil
}

// rename moves from to to, and hands over a bulk file that arrives at its name. A file still
// open for writing is handed over when its last writer closes it, under its new name.
func (fs *files) rename(from, to string, replace bool) error {
	if from == "." || to == "." {
		return sftp.ErrSSHFxPermissionDenied
	}
	fs.mu.Lock()
	if !replace {
		// SFTP v3's rename does not replace, and OpenSSH's server refuses; so does this one.
		if _, err := fs.root.Lstat(to); err == nil {
			fs.mu.Unlock()
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: iofs.ErrExist}
		}
	}
	fi, err := fs.root.Lstat(from)
	replaced, replacedErr := fs.root.Lstat(to)
	if err == nil {
		err = fs.root.Rename(from, to)
	}
	if err != nil {
		fs.mu.Unlock()
		return err
	}
	if replacedErr == nil {
		fs.add(-cost(replaced))
	}
	// Writers of the file that was replaced now write to no name.
	if w := fs.writing[to]; w != nil {
		w.path = ""
		delete(fs.writing, to)
	}
	handOver := fi.Mode().IsRegular()
	for p, w := range fs.writing {
		switch {
		case p == from:
			handOver = false
		case strings.HasPrefix(p, from+string(filepath.Separator)):
		default:
			continue
		}
		// The open files of a renamed directory move with it.
		delete(fs.writing, p)
		w.path = to + strings.TrimPrefix(p, from)
		fs.writing[w.path] = w
	}
	fs.mu.Unlock()
	if handOver {
		fs.handOver(to)
	}
	return nil
}

func (fs *files) remove(p string, dir bool) error {
	if p == "." {
		return sftp.ErrSSHFxPermissionDenied
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fi, err := fs.root.Lstat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() != dir {
		return sftp.ErrSSHFxFailure
	}
	if err := fs.root.Remove(p); err != nil {
		return err
	}
	fs.add(-cost(fi))
	if w := fs.writing[p]; w != nil {
		w.path = ""
		delete(fs.writing, p)
	}
	return nil
}

// Filelist lists a directory or describes one file.
func (fs *files) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	p := rel(r.Filepath)
	switch r.Method {
	case "List":
		d, err := fs.root.Open(p)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		infos, err := d.Readdir(-1)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(infos, func(a, b iofs.FileInfo) int { return strings.Compare(a.Name(), b.Name()) })
		return listerAt(infos), nil
	case "Stat":
		fi, err := fs.root.Stat(p)
		if err != nil {
			return nil, err
		}
		return listerAt{fi}, nil
	}
	// Readlink: there are no links to read.
	return nil, sftp.ErrSSHFxOpUnsupported
}

// Lstat describes a file without following a link.
func (fs *files) Lstat(r *sftp.Request) (sftp.ListerAt, error) {
	fi, err := fs.root.Lstat(rel(r.Filepath))
	if err != nil {
		return nil, err
	}
	return listerAt{fi}, nil
}

type listerAt []iofs.FileInfo

func (l listerAt) ListAt(dst []iofs.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(dst, l[off:])
	if n < len(dst) {
		return n, io.EOF
	}
	return n, nil
}

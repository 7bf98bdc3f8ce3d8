package sftpupload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"slices"
	"sync/atomic"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Kind is which bulk file is uploaded; it is also the first part of the remote file's name.
type Kind string

const (
	// TopAccounts is the deprecated container model's Add/Update Top Accounts file.
	TopAccounts Kind = "top-accounts"
	Clients     Kind = "clients"
	People      Kind = "people"
)

// kindOrder is the order files go up in: People rows name top accounts or clients, so the Top
// Accounts and Clients files must be in place (and ingested) before the People file appears.
var kindOrder = []Kind{TopAccounts, Clients, People}

// StampLayout is the UTC timestamp in remote file names, e.g. clients-20261123T204500Z.jsonl.
const StampLayout = "20060102T150405Z"

// maxNameTries bounds the search for a free name: each try moves the timestamp one second on.
const maxNameTries = 60

// copyBuffer is the size of each read from the caller's file. Large enough that the SFTP
// client can keep several write packets in flight on a slow link, small enough that memory
// does not grow with the file.
const copyBuffer = 256 << 10

// File is one file to upload. Body is read to its end and streamed, never held whole; the
// uploader does not close it, and cancelling the context does not interrupt a Read that blocks.
// Progress, when set, is called after each write the server acknowledged with the bytes written
// so far; it runs on the uploading goroutine, so it should return quickly.
type File struct {
	Kind     Kind
	Body     io.Reader
	Progress func(written int64)
}

// Uploaded describes a file that was renamed into place.
type Uploaded struct {
	Kind  Kind
	Name  string // e.g. clients-20261123T204500Z.jsonl
	Path  string // Name in the remote directory
	Bytes int64
}

// Uploader puts bulk files on one SFTP server. It holds no connection between calls and needs no
// closing; it is safe for concurrent use, and concurrent uploads take turns.
type Uploader struct {
	cfg   Config
	auth  []ssh.AuthMethod
	known ssh.HostKeyCallback // nil when no known_hosts file is configured
	now   func() time.Time
	// turn lets one upload at a time through: two uploads in the same second would otherwise
	// both find the same name free. Uploads from other processes are kept apart by the
	// exclusive create of the ".part" file.
	turn chan struct{}
}

// New checks cfg, reads its key and known_hosts files, and returns an Uploader. now is the
// clock the file names are taken from; nil means time.Now. Every error names the setting.
func New(cfg Config, now func() time.Time) (*Uploader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if now == nil {
		now = time.Now
	}
	u := &Uploader{cfg: cfg, now: now, turn: make(chan struct{}, 1)}
	if cfg.KeyFile != "" {
		signer, err := readKey(cfg.KeyFile)
		if err != nil {
			return nil, err
		}
		u.auth = append(u.auth, ssh.PublicKeys(signer))
	}
	if cfg.Password != "" {
		pw := cfg.Password
		// Servers that turn off "password" often take the same password through
		// keyboard-interactive, asking one question; answering every question with it is what
		// OpenSSH's client does with a single configured password.
		u.auth = append(u.auth, ssh.Password(pw), ssh.KeyboardInteractive(
			func(_, _ string, questions []string, _ []bool) ([]string, error) {
				answers := make([]string, len(questions))
				for i := range answers {
					answers[i] = pw
				}
				return answers, nil
			}))
	}
	if cfg.KnownHostsFile != "" {
		cb, err := knownhosts.New(cfg.KnownHostsFile)
		if err != nil {
			return nil, fmt.Errorf("BULK_SFTP_KNOWN_HOSTS %q cannot be used: %w", cfg.KnownHostsFile, err)
		}
		u.known = cb
	}
	return u, nil
}

func readKey(file string) (ssh.Signer, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("BULK_SFTP_KEY_FILE %q cannot be read: %w", file, err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	switch {
	case errors.As(err, &missing):
		return nil, fmt.Errorf("BULK_SFTP_KEY_FILE %q is protected by a passphrase, which is not supported: use an unencrypted key readable only by the gateway", file)
	case err != nil:
		// The parse error may quote the file's first bytes, which are secret: say only what
		// kind of problem it is.
		return nil, fmt.Errorf("BULK_SFTP_KEY_FILE %q is not an SSH private key (OpenSSH or PEM format)", file)
	}
	return signer, nil
}

// Upload writes files to the remote directory over one SSH connection, each first as
// "<kind>-<UTC timestamp>.jsonl.part" and then renamed to "<kind>-<UTC timestamp>.jsonl", the
// Top Accounts and Clients files renamed before the People file. All files are written before any is renamed, so
// a failure while writing leaves nothing for the service to ingest. Files of one call share a
// timestamp; when a name is taken on the server, the next free second is used, so nothing is
// ever overwritten.
//
// On failure Upload removes the ".part" files it wrote when the connection still allows it,
// and returns an *Error, together with the files already renamed into place (only when a later
// rename failed). Retrying is safe: a retry picks names free at that moment, the service
// ignores ".part" files, and it treats the rows of a file as add-or-update, so even a rename
// the server did just before the connection broke does no harm when the retry repeats it.
//
// Renames use SSH_FXP_RENAME, which OpenSSH refuses when the target exists; with the check
// of free names before writing, nothing is overwritten even on servers that would.
func (u *Uploader) Upload(ctx context.Context, files ...File) ([]Uploaded, error) {
	files, err := ordered(files)
	if err != nil {
		return nil, err
	}
	select {
	case u.turn <- struct{}{}:
		defer func() { <-u.turn }()
	case <-ctx.Done():
		return nil, &Error{Step: "wait for another upload to finish", Reason: ReasonCancelled, Msg: "the upload was cancelled", Err: context.Cause(ctx)}
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Step: "start", Reason: ReasonCancelled, Msg: "the upload was cancelled", Err: context.Cause(ctx)}
	}
	s, err := u.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return u.put(ctx, s, files)
}

func ordered(files []File) ([]File, error) {
	if len(files) == 0 {
		return nil, &Error{Step: "start", Reason: ReasonUsage, Msg: "no file to upload"}
	}
	var out []File
	for _, k := range kindOrder {
		n := 0
		for _, f := range files {
			if f.Kind == k {
				n++
				if f.Body == nil {
					return nil, &Error{Step: "start", Reason: ReasonUsage, Msg: fmt.Sprintf("the %s file has no body", k)}
				}
				out = append(out, f)
			}
		}
		if n > 1 {
			return nil, &Error{Step: "start", Reason: ReasonUsage, Msg: fmt.Sprintf("the %s file is given %d times", k, n)}
		}
	}
	if len(out) != len(files) {
		for _, f := range files {
			if !slices.Contains(kindOrder, f.Kind) {
				return nil, &Error{Step: "start", Reason: ReasonUsage, Msg: fmt.Sprintf("unknown file kind %q: want top-accounts, clients or people", f.Kind)}
			}
		}
	}
	return out, nil
}

// session is one SSH connection and the SFTP client over it.
type session struct {
	conn     net.Conn
	ssh      *ssh.Client
	sftp     *sftp.Client
	idle     time.Duration
	timedOut atomic.Bool
	stopCtx  func() bool
}

// do runs one remote operation under the idle timeout: if the server does not answer in time,
// closing the connection is the only way to unblock the SFTP client, which has no deadlines.
func (s *session) do(op func() error) error {
	t := time.AfterFunc(s.idle, func() {
		s.timedOut.Store(true)
		s.conn.Close()
	})
	defer t.Stop()
	return op()
}

// close ends the session and every goroutine under it. The SFTP client is closed under the
// idle timeout because its Close waits for the server to close the channel.
func (s *session) close() {
	s.stopCtx()
	_ = s.do(s.sftp.Close)
	s.ssh.Close()
	_ = s.ssh.Wait()
}

func (u *Uploader) connect(ctx context.Context) (*session, error) {
	cfg := u.cfg
	d := net.Dialer{Timeout: cfg.DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, dialError(ctx, cfg, err)
	}
	// From here on a cancelled context closes the connection, which ends whatever waits on it.
	stopCtx := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(e *Error) (*session, error) {
		stopCtx()
		conn.Close()
		return nil, e
	}

	_ = conn.SetDeadline(time.Now().Add(cfg.HandshakeTimeout))
	hk := &hostKeyCheck{addr: cfg.Addr, known: u.known, knownFile: cfg.KnownHostsFile, pin: cfg.HostKeyFingerprint}
	cc := &ssh.ClientConfig{User: cfg.User, Auth: u.auth, HostKeyCallback: hk.check}
	if u.known != nil {
		cc.HostKeyAlgorithms = knownAlgorithms(u.known, cfg.Addr, conn.RemoteAddr())
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, cfg.Addr, cc)
	if err != nil {
		return fail(handshakeError(ctx, cfg, hk, err))
	}
	client := ssh.NewClient(c, chans, reqs)
	sc, err := sftp.NewClient(client, sftp.UseConcurrentWrites(true))
	if err != nil {
		client.Close()
		_ = client.Wait()
		e := handshakeError(ctx, cfg, hk, err)
		e.Step = "open the SFTP session on " + cfg.Addr
		if e.Reason == ReasonConnectionLost {
			e.Msg = "the server refused the SFTP subsystem: is SFTP enabled for BULK_SFTP_USER?"
		}
		return fail(e)
	}
	_ = conn.SetDeadline(time.Time{})
	return &session{conn: conn, ssh: client, sftp: sc, idle: cfg.IdleTimeout, stopCtx: stopCtx}, nil
}

// part is one file on its way up.
type part struct {
	File
	name    string // final name
	written int64
	created bool
	renamed bool
}

func (u *Uploader) put(ctx context.Context, s *session, files []File) (done []Uploaded, err error) {
	dir := u.cfg.Dir
	parts := make([]*part, len(files))
	for i, f := range files {
		parts[i] = &part{File: f}
	}
	defer func() {
		if err != nil {
			err = s.cleanup(ctx, dir, parts, err)
		}
	}()

	if err := s.checkDir(ctx, dir); err != nil {
		return nil, err
	}
	if err := u.chooseNames(ctx, s, dir, parts); err != nil {
		return nil, err
	}
	buf := make([]byte, copyBuffer)
	for _, p := range parts {
		if err := s.write(ctx, dir, p, buf); err != nil {
			return nil, err
		}
	}
	for _, p := range parts {
		// The cancelled context closes the connection on its own goroutine; checking here
		// keeps a rename from slipping out in between.
		if err := ctx.Err(); err != nil {
			return done, s.opError(ctx, "rename "+p.name+".part", err)
		}
		from, to := path.Join(dir, p.name+".part"), path.Join(dir, p.name)
		if err := s.do(func() error { return s.sftp.Rename(from, to) }); err != nil {
			e := s.opError(ctx, fmt.Sprintf("rename %s to %s", p.name+".part", p.name), err)
			if len(done) > 0 {
				e.Msg += fmt.Sprintf("; %s was already uploaded", done[0].Name)
			}
			return done, e
		}
		p.renamed = true
		done = append(done, Uploaded{Kind: p.Kind, Name: p.name, Path: to, Bytes: p.written})
	}
	return done, nil
}

func (s *session) checkDir(ctx context.Context, dir string) error {
	var fi fs.FileInfo
	err := s.do(func() (err error) { fi, err = s.sftp.Stat(dir); return err })
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Step: "check BULK_SFTP_DIR", Reason: ReasonRemote, Msg: fmt.Sprintf("the directory %q does not exist on the server", dir), Err: err}
	case err != nil:
		return s.opError(ctx, "check BULK_SFTP_DIR", err)
	case !fi.IsDir():
		return &Error{Step: "check BULK_SFTP_DIR", Reason: ReasonRemote, Msg: fmt.Sprintf("%q on the server is not a directory", dir)}
	}
	return nil
}

// chooseNames gives every part the first timestamp, from now on, at which neither its final
// name nor its ".part" name exists, so an upload never overwrites a file and a stale ".part"
// left by a dropped connection never collides with a new one. All files of one call share the
// timestamp so that the pair can be recognised on the server.
func (u *Uploader) chooseNames(ctx context.Context, s *session, dir string, parts []*part) error {
	start := u.now().UTC().Truncate(time.Second).Unix()
	for try := range maxNameTries {
		stamp := time.Unix(start+int64(try), 0).UTC().Format(StampLayout)
		free := true
		for _, p := range parts {
			name := string(p.Kind) + "-" + stamp + ".jsonl"
			for _, n := range []string{name, name + ".part"} {
				err := s.do(func() error { _, err := s.sftp.Lstat(path.Join(dir, n)); return err })
				switch {
				case err == nil:
					free = false
				case !errors.Is(err, fs.ErrNotExist):
					return s.opError(ctx, "check whether "+n+" exists", err)
				}
			}
		}
		if free {
			for _, p := range parts {
				p.name = string(p.Kind) + "-" + stamp + ".jsonl"
			}
			return nil
		}
	}
	return &Error{Step: "choose a file name", Reason: ReasonRemote,
		Msg: fmt.Sprintf("every name for the next %d seconds is taken in %s: remove old files from BULK_SFTP_DIR", maxNameTries, dir)}
}

// write streams p's body into its ".part" file.
func (s *session) write(ctx context.Context, dir string, p *part, buf []byte) error {
	partName := p.name + ".part"
	var f *sftp.File
	err := s.do(func() (err error) {
		f, err = s.sftp.OpenFile(path.Join(dir, partName), os.O_WRONLY|os.O_CREATE|os.O_EXCL)
		return err
	})
	if err != nil {
		return s.opError(ctx, "create "+partName, err)
	}
	p.created = true
	closeFile := func() error { return s.do(f.Close) }
	for {
		if err := ctx.Err(); err != nil {
			_ = closeFile()
			return s.opError(ctx, "write "+partName, err)
		}
		n, rerr := p.Body.Read(buf)
		if n > 0 {
			if err := s.do(func() error { _, err := f.Write(buf[:n]); return err }); err != nil {
				_ = closeFile()
				return s.opError(ctx, fmt.Sprintf("write %s (after %d bytes)", partName, p.written), err)
			}
			p.written += int64(n)
			if p.Progress != nil {
				p.Progress(p.written)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			_ = closeFile()
			return &Error{Step: fmt.Sprintf("read the %s file (after %d bytes)", p.Kind, p.written), Reason: ReasonInput,
				Msg: "the file to upload could not be read; nothing was renamed into place", Err: rerr}
		}
	}
	// Some servers report a failed write only when the file is closed.
	if err := closeFile(); err != nil {
		return s.opError(ctx, "close "+partName, err)
	}
	return nil
}

// cleanup removes the ".part" files the failed upload created, as far as the connection still
// allows, and lists the rest on the error.
func (s *session) cleanup(ctx context.Context, dir string, parts []*part, err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	for _, p := range parts {
		if !p.created || p.renamed {
			continue
		}
		partName := p.name + ".part"
		// A cancelled context or a timeout has closed the connection: there is no point trying.
		if ctx.Err() == nil && !s.timedOut.Load() {
			rerr := s.do(func() error { return s.sftp.Remove(path.Join(dir, partName)) })
			if rerr == nil || errors.Is(rerr, fs.ErrNotExist) {
				continue
			}
		}
		e.Leftover = append(e.Leftover, partName)
	}
	return e
}

package sftpupload_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// testServer is a minimal SFTP server on loopback: pkg/sftp's in-memory file system over
// x/crypto/ssh, with password and public key login, a record of the operations that change the
// directory, and two faults on demand: dropping a connection after it has read N bytes, and
// stalling writes.
type testServer struct {
	t        testing.TB
	addr     string
	hostKey  ssh.Signer
	ln       net.Listener
	fs       sftp.Handlers
	dir      string
	password string
	keys     []ssh.PublicKey
	// extraHostKeys are offered besides hostKey, as OpenSSH offers several.
	extraHostKeys []ssh.Signer

	dropAfter atomic.Int64 // 0: never; else a connection is closed once it has read this many bytes
	stall     atomic.Bool  // writes block until the server is closed
	failWrite atomic.Bool  // writes fail as on a full disk
	discard   atomic.Bool  // writes are dropped: pkg/sftp's in-memory files sleep 1µs a byte
	done      chan struct{}

	mu  sync.Mutex // guards ops, keys, extraHostKeys, keyboardOnly and refuseRename
	ops []string
	// keyboardOnly takes the password through keyboard-interactive only, as servers with
	// "PasswordAuthentication no" do.
	keyboardOnly bool
	// refuseRename makes renames of files whose name starts with it fail.
	refuseRename string

	wg sync.WaitGroup
}

const (
	testUser     = "advisor"
	testPassword = "s3cret-pw"
	remoteDir    = "/upload"
)

func newTestServer(t testing.TB) *testServer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{t: t, addr: ln.Addr().String(), hostKey: hostKey, ln: ln, fs: sftp.InMemHandler(),
		dir: remoteDir, password: testPassword, done: make(chan struct{})}
	if err := s.fs.FileCmd.Filecmd(sftp.NewRequest("Mkdir", remoteDir)); err != nil {
		t.Fatal(err)
	}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

// close stops accepting, ends every connection's goroutines and waits for them.
func (s *testServer) close() {
	close(s.done)
	s.ln.Close()
	s.wg.Wait()
}

func (s *testServer) fingerprint() string { return ssh.FingerprintSHA256(s.hostKey.PublicKey()) }

// authorise lets key log in from the next connection on.
func (s *testServer) authorise(key ssh.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, key)
}

// addHostKey makes the server offer key too from the next connection on.
func (s *testServer) addHostKey(key ssh.Signer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extraHostKeys = append(s.extraHostKeys, key)
}

// config is built for each connection from the settings of the moment, which tests change
// while the server runs.
func (s *testServer) config() *ssh.ServerConfig {
	s.mu.Lock()
	keys, extra, keyboardOnly := slices.Clone(s.keys), slices.Clone(s.extraHostKeys), s.keyboardOnly
	s.mu.Unlock()
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if c.User() == testUser && string(pw) == s.password {
				return nil, nil
			}
			return nil, errRefused
		},
		PublicKeyCallback: func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			for _, k := range keys {
				if c.User() == testUser && string(k.Marshal()) == string(key.Marshal()) {
					return nil, nil
				}
			}
			return nil, errRefused
		},
	}
	if keyboardOnly {
		cfg.PasswordCallback = nil
		cfg.KeyboardInteractiveCallback = func(c ssh.ConnMetadata, ask ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			answers, err := ask(c.User(), "", []string{"Password: "}, []bool{false})
			if err == nil && c.User() == testUser && len(answers) == 1 && answers[0] == s.password {
				return nil, nil
			}
			return nil, errRefused
		}
	}
	cfg.AddHostKey(s.hostKey)
	for _, k := range extra {
		cfg.AddHostKey(k)
	}
	return cfg
}

var errRefused = &refusedError{}

type refusedError struct{}

func (*refusedError) Error() string { return "refused" }

func (s *testServer) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go s.serve(s.config(), &dropConn{Conn: nc, limit: s.dropAfter.Load()})
	}
}

func (s *testServer) serve(cfg *ssh.ServerConfig, nc net.Conn) {
	defer s.wg.Done()
	defer nc.Close()
	// Closing the server closes its connections, so that a stalled handler cannot outlive it.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-s.done:
			nc.Close()
		case <-stop:
		}
	}()
	conn, chans, reqs, err := ssh.NewServerConn(nc, cfg)
	if err != nil {
		return
	}
	defer conn.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Add(1)
	go func() { defer wg.Done(); ssh.DiscardRequests(reqs) }()
	for nch := range chans {
		if nch.ChannelType() != "session" {
			_ = nch.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, creqs, err := nch.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ch.Close()
			for req := range creqs {
				ok := req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp"
				_ = req.Reply(ok, nil)
				if !ok {
					continue
				}
				rs := sftp.NewRequestServer(ch, sftp.Handlers{FileGet: s.fs.FileGet, FilePut: s, FileCmd: s, FileList: s.fs.FileList})
				_ = rs.Serve()
				rs.Close()
				ch.Close()
			}
		}()
	}
}

// Filewrite records the creation of a file and hands the write to the in-memory file system.
func (s *testServer) Filewrite(r *sftp.Request) (io.WriterAt, error) {
	s.record("create " + path.Base(r.Filepath))
	w, err := s.fs.FilePut.Filewrite(r)
	if err != nil {
		return nil, err
	}
	return stallWriter{w, s}, nil
}

// Filecmd records renames and removals and hands them to the in-memory file system.
func (s *testServer) Filecmd(r *sftp.Request) error {
	switch r.Method {
	case "Rename", "PosixRename":
		s.record("rename " + path.Base(r.Filepath) + " " + path.Base(r.Target))
		s.mu.Lock()
		refuse := s.refuseRename != "" && strings.HasPrefix(path.Base(r.Filepath), s.refuseRename)
		s.mu.Unlock()
		if refuse {
			return os.ErrPermission
		}
	case "Remove":
		s.record("remove " + path.Base(r.Filepath))
	}
	return s.fs.FileCmd.Filecmd(r)
}

type stallWriter struct {
	io.WriterAt
	s *testServer
}

func (w stallWriter) WriteAt(b []byte, off int64) (int, error) {
	if w.s.stall.Load() {
		<-w.s.done
		return 0, io.ErrClosedPipe
	}
	if w.s.failWrite.Load() {
		return 0, syscall.ENOSPC
	}
	if w.s.discard.Load() {
		return len(b), nil
	}
	return w.WriterAt.WriteAt(b, off)
}

func (s *testServer) record(op string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ops = append(s.ops, op)
}

func (s *testServer) operations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ops...)
}

// put places a file in the remote directory, as if another uploader had left it there.
func (s *testServer) put(name string, body []byte) {
	s.t.Helper()
	r := sftp.NewRequest("Put", path.Join(s.dir, name))
	r.Flags = 0x08 | 0x02 // SSH_FXF_CREAT | SSH_FXF_WRITE
	w, err := s.fs.FilePut.Filewrite(r)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := w.WriteAt(body, 0); err != nil {
		s.t.Fatal(err)
	}
}

// remove deletes a file from the remote directory.
func (s *testServer) remove(name string) {
	s.t.Helper()
	if err := s.fs.FileCmd.Filecmd(sftp.NewRequest("Remove", path.Join(s.dir, name))); err != nil {
		s.t.Fatal(err)
	}
}

// files returns every file in the remote directory by name.
func (s *testServer) files() map[string][]byte {
	s.t.Helper()
	l, err := s.fs.FileList.Filelist(sftp.NewRequest("List", s.dir))
	if err != nil {
		s.t.Fatal(err)
	}
	infos := make([]os.FileInfo, 100)
	n, err := l.ListAt(infos, 0)
	if err != nil && err != io.EOF {
		s.t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, fi := range infos[:n] {
		r := sftp.NewRequest("Get", path.Join(s.dir, fi.Name()))
		r.Flags = 0x01 // SSH_FXF_READ
		ra, err := s.fs.FileGet.Fileread(r)
		if err != nil {
			s.t.Fatal(err)
		}
		b := make([]byte, fi.Size())
		if _, err := ra.ReadAt(b, 0); err != nil && err != io.EOF {
			s.t.Fatal(err)
		}
		out[fi.Name()] = b
	}
	return out
}

func (s *testServer) names() []string {
	var names []string
	for n := range s.files() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// dropConn closes the connection once the server has read limit bytes from the client: the
// fault of a link that dies in the middle of an upload.
type dropConn struct {
	net.Conn
	limit int64
	read  int64
}

func (c *dropConn) Read(b []byte) (int, error) {
	if c.limit > 0 && c.read >= c.limit {
		c.Conn.Close()
		return 0, io.ErrUnexpectedEOF
	}
	n, err := c.Conn.Read(b)
	c.read += int64(n)
	return n, err
}

// newClientKey writes a fresh unencrypted ed25519 key in OpenSSH form and returns its file and
// public key; with a passphrase the file is encrypted.
func newClientKey(t *testing.T, passphrase string) (string, ssh.PublicKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var block *pem.Block
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "test")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "test", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return file, sshPub
}

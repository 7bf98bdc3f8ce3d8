// Package sftpd is the sandbox's SFTP server: the transport by which the Advisor service
// receives bulk files (clients-<UTC timestamp>.jsonl and people-<UTC timestamp>.jsonl). It
// serves one directory to one user over SSH, and hands a bulk file to a callback once the
// file is complete: when its writer closes it, or when it is renamed to its name. What
// becomes of the file is the callback's business.
//
// It imports nothing of the gateway, like the sandbox it belongs to.
package sftpd

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Defaults of Config.
const (
	// DefaultAddr is where the sandbox's SFTP server listens unless told otherwise, and where
	// the embedded sandbox's does when the address is free.
	DefaultAddr             = "127.0.0.1:2222"
	DefaultMaxConns         = 32
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultIdleTimeout      = 5 * time.Minute
)

// Config configures a Server.
type Config struct {
	// Dir is the user's root: everything the user sees and writes is in it. New makes it.
	Dir string
	// HostKeyFile holds the server's private host key. New makes an ed25519 key there when
	// the file does not exist, and refuses one it cannot read. It must be outside Dir.
	HostKeyFile string
	// User and Password are the one login. An empty Password turns password logins off.
	User, Password string
	// AuthorizedKeysFile, when set, lists public keys (authorized_keys format) that log in as
	// User without the password.
	AuthorizedKeysFile string
	// OnFile receives each bulk file once it is complete. It runs before the client's close or
	// rename is answered, so a client whose close succeeded knows the file was handed over;
	// it should queue long work rather than do it. Calls may come from several connections at
	// once.
	OnFile func(File)
	// Logger receives connections, failed logins (never a password) and errors. Nil: nothing.
	Logger *slog.Logger
	// MaxConns bounds the connections served at once; more wait in the listen queue. Zero
	// means DefaultMaxConns.
	MaxConns int
	// HandshakeTimeout bounds the SSH handshake and login. Zero means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection on which nothing was read or written for that long, so
	// an abandoned client does not hold its descriptors. Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Server is an SFTP server. It holds no connection or goroutine between calls to Serve.
type Server struct {
	cfg         Config
	ssh         *ssh.ServerConfig
	fingerprint string
	log         *slog.Logger
	// open is shared by every Serve, so that a file is not complete while a writer on any
	// listener still has it open.
	open *openFiles
}

// New checks cfg, makes the root directory and reads or makes the host key.
func New(cfg Config) (*Server, error) {
	if cfg.Dir == "" || cfg.HostKeyFile == "" {
		return nil, errors.New("sftp: a root directory and a host key file are required")
	}
	if cfg.User == "" {
		return nil, errors.New("sftp: a user is required")
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var keys [][]byte
	if cfg.AuthorizedKeysFile != "" {
		var err error
		if keys, err = readAuthorizedKeys(cfg.AuthorizedKeysFile); err != nil {
			return nil, err
		}
	}
	if cfg.Password == "" && len(keys) == 0 {
		return nil, errors.New("sftp: a password or an authorized key is required")
	}
	// Absolute, so that File.Path still names the file if the process changes directory.
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("the SFTP root %s: %w", cfg.Dir, err)
	}
	cfg.Dir = dir
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("make the SFTP root %s: %w", cfg.Dir, err)
	}
	hostKey, err := loadHostKey(cfg.HostKeyFile)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, fingerprint: ssh.FingerprintSHA256(hostKey.PublicKey()), open: newOpenFiles()}
	s.ssh = &ssh.ServerConfig{
		AuthLogCallback: func(md ssh.ConnMetadata, method string, err error) {
			// "none" is every client's first probe for the methods on offer, not a failure.
			if err != nil && method != "none" {
				log.Warn("sftp login failed", "user", md.User(), "method", method, "remote", md.RemoteAddr().String())
			}
		},
		ServerVersion: "SSH-2.0-AdvisorSandbox",
	}
	if cfg.Password != "" {
		// One reply for a wrong user and a wrong password, and both compared in full: the
		// answer and its timing tell nothing about which was wrong.
		s.ssh.PasswordCallback = func(md ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			userOK := subtle.ConstantTimeCompare([]byte(md.User()), []byte(cfg.User))
			passOK := subtle.ConstantTimeCompare(pw, []byte(cfg.Password))
			if userOK&passOK == 1 {
				return nil, nil
			}
			return nil, errors.New("wrong user or password")
		}
	}
	if len(keys) > 0 {
		s.ssh.PublicKeyCallback = func(md ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			wire := key.Marshal()
			ok := subtle.ConstantTimeCompare([]byte(md.User()), []byte(cfg.User)) == 1
			for _, k := range keys {
				if bytes.Equal(k, wire) && ok {
					return nil, nil
				}
			}
			return nil, errors.New("unknown public key")
		}
	}
	s.ssh.AddHostKey(hostKey)
	return s, nil
}

// readAuthorizedKeys reads the public keys of an authorized_keys file, one per line, with
// blank lines and # comments. A line that is not a key is refused with its number rather than
// skipped, and so are options such as from=, which this server would not honour.
func readAuthorizedKeys(path string) ([][]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the SFTP authorized keys: %w", err)
	}
	var keys [][]byte
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		key, _, options, _, err := ssh.ParseAuthorizedKey(line)
		if err != nil {
			return nil, fmt.Errorf("the SFTP authorized keys %s, line %d: %w", path, i+1, err)
		}
		if len(options) > 0 {
			return nil, fmt.Errorf("the SFTP authorized keys %s, line %d: key options such as %q are not supported", path, i+1, options[0])
		}
		keys = append(keys, key.Marshal())
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("the SFTP authorized keys %s: no key in the file", path)
	}
	return keys, nil
}

// Fingerprint is the host key's SHA256 fingerprint, as ssh-keygen -l prints it
// ("SHA256:..."), for clients to pin.
func (s *Server) Fingerprint() string { return s.fingerprint }

// Serve accepts connections on ln until ctx ends or ln fails, then closes ln, ends every
// connection and returns once all of them and their goroutines are gone. It returns nil when
// ctx ended it. Serve may run on several listeners at once, and again after it returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer ln.Close()
	root, err := os.OpenRoot(s.cfg.Dir)
	if err != nil {
		return fmt.Errorf("open the SFTP root: %w", err)
	}
	defer root.Close()
	fs := &files{root: root, dir: s.cfg.Dir, onFile: s.cfg.OnFile, openFiles: s.open}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // before the wait: it ends the connections
	slots := make(chan struct{}, s.cfg.MaxConns)
	var backoff time.Duration
	for {
		// A slot before Accept: beyond the cap, connections wait in the listen queue.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		conn, err := ln.Accept()
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of descriptors, most likely: wait for connections to end, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Error("sftp accept", "err", err, "retry in", backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		backoff = 0
		wg.Go(func() {
			defer func() { <-slots }()
			s.serveConn(ctx, conn, fs)
		})
	}
}

// serveConn runs one connection to its end, which comes when the client leaves, the
// connection idles or breaks, or ctx ends; its goroutines end with it.
func (s *Server) serveConn(ctx context.Context, nc net.Conn, fs *files) {
	ic := &idleConn{Conn: nc, idle: s.cfg.IdleTimeout}
	defer ic.Close()
	// Closing the socket is what unblocks every reader and writer of the connection.
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()
	remote := nc.RemoteAddr().String()

	_ = nc.SetDeadline(time.Now().Add(s.cfg.HandshakeTimeout))
	sconn, chans, reqs, err := ssh.NewServerConn(ic, s.ssh)
	if err != nil {
		s.log.Info("sftp handshake failed", "remote", remote, "err", err)
		return
	}
	defer sconn.Close()
	// From here the connection lives while it is used; a read already waiting keeps the
	// handshake's deadline unless it is replaced here.
	ic.armed.Store(true)
	_ = nc.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
	_ = nc.SetWriteDeadline(time.Time{})
	s.log.Info("sftp login", "user", sconn.User(), "remote", remote)

	var wg sync.WaitGroup
	// Global requests (keepalives among them) must be answered or the connection stalls; the
	// channel closes when the connection ends.
	wg.Go(func() { ssh.DiscardRequests(reqs) })
	for nch := range chans {
		if nch.ChannelType() != "session" {
			_ = nch.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		ch, creqs, err := nch.Accept()
		if err != nil {
			continue
		}
		wg.Go(func() { s.serveSession(ch, creqs, fs, &wg) })
	}
	// chans closes when the connection has ended; closing makes sure its channels have too, so
	// the sessions below return.
	_ = sconn.Close()
	wg.Wait()
	s.log.Info("sftp connection closed", "user", sconn.User(), "remote", remote)
}

// serveSession answers a session's requests: the sftp subsystem and nothing else, no shell
// and no commands. The requests channel is read to its end (when the channel closes), as
// x/crypto/ssh needs.
func (s *Server) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request, fs *files, wg *sync.WaitGroup) {
	defer ch.Close()
	started := false
	for req := range reqs {
		ok := !started && req.Type == "subsystem" && isSFTP(req.Payload)
		if req.WantReply {
			_ = req.Reply(ok, nil)
		}
		if !ok {
			continue
		}
		started = true
		wg.Go(func() {
			rs := sftp.NewRequestServer(ch, fs.handlers())
			if err := rs.Serve(); err != nil && !isEnd(err) {
				s.log.Info("sftp session ended", "err", err)
			}
			// Closes the channel, which ends reqs and so the loop above.
			_ = rs.Close()
		})
	}
}

// isSFTP reports whether a subsystem request's payload (an SSH string) names "sftp".
func isSFTP(payload []byte) bool {
	return len(payload) == 4+len("sftp") && string(payload[4:]) == "sftp" &&
		payload[0] == 0 && payload[1] == 0 && payload[2] == 0 && payload[3] == byte(len("sftp"))
}

// isEnd reports whether err is a connection's ordinary end: the client left, idled or was cut
// off.
func isEnd(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, net.ErrClosed)
}

// idleConn is a connection that times out when nothing was read or written for idle, once
// armed after the handshake (which has its own, absolute deadline).
type idleConn struct {
	net.Conn
	idle  time.Duration
	armed atomic.Bool
}

func (c *idleConn) Read(p []byte) (int, error) {
	if c.armed.Load() {
		_ = c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	}
	return c.Conn.Read(p)
}

func (c *idleConn) Write(p []byte) (int, error) {
	if c.armed.Load() {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	}
	return c.Conn.Write(p)
}

// Package sftpd is the sandbox's SFTP server: the transport by which the Advisor service
// receives bulk files (clients-<UTC timestamp>.jsonl and people-<UTC timestamp>.jsonl). It
// serves each user its own directory over SSH, and hands a bulk file to a callback once the
// file is complete: when its writer closes it, or when it is renamed to its name. What
// becomes of the file is the callback's business.
//
// It imports nothing of the gateway, like the sandbox it belongs to.
package sftpd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
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
	DefaultMaxConnsPerUser  = 8
	DefaultMaxPreAuthConns  = 128
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultIdleTimeout      = 5 * time.Minute

	DefaultMaxLoginFailures   = 10
	DefaultLoginFailureWindow = time.Minute
	DefaultLoginBlock         = 5 * time.Minute

	DefaultQuota       int64 = 256 << 20
	DefaultMaxFileSize int64 = 128 << 20

	DefaultPartMaxAge = 24 * time.Hour
)

// Config configures a Server.
type Config struct {
	// Dir holds the users' roots: Dir/<Name> for each of Users, or Dir itself for the one
	// user of the shorthand User. New makes them.
	Dir string
	// HostKeyFile holds the server's private host key. New makes an ed25519 key there when
	// the file does not exist, and refuses one it cannot read. It must be outside Dir.
	HostKeyFile string
	// Users are the logins, each jailed in its own root Dir/<Name>. Set either Users or the
	// one-user shorthand below.
	Users []User
	// User and Password are the one login of the shorthand, whose root is Dir itself (as
	// before there were Users, so that its files stay where they were). An empty Password
	// turns password logins off. User's name is not checked as a directory's name would be.
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
	// MaxConns bounds the logged-in connections served at once; a login beyond it waits for
	// one to end, holding its place among the MaxPreAuthConns. Zero means DefaultMaxConns.
	MaxConns int
	// MaxConnsPerUser bounds each user's logged-in connections, so that one user (one firm)
	// cannot take all of MaxConns; a login beyond it is closed at once. Zero means
	// DefaultMaxConnsPerUser.
	MaxConnsPerUser int
	// MaxPreAuthConns bounds the connections that have not yet logged in (or wait for one of
	// the MaxConns), separately from MaxConns, so that silent connections do not keep
	// logged-in users out; more wait in the listen queue. Each is cut off after
	// HandshakeTimeout. Zero means DefaultMaxPreAuthConns.
	MaxPreAuthConns int
	// HandshakeTimeout bounds the SSH handshake and login. Zero means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection on which nothing was read or written for that long, so
	// an abandoned client does not hold its descriptors. Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxLoginFailures wrong passwords from one address (an IPv4 address or an IPv6 /64)
	// within LoginFailureWindow block that address for LoginBlock: its connections are closed
	// as they arrive and its logins refused, even with the right password. Unknown public
	// keys are not counted. Zero means DefaultMaxLoginFailures; negative turns the throttle
	// off. At most 4096 addresses are remembered; beyond that the oldest are forgotten.
	MaxLoginFailures int
	// LoginFailureWindow: zero means DefaultLoginFailureWindow.
	LoginFailureWindow time.Duration
	// LoginBlock: zero means DefaultLoginBlock.
	LoginBlock time.Duration
	// Quota bounds the bytes each user keeps in its root, counting each file and directory as
	// its size plus 4 KiB (so that empty files cannot exhaust the disk's inodes). A write,
	// truncation, file or directory beyond it fails with an SFTP failure whose message says
	// so, and a file whose write failed is removed. Zero means DefaultQuota; negative turns
	// it off.
	Quota int64
	// MaxFileSize bounds each file's size, as Quota does. Zero means DefaultMaxFileSize;
	// negative turns it off.
	MaxFileSize int64
	// PartMaxAge is the age (by modification time) beyond which a ".part" file that nobody
	// has open is removed as abandoned. Serve sweeps every user's root when it starts and
	// every PartMaxAge/4 (at most hourly) while it serves. A ".part" file whose writer's
	// connection broke off with it open is removed at once. Zero means DefaultPartMaxAge.
	PartMaxAge time.Duration
	// Now is the clock of the login throttle and of the ".part" files' ages. Nil: time.Now.
	Now func() time.Time
}

// Server is an SFTP server. It holds no connection or goroutine between calls to Serve.
type Server struct {
	cfg         Config
	ssh         *ssh.ServerConfig
	fingerprint string
	log         *slog.Logger
	accounts    []*account
	throttle    *throttle
}

// New checks cfg, makes the users' roots and reads or makes the host key.
func New(cfg Config) (*Server, error) {
	if cfg.Dir == "" || cfg.HostKeyFile == "" {
		return nil, errors.New("sftp: a root directory and a host key file are required")
	}
	for _, d := range []struct {
		v   *int
		def int
	}{
		{&cfg.MaxConns, DefaultMaxConns}, {&cfg.MaxConnsPerUser, DefaultMaxConnsPerUser},
		{&cfg.MaxPreAuthConns, DefaultMaxPreAuthConns},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&cfg.HandshakeTimeout, DefaultHandshakeTimeout}, {&cfg.IdleTimeout, DefaultIdleTimeout},
		{&cfg.LoginFailureWindow, DefaultLoginFailureWindow}, {&cfg.LoginBlock, DefaultLoginBlock},
		{&cfg.PartMaxAge, DefaultPartMaxAge},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if cfg.MaxLoginFailures == 0 {
		cfg.MaxLoginFailures = DefaultMaxLoginFailures
	}
	if cfg.Quota == 0 {
		cfg.Quota = DefaultQuota
	}
	if cfg.MaxFileSize == 0 {
		cfg.MaxFileSize = DefaultMaxFileSize
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("the SFTP root %s: %w", cfg.Dir, err)
	}
	cfg.Dir = dir
	if hk, err := filepath.Abs(cfg.HostKeyFile); err == nil {
		if r, err := filepath.Rel(dir, hk); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("sftp: the host key %s is inside the SFTP root %s, where users could read it", cfg.HostKeyFile, dir)
		}
	}
	accts, err := accounts(cfg, dir)
	if err != nil {
		return nil, err
	}
	for _, a := range accts {
		if err := os.MkdirAll(a.dir, 0o750); err != nil {
			return nil, fmt.Errorf("make the SFTP root %s: %w", a.dir, err)
		}
	}
	hostKey, err := loadHostKey(cfg.HostKeyFile)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, log: log, fingerprint: ssh.FingerprintSHA256(hostKey.PublicKey()), accounts: accts,
		throttle: newThrottle(cfg.MaxLoginFailures, cfg.LoginFailureWindow, cfg.LoginBlock, cfg.Now, log),
	}
	s.ssh = &ssh.ServerConfig{
		AuthLogCallback: func(md ssh.ConnMetadata, method string, err error) {
			// "none" is every client's first probe for the methods on offer, not a failure.
			if err != nil && method != "none" {
				log.Warn("sftp login failed", "user", md.User(), "method", method, "remote", md.RemoteAddr().String())
			}
		},
		ServerVersion: "SSH-2.0-AdvisorSandbox",
	}
	for _, a := range accts {
		if len(a.password) > 0 {
			s.ssh.PasswordCallback = s.checkPassword
		}
		if len(a.keys) > 0 {
			s.ssh.PublicKeyCallback = s.checkKey
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
	roots := make(map[string]*files, len(s.accounts))
	for _, a := range s.accounts {
		root, err := os.OpenRoot(a.dir)
		if err != nil {
			return fmt.Errorf("open the SFTP root of %s: %w", a.name, err)
		}
		defer root.Close()
		roots[a.name] = &files{root: root, acct: a, cfg: &s.cfg, onFile: s.cfg.OnFile, userState: a.state}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = ln.Close() })
	defer stop()

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // before the wait: it ends the connections and the sweeper
	// Abandoned uploads of an earlier run are swept before the first login.
	s.sweep(roots)
	wg.Go(func() { s.sweepEvery(ctx, roots) })

	preAuth := make(chan struct{}, s.cfg.MaxPreAuthConns)
	sessions := make(chan struct{}, s.cfg.MaxConns)
	var backoff time.Duration
	for {
		// A slot before Accept: beyond the cap, connections wait in the listen queue.
		select {
		case preAuth <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		conn, err := ln.Accept()
		if err != nil {
			<-preAuth
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
		// A blocked address costs no handshake: the key exchange is the expensive part.
		if s.throttle.blocked(conn.RemoteAddr()) {
			_ = conn.Close()
			<-preAuth
			continue
		}
		wg.Go(func() { s.serveConn(ctx, conn, roots, preAuth, sessions) })
	}
}

// serveConn runs one connection to its end, which comes when the client leaves, the
// connection idles or breaks, or ctx ends; its goroutines end with it. It holds a place in
// preAuth until it has logged in and has a place in sessions.
func (s *Server) serveConn(ctx context.Context, nc net.Conn, roots map[string]*files, preAuth, sessions chan struct{}) {
	inPreAuth := true
	defer func() {
		if inPreAuth {
			<-preAuth
		}
	}()
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
	// From here the connection lives while it is used; a read already waiting keeps the
	// handshake's deadline unless it is replaced here.
	ic.armed.Store(true)
	_ = nc.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
	_ = nc.SetWriteDeadline(time.Time{})
	fs := roots[sconn.Permissions.Extensions[permUser]]
	var wg sync.WaitGroup
	defer wg.Wait()
	defer sconn.Close() // before the wait: it ends the goroutines below
	// Cannot happen: every login names an account.
	if fs == nil {
		s.log.Error("sftp login without an account", "user", sconn.User(), "remote", remote)
		return
	}
	// Global requests (keepalives among them) must be answered or the connection stalls; the
	// channel closes when the connection ends.
	wg.Go(func() { ssh.DiscardRequests(reqs) })
	if n := fs.conns.Add(1); n > int64(s.cfg.MaxConnsPerUser) {
		fs.conns.Add(-1)
		s.log.Warn("sftp login refused: the user has too many connections", "user", sconn.User(), "remote", remote, "max", s.cfg.MaxConnsPerUser)
		return
	}
	defer fs.conns.Add(-1)
	gone := make(chan struct{})
	wg.Go(func() { _ = sconn.Wait(); close(gone) })
	select {
	case sessions <- struct{}{}:
	case <-gone:
		return
	case <-ctx.Done():
		return
	}
	defer func() { <-sessions }()
	<-preAuth
	inPreAuth = false
	s.log.Info("sftp login", "user", sconn.User(), "remote", remote)

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

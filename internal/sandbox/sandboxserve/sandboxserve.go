// Package sandboxserve puts the sandbox on the network: its HTTP interface, its SFTP server and
// its mutual-TLS session host, each on a listener, served until a context ends. Both the
// `sandbox` command and the gateway's embedded sandbox use it; like the sandbox it imports
// nothing of the gateway.
package sandboxserve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/advisorhq/gateway/internal/graceful"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// Servers are the sandbox's three interfaces, each with its listener.
type Servers struct {
	Sandbox         *sandbox.Sandbox
	HTTP            net.Listener
	SFTP            *sftpd.Server
	SFTPListener    net.Listener
	Sessions        *sandbox.SessionHost
	SessionListener net.Listener
}

// ListenSessionHost makes the sandbox's session host of env and its listener: on addr, or,
// unless exact, on a free loopback port when addr is taken.
func ListenSessionHost(sb *sandbox.Sandbox, env, addr string, exact bool) (*sandbox.SessionHost, net.Listener, error) {
	h, err := sb.SessionHost(env)
	if err != nil {
		return nil, nil, fmt.Errorf("start the sandbox's session host: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && !exact {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listen on -session-addr %s: %w", addr, err)
	}
	return h, ln, nil
}

// ListenSFTP makes the sandbox's SFTP server and its listener: on addr, or, unless exact (an
// address the user asked for), on a free loopback port when addr is taken.
func ListenSFTP(sb *sandbox.Sandbox, addr string, exact bool) (*sftpd.Server, net.Listener, error) {
	srv, err := sb.SFTP()
	if err != nil {
		return nil, nil, fmt.Errorf("start the sandbox's SFTP server: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && !exact {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listen on -sftp-addr %s: %w", addr, err)
	}
	return srv, ln, nil
}

// Serve serves the sandbox's HTTP interface, its SFTP server and its session host until ctx
// ends, and returns once all three have stopped.
func (s Servers) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sftpDone, sessionsDone := make(chan error, 1), make(chan error, 1)
	go func() { sftpDone <- s.SFTP.Serve(ctx, s.SFTPListener) }()
	go func() { sessionsDone <- s.Sessions.Serve(ctx, s.SessionListener) }()
	err := graceful.Serve(ctx, httpServer(s.Sandbox), s.HTTP)
	cancel()
	if serr := <-sftpDone; serr != nil && err == nil {
		err = fmt.Errorf("serve SFTP: %w", serr)
	}
	if serr := <-sessionsDone; serr != nil && err == nil {
		err = fmt.Errorf("serve the session host: %w", serr)
	}
	return err
}

// httpServer serves the sandbox. There is no read or write timeout: an upload of a large file
// takes as long as it takes, as it would at the real upload host.
func httpServer(sb *sandbox.Sandbox) *http.Server {
	return &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
}

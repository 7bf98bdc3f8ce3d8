package sandbox

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"time"
	"unicode/utf8"
)

// StatusHTTP2Required is what the session host answers a client that does not speak HTTP/2,
// before anything else, as the spec's load balancer does.
const StatusHTTP2Required = 464

// DefaultSessionAddr is where the session host listens unless told otherwise.
const DefaultSessionAddr = "127.0.0.1:9443"

// maxSessionBody bounds a mint request; a real one is under 200 bytes.
const maxSessionBody = 16 << 10

// SessionHost is the sandbox's session-token host: HTTPS on its own listener with client
// certificates of one environment's CA required (mutual TLS), HTTP/2 only. It mints the session
// tokens the chat page accepts.
type SessionHost struct {
	// Env is the environment it serves; only client certificates of its CA are accepted.
	Env string
	// Dir holds the environments' CAs: `sandbox enroll -file-dir` with it issues certificates
	// this host accepts.
	Dir string

	ca  *authority
	srv *http.Server
}

// SessionHost makes the session host of env, with its CA kept in the sandbox's file directory.
func (s *Sandbox) SessionHost(env string) (*SessionHost, error) {
	ca, err := loadAuthority(s.files.dir, env)
	if err != nil {
		return nil, fmt.Errorf("the session host's CA: %w", err)
	}
	now := time.Now()
	cert, err := ca.issue("Advisor sandbox session host", []string{"127.0.0.1", "::1", "localhost"}, false, now.Add(-time.Hour), now.Add(DefaultClientCertTTL))
	if err != nil {
		return nil, fmt.Errorf("the session host's certificate: %w", err)
	}
	errLog := log.New(io.Discard, "", 0)
	if s.opts.Logger != nil {
		// Refused handshakes (no certificate, another environment's) are the client's
		// business; the server says so at debug.
		errLog = slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelDebug)
	}
	h := &SessionHost{Env: env, Dir: s.files.dir, ca: ca}
	h.srv = &http.Server{
		Handler: s.sessionHandler(),
		TLSConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    ca.pool(),
			// http/1.1 is offered so that such a client gets 464 rather than a handshake error.
			NextProtos: []string{"h2", "http/1.1"},
		},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          errLog,
	}
	return h, nil
}

// Enroll issues a client certificate of the host's environment, valid for a year: how the
// embedded sandbox enrolls the gateway that runs it.
func (h *SessionHost) Enroll(name string) (Enrollment, error) {
	now := time.Now()
	return h.ca.enroll(name, now.Add(-time.Hour), now.Add(DefaultClientCertTTL))
}

// Serve serves the host on ln until ctx ends, then gives requests in flight a few seconds.
func (h *SessionHost) Serve(ctx context.Context, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- h.srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.srv.Shutdown(shutdownCtx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// mintRequest is POST /v1/assistant/auth's body, as the project's spec README settles it.
type mintRequest struct {
	Advisor *externalRef `json:"advisor"`
	Firm    *externalRef `json:"firm"`
}

type externalRef struct {
	ExternalID *string `json:"external_id"`
}

// sessionHandler serves the session host's paths.
func (s *Sandbox) sessionHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.opts.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		s.routeSession(rec, r)
		if s.opts.Logger != nil {
			s.opts.Logger.Info("sandbox session request", "method", r.Method, "path", r.URL.Path, "proto", r.Proto,
				"status", rec.status, "duration", s.opts.Now().Sub(start))
		}
	})
}

func (s *Sandbox) routeSession(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 2 {
		writeError(w, StatusHTTP2Required, "HTTP/2 is required")
		return
	}
	switch r.URL.Path {
	case "/healthz":
		methods(w, r, handlers{http.MethodGet: func() (any, *apiError) { return map[string]string{"status": "ok"}, nil }})
	case "/v1/assistant/auth":
		methods(w, r, handlers{http.MethodPost: func() (any, *apiError) { return s.mintSession(r) }})
	default:
		writeError(w, http.StatusNotFound, "Not Found")
	}
}

// mintSession answers a mint request with a session token for the advisor at the firm.
func (s *Sandbox) mintSession(r *http.Request) (any, *apiError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxSessionBody+1))
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "The request body could not be read")
	}
	if len(body) > maxSessionBody {
		return nil, errorf(http.StatusRequestEntityTooLarge, fmt.Sprintf("The request body is larger than %d bytes", maxSessionBody))
	}
	var req mintRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, errorf(http.StatusBadRequest, `The body must be {"advisor": {"external_id": "..."}, "firm": {"external_id": "..."}}: `+jsonProblem(err))
	}
	ids := [2]string{}
	for i, f := range []struct {
		name string
		ref  *externalRef
	}{{"advisor", req.Advisor}, {"firm", req.Firm}} {
		switch {
		case f.ref == nil || f.ref.ExternalID == nil || *f.ref.ExternalID == "":
			return nil, errorf(http.StatusBadRequest, f.name+".external_id is required")
		case utf8.RuneCountInString(*f.ref.ExternalID) > maxTokenID:
			return nil, errorf(http.StatusBadRequest, fmt.Sprintf("%s.external_id must be at most %d characters", f.name, maxTokenID))
		}
		ids[i] = *f.ref.ExternalID
	}
	token, sess, _ := s.sessions.mint(ids[0], ids[1])
	return map[string]string{"token": token, "expires_at": sess.ExpiresAt.UTC().Format(time.RFC3339)}, nil
}

// jsonProblem says what is wrong with a body in words that do not quote it.
func jsonProblem(err error) string {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "it is not JSON"
	case errors.As(err, &typ):
		return typ.Field + " has the wrong type"
	}
	return err.Error()
}

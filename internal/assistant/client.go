// Package assistant mints the chat assistant's session tokens for signed-in advisors: the call
// to the session host (POST {session_url}/v1/assistant/auth) over mutual TLS and HTTP/2, its
// health check on the same connection, and the host's answers as the gateway's error codes.
// A session token is a credential: it never appears in a log, an error or a URL.
package assistant

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/tracing"
)

// DefaultTimeout bounds one call to the session host.
const DefaultTimeout = 10 * time.Second

// StatusHTTP2Required is the session host's answer to a client that does not speak HTTP/2.
const StatusHTTP2Required = 464

// maxAnswer bounds what is read of an answer: a token and a time are far smaller.
const maxAnswer = 16 << 10

// maxID bounds an advisor or firm external id, as the spec's ids are bounded.
const maxID = 255

// Session is a minted session token.
type Session struct {
	Token     string
	ExpiresAt time.Time
}

// String keeps the token out of anything that prints a Session.
func (s Session) String() string {
	return "assistant session until " + s.ExpiresAt.Format(time.RFC3339)
}

// Options configure a Client.
type Options struct {
	// URL is the session host (ASSISTANT_SESSION_URL), https.
	URL string
	// Certificate is the gateway's enrolled client certificate (ASSISTANT_CLIENT_CERT and
	// ASSISTANT_CLIENT_KEY).
	Certificate tls.Certificate
	// ServerCAs verify the session host's certificate (ASSISTANT_SERVER_CA); nil means the
	// system's roots.
	ServerCAs *x509.CertPool
	// Timeout bounds one call; zero means DefaultTimeout.
	Timeout time.Duration
	// Tracer, when set, makes a client span of every call and sends its traceparent.
	Tracer trace.TracerProvider
}

// Client calls the session host. It speaks only HTTP/2, so every call shares one connection.
type Client struct {
	base string
	// certExpires is when the client certificate runs out: a call after it fails here, saying
	// so, instead of as a refused handshake.
	certExpires time.Time
	now         func() time.Time
	http        *http.Client
	transport   *http.Transport
}

// New returns a client of the session host at opts.URL.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return nil, errors.New("ASSISTANT_SESSION_URL must be an absolute https URL, such as https://session.advisor.example")
	}
	if len(opts.Certificate.Certificate) == 0 {
		return nil, errors.New("the session host needs the gateway's client certificate: set ASSISTANT_CLIENT_CERT and ASSISTANT_CLIENT_KEY")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	protocols := new(http.Protocols)
	protocols.SetHTTP2(true)
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{opts.Certificate},
			RootCAs:      opts.ServerCAs,
		},
		Protocols:           protocols,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 5 * time.Second,
		IdleConnTimeout:     5 * time.Minute,
		// HTTP/2 multiplexes every call over one connection; a second is never needed.
		MaxConnsPerHost: 1,
	}
	leaf := opts.Certificate.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(opts.Certificate.Certificate[0]); err != nil {
			return nil, fmt.Errorf("ASSISTANT_CLIENT_CERT: %w", err)
		}
	}
	return &Client{
		base:        strings.TrimSuffix(opts.URL, "/"),
		certExpires: leaf.NotAfter,
		now:         time.Now,
		transport:   tr,
		http: &http.Client{Transport: tracing.Transport(tr, opts.Tracer), Timeout: opts.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
	}, nil
}

// Close drops the client's idle connection.
func (c *Client) Close() { c.transport.CloseIdleConnections() }

// mintRequest is the mint call's body, as the project's spec README settles it.
type mintRequest struct {
	Advisor ref `json:"advisor"`
	Firm    ref `json:"firm"`
}

type ref struct {
	ExternalID string `json:"external_id"`
}

// Mint asks the session host for a session token of advisorID at firmID. Errors are
// *apperr.Error.
func (c *Client) Mint(ctx context.Context, advisorID, firmID string) (Session, error) {
	for _, id := range []struct{ name, v string }{{"advisor", advisorID}, {"firm", firmID}} {
		if id.v == "" || utf8.RuneCountInString(id.v) > maxID {
			// The ids come from the caller's token, not from the request: a token whose claims
			// the service cannot take is the identity provider's business.
			return Session{}, apperr.New(apperr.Unauthenticated,
				fmt.Sprintf("The caller's %s id must be 1 to %d characters to open an assistant session", id.name, maxID))
		}
	}
	body, _ := json.Marshal(mintRequest{Advisor: ref{advisorID}, Firm: ref{firmID}})
	data, status, err := c.call(ctx, http.MethodPost, "/v1/assistant/auth", body)
	if err != nil {
		return Session{}, err
	}
	if status != http.StatusOK {
		return Session{}, statusError("mint", status, data)
	}
	var ans struct {
		Token     string `json:"token"`
		ExpiresAt string `json:"expires_at"`
	}
	if err := json.Unmarshal(data, &ans); err != nil || ans.Token == "" {
		return Session{}, apperr.Wrap(apperr.UpstreamUnavailable, "The assistant session host's answer is not a session",
			errors.New("mint: the answer has no token"))
	}
	exp, err := time.Parse(time.RFC3339, ans.ExpiresAt)
	if err != nil {
		return Session{}, apperr.Wrap(apperr.UpstreamUnavailable, "The assistant session host's answer is not a session",
			fmt.Errorf("mint: expires_at %q is not an RFC 3339 time", truncate(ans.ExpiresAt, 40)))
	}
	return Session{Token: ans.Token, ExpiresAt: exp}, nil
}

// Health asks the session host's /healthz, on the connection the mint calls use.
func (c *Client) Health(ctx context.Context) error {
	data, status, err := c.call(ctx, http.MethodGet, "/healthz", nil)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return statusError("health check", status, data)
	}
	return nil
}

func (c *Client) call(ctx context.Context, method, path string, body []byte) ([]byte, int, error) {
	if c.now().After(c.certExpires) {
		return nil, 0, apperr.New(apperr.UpstreamUnavailable, fmt.Sprintf(
			"The gateway's client certificate (ASSISTANT_CLIENT_CERT) expired on %s: enrol again with the session host",
			c.certExpires.UTC().Format(time.RFC3339)))
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, 0, apperr.Wrap(apperr.Internal, "Internal error", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, 0, transportError(ctx, err)
	}
	if len(data) > maxAnswer {
		return nil, 0, apperr.Wrap(apperr.UpstreamUnavailable, "The assistant session host answered with more than a session",
			fmt.Errorf("%s: answer over %d bytes", path, maxAnswer))
	}
	return data, resp.StatusCode, nil
}

// statusError says what the session host's refusals mean. Its body is not quoted to the
// caller: a host that echoed its request could echo ids, and a 200 would carry a token.
func statusError(what string, status int, body []byte) error {
	cause := fmt.Errorf("%s: status %d: %s", what, status, truncate(errorText(status, body), 200))
	switch {
	case status == StatusHTTP2Required:
		return apperr.Wrap(apperr.UpstreamUnavailable, "The assistant session host requires HTTP/2: check ASSISTANT_SESSION_URL (is it the session host?)", cause)
	case status >= 500:
		return apperr.Wrap(apperr.UpstreamUnavailable, "The assistant session host failed to answer", cause)
	}
	return apperr.Wrap(apperr.UpstreamUnavailable, fmt.Sprintf("The assistant session host refused the request with status %d", status), cause)
}

// transportError is the answer that never came, saying which setting to look at.
func transportError(ctx context.Context, err error) error {
	var (
		certErr   *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		recordErr tls.RecordHeaderError
		opErr     *net.OpError
		netErr    net.Error
		cause     = errors.New("session host: " + err.Error())
	)
	msg := "The assistant session host could not be reached: check ASSISTANT_SESSION_URL"
	switch {
	case ctx.Err() != nil:
		msg = "The request was cancelled"
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr):
		msg = "The assistant session host's certificate is not trusted: check ASSISTANT_SERVER_CA and ASSISTANT_SESSION_URL"
	case errors.As(err, &recordErr):
		msg = "The assistant session host does not speak TLS: check ASSISTANT_SESSION_URL"
	case errors.As(err, &netErr) && netErr.Timeout():
		msg = "The assistant session host did not answer in time"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		// Nothing listens there, or nothing is reachable: the address is the thing to check.
	default:
		// Connected, then cut off: how a host refuses a client certificate. In TLS 1.3 it
		// checks the certificate after the client thinks the handshake done, so the refusal
		// arrives as an alert, a reset or an unusable HTTP/2 connection, depending on timing.
		msg = "The assistant session host closed the connection, as it does when it refuses a client certificate: " +
			"check ASSISTANT_CLIENT_CERT (enrolled for the host's environment) and ASSISTANT_SESSION_URL"
	}
	return apperr.Wrap(apperr.UpstreamUnavailable, msg, cause)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// errorText is the message of the session host's error answer, for the log.
func errorText(status int, body []byte) string {
	msg, _ := advisorspec.ReadErrorBody(status, body)
	return msg
}

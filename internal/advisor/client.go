// Package advisor is the typed client of the Advisor REST API. It owns the upstream's
// credentials, turns the service's statuses into the gateway's errors in one place (and the
// service's field names and nouns into the schema's, with words.go's table), retries
// reads that timed out or failed on the service's side, and makes identical reads of one
// GraphQL request once. It also bounds what callers can make it do: a budget of requests per
// operation, a cap on requests in flight for the whole process, and no redirects, which would
// carry the credentials elsewhere.
package advisor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/tenant"
	"github.com/advisorhq/gateway/internal/tracing"
)

// Defaults of Options.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultUploadTimeout = 15 * time.Minute
	DefaultAttempts      = 3
	DefaultBackoff       = 100 * time.Millisecond
	DefaultMaxConcurrent = 64
	// maxResponse bounds what is read of one answer; a family's whole contact list is far less.
	maxResponse = 64 << 20
)

// Options configure a Client.
type Options struct {
	// BaseURL is the service's base address; paths such as /v2/top-accounts/ go below it.
	BaseURL string
	// Firms are the firms the client calls for, each with its own credentials: a call uses
	// those of the firm in its context (tenant.WithFirm) and is refused without one, so no
	// request can reach the service with another firm's credentials, or with none chosen.
	Firms *tenant.Directory
	// AccessToken and BasicCredentials are the one set of credentials of a client without
	// Firms (a tool or a test that speaks for one API user): the bearer token of the v2
	// endpoints and the "user:password" of the v1 endpoints. They are refused beside Firms.
	AccessToken string
	// BasicCredentials: see AccessToken.
	BasicCredentials string
	// Timeout bounds each attempt of an API call.
	Timeout time.Duration
	// UploadTimeout bounds a whole file upload to a presigned address.
	UploadTimeout time.Duration
	// Attempts is how many times a read is tried when it times out or the service fails (5xx).
	// Writes are tried once: a retried write could be applied twice.
	Attempts int
	// Backoff is the wait before the second attempt; it doubles with each one, with jitter.
	Backoff time.Duration
	// HTTPClient makes the requests; nil means a client with sane transport timeouts whose
	// transport opens at most MaxConcurrent connections per host. A given client is copied
	// with redirects turned off (they would carry the credentials to wherever they point); its
	// transport is used as it is.
	HTTPClient *http.Client
	// MaxConcurrent caps the requests in flight at once, to the service and to its upload
	// addresses, across every caller of this Client (the process has one); more wait their
	// turn, in order. 0 means DefaultMaxConcurrent.
	MaxConcurrent int
	// Observe, if set, is told of every request: its operation, the status ("200", "404", or
	// "error" when no answer came) and how long it took.
	Observe func(operation, status string, elapsed time.Duration)
	// Tracer, when set, makes a client span of every request, named by its operation, and
	// sends its traceparent to the service.
	Tracer trace.TracerProvider
}

// Client calls the Advisor REST API. It is safe for concurrent use.
type Client struct {
	base string // without a trailing slash
	// single is the Authorization of a client without firms; firms, of each firm by id.
	single *authorization
	firms  map[string]authorization
	opts   Options
	http   *http.Client
	slots  chan struct{} // one token per request in flight
	scrub  scrubber
}

// New returns a client for the service at opts.BaseURL.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(opts.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.User != nil {
		return nil, errors.New("the Advisor base URL must be an absolute http or https URL without credentials or query")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.UploadTimeout <= 0 {
		opts.UploadTimeout = DefaultUploadTimeout
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = DefaultMaxConcurrent
	}
	if opts.Observe == nil {
		opts.Observe = func(string, string, time.Duration) {}
	}
	hc := &http.Client{Transport: NewTransport(opts.MaxConcurrent)}
	if opts.HTTPClient != nil {
		copied := *opts.HTTPClient // the caller's client keeps its own policy
		hc = &copied
	}
	if opts.Tracer != nil {
		hc.Transport = tracing.Transport(hc.Transport, opts.Tracer)
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c := &Client{
		base:  strings.TrimSuffix(u.String(), "/"),
		opts:  opts,
		http:  hc,
		slots: make(chan struct{}, opts.MaxConcurrent),
	}
	var secrets []string
	if opts.Firms != nil {
		if opts.AccessToken != "" || opts.BasicCredentials != "" {
			return nil, errors.New("give the credentials of each firm, or one set without firms, not both")
		}
		c.firms = map[string]authorization{}
		for _, f := range opts.Firms.Firms() {
			c.firms[f.ID] = newAuthorization(f.AccessToken, f.BasicCredentials)
			secrets = append(secrets, f.AccessToken, f.BasicCredentials)
		}
	} else {
		a := newAuthorization(opts.AccessToken, opts.BasicCredentials)
		c.single = &a
		secrets = append(secrets, opts.AccessToken, opts.BasicCredentials)
	}
	c.scrub = newScrubber(u, secrets...)
	return c, nil
}

// authorization is the Authorization header values of one set of credentials.
type authorization struct{ bearer, basic string }

func newAuthorization(token, basic string) authorization {
	var a authorization
	if token != "" {
		a.bearer = "Bearer " + token
	}
	if basic != "" {
		user, pass, _ := strings.Cut(basic, ":")
		req := http.Request{Header: http.Header{}}
		req.SetBasicAuth(user, pass)
		a.basic = req.Header.Get("Authorization")
	}
	return a
}

// authorizationFor is the credentials a call in ctx uses: its firm's.
func (c *Client) authorizationFor(ctx context.Context) (authorization, error) {
	if c.single != nil {
		return *c.single, nil
	}
	f, ok := tenant.FromContext(ctx)
	if !ok {
		return authorization{}, tenant.ErrNoFirm
	}
	a, ok := c.firms[f.ID]
	if !ok {
		return authorization{}, fmt.Errorf("%s: no credentials: %w", f, tenant.ErrNoFirm)
	}
	return a, nil
}

// BaseURL is the service's base address.
func (c *Client) BaseURL() string { return c.base }

// NewTransport is the transport a client makes when Options.HTTPClient is nil, for a caller
// that wraps it in its own client. It bounds every phase of a connection, so a stuck peer
// cannot hold a request open past its attempt's deadline, and the connections per host to the
// cap on requests in flight, which keeps the gateway's one credential from opening thousands
// of them even if a request escaped the cap.
func NewTransport(maxConns int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 5 * time.Second
	t.MaxConnsPerHost = maxConns
	t.MaxIdleConnsPerHost = min(32, maxConns)
	return t
}

// call is one API operation.
type call struct {
	op     string // the operation's name, for metrics and errors
	method string
	path   string // escaped, below the base URL
	query  url.Values
	body   any  // encoded as JSON; a []byte is sent as it is
	v1     bool // Basic credentials instead of the bearer token
	// created, when set, also takes 201 Created for success and tells it from 200: Add Client
	// answers 201 for a client it added and 200 for one it updated.
	created *bool
}

// path joins escaped path segments; a trailing "" gives the trailing slash the specification
// writes on collection paths.
func path(segments ...string) string {
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// do makes the call and decodes a 200 answer into out (which may be nil). A read is made once
// per request (the request's Cache holds its answer); a write clears the request's Cache,
// whatever its outcome, so what the request reads next sees it.
func (c *Client) do(ctx context.Context, cl call, out any) error {
	var body []byte
	var err error
	if cl.method == http.MethodGet {
		body, err = Memo(ctx, cl.key(ctx), func() ([]byte, error) { return c.roundTrip(ctx, cl) })
	} else {
		body, err = c.roundTrip(ctx, cl)
		Invalidate(ctx)
	}
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := decode(body, out); err != nil {
		return apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service sent an answer the gateway cannot read",
			fmt.Errorf("%s: decode the answer: %w", cl.op, err))
	}
	return nil
}

// readKey is a read's key in the request's Cache.
type readKey string

// The firm is part of it: a cache is one request's, which acts for one firm, but a read of one
// firm must never answer another's even if a cache were shared by mistake.
func (cl call) key(ctx context.Context) readKey {
	firm := ""
	if f, ok := tenant.FromContext(ctx); ok {
		firm = f.ID
	}
	return readKey(firm + "\x00" + cl.path + "?" + cl.query.Encode() + "#" + strconv.FormatBool(cl.v1))
}

// roundTrip makes the call, trying a read again after a timeout or a failure of the service.
// Every attempt is spent from the operation's budget.
func (c *Client) roundTrip(ctx context.Context, cl call) ([]byte, error) {
	if _, err := c.authorizationFor(ctx); err != nil {
		// A path that reached the service without admitting its caller: the gateway's fault,
		// refused before anything is spent or sent.
		return nil, fmt.Errorf("%s: %w", cl.op, err)
	}
	attempts := 1
	if cl.method == http.MethodGet {
		attempts = c.opts.Attempts
	}
	wait := c.opts.Backoff
	var failure error
	for attempt := 1; ; attempt++ {
		if err := spend(ctx, cl.op); err != nil {
			if failure != nil {
				// The retry was a bonus; what the caller needs to know is why the read failed.
				return nil, failure
			}
			return nil, err
		}
		ans, err := c.once(ctx, cl)
		if err == nil && ans.status == http.StatusOK {
			return ans.body, nil
		}
		if err == nil && ans.status == http.StatusCreated && cl.created != nil {
			*cl.created = true
			return ans.body, nil
		}
		if err != nil {
			failure = transportError(ctx, cl.op, cl.method != http.MethodGet, err)
		} else {
			failure = c.statusError(cl, ans)
		}
		retry := attempt < attempts && ctx.Err() == nil && (err != nil || ans.status >= 500)
		if !retry {
			return nil, failure
		}
		// Full jitter keeps retries of many requests from arriving together.
		select {
		case <-time.After(wait/2 + rand.N(wait/2+1)):
		case <-ctx.Done():
			return nil, transportError(ctx, cl.op, false, unsent{ctx.Err()})
		}
		wait *= 2
	}
}

// answer is what came back from one attempt.
type answer struct {
	status   int
	body     []byte
	location string // a redirect's target, for the log only
}

// unsent marks a failure before any of the request left the gateway: the service cannot have
// acted on it, so a write that failed this way is known not to have been applied.
type unsent struct{ err error }

func (u unsent) Error() string { return u.err.Error() }
func (u unsent) Unwrap() error { return u.err }

// acquire waits for a free slot among the requests allowed in flight, or for ctx to end.
func (c *Client) acquire(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, unsent{fmt.Errorf("wait for a free upstream slot: %w", err)}
	}
	select {
	case c.slots <- struct{}{}:
		return func() { <-c.slots }, nil
	case <-ctx.Done():
		return nil, unsent{fmt.Errorf("wait for a free upstream slot: %w", ctx.Err())}
	}
}

// connectionTrace reports whether a request ever got a connection. Only a transport that
// traces (net/http's does) calls the hooks; a failure is taken as unsent only when the
// transport asked for a connection and never got one, so a transport that does not trace
// leaves a write's outcome unknown rather than wrongly known.
type connectionTrace struct{ asked, got atomic.Bool }

func (t *connectionTrace) attach(req *http.Request) *http.Request {
	return req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GetConn: func(string) { t.asked.Store(true) },
		GotConn: func(httptrace.GotConnInfo) { t.got.Store(true) },
	}))
}

// classify marks err as unsent when the request cannot have left: it never got a connection,
// or the dial failed.
func (t *connectionTrace) classify(err error) error {
	var opErr *net.OpError
	if t.asked.Load() && !t.got.Load() || errors.As(err, &opErr) && opErr.Op == "dial" {
		return unsent{err}
	}
	return err
}

// once makes one attempt: it waits its turn among the requests in flight, then has its own
// deadline for the round trip, reading the answer included.
func (c *Client) once(ctx context.Context, cl call) (answer, error) {
	release, err := c.acquire(ctx)
	if err != nil {
		return answer{}, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var reqBody io.Reader
	switch b := cl.body.(type) {
	case nil:
	case []byte:
		reqBody = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return answer{}, unsent{fmt.Errorf("encode the request: %w", err)}
		}
		reqBody = bytes.NewReader(data)
	}
	u := c.base + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	req, err := http.NewRequestWithContext(tracing.WithOperation(ctx, cl.op), cl.method, u, reqBody)
	if err != nil {
		return answer{}, unsent{err}
	}
	req.Header.Set("Accept", "application/json")
	if reqBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	auth, err := c.authorizationFor(ctx)
	if err != nil {
		return answer{}, unsent{err}
	}
	if cl.v1 {
		req.Header.Set("Authorization", auth.basic)
	} else {
		req.Header.Set("Authorization", auth.bearer)
	}
	var trace connectionTrace
	start := time.Now()
	resp, err := c.http.Do(trace.attach(req))
	if err != nil {
		c.opts.Observe(cl.op, "error", time.Since(start))
		return answer{}, trace.classify(err)
	}
	defer resp.Body.Close()
	body, err := readBody(resp, maxResponse)
	c.opts.Observe(cl.op, strconv.Itoa(resp.StatusCode), time.Since(start))
	if err != nil {
		return answer{}, fmt.Errorf("read the answer: %w", err)
	}
	return answer{status: resp.StatusCode, body: body, location: resp.Header.Get("Location")}, nil
}

// readBody reads at most limit bytes of an answer's body, into one buffer of the size its
// Content-Length gives when it gives one: io.ReadAll would grow its buffer from 512 bytes,
// copying a roster's 100 KB eight times. Nothing writes to the bytes afterwards: the strings
// the decoder reads from them share them.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	if n := resp.ContentLength; n > 0 && n <= limit {
		buf.Grow(int(n) + bytes.MinRead) // ReadFrom wants room to see the end
	}
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, limit))
	return buf.Bytes(), err
}

// mayHaveApplied ends the message of a write whose answer never came.
const mayHaveApplied = "; the change may or may not have been applied, so check before you retry"

// statusError is the one place that says what the service's error statuses mean to the
// gateway's clients. The service's own message names the field and the rule, so a 4xx keeps it:
// in the schema's words as the message, and as the service said it in Upstream. Both are
// scrubbed: a service that echoes a request can echo the gateway's credentials or address.
func (c *Client) statusError(cl call, a answer) error {
	raw, wid := advisorspec.ReadErrorBody(a.status, a.body)
	said := c.scrub.forCaller(raw)
	cause := fmt.Errorf("%s: status %d: %s", cl.op, a.status, c.scrub.secrets(raw))
	status := a.status
	refused := func(code apperr.Code) *apperr.Error {
		return &apperr.Error{Code: code, Message: SchemaMessage("", said), Err: cause,
			Upstream: &apperr.Upstream{Status: status, Message: said}}
	}
	switch {
	case status >= 300 && status < 400:
		return apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service answered with a redirect, which the gateway does not follow",
			fmt.Errorf("%s: status %d to %q", cl.op, status, c.scrub.secrets(a.location)))
	case status == http.StatusBadRequest, status == http.StatusUnprocessableEntity, status == http.StatusRequestEntityTooLarge:
		return refused(apperr.BadUserInput)
	case status == http.StatusForbidden:
		return refused(apperr.Forbidden)
	case status == http.StatusNotFound:
		return refused(apperr.NotFound)
	case status == http.StatusConflict:
		e := refused(apperr.Conflict)
		e.WID = wid
		return e
	case (status == http.StatusBadGateway || status == http.StatusGatewayTimeout) && cl.method != http.MethodGet:
		// A proxy's gateway errors: the service behind it may have done the write and failed
		// only to answer.
		e := apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service failed to answer"+mayHaveApplied, cause)
		e.Outcome = apperr.OutcomeUnknown
		return e
	case status >= 500:
		// A failure's words can be the service's internals: they go to the log only.
		return apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service failed to answer", cause)
	default:
		return apperr.Wrap(apperr.Internal, "Internal error", cause)
	}
}

// transportError is the answer that never came. A write that may have reached the service
// says that its outcome is unknown, so a client checks before it retries instead of making
// the change twice or meeting a CONFLICT it caused itself.
func transportError(ctx context.Context, op string, write bool, err error) error {
	cause := fmt.Errorf("%s: %w", op, err)
	unknown := write && !errors.As(err, new(unsent))
	var netErr net.Error
	var msg string
	switch {
	case ctx.Err() != nil:
		msg = "The request was cancelled"
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		msg = "The Advisor service did not answer in time"
	case unknown:
		msg = "The connection to the Advisor service broke before it answered"
	default:
		msg = "The Advisor service could not be reached"
	}
	if !unknown {
		return apperr.Wrap(apperr.UpstreamUnavailable, msg, cause)
	}
	e := apperr.Wrap(apperr.UpstreamUnavailable, msg+mayHaveApplied, cause)
	e.Outcome = apperr.OutcomeUnknown
	return e
}

// Ping checks that the service answers and accepts the gateway's credentials.
func (c *Client) Ping(ctx context.Context) error {
	cl := call{op: "ping", method: http.MethodGet, path: path("v2", "top-accounts", ""), query: url.Values{"limit": {"1"}}}
	if err := spend(ctx, cl.op); err != nil {
		return err
	}
	ans, err := c.once(ctx, cl)
	switch {
	case err != nil:
		return transportError(ctx, cl.op, false, err)
	case ans.status != http.StatusOK:
		return c.statusError(cl, ans)
	}
	return nil
}

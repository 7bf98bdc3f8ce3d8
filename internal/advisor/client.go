// Package advisor is the typed client of the Advisor REST API. It owns the upstream's
// credentials, turns the service's statuses into the gateway's errors in one place, retries
// reads that timed out or failed on the service's side, and makes identical reads of one
// GraphQL request once.
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
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/advisorhq/gateway/internal/apperr"
)

// Defaults of Options.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultUploadTimeout = 15 * time.Minute
	DefaultAttempts      = 3
	DefaultBackoff       = 100 * time.Millisecond
	// maxResponse bounds what is read of one answer; a family's whole contact list is far less.
	maxResponse = 64 << 20
)

// Options configure a Client.
type Options struct {
	// BaseURL is the service's base address; paths such as /v2/top-accounts/ go below it.
	BaseURL string
	// AccessToken is the bearer token of the v2 endpoints.
	AccessToken string
	// BasicCredentials is the "user:password" of the v1 endpoints.
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
	// HTTPClient makes the requests; nil means a client with sane transport timeouts.
	HTTPClient *http.Client
	// Observe, if set, is told of every request: its operation, the status ("200", "404", or
	// "error" when no answer came) and how long it took.
	Observe func(operation, status string, elapsed time.Duration)
}

// Client calls the Advisor REST API. It is safe for concurrent use.
type Client struct {
	base          string // without a trailing slash
	bearer, basic string // Authorization header values
	opts          Options
	http          *http.Client
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
	if opts.Observe == nil {
		opts.Observe = func(string, string, time.Duration) {}
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: newTransport()}
	}
	c := &Client{base: strings.TrimSuffix(u.String(), "/"), opts: opts, http: hc}
	if opts.AccessToken != "" {
		c.bearer = "Bearer " + opts.AccessToken
	}
	if opts.BasicCredentials != "" {
		user, pass, _ := strings.Cut(opts.BasicCredentials, ":")
		req := http.Request{Header: http.Header{}}
		req.SetBasicAuth(user, pass)
		c.basic = req.Header.Get("Authorization")
	}
	return c, nil
}

// BaseURL is the service's base address.
func (c *Client) BaseURL() string { return c.base }

// newTransport bounds every phase of a connection, so a stuck peer cannot hold a request open
// past its attempt's deadline.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 5 * time.Second
	t.MaxIdleConnsPerHost = 32
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

// do makes the call and decodes a 200 answer into out (which may be nil).
func (c *Client) do(ctx context.Context, cl call, out any) error {
	var body []byte
	var err error
	if cache := cacheFrom(ctx); cache != nil {
		if cl.method == http.MethodGet {
			body, err = cache.Do(cl.key(), func() ([]byte, error) { return c.roundTrip(ctx, cl) })
		} else {
			body, err = c.roundTrip(ctx, cl)
			cache.Clear() // what this request reads next must see the write
		}
	} else {
		body, err = c.roundTrip(ctx, cl)
	}
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service sent an answer the gateway cannot read",
			fmt.Errorf("%s: decode the answer: %w", cl.op, err))
	}
	return nil
}

func (cl call) key() string {
	return cl.path + "?" + cl.query.Encode() + "#" + strconv.FormatBool(cl.v1)
}

// roundTrip makes the call, trying a read again after a timeout or a failure of the service.
func (c *Client) roundTrip(ctx context.Context, cl call) ([]byte, error) {
	attempts := 1
	if cl.method == http.MethodGet {
		attempts = c.opts.Attempts
	}
	wait := c.opts.Backoff
	for attempt := 1; ; attempt++ {
		status, body, err := c.once(ctx, cl)
		if err == nil && status == http.StatusOK {
			return body, nil
		}
		retry := attempt < attempts && ctx.Err() == nil && (err != nil || status >= 500)
		if !retry {
			if err != nil {
				return nil, transportError(ctx, cl.op, err)
			}
			return nil, statusError(cl.op, status, body)
		}
		// Full jitter keeps retries of many requests from arriving together.
		select {
		case <-time.After(wait/2 + rand.N(wait/2+1)):
		case <-ctx.Done():
			return nil, transportError(ctx, cl.op, ctx.Err())
		}
		wait *= 2
	}
}

// once makes one attempt within the attempt's deadline.
func (c *Client) once(ctx context.Context, cl call) (int, []byte, error) {
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
			return 0, nil, fmt.Errorf("encode the request: %w", err)
		}
		reqBody = bytes.NewReader(data)
	}
	u := c.base + cl.path
	if len(cl.query) > 0 {
		u += "?" + cl.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, u, reqBody)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if reqBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cl.v1 {
		req.Header.Set("Authorization", c.basic)
	} else {
		req.Header.Set("Authorization", c.bearer)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.opts.Observe(cl.op, "error", time.Since(start))
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	c.opts.Observe(cl.op, strconv.Itoa(resp.StatusCode), time.Since(start))
	if err != nil {
		return 0, nil, fmt.Errorf("read the answer: %w", err)
	}
	return resp.StatusCode, body, nil
}

// statusError is the one place that says what the service's error statuses mean to the
// gateway's clients. The service's own message is kept: it names the field and the rule.
func statusError(op string, status int, body []byte) error {
	msg, wid := errorMessage(status, body)
	cause := fmt.Errorf("%s: status %d: %s", op, status, msg)
	switch {
	case status == http.StatusBadRequest, status == http.StatusUnprocessableEntity, status == http.StatusRequestEntityTooLarge:
		return &apperr.Error{Code: apperr.BadUserInput, Message: msg, Err: cause}
	case status == http.StatusForbidden:
		return &apperr.Error{Code: apperr.Forbidden, Message: msg, Err: cause}
	case status == http.StatusNotFound:
		return &apperr.Error{Code: apperr.NotFound, Message: msg, Err: cause}
	case status == http.StatusConflict:
		return &apperr.Error{Code: apperr.Conflict, Message: msg, WID: wid, Err: cause}
	case status >= 500:
		return apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service failed to answer", cause)
	default:
		return apperr.Wrap(apperr.Internal, "Internal error", cause)
	}
}

// errorMessage reads an error body. The specification leaves its shape open, so besides
// {"message": ...} it takes {"error": "..."}, {"error": {"message": ...}} and plain text.
func errorMessage(status int, body []byte) (message, wid string) {
	var b struct {
		Message string          `json:"message"`
		WID     string          `json:"wid"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &b) == nil {
		if b.Message != "" {
			return b.Message, b.WID
		}
		var s string
		var nested struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(b.Error, &s) == nil && s != "":
			return s, b.WID
		case json.Unmarshal(b.Error, &nested) == nil && nested.Message != "":
			return nested.Message, b.WID
		}
	}
	if text := strings.TrimSpace(string(body)); text != "" && len(text) <= 500 && !strings.HasPrefix(text, "<") {
		return text, ""
	}
	return http.StatusText(status), ""
}

// transportError is the answer that never came.
func transportError(ctx context.Context, op string, err error) error {
	cause := fmt.Errorf("%s: %w", op, err)
	var netErr net.Error
	switch {
	case ctx.Err() != nil:
		return apperr.Wrap(apperr.UpstreamUnavailable, "The request was cancelled", cause)
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		return apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service did not answer in time", cause)
	default:
		return apperr.Wrap(apperr.UpstreamUnavailable, "The Advisor service could not be reached", cause)
	}
}

// Ping checks that the service answers and accepts the gateway's credentials.
func (c *Client) Ping(ctx context.Context) error {
	status, body, err := c.once(ctx, call{op: "ping", method: http.MethodGet, path: path("v2", "top-accounts", ""), query: url.Values{"limit": {"1"}}})
	switch {
	case err != nil:
		return transportError(ctx, "ping", err)
	case status != http.StatusOK:
		return statusError("ping", status, body)
	}
	return nil
}

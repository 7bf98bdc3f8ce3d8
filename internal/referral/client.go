// Package referral refers a client to the referral service (POST {referral_url}/v1/refer/
// {partner_id}): the referClient mutation's input checked against the specification's field
// table, the signed call, and the service's answers as the gateway's error codes.
package referral

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/tracing"
)

// DefaultTimeout bounds one referral call unless Options.Timeout says otherwise.
const DefaultTimeout = 10 * time.Second

// maxAnswer bounds what is read of an answer: a valid one is under 3 KB.
const maxAnswer = 64 << 10

// Signer computes the user-data-signature of the exact bytes sent. The specification does not
// say how the signature is made; this is the one place that changes if the service says.
type Signer func(body []byte) string

// HMACSigner is the project's decision: lower-case hex HMAC-SHA256 of the body with secret.
func HMACSigner(secret string) Signer {
	return func(body []byte) string { return advisorspec.SignReferral(secret, body) }
}

// Options configure a Client.
type Options struct {
	// URL is the referral service's base address (REFERRAL_URL).
	URL string
	// APIKey goes in the x-api-key header (REFERRAL_API_KEY).
	APIKey string
	// Sign signs each body; nil is an error.
	Sign Signer
	// Timeout bounds one call; zero means DefaultTimeout.
	Timeout time.Duration
	// Transport carries the calls; nil means a transport of the client's own.
	Transport http.RoundTripper
	// Tracer, when set, makes a client span of every call and sends its traceparent.
	Tracer trace.TracerProvider
}

// Client calls the referral service.
type Client struct {
	base   string
	key    string
	sign   Signer
	http   *http.Client
	scrubs []string // what must never reach a caller: the key, and the service's address
}

// New returns a client of the service at opts.URL.
func New(opts Options) (*Client, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("the referral URL must be an absolute http or https URL")
	}
	if opts.APIKey == "" || opts.Sign == nil {
		return nil, errors.New("the referral client needs an API key and a signer")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	tr := opts.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		tr = t
	}
	tr = tracing.Transport(tr, opts.Tracer)
	return &Client{
		base: strings.TrimSuffix(opts.URL, "/"),
		key:  opts.APIKey,
		sign: opts.Sign,
		// The timeout is the context's; redirects are not followed, as the body is signed for
		// this address.
		http: &http.Client{Transport: tr, Timeout: opts.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		scrubs: []string{opts.APIKey, u.Host},
	}, nil
}

// Refer sends ref for partnerID and returns the service's answer. Errors are *apperr.Error.
func (c *Client) Refer(ctx context.Context, partnerID string, ref advisorspec.Referral) (advisorspec.ReferralAnswer, error) {
	var ans advisorspec.ReferralAnswer
	body, err := json.Marshal(ref)
	if err != nil {
		return ans, apperr.Wrap(apperr.Internal, "Internal error", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/refer/"+url.PathEscape(partnerID), bytes.NewReader(body))
	if err != nil {
		return ans, apperr.Wrap(apperr.Internal, "Internal error", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(advisorspec.ReferralKeyHeader, c.key)
	req.Header.Set(advisorspec.ReferralSignatureHeader, c.sign(body))
	resp, err := c.http.Do(req)
	if err != nil {
		return ans, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return ans, c.transportError(ctx, err)
	}
	if len(data) > maxAnswer {
		return ans, apperr.Wrap(apperr.UpstreamUnavailable, "The referral service answered with more than a referral",
			fmt.Errorf("refer: status %d: answer over %d bytes", resp.StatusCode, maxAnswer))
	}
	if resp.StatusCode != http.StatusOK {
		return ans, c.statusError(resp.StatusCode, partnerID, data)
	}
	if err := json.Unmarshal(data, &ans); err != nil {
		return ans, apperr.Wrap(apperr.UpstreamUnavailable, "The referral service's answer is not a referral", fmt.Errorf("refer: %w", err))
	}
	if err := ans.Check(); err != nil {
		return ans, apperr.Wrap(apperr.UpstreamUnavailable, "The referral service's answer is not a referral", fmt.Errorf("refer: %w", err))
	}
	return ans, nil
}

// statusError is the one place that says what the service's refusals mean to the gateway's
// callers.
func (c *Client) statusError(status int, partnerID string, body []byte) error {
	said := c.scrub(errorText(status, body))
	cause := fmt.Errorf("refer: status %d: %s", status, said)
	upstream := &apperr.Upstream{Status: status, Message: said}
	switch {
	case status == http.StatusBadRequest, status == http.StatusUnprocessableEntity, status == http.StatusRequestEntityTooLarge:
		// A message that starts with a field of the body (the sandbox's do) is put in the
		// schema's names, as the gateway's own check would word it; the service's words stay
		// in Upstream.
		if field, rest, ok := strings.Cut(said, " "); ok && isBodyField(field) {
			return &apperr.Error{Code: apperr.BadUserInput, Field: schemaPath(field), Message: schemaPath(field) + " " + rest, Err: cause, Upstream: upstream}
		}
		return &apperr.Error{Code: apperr.BadUserInput, Message: "The referral service refused the referral: " + said, Err: cause, Upstream: upstream}
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		// The gateway's credentials, not the caller's: the caller can do nothing but report it.
		return &apperr.Error{Code: apperr.Forbidden, Err: cause, Upstream: upstream,
			Message: "The referral service refused the gateway's credentials: check REFERRAL_API_KEY and REFERRAL_SIGNING_SECRET"}
	case status == http.StatusNotFound:
		return &apperr.Error{Code: apperr.NotFound, Field: "partnerId", Err: cause, Upstream: upstream,
			Message: fmt.Sprintf("The referral service has no partner %q", partnerID)}
	case status >= 500:
		return apperr.Wrap(apperr.UpstreamUnavailable, "The referral service failed to answer", cause)
	default:
		return apperr.Wrap(apperr.UpstreamUnavailable, fmt.Sprintf("The referral service answered with status %d", status), cause)
	}
}

// scrub removes the API key and the service's address from what the service said: a service
// that echoes its request could echo them.
func (c *Client) scrub(s string) string {
	for _, secret := range c.scrubs {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

// transportError is the answer that never came. The referral may have been made.
func (c *Client) transportError(ctx context.Context, err error) error {
	cause := errors.New("refer: " + c.scrub(err.Error()))
	var netErr net.Error
	msg := "The referral service could not be reached"
	switch {
	case ctx.Err() != nil:
		msg = "The request was cancelled"
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		msg = "The referral service did not answer in time; the referral may or may not have been made"
	}
	e := apperr.Wrap(apperr.UpstreamUnavailable, msg, cause)
	e.Outcome = apperr.OutcomeUnknown
	return e
}

// errorText is the message of the service's error answer.
func errorText(status int, body []byte) string {
	msg, _ := advisorspec.ReadErrorBody(status, body)
	return msg
}

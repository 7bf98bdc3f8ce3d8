package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// Webhook delivery defaults.
const (
	DefaultWebhookAttempts  = 8
	DefaultWebhookRetryBase = 500 * time.Millisecond
	maxWebhookRetryWait     = 30 * time.Second
	webhookTimeout          = 10 * time.Second
	// maxQueued bounds the deliveries waiting; past it, emitting refuses rather than growing
	// without end while the receiver is down.
	maxQueued = 10000
)

// delivery is one event waiting to be sent, not before at.
type delivery struct {
	body []byte
	at   time.Time
}

// sender POSTs events to the webhook target in order, one at a time, as the service does:
// with the service-api-key header, retrying with exponential backoff on failure. Its goroutine
// belongs to the sandbox and stops on Close.
type sender struct {
	url, key string
	attempts int
	base     time.Duration
	client   *http.Client
	log      *slog.Logger

	mu     sync.Mutex
	queue  []delivery
	wake   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

func newSender(url, key string, attempts int, base time.Duration, log *slog.Logger) *sender {
	if attempts <= 0 {
		attempts = DefaultWebhookAttempts
	}
	if base <= 0 {
		base = DefaultWebhookRetryBase
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &sender{
		url: url, key: key, attempts: attempts, base: base, log: log,
		client: &http.Client{Timeout: webhookTimeout},
		wake:   make(chan struct{}, 1), cancel: cancel, done: make(chan struct{}),
	}
	go s.run(ctx)
	return s
}

// enqueue adds deliveries; it refuses them all when the queue is full.
func (s *sender) enqueue(ds ...delivery) error {
	s.mu.Lock()
	if len(s.queue)+len(ds) > maxQueued {
		s.mu.Unlock()
		return fmt.Errorf("%d webhook deliveries are already waiting; try again when the receiver has caught up", len(s.queue))
	}
	s.queue = append(s.queue, ds...)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

func (s *sender) stop() {
	s.cancel()
	<-s.done
}

func (s *sender) run(ctx context.Context) {
	defer close(s.done)
	for {
		s.mu.Lock()
		var next *delivery
		if len(s.queue) > 0 {
			next = &s.queue[0]
		}
		s.mu.Unlock()
		if next == nil {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
				continue
			}
		}
		if !sleep(ctx, time.Until(next.at)) {
			return
		}
		s.deliver(ctx, next.body)
		s.mu.Lock()
		s.queue = s.queue[1:]
		s.mu.Unlock()
	}
}

// deliver sends one event until the receiver takes it, refuses it for good (a 4xx other than
// 408 and 429: sending it again would not help), or the attempts run out.
func (s *sender) deliver(ctx context.Context, body []byte) {
	wait := s.base
	for attempt := 1; ; attempt++ {
		status, err := s.post(ctx, body)
		switch {
		case err == nil && status/100 == 2:
			return
		case err == nil && status/100 == 4 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests:
			s.log.Warn("webhook refused; not retrying", "status", status)
			return
		case ctx.Err() != nil:
			return
		case attempt == s.attempts:
			s.log.Error("webhook not delivered; giving up", "attempts", attempt, "status", status, "error", err)
			return
		}
		s.log.Warn("webhook delivery failed; retrying", "attempt", attempt, "in", wait, "status", status, "error", err)
		if !sleep(ctx, wait) {
			return
		}
		wait = min(2*wait, maxWebhookRetryWait)
	}
}

func (s *sender) post(ctx context.Context, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("service-api-key", s.key)
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// emit checks events against the specification and queues them, each not before its time.
func (t *Tenant) emit(events []map[string]any, at []time.Time) ([]json.RawMessage, *apiError) {
	if t.sender == nil {
		return nil, errorf(http.StatusConflict, "No webhook target is configured: start the sandbox with -webhook-url and SANDBOX_WEBHOOK_KEY")
	}
	out := make([]json.RawMessage, len(events))
	ds := make([]delivery, len(events))
	for i, ev := range events {
		body, err := json.Marshal(ev)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "The event could not be encoded")
		}
		// The sandbox plays the service, which sends only the specification's values: what the
		// gateway's receiver accepts from a newer service, the sandbox refuses to send.
		w, bad := advisorspec.ParseWebhook(body)
		if bad == nil {
			bad = w.Strict()
		}
		if bad != nil {
			return nil, errorf(http.StatusBadRequest, bad.Error())
		}
		out[i], ds[i] = body, delivery{body: body, at: at[i]}
	}
	if err := t.sender.enqueue(ds...); err != nil {
		return nil, errorf(http.StatusServiceUnavailable, err.Error())
	}
	return out, nil
}

// Package eventhub delivers the event log to this replica's subscribers. One reader per replica
// follows the log (woken by the log's announcements, and polling, since announcements can be
// lost) and hands each new event to every matching subscriber. A subscriber may resume after
// the last id it saw: it gets the missed events from the log, in order, then the live ones,
// with no gap and no duplicate. Through an outage of the log subscribers wait, and get what they
// missed once it is back; an outage longer than Options.OutageGrace ends their subscriptions.
//
// Every event belongs to a firm, and the hub hands a firm's events only to subscribers and
// Recent callers of that firm. The firms share one log: a resume cursor is a position in it,
// whichever firm's event it names, and only the caller's own firm's events follow it.
package eventhub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/event"
	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/tracing"
)

// Options tune a hub; zero values take the defaults.
type Options struct {
	// Buffer is how many events a subscription holds for its reader; one that falls further
	// behind reads on from the log until it has caught up.
	Buffer int
	// Poll is how often the log is read even without an announcement.
	Poll time.Duration
	// OutageGrace is how long subscriptions wait through an outage of the log: those open when
	// it began receive what they missed once it is back, and all of them end with
	// EVENTS_UNAVAILABLE when it lasts longer.
	OutageGrace time.Duration
	// Logger receives failures to read the log.
	Logger *slog.Logger
	// Tracer, when set, makes one span per event handed out on this replica ("deliver event",
	// with the event's id and type, which the webhook's receipt span carries too, and how many
	// subscribers it was offered to): one per event, not per subscriber, to stay cheap.
	Tracer trace.TracerProvider
	// DefaultFirm is the firm of records stored before events had firms. Empty, such records
	// reach nobody: a gateway that served one firm before names it here, so that its history
	// stays that firm's.
	DefaultFirm string
}

// ErrNoFirm is Subscribe's answer to a caller of no firm: an empty firm never means "every firm".
var ErrNoFirm = errors.New("subscribe to events: no firm: every subscriber must belong to one")

// DefaultOutageGrace is Options.OutageGrace's default: long enough for Redis to restart or fail
// over, short enough that a client is not left looking at a stalled screen without knowing why.
const DefaultOutageGrace = 30 * time.Second

const (
	defaultBuffer = 256
	defaultPoll   = time.Second
	readBatch     = 256
	startWait     = 5 * time.Second
	// MaxRecent bounds Recent's n.
	MaxRecent = 1000
	// maxScan bounds how far back Recent looks for matching events.
	maxScan = 10000
)

// Hub fans the log out to subscribers. Run must be running for live events to flow.
type Hub struct {
	log    eventlog.Log
	buffer int
	poll   time.Duration
	grace  time.Duration
	logger *slog.Logger
	tracer trace.Tracer // nil: no spans
	// legacyFirm is Options.DefaultFirm.
	legacyFirm string
	wake       chan struct{}
	// started closes once the hub has first tried to read the log, whatever the outcome.
	started     chan struct{}
	startedOnce sync.Once

	mu     sync.Mutex
	head   string // the id of the last event handed out; "" until Run has read the log once
	failed error  // the last failure to read the log, nil when reading works
	// outages counts the outages begun, so a timer of an outage that has ended does nothing.
	outages uint64
	// outage ends the subscriptions when the log has been failing for the grace; nil while
	// reading works.
	outage *time.Timer
	subs   map[*Subscription]struct{}
	closed bool

	// pinged is when the log was last asked for Ready, and pingErr its answer; pingMu makes
	// concurrent askers wait for one answer rather than each ask.
	pingMu  sync.Mutex
	pinged  time.Time
	pingErr error
}

// New returns a hub over log.
func New(log eventlog.Log, opts Options) *Hub {
	if opts.Buffer <= 0 {
		opts.Buffer = defaultBuffer
	}
	if opts.Poll <= 0 {
		opts.Poll = defaultPoll
	}
	if opts.OutageGrace <= 0 {
		opts.OutageGrace = DefaultOutageGrace
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	var tracer trace.Tracer
	if opts.Tracer != nil {
		tracer = tracing.Tracer(opts.Tracer)
	}
	return &Hub{
		tracer: tracer, legacyFirm: opts.DefaultFirm,
		log: log, buffer: opts.Buffer, poll: opts.Poll, grace: opts.OutageGrace, logger: opts.Logger,
		wake: make(chan struct{}, 1), subs: map[*Subscription]struct{}{}, started: make(chan struct{}),
	}
}

// Run follows the log until ctx ends, then ends every subscription.
func (h *Hub) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { h.log.Watch(ctx, h.poke) })
	defer wg.Wait()
	defer h.shutdown()

	ticker := time.NewTicker(h.poll)
	defer ticker.Stop()
	for {
		h.follow(ctx)
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-ticker.C:
		}
	}
}

func (h *Hub) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// follow reads what the log has after the head and hands it out.
func (h *Hub) follow(ctx context.Context) {
	h.mu.Lock()
	head := h.head
	h.mu.Unlock()
	if head == "" {
		start := time.Now()
		_, newest, err := h.log.Bounds(ctx)
		defer h.startedOnce.Do(func() { close(h.started) })
		if h.setFailed(ctx, err, start) {
			return
		}
		h.mu.Lock()
		h.head = newest
		h.mu.Unlock()
		return
	}
	for {
		start := time.Now()
		recs, err := h.log.After(ctx, head, readBatch)
		if h.setFailed(ctx, err, start) {
			return
		}
		for _, rec := range recs {
			ev, err := h.decode(rec)
			if err != nil {
				h.logger.Error("skip a stored event that does not decode", "id", rec.ID, "error", err)
			}
			h.publish(rec.ID, ev)
			head = rec.ID
		}
		if len(recs) < readBatch {
			return
		}
	}
}

// decode reads a record into the event it holds, with its id and firm; an event of no firm
// (a record of a gateway from before events had firms, when no default firm is set) reaches
// nobody.
func (h *Hub) decode(rec eventlog.Record) (event.Event, error) {
	ev, err := event.Decode(rec.Body)
	if err != nil {
		return nil, err
	}
	ev.Header().ID = rec.ID
	ev.Header().Firm = rec.Firm
	if rec.Firm == "" {
		ev.Header().Firm = h.legacyFirm
	}
	return ev, nil
}

// setFailed records the outcome of a read of the log that began at start, and reports whether
// it failed. Subscriptions stay open through a failure, and the hub reads on from its head once
// the log is back, so they get what they missed; only an outage longer than the grace ends them.
func (h *Hub) setFailed(ctx context.Context, err error, start time.Time) bool {
	if ctx.Err() != nil {
		return true
	}
	h.mu.Lock()
	was := h.failed
	h.failed = err
	switch {
	case err != nil && was == nil:
		// The outage began no later than the read that found it, which may itself have waited
		// out the store's call timeout: count the grace from the read's start.
		h.outages++
		n := h.outages
		h.outage = time.AfterFunc(h.grace-time.Since(start), func() { h.outlasted(n) })
	case err == nil && was != nil:
		h.outage.Stop()
		h.outage = nil
	}
	h.mu.Unlock()
	switch {
	case err != nil && was == nil:
		h.logger.Error("cannot read the event log; retrying", "error", err, "grace", h.grace)
	case err == nil && was != nil:
		h.logger.Info("reading the event log again")
	}
	return err != nil
}

// outlasted ends every subscription once outage n has lasted the grace, telling each subscriber
// where to resume. A subscriber cannot tell a long outage from a stalled gateway; ending it lets
// its client say so and retry (the WebSocket transports close with 1013, try again later).
func (h *Hub) outlasted(n uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// The timer may fire as the outage ends, or after a later one began: only the outage it
	// was started for, still going on, ends subscriptions.
	if h.closed || h.failed == nil || h.outages != n {
		return
	}
	if len(h.subs) > 0 {
		h.logger.Warn("the event log has been unavailable longer than the grace; ending subscriptions",
			"subscriptions", len(h.subs), "grace", h.grace, "error", h.failed)
	}
	for s := range h.subs {
		s.end(h.outageError(h.failed))
	}
}

// outageError says why a subscription ended when the log had been unavailable for the grace,
// err its last failure.
func (h *Hub) outageError(err error) func(last string) error {
	return func(last string) error {
		return apperr.Wrap(apperr.EventsUnavailable, fmt.Sprintf(
			"The event store has been unavailable for more than %s; subscribe again with after: %q (the last event delivered) to resume without loss",
			h.grace, last), err)
	}
}

// publish hands one event to every subscriber; ev is nil for a record that does not decode,
// which only moves the head.
func (h *Hub) publish(id string, ev event.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.head = id
	if ev == nil {
		return
	}
	if h.tracer != nil {
		// The event's own trace is its receipt's, possibly on another replica; the id ties them.
		_, span := h.tracer.Start(context.Background(), "deliver event", trace.WithSpanKind(trace.SpanKindConsumer),
			trace.WithAttributes(attribute.String("event.id", id), attribute.String("event.type", string(ev.Header().EventType)),
				attribute.Int("event.subscribers", len(h.subs))))
		defer span.End()
	}
	for s := range h.subs {
		s.offer(ev)
	}
}

func (h *Hub) shutdown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.outage != nil {
		h.outage.Stop()
	}
	for s := range h.subs {
		s.end(func(string) error {
			return apperr.New(apperr.EventsUnavailable, "The gateway is shutting down; subscribe again to resume after the last event received")
		})
	}
}

// Ready reports whether the hub can serve subscriptions now: it has read the log, its last read
// worked, and the log can be written now (its Ping, within the last pingFresh, succeeded). The
// hub notices an outage only at its next read, and a store that refuses writes (a Redis at
// maxmemory) not at all, since it still reads; asking the log turns a readiness probe or a
// subscriber away at once instead of sending it to a store where webhooks are refused.
func (h *Hub) Ready(ctx context.Context) error {
	h.mu.Lock()
	failed, head := h.failed, h.head
	h.mu.Unlock()
	switch {
	case failed != nil:
		return unavailable(failed)
	case head == "":
		return apperr.New(apperr.EventsUnavailable, "The event log has not been read yet")
	}
	// One answer, success or failure, serves everyone who asks within pingFresh: a replica's
	// subscribers reconnect in their thousands at once (after a deploy, or another replica's
	// crash), and a Ping each would queue them behind one another for Redis's connections; and
	// each Ping is a write, which must stay at a few a second however often readiness is asked.
	h.pingMu.Lock()
	defer h.pingMu.Unlock()
	if h.pinged.IsZero() || time.Since(h.pinged) >= pingFresh {
		err := h.log.Ping(ctx)
		if ctx.Err() != nil && err != nil {
			return unavailable(err) // the asker gave up: its answer is not the store's
		}
		h.pinged, h.pingErr = time.Now(), err
	}
	if h.pingErr != nil {
		return unavailable(h.pingErr)
	}
	return nil
}

// pingFresh is how long an answer of the log's Ping serves the hub's readiness: at most one
// Ping, and so one write, every pingFresh per replica.
const pingFresh = 250 * time.Millisecond

func unavailable(err error) error {
	return apperr.Wrap(apperr.EventsUnavailable, "The event store is unavailable; try again shortly", err)
}

// Tracker follows a subscription's stream for whoever delivers it: where it starts, each event
// put in it (before the receiver can take it), and why the hub ended it. The subscription
// resolver passes the feed its transport reads (graph.Feed); EndFunc learns only the end.
type Tracker interface {
	Start(last string)
	Sent(id string)
	End(err error)
}

// EndFunc is a Tracker that learns only why the hub ended a subscription.
type EndFunc func(error)

func (EndFunc) Start(string)    {}
func (EndFunc) Sent(string)     {}
func (f EndFunc) End(err error) { f(err) }

type noTracker struct{}

func (noTracker) Start(string) {}
func (noTracker) Sent(string)  {}
func (noTracker) End(error)    {}

// Subscription is one subscriber's stream of events.
type Subscription struct {
	hub    *Hub
	firm   string // only this firm's events are the subscriber's
	filter *event.Filter
	ch     chan event.Event
	track  Tracker
	// ctx is the subscriber's; a backfill runs in it.
	ctx context.Context
	// quit closes when the hub ends the subscription, to stop its backfill.
	quit chan struct{}

	// Guarded by hub.mu.
	last     string // the id of the last event put in ch
	catching bool   // reading history from the log; the hub leaves it alone until it catches up
	done     bool
	// ended is why the hub ended the subscription while its backfill ran; the backfill reports
	// it when it stops.
	ended func(last string) error
}

// Events is the subscriber's stream. It closes when the subscription ends; its tracker has then
// been told why, unless the subscriber went away.
func (s *Subscription) Events() <-chan event.Event { return s.ch }

// offer takes a live event; called with hub.mu held. A subscription whose buffer is full is
// not waited for, so that one slow reader never delays the others: it reads on from the log,
// as a resumed subscription does, until it has caught up with the live events. (A subscriber
// whose client is slow is ended by the transport, which knows what its client has taken.)
func (s *Subscription) offer(ev event.Event) {
	if s.done || !s.wants(ev) {
		return
	}
	id := ev.Header().ID
	if !eventlog.Less(s.last, id) {
		return // already sent by the backfill
	}
	if s.catching {
		return // the backfill will read it from the log
	}
	if len(s.ch) == cap(s.ch) {
		s.hub.catchUp(s)
		return
	}
	// Told first, since the receiver may take the event at once; the send cannot block, since
	// only the hub sends while the subscription is live.
	s.track.Sent(id)
	s.ch <- ev
	s.last = id
}

// wants reports whether ev is for this subscriber: its firm's, and matching its filter.
func (s *Subscription) wants(ev event.Event) bool {
	return ev.Header().Firm == s.firm && s.filter.Match(ev)
}

// catchUp has a subscription that fell its buffer behind read on from the log after the last
// event it was given; called with h.mu held.
func (h *Hub) catchUp(s *Subscription) {
	s.catching = true
	from := s.last
	go func() { // the subscription's: it ends with it, or once it has caught up
		if err := h.checkRetained(s.ctx, from); err != nil {
			h.mu.Lock()
			defer h.mu.Unlock()
			s.end(func(string) error { return err })
			s.caughtUp()
			return
		}
		h.backfill(s.ctx, s, from)
	}()
}

// end ends the subscription, why saying why given the last event delivered; called with
// hub.mu held.
func (s *Subscription) end(why func(last string) error) {
	if s.done {
		return
	}
	s.done = true
	delete(s.hub.subs, s)
	close(s.quit)
	if s.catching {
		// The backfill may be sending: it closes the stream when it stops, so that nothing is
		// sent on a closed channel and the resume point named is the last event it sent.
		s.ended = why
		return
	}
	s.close(why)
}

// close tells the tracker why and closes the stream; called with hub.mu held. Events already in the
// channel are still delivered: a receiver drains a closed channel before seeing it closed, so
// "the last event delivered" is exactly s.last.
func (s *Subscription) close(why func(last string) error) {
	s.track.End(why(s.last))
	close(s.ch)
}

// caughtUp hands the subscription from its backfill to the hub, or, when the hub ended it
// meanwhile, closes it; called with hub.mu held, by the backfill only.
func (s *Subscription) caughtUp() {
	if !s.catching {
		return
	}
	s.catching = false
	if s.ended != nil {
		s.close(s.ended)
		s.ended = nil
	}
}

// Subscribe starts a subscription for firm's events matching filter; an empty firm is refused
// with ErrNoFirm. With after, the events after that id come first, from the log. The
// subscription lasts until ctx ends or the hub ends it; track (which may be nil) follows it, and
// learns why the hub ended it.
//
// Positions (after, and those track is told) are places in the log all firms share: a position
// the subscriber has not been sent an event at, such as where it started, may be the id of
// another firm's event. Such an id says when some event was stored, never what or whose.
func (h *Hub) Subscribe(ctx context.Context, firm string, filter *event.Filter, after string, track Tracker) (*Subscription, error) {
	if firm == "" {
		return nil, ErrNoFirm
	}
	if err := filter.Check(); err != nil {
		return nil, err
	}
	if after != "" {
		if _, err := eventlog.ParseID(after); err != nil {
			return nil, apperr.Input("after", fmt.Sprintf("%q is not an event id: pass the id of the last event received, such as 1732266000000-0", after))
		}
	}
	// A gateway that has just started may not have read the log yet; wait a moment rather
	// than turn the first subscribers away.
	wait, cancel := context.WithTimeout(ctx, startWait)
	select {
	case <-h.started:
	case <-wait.Done():
	}
	cancel()
	if err := h.Ready(ctx); err != nil {
		return nil, err
	}
	if track == nil {
		track = noTracker{}
	}
	s := &Subscription{hub: h, firm: firm, filter: filter, ch: make(chan event.Event, h.buffer), track: track, ctx: ctx, quit: make(chan struct{})}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, apperr.New(apperr.EventsUnavailable, "The gateway is shutting down")
	}
	head := h.head
	s.last = head
	if after != "" && eventlog.Less(after, head) {
		s.last, s.catching = after, true
	} else if after != "" {
		s.last = after // at or past the head: only later events are new to this subscriber
	}
	track.Start(s.last)
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	context.AfterFunc(ctx, func() { h.remove(s) })

	if s.catching {
		if err := h.checkRetained(ctx, after); err != nil {
			h.remove(s)
			return nil, err
		}
		go h.backfill(ctx, s, after)
	}
	return s, nil
}

// checkRetained refuses a resume point older than the log keeps: resuming there would skip
// events silently.
func (h *Hub) checkRetained(ctx context.Context, after string) error {
	oldest, _, err := h.log.Bounds(ctx)
	if err != nil {
		return unavailable(err)
	}
	if oldest == eventlog.Zero || !eventlog.Less(after, oldest) {
		return nil
	}
	// after is older than the oldest kept: fine only if nothing between was dropped, which
	// holds when the log never trimmed past after.
	trimmed, err := h.log.Trimmed(ctx)
	if err != nil {
		return unavailable(err)
	}
	if eventlog.Less(after, trimmed) {
		// The oldest kept may be another firm's event: the message names only what the
		// subscriber gave.
		return apperr.New(apperr.EventsExpired, fmt.Sprintf(
			"Events after %q are no longer kept: load the current state with recentEvents and subscribe without after", after))
	}
	return nil
}

// backfill sends the events after `after` from the log, reading on until it has caught up
// with the hub, and then hands the subscription to the hub. Live events that arrive meanwhile
// are in the log too, so nothing waits in memory and a subscriber catching up on a long
// history is never cut off for it. A read that fails is tried again every poll, as the hub's
// are, for up to the grace. It runs for one subscription and ends with it.
func (h *Hub) backfill(ctx context.Context, s *Subscription, after string) {
	defer func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		s.caughtUp()
	}()
	cur := after
	var failing time.Time // when reads began to fail; zero while they work
	for {
		start := time.Now()
		recs, err := h.log.After(ctx, cur, readBatch)
		if err != nil {
			if failing.IsZero() {
				failing = start
			}
			if time.Since(failing) >= h.grace {
				h.mu.Lock()
				s.end(h.outageError(err))
				h.mu.Unlock()
				return
			}
			if !h.pause(ctx, s) {
				return
			}
			continue
		}
		failing = time.Time{}
		for _, rec := range recs {
			cur = rec.ID
			ev, err := h.decode(rec)
			if err != nil {
				continue
			}
			if s.wants(ev) && !h.send(ctx, s, ev) {
				return
			}
		}
		if len(recs) == readBatch {
			continue
		}
		h.mu.Lock()
		// Caught up once the log has nothing after what the hub has handed out. The log may
		// run ahead of the hub (it reads on its own schedule): events up to cur are then
		// skipped by the hub as already sent. The hand-over happens under the same lock as
		// the check, so no event the hub hands out falls between the two.
		if s.done || !eventlog.Less(cur, h.head) || len(recs) == 0 {
			if eventlog.Less(s.last, cur) {
				s.last = cur
			}
			s.caughtUp()
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
	}
}

// pause waits one poll before a backfill reads again, and reports whether its subscription is
// still open.
func (h *Hub) pause(ctx context.Context, s *Subscription) bool {
	t := time.NewTimer(h.poll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-s.quit:
		return false
	case <-t.C:
		return true
	}
}

// send puts one backfilled event in the subscriber's channel, waiting for room: the backfill
// goroutine belongs to this subscriber alone. Only the backfill sends or closes the channel
// while the subscription is catching up, so waiting outside the lock is safe.
func (h *Hub) send(ctx context.Context, s *Subscription, ev event.Event) bool {
	select {
	case <-s.quit:
		return false // ended: stop now, not whenever select happens to pick quit below
	default:
	}
	s.track.Sent(ev.Header().ID)
	select {
	case s.ch <- ev:
		h.mu.Lock()
		s.last = ev.Header().ID
		h.mu.Unlock()
		return true
	case <-ctx.Done():
		return false
	case <-s.quit:
		return false
	}
}

// remove forgets a subscription whose subscriber went away.
func (h *Hub) remove(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !s.done {
		s.done = true
		delete(h.subs, s)
	}
}

// Subscribers counts the live subscriptions.
func (h *Hub) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Recent returns the latest n of firm's events matching filter, oldest first. It looks at the
// latest maxScan events of all firms at most, so a firm whose events are rare among others' gets
// fewer. An empty firm has no events: nil, with no error.
func (h *Hub) Recent(ctx context.Context, firm string, filter *event.Filter, n int) ([]event.Event, error) {
	if n < 1 || n > MaxRecent {
		return nil, apperr.Input("last", fmt.Sprintf("last must be from 1 to %d, got %d", MaxRecent, n))
	}
	if err := filter.Check(); err != nil {
		return nil, err
	}
	if firm == "" {
		return nil, nil
	}
	var out []event.Event
	before, scanned := "", 0
	for len(out) < n && scanned < maxScan {
		recs, err := h.log.Before(ctx, before, readBatch)
		if err != nil {
			if errors.Is(err, eventlog.ErrUnavailable) {
				return nil, unavailable(err)
			}
			return nil, fmt.Errorf("read recent events: %w", err)
		}
		for _, rec := range recs {
			ev, err := h.decode(rec)
			if err != nil {
				continue
			}
			if ev.Header().Firm == firm && filter.Match(ev) {
				out = append(out, ev)
				if len(out) == n {
					break
				}
			}
		}
		scanned += len(recs)
		if len(recs) < readBatch {
			break
		}
		before = recs[len(recs)-1].ID
	}
	slices.Reverse(out)
	return out, nil
}

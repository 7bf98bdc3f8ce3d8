package eventlog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the log as a Redis Stream. Every key shares the hash tag {events}, so the script
// that appends touches one slot and also runs on Redis Cluster.
//
// The firms share the stream; each entry holds its firm in a field of its own ("firm", absent
// from entries stored before events had firms). The only keys that differ by firm are the
// de-duplication keys, named by a hash of the firm and the body together (digest), so that no
// firm's key can be another's whatever characters firm ids hold.
type Redis struct {
	client   redis.UniversalClient
	stream   string
	dedup    string // prefix of the de-duplication keys
	channel  string
	ready    string // the key Ping writes
	max      int
	dedupTTL time.Duration
}

// appendScript stores a firm's body once per de-duplication window, atomically: look the hash
// of the firm and body up, else add the entry (trimming the stream to about max entries),
// remember the hash with its id, and announce the id. ARGV: body, window in seconds, max
// entries, channel, firm.
var appendScript = redis.NewScript(`
local id = redis.call('GET', KEYS[2])
if id then return {id, 1} end
id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'firm', ARGV[5], 'body', ARGV[1])
redis.call('SET', KEYS[2], id, 'EX', ARGV[2])
redis.call('PUBLISH', ARGV[4], id)
return {id, 0}
`)

// NewRedis returns the log kept under keys starting with prefix.
func NewRedis(client redis.UniversalClient, prefix string, max int, dedupTTL time.Duration) *Redis {
	return &Redis{
		client:   client,
		stream:   prefix + "{events}:stream",
		dedup:    prefix + "{events}:seen:",
		channel:  prefix + "{events}:appended",
		ready:    prefix + "{events}:ready",
		max:      max,
		dedupTTL: dedupTTL,
	}
}

// CallTimeout bounds each call the Redis log makes, go-redis's retries included, so that a
// frozen or unreachable Redis fails a webhook delivery, a recentEvents query, a subscription or a
// readiness check in about this long rather than holding it. Socket timeouts alone do not: a
// command that timed out is retried on a new connection, whose handshake can time out in turn,
// and a caller waiting for a pooled connection waits on top. docs/events.md states this bound.
const CallTimeout = 3 * time.Second

// Bound sets a client's own timeouts to CallTimeout and has it honour context deadlines, so a
// call ends at the deadline the log gives it instead of waiting out a socket timeout first.
// Retries stay on: within the deadline they replace a connection that Redis dropped.
func Bound(opts *redis.Options) {
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = CallTimeout, CallTimeout, CallTimeout
	opts.ContextTimeoutEnabled = true
}

// bound gives one call of the log its deadline.
func bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, CallTimeout)
}

func unavailable(doing string, err error) error {
	if outOfMemory(err) {
		return fmt.Errorf("%s: %w: Redis has reached its maxmemory and refuses writes (free memory, raise maxmemory or choose an eviction policy): %w", doing, ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w: %w", doing, ErrUnavailable, err)
}

// outOfMemory tells Redis's refusal of a write at maxmemory (under noeviction, or with nothing
// left to evict) from other failures; Redis says so only in the error's text, which starts with
// OOM, also when a script's write was refused.
func outOfMemory(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.Contains(re.Error(), "OOM ")
}

func (r *Redis) Append(ctx context.Context, firm string, body []byte) (string, bool, error) {
	if firm == "" {
		return "", false, fmt.Errorf("append an event: %w", ErrNoFirm)
	}
	ctx, cancel := bound(ctx)
	defer cancel()
	ttl := max(1, int(r.dedupTTL/time.Second))
	res, err := appendScript.Run(ctx, r.client, []string{r.stream, r.dedup + digest(firm, body)},
		body, ttl, r.max, r.channel, firm).Slice()
	if err != nil {
		return "", false, unavailable("append an event", err)
	}
	if len(res) != 2 {
		return "", false, fmt.Errorf("append an event: unexpected script result %v", res)
	}
	id, _ := res[0].(string)
	dup, _ := res[1].(int64)
	return id, dup == 1, nil
}

func (r *Redis) After(ctx context.Context, after string, n int) ([]Record, error) {
	start := "-"
	if after != "" && after != Zero {
		id, err := ParseID(after)
		if err != nil {
			return nil, err
		}
		if id == (ID{^uint64(0), ^uint64(0)}) {
			return []Record{}, nil // nothing can follow; Redis refuses "(" before it
		}
		start = "(" + after
	}
	if n <= 0 {
		return []Record{}, nil // Redis answers COUNT 0 with a nil reply
	}
	ctx, cancel := bound(ctx)
	defer cancel()
	msgs, err := r.client.XRangeN(ctx, r.stream, start, "+", int64(n)).Result()
	if err != nil {
		return nil, unavailable("read events", err)
	}
	return records(msgs), nil
}

func (r *Redis) Before(ctx context.Context, before string, n int) ([]Record, error) {
	end := "+"
	if before != "" {
		id, err := ParseID(before)
		if err != nil {
			return nil, err
		}
		if id == (ID{}) {
			return []Record{}, nil // nothing comes before 0-0; Redis refuses "(" before it
		}
		end = "(" + before
	}
	if n <= 0 {
		return []Record{}, nil // Redis answers COUNT 0 with a nil reply
	}
	ctx, cancel := bound(ctx)
	defer cancel()
	msgs, err := r.client.XRevRangeN(ctx, r.stream, end, "-", int64(n)).Result()
	if err != nil {
		return nil, unavailable("read events", err)
	}
	return records(msgs), nil
}

func (r *Redis) Bounds(ctx context.Context) (string, string, error) {
	ctx, cancel := bound(ctx)
	defer cancel()
	first, err := r.client.XRangeN(ctx, r.stream, "-", "+", 1).Result()
	if err != nil {
		return "", "", unavailable("read the event log's bounds", err)
	}
	last, err := r.client.XRevRangeN(ctx, r.stream, "+", "-", 1).Result()
	if err != nil {
		return "", "", unavailable("read the event log's bounds", err)
	}
	if len(first) == 0 || len(last) == 0 {
		return Zero, Zero, nil
	}
	return first[0].ID, last[0].ID, nil
}

func (r *Redis) Trimmed(ctx context.Context) (string, error) {
	ctx, cancel := bound(ctx)
	defer cancel()
	// XINFO STREAM fails on a stream not created yet, with an error told apart from others only
	// by its text; asking whether the stream exists in the same transaction tells it apart by
	// type instead, and atomically: no append can come between the two.
	var exists *redis.IntCmd
	var xinfo *redis.XInfoStreamCmd
	_, _ = r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, r.stream)
		xinfo = p.XInfoStream(ctx, r.stream)
		return nil
	}) // each command carries its own error, read below
	if err := exists.Err(); err != nil {
		return "", unavailable("read the event log's trim point", err)
	}
	if exists.Val() == 0 {
		return Zero, nil // nothing appended yet, so nothing trimmed
	}
	info, err := xinfo.Result()
	if err != nil {
		return "", unavailable("read the event log's trim point", err)
	}
	trimmed := info.MaxDeletedEntryID
	if trimmed == "" {
		trimmed = Zero
	}
	// Trimming with MAXLEN does not move max-deleted-entry-id (only XDEL does), and the entries
	// it dropped are gone. The log deletes nothing otherwise, so fewer entries kept than added
	// means some were trimmed, all older than the first kept: answer the id just before it, the
	// newest that can have been dropped (at worst newer than the one that was, never older).
	if info.EntriesAdded > info.Length {
		bound := info.LastGeneratedID // every entry was dropped
		if info.Length > 0 {
			first, err := ParseID(info.FirstEntry.ID)
			if err != nil {
				return "", fmt.Errorf("read the event log's trim point: %w", err)
			}
			bound = justBefore(first).String()
		}
		if Less(trimmed, bound) {
			trimmed = bound
		}
	}
	return trimmed, nil
}

// justBefore returns the greatest id less than id (0-0 for 0-0).
func justBefore(id ID) ID {
	switch {
	case id.Seq > 0:
		return ID{id.MS, id.Seq - 1}
	case id.MS > 0:
		return ID{id.MS - 1, ^uint64(0)}
	}
	return ID{}
}

// Watch subscribes to the announcements. go-redis resubscribes after a lost connection; the
// announcements missed meanwhile are made up by the readers' polling.
func (r *Redis) Watch(ctx context.Context, wake func()) {
	sub := r.client.Subscribe(ctx, r.channel)
	defer sub.Close()
	ch := sub.Channel(redis.WithChannelHealthCheckInterval(10 * time.Second))
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			wake()
		}
	}
}

// readyTTL is how long the key Ping writes lives: it is only ever written, never read, and
// expires soon after the last check.
const readyTTL = 10 * time.Second

// Ping writes a small key beside the stream, in its slot (so on a Cluster, on the node that holds
// the stream): a PING is answered by a Redis that refuses every write, at maxmemory with
// noeviction, while webhooks are refused.
func (r *Redis) Ping(ctx context.Context) error {
	ctx, cancel := bound(ctx)
	defer cancel()
	if err := r.client.Set(ctx, r.ready, "1", readyTTL).Err(); err != nil {
		return unavailable("write to the event store", err)
	}
	return nil
}

func records(msgs []redis.XMessage) []Record {
	out := make([]Record, 0, len(msgs))
	for _, m := range msgs {
		body, _ := m.Values["body"].(string)
		firm, _ := m.Values["firm"].(string) // absent before events had firms
		out = append(out, Record{ID: m.ID, Firm: firm, Body: []byte(body)})
	}
	return out
}

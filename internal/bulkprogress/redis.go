package bulkprogress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis keeps progress in Redis, shared by every replica: a key per upload, holding its
// progress as JSON for TTL, and a channel per upload that each change is published on. Keys
// share the hash tag {bulk}, so the script that writes both runs on one slot of a cluster.
type Redis struct {
	client redis.UniversalClient
	prefix string
	// resync is how often a watcher reads the key as well: pub/sub delivers at most once, and
	// a message published while its connection was being replaced is lost.
	resync time.Duration
}

// callTimeout bounds each call, retries included, as the event log's do (eventlog.CallTimeout).
const callTimeout = 3 * time.Second

// NewRedis returns the store kept under keys starting with prefix.
func NewRedis(client redis.UniversalClient, prefix string) *Redis {
	return &Redis{client: client, prefix: prefix, resync: 5 * time.Second}
}

func (r *Redis) key(id string) string     { return r.prefix + "{bulk}:" + id }
func (r *Redis) channel(id string) string { return r.prefix + "{bulk}:changed:" + id }

// putScript stores the progress and announces it, in one step, so that a watcher never reads
// a change it was not told of, or the reverse. KEYS: key; ARGV: progress, TTL in seconds,
// channel.
var putScript = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[1])
return 1
`)

func (r *Redis) Put(ctx context.Context, p Progress) error {
	if err := check(p); err != nil {
		return err
	}
	p.UpdatedAt = time.Now().UTC()
	body, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode the progress of bulk upload %s: %w", p.ID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := putScript.Run(ctx, r.client, []string{r.key(p.ID)}, body, int(TTL/time.Second), r.channel(p.ID)).Err(); err != nil {
		return fmt.Errorf("store the progress of bulk upload %s in Redis: %w", p.ID, err)
	}
	return nil
}

func (r *Redis) Get(ctx context.Context, id string) (Progress, bool, error) {
	body, ok, err := r.get(ctx, id)
	if err != nil || !ok {
		return Progress{}, ok, err
	}
	p, err := decode(id, body)
	return p, err == nil, err
}

func (r *Redis) get(ctx context.Context, id string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	body, err := r.client.Get(ctx, r.key(id)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("read the progress of bulk upload %s from Redis: %w", id, err)
	}
	return body, true, nil
}

func decode(id string, body []byte) (Progress, error) {
	var p Progress
	if err := json.Unmarshal(body, &p); err != nil {
		return Progress{}, fmt.Errorf("decode the progress of bulk upload %s: %w", id, err)
	}
	return p, nil
}

func (r *Redis) Watch(ctx context.Context, id string, see func(Progress)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Subscribed first, then read: a change between the two arrives as a message.
	sub := r.client.Subscribe(ctx, r.channel(id))
	defer sub.Close()
	subscribed, stop := context.WithTimeout(ctx, callTimeout)
	_, err := sub.Receive(subscribed)
	stop()
	if err != nil {
		return fmt.Errorf("watch bulk upload %s in Redis: %w", id, err)
	}
	messages := sub.Channel()

	var last time.Time
	// show passes body on unless it is no newer than what was shown last (the read and the
	// messages overlap, and a message may be older than the read); it reports whether the
	// watch is over. One replica runs an upload and writes all its progress, so its times
	// come from one clock.
	show := func(body []byte) (bool, error) {
		p, err := decode(id, body)
		if err != nil {
			return true, err
		}
		if !last.IsZero() && !p.UpdatedAt.After(last) {
			return false, nil
		}
		last = p.UpdatedAt
		see(p)
		return p.Phase.Final(), nil
	}
	body, ok, err := r.get(ctx, id)
	switch {
	case err != nil:
		return err
	case !ok:
		return ErrUnknown
	}
	if over, err := show(body); over || err != nil {
		return err
	}
	tick := time.NewTicker(r.resync)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case msg, open := <-messages:
			if !open {
				return fmt.Errorf("watch bulk upload %s: the Redis subscription closed", id)
			}
			body = []byte(msg.Payload)
		case <-tick.C:
			body, ok, err = r.get(ctx, id)
			if err != nil {
				return err
			}
			if !ok {
				return nil // expired under its watcher: nothing more will come
			}
		}
		if over, err := show(body); over || err != nil {
			return err
		}
	}
}

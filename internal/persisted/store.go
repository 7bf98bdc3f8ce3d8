package persisted

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Store keeps the documents clients registered with automatic persisted queries, by the hex
// SHA-256 of their text. A document is registered only once it has validated and run without
// errors, so a store holds operations the gateway runs, never arbitrary text.
type Store interface {
	// Get returns the document registered as hash; ok is false when there is none (or none
	// any more: stores forget).
	Get(ctx context.Context, hash string) (doc string, ok bool, err error)
	// Put registers doc as hash.
	Put(ctx context.Context, hash, doc string) error
}

// Memory is a Store in the process, holding at most a number of bytes of documents and
// forgetting the least recently used first. Replicas do not share it: a client that
// registered a document on one replica registers it again on another when told
// PERSISTED_QUERY_NOT_FOUND, which the protocol expects.
type Memory struct {
	mu       sync.Mutex
	maxBytes int
	bytes    int
	order    *list.List // of *memoryEntry, most recent first
	byHash   map[string]*list.Element
}

type memoryEntry struct{ hash, doc string }

// NewMemory returns a Memory store of at most maxBytes of documents.
func NewMemory(maxBytes int) *Memory {
	return &Memory{maxBytes: maxBytes, order: list.New(), byHash: make(map[string]*list.Element)}
}

// Get returns the document registered as hash.
func (m *Memory) Get(_ context.Context, hash string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byHash[hash]
	if !ok {
		return "", false, nil
	}
	m.order.MoveToFront(e)
	return e.Value.(*memoryEntry).doc, true, nil
}

// Put registers doc as hash, forgetting the least recently used documents to make room. A
// document larger than the whole store is not kept.
func (m *Memory) Put(_ context.Context, hash, doc string) error {
	size := len(hash) + len(doc)
	if size > m.maxBytes {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byHash[hash]; ok {
		m.order.MoveToFront(e)
		return nil
	}
	m.byHash[hash] = m.order.PushFront(&memoryEntry{hash: hash, doc: doc})
	m.bytes += size
	for m.bytes > m.maxBytes {
		last := m.order.Back()
		e := m.order.Remove(last).(*memoryEntry)
		delete(m.byHash, e.hash)
		m.bytes -= len(e.hash) + len(e.doc)
	}
	return nil
}

// Redis is a Store in Redis, shared by every replica using it: a document registered on one
// is found on all. Each document is kept ttl after it was last used, and all of them together
// within a budget of bytes, the least recently used forgotten first to make room, as Memory
// does: the Redis is shared with the event log, and whatever registers documents must not be
// able to fill it (3,000 documents of 64 KB once added 188 MiB in 8 s, kept 7 days).
//
// The documents are one hash, with a sorted set of when each was last used and a count of
// the bytes they take. Every key carries the hash tag {apq}, so the scripts that keep the
// three in step run on a Redis Cluster too; all of them live on one node of it, which the
// budget keeps small.
type Redis struct {
	client   redis.UniversalClient
	keys     []string // documents, used, bytes
	ttl      time.Duration
	maxBytes int64
	now      func() time.Time
}

// DefaultRedisMaxBytes is the budget of a Redis store unless MaxBytes says otherwise: room for
// a thousand of the largest documents registered, or tens of thousands of ordinary ones.
const DefaultRedisMaxBytes = 64 << 20

// defaultRedisTTL is the ttl of a store given none.
const defaultRedisTTL = 7 * 24 * time.Hour

// entryOverhead is what Redis spends on each document besides its hash and text, counted
// against the budget so that many small documents cannot exceed it: the hash's field, the
// sorted set's member and score, and their allocations, about 200 bytes as MEMORY USAGE
// measures them on Redis 7, and rounded up.
const entryOverhead = 256

// redisTimeout bounds each call: a stalled Redis turns into "not found", and the client sends
// the document in full, rather than into a stalled request.
const redisTimeout = 250 * time.Millisecond

// sweepBatch bounds how many documents past their ttl one registration forgets, so that a
// registration after a long quiet costs what any other does; the rest go with later ones.
const sweepBatch = 64

// RedisOption sets something of a Redis store other than its defaults.
type RedisOption func(*Redis)

// MaxBytes sets the budget of the store: the documents, their hashes and entryOverhead for
// each, together. A document larger than the budget is not kept.
func MaxBytes(n int64) RedisOption { return func(r *Redis) { r.maxBytes = n } }

// NewRedis returns a Store keeping documents in client under prefix for ttl after their last
// use, within DefaultRedisMaxBytes unless an option says otherwise.
func NewRedis(client redis.UniversalClient, prefix string, ttl time.Duration, opts ...RedisOption) *Redis {
	r := &Redis{
		client:   client,
		keys:     []string{prefix + "{apq}:documents", prefix + "{apq}:used", prefix + "{apq}:bytes"},
		ttl:      ttl,
		maxBytes: DefaultRedisMaxBytes,
		now:      time.Now,
	}
	for _, o := range opts {
		o(r)
	}
	if r.ttl <= 0 {
		r.ttl = defaultRedisTTL // PEXPIRE 0 would delete every document at once
	}
	return r
}

// Keys are the store's keys in Redis: the documents, when each was last used, and the bytes
// they take.
func (r *Redis) Keys() []string { return append([]string(nil), r.keys...) }

// getScript returns a document that has been used within the ttl, and marks it used now.
// KEYS: documents, used, bytes. ARGV: hash, now and the oldest use kept (ms), ttl (ms).
var getScript = redis.NewScript(`
local used = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not used or tonumber(used) < tonumber(ARGV[3]) then
	return false
end
local doc = redis.call('HGET', KEYS[1], ARGV[1])
if not doc then
	redis.call('ZREM', KEYS[2], ARGV[1])
	return false
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
return doc
`)

// putScript registers a document, forgetting those past their ttl (a batch at a time) and
// then the least recently used until it fits the budget. It returns 1 when the document is
// kept, 0 when it is larger than the whole budget.
// KEYS: documents, used, bytes. ARGV: hash, document, now and the oldest use kept (ms),
// ttl (ms), budget, entry overhead, sweep batch.
var putScript = redis.NewScript(`
local hash, now, overhead = ARGV[1], ARGV[3], tonumber(ARGV[7])
local size = #hash + #ARGV[2] + overhead
local budget = tonumber(ARGV[6])
if size > budget then
	return 0
end
local total = tonumber(redis.call('GET', KEYS[3]) or '0')
if redis.call('EXISTS', KEYS[1]) == 0 then
	-- The documents are gone (expired together, or evicted by Redis): so is what they took.
	redis.call('DEL', KEYS[2])
	total = 0
end
local function forget(h)
	local n = redis.call('HSTRLEN', KEYS[1], h)
	redis.call('HDEL', KEYS[1], h)
	redis.call('ZREM', KEYS[2], h)
	if n > 0 then total = total - (#h + n + overhead) end
end
if redis.call('HEXISTS', KEYS[1], hash) == 1 then
	redis.call('ZADD', KEYS[2], now, hash)
else
	for _, h in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[4], 'LIMIT', 0, tonumber(ARGV[8]))) do
		forget(h)
	end
	while total + size > budget do
		local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
		if #oldest == 0 then
			total = 0
			break
		end
		forget(oldest[1])
	end
	redis.call('HSET', KEYS[1], hash, ARGV[2])
	redis.call('ZADD', KEYS[2], now, hash)
	total = math.max(total, 0) + size
	redis.call('SET', KEYS[3], total)
end
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[5]) end
return 1
`)

// Get returns the document registered as hash, and keeps it for another ttl.
func (r *Redis) Get(ctx context.Context, hash string) (string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	now := r.now()
	doc, err := getScript.Run(ctx, r.client, r.keys, hash, now.UnixMilli(), now.Add(-r.ttl).UnixMilli(), r.ttl.Milliseconds()).Text()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("get persisted query %s: %w", hash, err)
	}
	return doc, true, nil
}

// Put registers doc as hash for ttl, forgetting the least recently used documents to make room
// within the budget. A document larger than the whole budget is not kept.
func (r *Redis) Put(ctx context.Context, hash, doc string) error {
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	now := r.now()
	err := putScript.Run(ctx, r.client, r.keys, hash, doc, now.UnixMilli(), now.Add(-r.ttl).UnixMilli(),
		r.ttl.Milliseconds(), r.maxBytes, entryOverhead, sweepBatch).Err()
	if err != nil {
		return fmt.Errorf("register persisted query %s: %w", hash, err)
	}
	return nil
}

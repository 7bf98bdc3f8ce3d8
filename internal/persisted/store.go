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
// SHA-256 of their text. A document is registered only once it has parsed and validated, so a
// store holds operations the gateway would run, never arbitrary text.
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
// is found on all. Each document expires ttl after it was last used.
type Redis struct {
	client redis.UniversalClient
	prefix string
	ttl    time.Duration
}

// redisTimeout bounds each call: a stalled Redis turns into "not found", and the client sends
// the document in full, rather than into a stalled request.
const redisTimeout = time.Second

// NewRedis returns a Store keeping documents in client under prefix for ttl after their last use.
func NewRedis(client redis.UniversalClient, prefix string, ttl time.Duration) *Redis {
	return &Redis{client: client, prefix: prefix, ttl: ttl}
}

func (r *Redis) key(hash string) string { return r.prefix + "apq:" + hash }

// Get returns the document registered as hash, and keeps it for another ttl.
func (r *Redis) Get(ctx context.Context, hash string) (string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	doc, err := r.client.GetEx(ctx, r.key(hash), r.ttl).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("get persisted query %s: %w", hash, err)
	}
	return doc, true, nil
}

// Put registers doc as hash for ttl.
func (r *Redis) Put(ctx context.Context, hash, doc string) error {
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	if err := r.client.Set(ctx, r.key(hash), doc, r.ttl).Err(); err != nil {
		return fmt.Errorf("register persisted query %s: %w", hash, err)
	}
	return nil
}

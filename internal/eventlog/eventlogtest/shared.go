package eventlogtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SharedURL is the Redis tests share (REDIS_URL, by default the local one), once it answers.
// Without one the test is skipped, or fails when REQUIRE_REDIS is set (as in CI). Tests that
// share it keep to key prefixes of their own (KeyPrefix).
func SharedURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379"
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	client := redis.NewClient(opts)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		if os.Getenv("REQUIRE_REDIS") != "" {
			t.Fatalf("Redis at %s: %v", url, err)
		}
		t.Skipf("no Redis at %s (%v); set REDIS_URL, or REQUIRE_REDIS to fail instead", url, err)
	}
	return url
}

// SharedClient is a client of SharedURL's Redis, closed when t ends.
func SharedClient(t testing.TB) *redis.Client {
	t.Helper()
	opts, _ := redis.ParseURL(SharedURL(t)) // SharedURL parsed it
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// KeyPrefix is a key prefix of the test's own, under name.
func KeyPrefix(name string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return name + ":" + hex.EncodeToString(b) + ":"
}

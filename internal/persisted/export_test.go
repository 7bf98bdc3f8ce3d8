package persisted

import "time"

// WithClock has a Redis store read the time from now.
func WithClock(now func() time.Time) RedisOption { return func(r *Redis) { r.now = now } }

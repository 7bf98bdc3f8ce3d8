//go:build !linux

package socket

import "time"

// SetUserTimeout does nothing here: TCP_USER_TIMEOUT is Linux's. A vanished peer of a busy
// connection is found when its queue fills, or when TCP gives up.
func (c *Conn) SetUserTimeout(d time.Duration) error { return nil }

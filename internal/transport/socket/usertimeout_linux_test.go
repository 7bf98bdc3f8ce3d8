package socket

import (
	"syscall"
	"testing"
	"time"
)

// SetUserTimeout sets the socket's TCP_USER_TIMEOUT, which is what finds a vanished peer on a
// connection that writes keep busy; a zero duration leaves the system's default.
func TestSetUserTimeoutSetsTheSocketsOption(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  time.Duration
		want time.Duration
	}{
		{"thirty seconds", 30 * time.Second, 30 * time.Second},
		{"a fraction of a second", 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"zero leaves the default", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := loopback(t, time.Minute)
			if !c.Probes() {
				t.Skip("no raw socket here")
			}
			if err := c.SetUserTimeout(tt.set); err != nil {
				t.Fatal(err)
			}
			if got, err := c.userTimeout(); err != nil || got != tt.want {
				t.Fatalf("TCP_USER_TIMEOUT is %v (%v), want %v", got, err, tt.want)
			}
		})
	}
}

// userTimeout is the connection's TCP_USER_TIMEOUT.
func (c *Conn) userTimeout() (time.Duration, error) {
	if c.raw == nil {
		return 0, nil
	}
	var ms int
	var err error
	if cerr := c.raw.Control(func(fd uintptr) {
		ms, err = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout)
	}); cerr != nil {
		return 0, cerr
	}
	return time.Duration(ms) * time.Millisecond, err
}

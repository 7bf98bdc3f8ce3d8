package sftpd

import (
	"log/slog"
	"net"
	"testing"
	"time"
)

func tcpAddr(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000} }

// An attacker with many addresses costs the throttle a bounded table, and cannot push a
// blocked address out of it with addresses that are not blocked.
func TestTheThrottleTableIsBounded(t *testing.T) {
	clk := NewFakeClock(time.Unix(1e9, 0))
	th := newThrottle(3, time.Minute, 5*time.Minute, clk.Now, slog.New(slog.DiscardHandler))
	blocked := tcpAddr("192.0.2.1")
	for range 3 {
		th.fail(blocked)
	}
	for i := range 3 * maxThrottled {
		th.fail(&net.TCPAddr{IP: net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)), Port: 1})
		if n := th.size(); n > maxThrottled {
			t.Fatalf("got %d addresses remembered after %d, want at most %d", n, i+1, maxThrottled)
		}
	}
	if !th.blocked(blocked) {
		t.Error("got the blocked address forgotten, want it kept over addresses that are not blocked")
	}
	// Once their windows and blocks are over, entries are swept as failures come in.
	clk.Advance(6 * time.Minute)
	th.fail(tcpAddr("192.0.2.2"))
	if n := th.size(); n != 1 {
		t.Errorf("got %d addresses remembered after they all went idle, want 1", n)
	}
}

func TestTheThrottleCountsAnIPv6Slash64AsOneAddress(t *testing.T) {
	clk := NewFakeClock(time.Unix(1e9, 0))
	th := newThrottle(3, time.Minute, time.Minute, clk.Now, slog.New(slog.DiscardHandler))
	for _, ip := range []string{"2001:db8::1", "2001:db8::2", "2001:db8::ffff:1"} {
		th.fail(tcpAddr(ip))
	}
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"2001:db8::9", true},
		{"2001:db8:0:1::1", false}, // another /64
		{"::ffff:192.0.2.1", false},
	} {
		if got := th.blocked(tcpAddr(tc.ip)); got != tc.want {
			t.Errorf("%s: got blocked %v, want %v", tc.ip, got, tc.want)
		}
	}
	// An IPv4 address counts the same whether it arrives mapped into IPv6 or not.
	for range 3 {
		th.fail(tcpAddr("::ffff:198.51.100.7"))
	}
	if !th.blocked(tcpAddr("198.51.100.7")) {
		t.Error("got 198.51.100.7 not blocked after failures as ::ffff:198.51.100.7")
	}
}

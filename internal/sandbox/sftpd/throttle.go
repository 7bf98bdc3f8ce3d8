package sftpd

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// maxThrottled bounds the addresses the throttle remembers, so that an attacker with many
// addresses costs it a bounded amount of memory (about 100 bytes each).
const maxThrottled = 4096

// errThrottled refuses a login from a blocked address. x/crypto/ssh does not send it to the
// client, which hears only that it could not log in.
var errThrottled = errors.New("too many failed logins from this address")

// throttle counts failed logins per client address and blocks an address that failed too
// often. Its memory is bounded: idle entries are swept as new failures come in, and beyond
// maxThrottled the entries that matter least are forgotten.
type throttle struct {
	max    int // failures within window that block; negative: never
	window time.Duration
	block  time.Duration
	now    func() time.Time
	log    *slog.Logger

	mu        sync.Mutex
	addrs     map[netip.Prefix]*strikes
	lastSweep time.Time
}

// strikes are one address's recent failures.
type strikes struct {
	since   time.Time // the start of the window the failures are counted in
	n       int
	blocked time.Time // the end of its block; zero when it is not blocked
}

func newThrottle(maxFailures int, window, block time.Duration, now func() time.Time, log *slog.Logger) *throttle {
	return &throttle{max: maxFailures, window: window, block: block, now: now, log: log, addrs: map[netip.Prefix]*strikes{}}
}

// key is the address a client is counted under: its IPv4 address, or its IPv6 /64, since one
// host usually has a whole /64 to pick addresses from. ok is false for an address that is not
// IP, which is not throttled.
func key(a net.Addr) (netip.Prefix, bool) {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}, false
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, err := ip.Prefix(bits)
	return p, err == nil
}

// blocked reports whether a's address is blocked now.
func (t *throttle) blocked(a net.Addr) bool {
	if t.max < 0 {
		return false
	}
	k, ok := key(a)
	if !ok {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.addrs[k]
	return s != nil && t.now().Before(s.blocked)
}

// check refuses a login attempt from a blocked address, before its password is looked at.
func (t *throttle) check(a net.Addr) error {
	if t.blocked(a) {
		return errThrottled
	}
	return nil
}

// fail counts a failed login from a.
func (t *throttle) fail(a net.Addr) {
	if t.max < 0 {
		return
	}
	k, ok := key(a)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	s := t.addrs[k]
	if s == nil {
		t.makeRoom(now)
		s = &strikes{since: now}
		t.addrs[k] = s
	}
	if now.Sub(s.since) >= t.window {
		s.since, s.n = now, 0
	}
	s.n++
	if s.n >= t.max && !now.Before(s.blocked) {
		s.blocked = now.Add(t.block)
		s.since, s.n = s.blocked, 0 // counting starts afresh after the block
		t.log.Warn("sftp logins blocked", "address", k.String(), "failures", t.max, "for", t.block)
	}
}

// makeRoom sweeps the entries that no longer matter, once a window, and when the table is
// still full forgets one that is not blocked (whichever the map yields first, which is
// random), or when all are, the one whose block ends first. Forgetting an address that is not
// blocked costs the attacker behind it at most a few more guesses.
func (t *throttle) makeRoom(now time.Time) {
	if now.Sub(t.lastSweep) >= t.window {
		t.lastSweep = now
		for k, s := range t.addrs {
			if !now.Before(s.blocked) && now.Sub(s.since) >= t.window {
				delete(t.addrs, k)
			}
		}
	}
	if len(t.addrs) < maxThrottled {
		return
	}
	var victim netip.Prefix
	var soonest *strikes
	for k, s := range t.addrs {
		if !now.Before(s.blocked) {
			delete(t.addrs, k)
			return
		}
		if soonest == nil || s.blocked.Before(soonest.blocked) {
			victim, soonest = k, s
		}
	}
	delete(t.addrs, victim)
}

// size is the number of addresses remembered, for tests.
func (t *throttle) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.addrs)
}

// Package netaddr checks the addresses and URLs settings give. net.SplitHostPort and url.Parse
// take "host:not-a-port" and "host:99999" as well formed; a setting holding one would start
// the gateway and fail at the first request that dials it. These checks refuse it at start-up,
// where the error can name the setting.
package netaddr

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
)

// HostPort checks a host:port. needHost: an empty host (every interface) is refused;
// zeroPort: port 0 (a free port the system picks) is allowed.
func HostPort(v string, needHost, zeroPort bool) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("%q is not a host:port", v)
	}
	if needHost && host == "" {
		return fmt.Errorf("%q names no host", v)
	}
	return Port(port, zeroPort)
}

// URL checks that a parsed absolute URL names a host and, if it gives a port, a real one.
func URL(u *url.URL) error {
	if u.Hostname() == "" {
		return fmt.Errorf("%q names no host", u.Redacted())
	}
	if p := u.Port(); p != "" {
		return Port(p, false)
	}
	return nil
}

// Port checks a port number: 1 to 65535, or 0 too when zero is set.
func Port(port string, zero bool) error {
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 || n == 0 && !zero {
		return fmt.Errorf("port %q is not a port number (1 to 65535)", port)
	}
	return nil
}

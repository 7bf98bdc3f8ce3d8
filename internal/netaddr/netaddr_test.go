package netaddr

import (
	"net/url"
	"testing"
)

func TestAddressesAreRefusedUnlessTheirPortIsAPortNumber(t *testing.T) {
	for _, tc := range []struct {
		addr               string
		needHost, zeroPort bool
		ok                 bool
	}{
		{"127.0.0.1:8080", true, false, true},
		{":8080", false, false, true},
		{":8080", true, false, false},
		{"127.0.0.1:0", false, true, true},
		{"127.0.0.1:0", false, false, false},
		{"127.0.0.1:not-a-port", false, true, false},
		{"127.0.0.1:65536", false, true, false},
		{"127.0.0.1:-1", false, true, false},
		{"[::1]:22", true, false, true},
		{"[::1:22", true, false, false},
		{"127.0.0.1", false, true, false},
	} {
		if err := HostPort(tc.addr, tc.needHost, tc.zeroPort); (err == nil) != tc.ok {
			t.Errorf("HostPort(%q, %v, %v) = %v, want ok=%v", tc.addr, tc.needHost, tc.zeroPort, err, tc.ok)
		}
	}
	for _, tc := range []struct {
		raw string
		ok  bool
	}{
		{"https://advisor.example", true},
		{"https://advisor.example:8443/v2", true},
		{"https://advisor.example:99999", false},
		{"https://advisor.example:0", false},
		{"https://:443", false},
	} {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		if err := URL(u); (err == nil) != tc.ok {
			t.Errorf("URL(%q) = %v, want ok=%v", tc.raw, err, tc.ok)
		}
	}
}

// Package config reads the gateway's and the sandbox's settings. Defaults are declared once,
// here, and an invalid setting is reported by its name.
package config

import (
	"fmt"
	"net"
)

// DefaultAddr is where the gateway listens unless ADDR says otherwise.
const DefaultAddr = ":8080"

// Gateway is the gateway's configuration.
type Gateway struct {
	// Addr is the host:port the gateway listens on (ADDR).
	Addr string
}

// Load reads the gateway's configuration from the environment.
func Load(getenv func(string) string) (Gateway, error) {
	cfg := Gateway{Addr: DefaultAddr}
	if v := getenv("ADDR"); v != "" {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return cfg, fmt.Errorf("ADDR %q is not a host:port such as :8080 or 127.0.0.1:8080", v)
		}
		cfg.Addr = v
	}
	return cfg, nil
}

// Package redisconn opens the Redis the gateway keeps its shared state in (the event log, bulk
// loads' progress): one server, or a Redis Cluster. A cluster is named by REDIS_URL with more
// than one address (redis://host1:7000?addr=host2:7001&addr=host3:7002, go-redis's form), or
// with one address and REDIS_CLUSTER=true (a managed cluster's configuration endpoint). Every
// key the gateway uses carries a hash tag, so that each script and transaction touches one slot.
package redisconn

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/advisorhq/gateway/internal/netaddr"
)

// Target is a parsed REDIS_URL: the options of one server, or of a cluster.
type Target struct {
	single  *redis.Options
	cluster *redis.ClusterOptions
}

// Parse reads rawURL as one server's URL, or as a cluster's when cluster is set or the URL
// names more than one address.
func Parse(rawURL string, cluster bool) (Target, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Target{}, fmt.Errorf("not a URL: %w", err)
	}
	// go-redis takes "host:not-a-port" and dials it at the first command; refuse it here, at
	// start-up, where the error names the setting.
	for _, addr := range append([]string{u.Host}, u.Query()["addr"]...) {
		if err := portOf(addr); err != nil {
			return Target{}, err
		}
	}
	if cluster || u.Query().Has("addr") {
		// A cluster has one database; go-redis would ignore a number given, silently.
		if db := strings.Trim(u.Path, "/"); db != "" && db != "0" {
			return Target{}, fmt.Errorf("a Redis Cluster has no database %s: leave the path out", db)
		}
		opts, err := redis.ParseClusterURL(rawURL)
		if err != nil {
			return Target{}, err
		}
		return Target{cluster: opts}, nil
	}
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return Target{}, err
	}
	return Target{single: opts}, nil
}

// Cluster reports whether t names a cluster.
func (t Target) Cluster() bool { return t.cluster != nil }

// Open returns a client of t whose every call, go-redis's retries included, ends within about
// timeout (its dial, read and write timeouts, and the caller's deadline honoured), so that a
// frozen or unreachable Redis fails a call instead of holding it.
func (t Target) Open(timeout time.Duration) redis.UniversalClient {
	if t.cluster != nil {
		o := t.cluster
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout
		o.ContextTimeoutEnabled = true
		return redis.NewClusterClient(o)
	}
	o := t.single
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = timeout, timeout, timeout
	o.ContextTimeoutEnabled = true
	return redis.NewClient(o)
}

// portOf refuses an address whose port is given but is not a port number; with none,
// go-redis uses 6379.
func portOf(addr string) error {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 || strings.HasSuffix(addr, "]") {
		return nil
	}
	if err := netaddr.Port(addr[i+1:], false); err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	return nil
}

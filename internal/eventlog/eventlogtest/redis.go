// Package eventlogtest runs a redis-server of a test's own, for tests of what the gateway does
// while Redis is down or frozen. Such a test must never stop the Redis other tests share.
package eventlogtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a redis-server on a loopback port of its own, without persistence, so a restart
// comes back empty, as a Redis that lost its data would.
type Redis struct {
	t    testing.TB
	port int
	cmd  *exec.Cmd
	// busPort and dir make it a cluster node: its cluster bus's port, and where it keeps the
	// cluster's configuration.
	busPort int
	dir     string
	// config is more of redis-server's settings, as its command line takes them.
	config []string
}

// StartRedis starts a redis-server for t, stopped when t ends, with more settings in config as
// its command line takes them ("--maxmemory", "2mb"). Without redis-server installed the test
// is skipped, or fails when REQUIRE_REDIS is set (as in CI).
func StartRedis(t testing.TB, config ...string) *Redis {
	t.Helper()
	needRedisServer(t)
	r := &Redis{t: t, port: freePort(t), config: config}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// Addr is the server's host:port.
func (r *Redis) Addr() string { return fmt.Sprintf("127.0.0.1:%d", r.port) }

// URL is the server's address as REDIS_URL takes it.
func (r *Redis) URL() string { return "redis://" + r.Addr() }

// Start starts the server (again, after Stop) on its port and waits until it answers.
func (r *Redis) Start() {
	r.t.Helper()
	if err := r.start(); err != nil {
		r.t.Fatal(err)
	}
}

func (r *Redis) start() error {
	if r.cmd != nil {
		return errors.New("redis-server is already running")
	}
	args := []string{"--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"}
	if r.busPort != 0 {
		args = append(args, "--cluster-enabled", "yes", "--cluster-port", fmt.Sprint(r.busPort),
			"--cluster-config-file", fmt.Sprintf("nodes-%d.conf", r.port), "--dir", r.dir,
			"--cluster-node-timeout", "2000")
	}
	args = append(args, r.config...)
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	r.cmd = cmd
	client := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer client.Close()
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := client.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("redis-server on %s did not answer within 5 s of starting", r.Addr())
}

// Stop kills the server, as a crash would; it does nothing when the server is not running.
func (r *Redis) Stop() {
	if r.cmd == nil {
		return
	}
	// A frozen process still dies of SIGKILL; SIGCONT first lets it go at once.
	_ = r.cmd.Process.Signal(syscall.SIGCONT)
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}

// StartFull starts a redis-server for t that has at most 2 MB of memory and refuses writes
// beyond it (maxmemory with noeviction), as a shared Redis that other data filled would; Fill
// fills it.
func StartFull(t testing.TB) *Redis {
	t.Helper()
	return StartRedis(t, "--maxmemory", "2mb", "--maxmemory-policy", "noeviction")
}

// Fill writes keys of its own until the server refuses a write for want of memory, and keeps it
// refusing every write, however small; it returns a function that deletes the keys again, after
// which writes succeed. It fails the test when the server takes 64 MB without refusing (it was
// not started with a maxmemory, such as by StartFull).
func (r *Redis) Fill() (free func()) {
	r.t.Helper()
	keys, err := r.fill()
	if err != nil {
		r.t.Fatal(err)
	}
	return func() {
		r.t.Helper()
		client := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
		defer client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := client.Del(ctx, keys...).Err(); err != nil {
			r.t.Fatalf("free redis-server on %s: %v", r.Addr(), err)
		}
	}
}

// fill writes values until one is refused, then sets maxmemory well below the memory used: what
// Redis counts includes its clients' buffers, which shrink when a client goes or its buffer is
// trimmed, and would bring a Redis filled just to the limit back under it.
func (r *Redis) fill() ([]string, error) {
	client := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	keys := []string{"eventlogtest:fill:none"} // DEL needs one key at least
	value := strings.Repeat("x", 16<<10)
	for {
		if len(keys) > 4096 {
			return nil, fmt.Errorf("redis-server on %s took 64 MB without refusing a write: start it with a maxmemory", r.Addr())
		}
		key := fmt.Sprintf("eventlogtest:fill:%d", len(keys))
		err := client.Set(ctx, key, value, 0).Err()
		if err != nil && strings.HasPrefix(err.Error(), "OOM ") {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("fill redis-server on %s: %w", r.Addr(), err)
		}
		keys = append(keys, key)
	}
	info, err := client.InfoMap(ctx, "memory").Result()
	if err != nil {
		return nil, fmt.Errorf("read redis-server's memory on %s: %w", r.Addr(), err)
	}
	used, err := strconv.ParseInt(info["Memory"]["used_memory"], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("read redis-server's used_memory on %s: %w", r.Addr(), err)
	}
	// Below what is used by more than clients' buffers can give back; above what is used once
	// the keys are deleted, so that freeing them makes room again.
	limit := used - 256<<10
	if err := client.ConfigSet(ctx, "maxmemory", strconv.FormatInt(limit, 10)).Err(); err != nil {
		return nil, fmt.Errorf("lower redis-server's maxmemory on %s: %w", r.Addr(), err)
	}
	return keys, nil
}

// Freeze stops the process with SIGSTOP: connections stay open and new ones are accepted by the
// kernel, but nothing is answered, as with a Redis stuck in a long command or a lost network.
func (r *Redis) Freeze() { r.signal(syscall.SIGSTOP) }

// Thaw lets a frozen server go on with SIGCONT.
func (r *Redis) Thaw() { r.signal(syscall.SIGCONT) }

func (r *Redis) signal(sig os.Signal) {
	r.t.Helper()
	if r.cmd == nil {
		r.t.Fatal("redis-server is not running")
	}
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatalf("signal redis-server: %v", err)
	}
}

func needRedisServer(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("REQUIRE_REDIS") != "" {
			t.Fatal("redis-server is not installed")
		}
		t.Skip("redis-server is not installed")
	}
}

// Cluster is a Redis Cluster of three masters, each a redis-server of the test's own, with the
// hash slots split evenly between them and no replicas.
type Cluster struct {
	Nodes []*Redis
}

// StartCluster starts a cluster for t, stopped when t ends. Without redis-server the test is
// skipped, or fails with REQUIRE_REDIS.
func StartCluster(t testing.TB) *Cluster {
	t.Helper()
	needRedisServer(t)
	c, err := NewCluster(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// NewCluster starts a cluster keeping its files in dir, and waits until every node says it is
// up; Stop stops it. It is for a package's tests to share one (from TestMain): starting one
// takes a second or two.
func NewCluster(dir string) (*Cluster, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("redis-server is not installed: %w", err)
	}
	c := &Cluster{}
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	for i := range 3 {
		r := &Redis{port: ports[2*i], busPort: ports[2*i+1], dir: dir}
		if err := r.start(); err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, r)
	}
	if err := c.join(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// join gives each node a third of the slots, introduces them, and waits for the cluster.
func (c *Cluster) join() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const slots = 16384
	for i, n := range c.Nodes {
		client := redis.NewClient(&redis.Options{Addr: n.Addr()})
		lo, hi := i*slots/len(c.Nodes), (i+1)*slots/len(c.Nodes)-1
		err := client.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err()
		if err == nil && i > 0 {
			err = client.Do(ctx, "CLUSTER", "MEET", "127.0.0.1", c.Nodes[0].port, c.Nodes[0].busPort).Err()
		}
		client.Close()
		if err != nil {
			return fmt.Errorf("join node %s: %w", n.Addr(), err)
		}
	}
	for _, n := range c.Nodes {
		client := redis.NewClient(&redis.Options{Addr: n.Addr()})
		for {
			info, err := client.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:3") {
				break
			}
			if ctx.Err() != nil {
				client.Close()
				return fmt.Errorf("the cluster did not come up within 20 s: node %s says %q (%v)", n.Addr(), info, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		client.Close()
	}
	return nil
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes {
		n.Stop()
	}
}

// URL is the cluster as REDIS_URL takes it: every node's address.
func (c *Cluster) URL() string {
	u := "redis://" + c.Nodes[0].Addr()
	for i, n := range c.Nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + n.Addr()
	}
	return u
}

// freePorts finds n distinct loopback ports nothing listens on now: all are held open until
// all are found, so none is found twice.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// freePort finds a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

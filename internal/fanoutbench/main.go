// Command fanoutbench measures the gateway's fan-out of live events to many subscribers: real
// graphql-transport-ws (or SSE) clients in worker processes, webhooks at a rate or in a burst,
// and the webhook-to-frame latency, losses, duplicates, order, deliveries/s and the gateway's
// memory and CPU. See docs/performance.md, "Fan-out benchmark".
//
//	go run ./internal/fanoutbench -start -subscribers 10000 -rate 2 -duration 60s
//
// With -floor it measures instead what the machine allows any server: raw TCP writes of a frame
// the gateway's size to as many sockets, read by another process (floor.go).
//
//	go run ./internal/fanoutbench -floor -subscribers 10000
//
// With -with-floor it measures both and compares them; -rounds N takes N such rounds in turn
// (rounds.go) and prints the median ratios.
//
//	go run ./internal/fanoutbench -start -with-floor -subscribers 10000 -rate 2/s -duration 30s -rounds 5
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/advisorhq/gateway/internal/fanoutload"
	"github.com/advisorhq/gateway/internal/gatewayproc"
	"github.com/advisorhq/gateway/internal/redisconn"
	"github.com/redis/go-redis/v9"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case len(os.Args) > 1 && os.Args[1] == fanoutload.WorkerFlag:
		err = fanoutload.RunWorker(ctx, os.Args[1:], os.Stdin, os.Stdout)
	case len(os.Args) > 1 && os.Args[1] == floorFlag:
		err = runFloorClient(os.Args[2:], os.Stdout)
	case len(os.Args) > 1 && os.Args[1] == "-floor":
		err = runFloor(ctx, os.Args[2:], os.Stdout, os.Stderr)
	default:
		err = run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) { // -help printed the usage: not a failure
		fmt.Fprintln(os.Stderr, "fanoutbench:", err)
		stop()
		os.Exit(1)
	}
}

type envList []string

func (e *envList) String() string     { return strings.Join(*e, ",") }
func (e *envList) Set(v string) error { *e = append(*e, v); return nil }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fanoutbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg fanoutload.Config
	var start, asJSON, withFloor bool
	var rounds int
	var rate, redisURL, binary string
	var env envList
	fs.BoolVar(&start, "start", false, "build and start a gateway (embedded sandbox, its demo caller, REDIS_URL) and measure its memory and CPU")
	fs.StringVar(&binary, "gateway-bin", "", "with -start: run this gateway binary instead of building the module's")
	fs.StringVar(&redisURL, "redis", "redis://127.0.0.1:6379", "with -start: the gateway's REDIS_URL; empty for its in-process event log")
	fs.Var(&env, "gateway-env", "with -start: NAME=VALUE for the gateway's environment (repeatable), e.g. SUBSCRIBER_BUFFER=1024")
	fs.StringVar(&cfg.Gateway, "gateway", "", "the base URL of a running gateway (instead of -start)")
	fs.IntVar(&cfg.GatewayPID, "gateway-pid", 0, "with -gateway: its process id, to read its memory and CPU")
	fs.StringVar(&cfg.WebhookKey, "webhook-key", os.Getenv("WEBHOOK_API_KEY"), "with -gateway: its WEBHOOK_API_KEY")
	fs.IntVar(&cfg.Subscribers, "subscribers", 1000, "WebSockets (or SSE streams) to open")
	fs.IntVar(&cfg.PerSocket, "per-socket", 1, "subscriptions on each WebSocket")
	fs.BoolVar(&cfg.SSE, "sse", false, "subscribe over Server-Sent Events, one stream each")
	fs.BoolVar(&cfg.InitWithUpgrade, "init-with-upgrade", false, "send connection_init with the upgrade request: in a storm, every 4408 is then one the gateway sent a client whose connection_init had arrived")
	fs.IntVar(&cfg.PerWorker, "per-worker", 5000, "sockets per worker process at most (each is an open file; keep under the open-file limit); with -with-floor, all in one, as the floor's reader")
	fs.StringVar(&rate, "rate", "2/s", "webhooks per second (\"2/s\" or \"2\")")
	fs.DurationVar(&cfg.Duration, "duration", 60*time.Second, "how long to post webhooks")
	fs.IntVar(&cfg.Burst, "burst", 0, "post this many webhooks within one second instead of -rate")
	fs.DurationVar(&cfg.Drain, "drain", 30*time.Second, "how long after the last webhook to wait for frames")
	fs.DurationVar(&cfg.Setup, "setup-timeout", 5*time.Minute, "how long opening the subscribers may take")
	fs.IntVar(&cfg.Dial, "dial", 64, "sockets each worker opens at once")
	fs.IntVar(&cfg.Posters, "posters", 32, "webhooks in flight at most")
	fs.BoolVar(&asJSON, "json", false, "print the figures as JSON")
	fs.BoolVar(&withFloor, "with-floor", false, "measure the floor first (as -floor, the same sockets and frames at the same rate), then the gateway, and compare them")
	fs.IntVar(&rounds, "rounds", 1, "with -with-floor: measure the floor and the gateway this many times each, in turn (floor first in odd rounds, gateway first in even ones), and print each round and the medians")
	if err := fs.Parse(args); err != nil {
		return err
	}
	r, err := strconv.ParseFloat(strings.TrimSuffix(rate, "/s"), 64)
	if err != nil {
		return fmt.Errorf("-rate %q: %w", rate, err)
	}
	cfg.Rate = r
	cfg.Progress = stderr
	if start == (cfg.Gateway != "") {
		return errors.New("give -start or -gateway URL, one of them")
	}
	if withFloor && (cfg.Burst > 0 || cfg.PerSocket != 1) {
		return errors.New("-with-floor compares one frame a socket at -rate: give neither -burst nor -per-socket")
	}
	if withFloor && !flagSet(fs, "per-worker") {
		// The floor's reader is one process; clients split over two cost the machine 2–3 µs
		// more per frame, which the gateway's latency would pay for.
		cfg.PerWorker = cfg.Subscribers
	}
	if rounds < 1 {
		return fmt.Errorf("-rounds %d: at least one round", rounds)
	}
	if rounds > 1 && !withFloor {
		return errors.New("-rounds alternates the floor and the gateway: give -with-floor")
	}
	if start && binary == "" {
		// Built once, before anything is measured, and started afresh for each measurement.
		dir, err := os.MkdirTemp("", "fanoutbench-build-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		binary = filepath.Join(dir, "gateway")
		if err := gatewayproc.Build(ctx, binary, stderr); err != nil {
			return err
		}
	}
	// measureGateway starts a gateway of its own (with -start) and stops it, its Redis keys
	// removed, before it returns: each measurement is of a fresh process, whose RSS growth
	// per subscriber is then not hidden by memory an earlier round freed, and no gateway is
	// running while the floor is measured.
	measureGateway := func(ctx context.Context) (*fanoutload.Result, error) {
		c := cfg
		if start {
			gw, err := startGateway(ctx, binary, redisURL, env, stderr)
			if err != nil {
				return nil, err
			}
			defer gw.stop()
			c.Gateway, c.GatewayPID, c.WebhookKey = gw.URL, gw.PID(), gw.key
		}
		return fanoutload.Run(ctx, c)
	}
	if !withFloor {
		res, err := measureGateway(ctx)
		if err != nil {
			return err
		}
		if asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		}
		res.Print(stdout)
		return nil
	}
	every := time.Duration(float64(time.Second) / cfg.Rate)
	measureFloorOnce := func(ctx context.Context) (*floorResult, error) {
		fmt.Fprintf(stderr, "measuring the floor: %d sockets, a frame every %s for %s\n", cfg.Subscribers, every, cfg.Duration)
		return measureFloor(ctx, cfg.Subscribers, int(cfg.Rate*cfg.Duration.Seconds()), every, stderr)
	}
	var done func(round)
	if rounds > 1 {
		done = func(r round) {
			fmt.Fprintf(stderr, "round %d of %d: CPU per delivery %.2f×, p50 %.2f×, p99 %.2f×\n", r.N, rounds, r.Ratios.CPU, r.Ratios.P50, r.Ratios.P99)
			if !asJSON {
				r.print(stdout, rounds)
			}
		}
	}
	all, err := runRounds(ctx, rounds, measureFloorOnce, measureGateway, done)
	if err != nil {
		return err
	}
	if rounds == 1 { // as before -rounds
		r := all[0]
		if asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				Floor   *floorResult       `json:"floor"`
				Gateway *fanoutload.Result `json:"gateway"`
				Ratios  *comparison        `json:"ratios"`
			}{r.Floor, r.Gateway, r.Ratios})
		}
		r.Gateway.Print(stdout)
		r.Floor.print(stdout)
		r.Ratios.print(stdout)
		return nil
	}
	return report(stdout, all, asJSON)
}

// report prints the rounds and what they say together, as JSON or as tables, and fails when
// a round's deliveries were not correct: the figures are out either way, and a script that
// runs the rounds learns from the exit status that frames were lost, duplicated or reordered.
func report(stdout io.Writer, all []round, asJSON bool) error {
	sum := summarize(all)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Rounds  []round  `json:"rounds"`
			Summary *summary `json:"summary"`
		}{all, sum}); err != nil {
			return err
		}
	} else {
		printSummary(stdout, all, sum)
	}
	if len(sum.Incorrect) > 0 {
		return fmt.Errorf("the gateway's deliveries were not correct in round(s) %v", sum.Incorrect)
	}
	return nil
}

// flagSet reports whether the command line gave the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// comparison is the gateway against the floor, measured in the same run: the targets
// are ratios, which the machine's load moves far less than the figures themselves.
type comparison struct {
	// CPU is the gateway's CPU per delivery over the floor writer's per frame.
	CPU float64 `json:"cpuPerDelivery"`
	// P99, P50 are the latencies' ratios.
	P99 float64 `json:"p99"`
	P50 float64 `json:"p50"`
	// ClientsUSPerFrame and ReaderUSPerFrame are the CPU per frame of the gateway's clients and
	// of the floor's reader: the clients share the cores with the gateway, so its latency is
	// compared fairly only when they cost about what the reader does.
	ClientsUSPerFrame float64 `json:"clientsCpuMicrosecondsPerFrame"`
	ReaderUSPerFrame  float64 `json:"readerCpuMicrosecondsPerFrame"`
}

func compare(floor *floorResult, gw *fanoutload.Result) *comparison {
	c := &comparison{ClientsUSPerFrame: gw.WorkersCPUMsPer1000Dlvr, ReaderUSPerFrame: floor.Reader.CPUUSPerFrame} // ms per 1,000 is µs per one
	if floor.WriterUSPerFrame > 0 {
		c.CPU = gw.CPUMsPer1000Dlvr / floor.WriterUSPerFrame // ms per 1,000 is µs per one
	}
	if floor.Reader.LatencyMS.P99 > 0 {
		c.P99 = gw.LatencyMS.P99 / floor.Reader.LatencyMS.P99
	}
	if floor.Reader.LatencyMS.P50 > 0 {
		c.P50 = gw.LatencyMS.P50 / floor.Reader.LatencyMS.P50
	}
	return c
}

func (c *comparison) print(w io.Writer) {
	fmt.Fprintf(w, "gateway / floor: CPU per delivery %.2f×, p50 %.2f×, p99 %.2f×\n", c.CPU, c.P50, c.P99)
	fmt.Fprintf(w, "clients: %.1f µs CPU per frame; the floor's reader %.1f µs\n", c.ClientsUSPerFrame, c.ReaderUSPerFrame)
}

// gateway is a gateway process the tool started.
type gateway struct {
	*gatewayproc.Process
	key   string
	redis string // the gateway's REDIS_URL, whose keys of this run stop removes
}

// startGateway runs binary on a loopback port with the embedded sandbox as its upstream,
// REDIS_URL, a fresh key prefix, a known webhook key and caller authentication off; its log
// goes to a file named on stderr.
func startGateway(ctx context.Context, binary, redisURL string, env []string, stderr io.Writer) (*gateway, error) {
	dir, err := os.MkdirTemp("", "fanoutbench-")
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("fanoutbench-%d", time.Now().UnixNano())
	spec := gatewayproc.Spec{Binary: binary, Serving: gatewayproc.GatewayServing, Log: filepath.Join(dir, "gateway.log"),
		Env: []string{"ADDR=127.0.0.1:0", "WEBHOOK_API_KEY=" + key, "REDIS_URL=" + redisURL, "REDIS_KEY_PREFIX=" + key + ":"}}
	for _, name := range []string{"ADVISOR_BASE_URL", "ADVISOR_ACCESS_TOKEN", "ADVISOR_BASIC_CREDENTIALS", "AUTH_JWKS_URL"} {
		spec.Env = append(spec.Env, name+"=")
	}
	spec.Env = append(spec.Env, env...)
	p, err := gatewayproc.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "gateway pid %d at %s (log %s)\n", p.PID(), p.URL, p.Log)
	return &gateway{Process: p, key: key, redis: redisURL}, nil
}

// stop stops the gateway and removes the run's keys from Redis; its log stays.
func (g *gateway) stop() {
	g.Stop()
	if g.redis != "" {
		if err := removeKeys(g.redis, g.key+":"); err != nil {
			fmt.Fprintf(os.Stderr, "fanoutbench: remove the run's keys from Redis: %v\n", err)
		}
	}
}

// removeKeys deletes every key under prefix.
func removeKeys(url, prefix string) error {
	target, err := redisconn.Parse(url, false)
	if err != nil {
		return err
	}
	client := target.Open(30 * time.Second)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cluster, ok := client.(*redis.ClusterClient); ok {
		return cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return unlinkAll(ctx, node, prefix)
		})
	}
	return unlinkAll(ctx, client, prefix)
}

// unlinkAll deletes the keys under prefix that node holds.
func unlinkAll(ctx context.Context, node redis.UniversalClient, prefix string) error {
	iter := node.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	// One key a command, pipelined: a cluster refuses a command over keys of different slots.
	for batch := range slices.Chunk(keys, 1000) {
		if _, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range batch {
				p.Unlink(ctx, k)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

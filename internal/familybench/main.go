// Command familybench is issue 28's load test of the running server: it starts the sandbox
// as a process of its own, seeds a family of each size asked for, starts each gateway binary
// against it pinned to one core with GOMAXPROCS=1, and measures the family query from a closed
// loop of keep-alive connections (internal/familyload). In each round the binaries send in
// turns of a second (-turn), in order and then in reverse, until each has had its window, so
// that what else the machine does falls on all of them alike. It reports queries/s, the
// gateway's CPU per query from /proc, p50 and p99 latency and memory, and, given two binaries
// or more, each one's CPU per query over the first's. See docs/performance.md, "The running
// server".
//
//	go run ./internal/familybench -contacts 20,200
//	go run ./internal/familybench -compare /tmp/gateway-33e3fdb -contacts 20,200 -rounds 5
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/advisorhq/gateway/internal/familyload"
	"github.com/advisorhq/gateway/internal/gatewayproc"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) { // -help printed the usage: not a failure
		fmt.Fprintln(os.Stderr, "familybench:", err)
		os.Exit(1)
	}
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// The sandbox's first firm and the credentials the tool gives it and the gateways.
const (
	firm       = "firm-001"
	token      = "familybench-token"
	basic      = "familybench:familybench"
	webhookKey = "familybench-webhook-key"
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("familybench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var binaries stringList
	var compare, contactsList, cpus string
	var cfg familyload.Config
	var rounds int
	var turn time.Duration
	var asJSON bool
	fs.Var(&binaries, "binary", "a gateway binary to measure (repeatable; the first is the one the others are compared with); none: the module's, built")
	fs.StringVar(&compare, "compare", "", "a gateway binary (such as an older commit's) to compare the module's, built, with: the same as -binary PATH -binary <the module's>")
	fs.StringVar(&contactsList, "contacts", "200", "the family's cards, or several sizes: 20,200")
	fs.IntVar(&cfg.Connections, "connections", 8, "clients sending at once, each on a keep-alive connection")
	fs.DurationVar(&cfg.Warmup, "warmup", 3*time.Second, "how long each run sends before its measured window")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "each run's measured window")
	fs.IntVar(&cfg.Queries, "queries", 0, "measure this many queries instead of -duration")
	fs.IntVar(&rounds, "rounds", 3, "runs of each binary at each size, taking turns")
	fs.DurationVar(&turn, "turn", time.Second, "within a round, the binaries send in turns this long (in order, then in reverse) until each has had -duration; 0: each its whole window in one, one after the other")
	fs.StringVar(&cpus, "cpus", "0", "the cores the gateway may run on (taskset -c); empty: any. The sandbox gets the others")
	fs.BoolVar(&asJSON, "json", false, "print every run's figures as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var sizes []int
	for f := range strings.SplitSeq(contactsList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return fmt.Errorf("-contacts %q: want sizes of 2 or more, comma-separated", contactsList)
		}
		sizes = append(sizes, n)
	}
	if rounds < 1 {
		return errors.New("-rounds: at least 1")
	}
	switch {
	case turn < 0:
		return errors.New("-turn: zero or more")
	case cfg.Queries > 0 && flagSet(fs, "turn") && turn > 0:
		return errors.New("-turn shares out -duration: give it zero with -queries, or leave it out")
	case cfg.Queries > 0:
		turn = 0
	}

	dir, err := os.MkdirTemp("", "familybench-")
	if err != nil {
		return err
	}
	// The logs stay when the run fails, for the error to point at.
	defer func() {
		if err == nil {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintf(stderr, "the processes' logs are in %s\n", dir)
		}
	}()
	// The module's binary serves the sandbox whatever the gateways measured are: they all
	// then have the same upstream.
	own := filepath.Join(dir, "gateway")
	fmt.Fprintln(stderr, "building the gateway")
	if err := gatewayproc.Build(ctx, own, stderr); err != nil {
		return err
	}
	if compare != "" {
		binaries = append(binaries, compare, own)
	}
	if len(binaries) == 0 {
		binaries = append(binaries, own)
	}

	sb, err := gatewayproc.Start(ctx, gatewayproc.Spec{
		Binary: own, Args: []string{"sandbox", "-empty", "-addr", "127.0.0.1:0", "-sftp-addr", "127.0.0.1:0", "-session-addr", "127.0.0.1:0"},
		Env:  []string{"SANDBOX_ACCESS_TOKEN=" + token, "SANDBOX_BASIC_CREDENTIALS=" + basic},
		CPUs: otherCPUs(cpus), Serving: gatewayproc.SandboxServing, Log: filepath.Join(dir, "sandbox.log"),
	})
	if err != nil {
		return fmt.Errorf("start the sandbox: %w", err)
	}
	defer sb.Stop()
	fmt.Fprintf(stderr, "sandbox pid %d at %s\n", sb.PID(), sb.URL)
	wids := make(map[int]string, len(sizes))
	for _, n := range sizes {
		if wids[n], err = familyload.Seed(ctx, http.DefaultClient, sb.URL, token, fmt.Sprintf("FAMILYBENCH-%d", n), n); err != nil {
			return err
		}
	}

	gateways := make([]*gatewayproc.Process, len(binaries))
	for i, bin := range binaries {
		gw, err := startGateway(ctx, bin, sb.URL, cpus, filepath.Join(dir, fmt.Sprintf("gateway-%d.log", i)))
		if err != nil {
			return err
		}
		defer gw.Stop()
		gateways[i] = gw
		fmt.Fprintf(stderr, "gateway %d: %s, pid %d at %s\n", i, bin, gw.PID(), gw.URL)
	}

	var runs []runResult
	for _, n := range sizes {
		for r := range rounds {
			cfgs := make([]familyload.Config, len(gateways))
			for i, gw := range gateways {
				cfgs[i] = cfg
				cfgs[i].Gateway, cfgs[i].GatewayPID, cfgs[i].WID, cfgs[i].Contacts = gw.URL, gw.PID(), wids[n], n
			}
			results, err := measureRound(ctx, cfgs, turn)
			if err != nil {
				return fmt.Errorf("%d contacts, round %d: %w (the gateways' logs are in %s)", n, r+1, err, dir)
			}
			for i, res := range results {
				fmt.Fprintf(stderr, "%d contacts, round %d, gateway %d: %.0f queries/s, %.0f µs CPU a query\n", n, r+1, i, res.QPS, res.CPUPerQueryUS)
				runs = append(runs, runResult{Binary: binaries[i], Index: i, Round: r + 1, Result: res})
			}
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(runs)
	}
	names := slices.Clone(binaries)
	for i, b := range names {
		if b == own {
			names[i] = "the module's, built"
		}
	}
	printSummary(stdout, names, sizes, runs)
	return nil
}

// measureRound measures each gateway once: in turns of turn, or, with no turn, each its whole
// window in one, one after the other.
func measureRound(ctx context.Context, cfgs []familyload.Config, turn time.Duration) ([]*familyload.Result, error) {
	if turn > 0 {
		return familyload.RunTurns(ctx, cfgs, turn)
	}
	out := make([]*familyload.Result, len(cfgs))
	for i, c := range cfgs {
		res, err := familyload.Run(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Gateway, err)
		}
		out[i] = res
	}
	return out, nil
}

// startGateway runs bin against the sandbox at upstream, pinned to cpus with GOMAXPROCS=1,
// as the sandbox's first firm with caller authentication off. The settings are those of
// 33e3fdb's gateway too, which reads the ones it has and ignores ADVISOR_FIRM.
func startGateway(ctx context.Context, bin, upstream, cpus, log string) (*gatewayproc.Process, error) {
	env := []string{"GOMAXPROCS=1", "ADDR=127.0.0.1:0",
		"ADVISOR_BASE_URL=" + upstream, "ADVISOR_FIRM=" + firm, "ADVISOR_ACCESS_TOKEN=" + token,
		"ADVISOR_BASIC_CREDENTIALS=" + basic, "WEBHOOK_API_KEY=" + webhookKey, "AUTH_DISABLED=true"}
	// Whatever this shell has set must not reach the gateways: they would differ by it.
	for _, name := range []string{"FIRMS_FILE", "AUTH_JWKS_URL", "REDIS_URL", "RATE_LIMIT", "PERSISTED_OPERATIONS_FILE",
		"BULK_SFTP_ADDR", "ASSISTANT_SESSION_URL", "ASSISTANT_EMBED_URL", "REFERRAL_URL", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		env = append(env, name+"=")
	}
	return gatewayproc.Start(ctx, gatewayproc.Spec{Binary: bin, Env: env, CPUs: cpus, Serving: gatewayproc.GatewayServing, Log: log})
}

// otherCPUs is the cores that are not in cpus when cpus is one core and the machine has
// others, so that the sandbox does not take the gateway's; else any core.
func otherCPUs(cpus string) string {
	core, err := strconv.Atoi(cpus)
	n := runtime.NumCPU()
	if err != nil || n < 2 {
		return ""
	}
	var others []string
	for c := range n {
		if c != core {
			others = append(others, strconv.Itoa(c))
		}
	}
	return strings.Join(others, ",")
}

type runResult struct {
	Binary string `json:"binary"`
	Index  int    `json:"index"`
	Round  int    `json:"round"`
	*familyload.Result
}

// printSummary prints each binary's medians at each size and, for the second binary on, its
// median CPU per query over the first's, with the range of the rounds' own ratios (each
// round's runs take turns, so a round's ratio shares its machine load).
func printSummary(w io.Writer, binaries []string, sizes []int, runs []runResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "contacts\tgateway\truns\tqueries/s\tCPU µs/query\tp50 ms\tp99 ms\tRSS MiB\tCPU/query vs gateway 0\tper round\t")
	for _, n := range sizes {
		for i := range binaries {
			var mine, base []runResult
			for _, r := range runs {
				if r.Contacts == n && r.Index == i {
					mine = append(mine, r)
				}
				if r.Contacts == n && r.Index == 0 {
					base = append(base, r)
				}
			}
			cpu := median(mine, func(r runResult) float64 { return r.CPUPerQueryUS })
			ratio, perRound := "", ""
			if i > 0 {
				ratio = fmt.Sprintf("%.2f×", cpu/median(base, func(r runResult) float64 { return r.CPUPerQueryUS }))
				var rs []float64
				for k := range min(len(mine), len(base)) {
					rs = append(rs, mine[k].CPUPerQueryUS/base[k].CPUPerQueryUS)
				}
				perRound = fmt.Sprintf("%.2f–%.2f", slices.Min(rs), slices.Max(rs))
			}
			fmt.Fprintf(tw, "%d\t%d\t%d\t%.0f\t%.0f\t%.1f\t%.1f\t%.0f\t%s\t%s\t\n", n, i, len(mine),
				median(mine, func(r runResult) float64 { return r.QPS }), cpu,
				median(mine, func(r runResult) float64 { return r.LatencyMS.P50 }),
				median(mine, func(r runResult) float64 { return r.LatencyMS.P99 }),
				median(mine, func(r runResult) float64 { return float64(r.RSSKB) / 1024 }), ratio, perRound)
		}
	}
	tw.Flush()
	for i, b := range binaries {
		fmt.Fprintf(w, "gateway %d: %s\n", i, b)
	}
}

// flagSet reports whether the command line gave the flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// median is the median of f over runs.
func median(runs []runResult, f func(runResult) float64) float64 {
	if len(runs) == 0 {
		return 0
	}
	vs := make([]float64, len(runs))
	for i, r := range runs {
		vs[i] = f(r)
	}
	slices.Sort(vs)
	if len(vs)%2 == 0 {
		return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	return vs[len(vs)/2]
}

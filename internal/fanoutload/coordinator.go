// Package fanoutload measures how the gateway fans webhook events out to its subscribers: a
// coordinator opens N real graphql-transport-ws (or SSE) subscribers spread over worker
// processes, posts webhooks at a rate or in a burst, and computes from what each worker
// received the webhook-to-frame latency, what was lost, duplicated or out of order, and the
// gateway's memory and CPU. The command internal/fanoutbench runs it.
package fanoutload

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/advisorhq/gateway/internal/gatewayproc"
)

// Config is one measurement.
type Config struct {
	Gateway    string // the gateway's base URL
	WebhookKey string
	// GatewayPID, when not 0, is the gateway's process, whose memory and CPU are read.
	GatewayPID int

	Subscribers int  // sockets (or SSE streams)
	PerSocket   int  // subscriptions on each socket; SSE has one
	SSE         bool // SSE streams instead of WebSockets
	// InitWithUpgrade has each WebSocket send connection_init with its upgrade request, so
	// that it has arrived when the gateway's init timer starts.
	InitWithUpgrade bool
	PerWorker       int // sockets per worker process at most

	Rate     float64       // webhooks per second
	Duration time.Duration // how long to post at Rate
	Burst    int           // when not 0: this many events within one second instead of Rate
	Drain    time.Duration // how long after the last webhook to wait for frames
	Setup    time.Duration // how long a worker may take to open its sockets
	Dial     int           // sockets each worker opens at once
	// Posters bounds the webhooks in flight: the schedule slips, and the result says so,
	// when the gateway answers more slowly than Rate or Burst asks.
	Posters int

	// Spawn starts a worker with these arguments; nil runs this executable.
	Spawn Spawner
	// Progress, when set, receives a line about each phase.
	Progress io.Writer
}

// Process is a running worker: its stdin and stdout, and a wait for its end.
type Process struct {
	Stdin  io.WriteCloser
	Stdout io.Reader
	Wait   func() error
}

// Spawner starts a worker process with args (which begin with WorkerFlag).
type Spawner func(ctx context.Context, args []string) (*Process, error)

// ExecSpawner re-runs path (this executable) as a worker; the worker dies with ctx.
func ExecSpawner(path string) Spawner {
	return func(ctx context.Context, args []string) (*Process, error) {
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Stderr = os.Stderr
		cmd.WaitDelay = 5 * time.Second
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return &Process{Stdin: in, Stdout: out, Wait: cmd.Wait}, nil
	}
}

// InProcess runs workers as goroutines over pipes: the same protocol, for tests.
func InProcess() Spawner {
	return func(ctx context.Context, args []string) (*Process, error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			err := RunWorker(ctx, args, inR, outW)
			outW.CloseWithError(err)
			inR.Close()
			done <- err
		}()
		return &Process{Stdin: inW, Stdout: outR, Wait: func() error { return <-done }}, nil
	}
}

type worker struct {
	proc  *Process
	lines *bufio.Scanner
	ready workerMsg
	res   workerMsg
}

func (w *worker) read(ctx context.Context, wait time.Duration, want string) (workerMsg, error) {
	got := make(chan error, 1)
	var m workerMsg
	go func() {
		if !w.lines.Scan() {
			err := w.lines.Err()
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			got <- fmt.Errorf("the worker ended: %w", err)
			return
		}
		got <- json.Unmarshal(w.lines.Bytes(), &m)
	}()
	select {
	case err := <-got:
		if err == nil && m.Kind != want {
			err = fmt.Errorf("the worker said %q, want %q", m.Kind, want)
		}
		return m, err
	case <-time.After(wait):
		return m, fmt.Errorf("no %q from a worker within %s", want, wait)
	case <-ctx.Done():
		return m, ctx.Err()
	}
}

// sent is one webhook: when it was posted and the id the gateway stored it under.
type sent struct {
	at time.Time
	id string
}

// Run measures once and returns the figures.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	run := runID()
	res := &Result{Mode: "graphql-transport-ws", Sockets: cfg.Subscribers, PerSocket: cfg.PerSocket,
		Subscriptions: cfg.Subscribers * cfg.PerSocket, Rate: cfg.Rate, Duration: cfg.Duration.String(), Burst: cfg.Burst}
	if cfg.SSE {
		res.Mode = "sse"
	}
	base, _ := gaugeSubscribers(ctx, cfg.Gateway)
	res.RSSBeforeKB = gatewayproc.RSSKB(cfg.GatewayPID)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers, err := startWorkers(ctx, cfg, run)
	defer func() {
		for _, w := range workers {
			w.proc.Stdin.Close()
		}
		for _, w := range workers {
			_ = w.proc.Wait()
		}
	}()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	for _, w := range workers {
		if w.ready, err = w.read(ctx, cfg.Setup+10*time.Second, "ready"); err != nil {
			return nil, err
		}
		res.Open += w.ready.Open
		if w.ready.Failed > 0 && res.OpenError == "" {
			res.OpenError = w.ready.Error
		}
		if w.ready.Inits != nil {
			if res.Closed4408 == nil {
				res.Closed4408 = &InitTimings{}
			}
			res.Closed4408.merge(w.ready.Inits)
		}
		for why, n := range w.ready.Failures {
			if res.OpenFailures == nil {
				res.OpenFailures = map[string]int{}
			}
			res.OpenFailures[why] += n
		}
	}
	res.Workers = len(workers)
	res.OpenFailed = res.Subscriptions - res.Open
	// graphql-transport-ws does not acknowledge a subscribe: wait for the gateway to count them.
	if err := waitSubscribers(ctx, cfg.Gateway, base+res.Open, cfg.Setup); err != nil {
		cfg.progress("%v; posting anyway", err)
	}
	res.SetupSeconds = time.Since(began).Seconds()
	cfg.progress("%d subscriptions open over %d sockets in %d workers (%.1f s); %d failed", res.Open, cfg.Subscribers, len(workers), res.SetupSeconds, res.OpenFailed)
	time.Sleep(time.Second) // let the gateway settle before reading its memory
	res.RSSSubscribedKB = gatewayproc.RSSKB(cfg.GatewayPID)
	cpu0 := gatewayproc.CPUTicks(cfg.GatewayPID)

	posts, refused := post(ctx, cfg, run)
	res.Sent, res.Refused = len(posts), refused
	for _, p := range posts {
		if p.id != "" {
			res.Stored++
		}
	}
	if len(posts) > 0 {
		res.PostSeconds = posts[len(posts)-1].at.Sub(posts[0].at).Seconds()
	}
	cfg.progress("posted %d webhooks in %.2f s, %d stored, refused: %v; waiting up to %s for the frames", res.Sent, res.PostSeconds, res.Stored, refused, cfg.Drain)
	for _, w := range workers {
		if _, err := fmt.Fprintf(w.proc.Stdin, "expect %d %s\n", res.Stored, cfg.Drain); err != nil {
			return nil, fmt.Errorf("tell a worker: %w", err)
		}
	}
	for _, w := range workers {
		if w.res, err = w.read(ctx, cfg.Drain+time.Minute, "result"); err != nil {
			return nil, err
		}
	}
	if cpu1 := gatewayproc.CPUTicks(cfg.GatewayPID); cpu0 >= 0 && cpu1 >= 0 {
		res.CPUSeconds = float64(cpu1-cpu0) / gatewayproc.ClockTicks
	}
	for _, w := range workers {
		res.WorkersCPUSeconds += w.res.CPUSeconds - w.ready.CPUSeconds
	}
	res.RSSAfterKB = gatewayproc.RSSKB(cfg.GatewayPID)
	var subs []subResult
	for _, w := range workers {
		subs = append(subs, w.res.Subs...)
	}
	res.compute(posts, subs)
	return res, nil
}

func (cfg *Config) defaults() error {
	if cfg.Gateway == "" || cfg.Subscribers < 1 {
		return errors.New("a gateway URL and at least one subscriber are needed")
	}
	if cfg.PerSocket < 1 {
		cfg.PerSocket = 1
	}
	if cfg.SSE && cfg.PerSocket != 1 {
		return errors.New("-per-socket: an SSE stream carries one subscription")
	}
	if cfg.PerWorker < 1 {
		cfg.PerWorker = 5000
	}
	if cfg.Burst == 0 && (cfg.Rate <= 0 || cfg.Duration <= 0) {
		return errors.New("-rate and -duration must be positive, or -burst set")
	}
	if cfg.Drain <= 0 {
		cfg.Drain = 30 * time.Second
	}
	if cfg.Setup <= 0 {
		cfg.Setup = 5 * time.Minute
	}
	if cfg.Dial < 1 {
		cfg.Dial = 64
	}
	if cfg.Posters < 1 {
		cfg.Posters = 32
	}
	if cfg.Spawn == nil {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		cfg.Spawn = ExecSpawner(exe)
	}
	return nil
}

func (cfg *Config) progress(format string, args ...any) {
	if cfg.Progress != nil {
		fmt.Fprintf(cfg.Progress, time.Now().Format("15:04:05 ")+format+"\n", args...)
	}
}

// startWorkers splits the sockets evenly over as few workers as PerWorker allows.
func startWorkers(ctx context.Context, cfg Config, run string) ([]*worker, error) {
	n := (cfg.Subscribers + cfg.PerWorker - 1) / cfg.PerWorker
	var workers []*worker
	for i := range n {
		share := cfg.Subscribers / n
		if i < cfg.Subscribers%n {
			share++
		}
		wc := workerConfig{gateway: cfg.Gateway, sockets: share, perSocket: cfg.PerSocket, sse: cfg.SSE, initWithUpgrade: cfg.InitWithUpgrade, run: run, dial: cfg.Dial, timeout: cfg.Setup, events: cfg.events()}
		p, err := cfg.Spawn(ctx, wc.args())
		if err != nil {
			return workers, fmt.Errorf("start a worker: %w", err)
		}
		lines := bufio.NewScanner(p.Stdout)
		lines.Buffer(make([]byte, 64<<10), 1<<30) // a result is one long line
		workers = append(workers, &worker{proc: p, lines: lines})
	}
	return workers, nil
}

// events is how many webhooks the run posts.
func (cfg *Config) events() int {
	if cfg.Burst > 0 {
		return cfg.Burst
	}
	return int(cfg.Rate * cfg.Duration.Seconds())
}

// post sends the webhooks, at cfg.Rate for cfg.Duration or cfg.Burst of them within a second,
// each from its own goroutine, at most cfg.Posters at once, so a slow answer does not hold the
// next one back. Refusals are counted by status (or error) in refused.
func post(ctx context.Context, cfg Config, run string) (out []sent, refused map[string]int) {
	n, every := cfg.events(), time.Duration(float64(time.Second)/cfg.Rate)
	if cfg.Burst > 0 {
		every = time.Second / time.Duration(cfg.Burst)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Posters}}
	defer client.CloseIdleConnections()
	out = make([]sent, n)
	refused = map[string]int{}
	var mu sync.Mutex
	refuse := func(why string) {
		mu.Lock()
		refused[why]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, cfg.Posters)
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * every)); d > 0 {
			select {
			case <-ctx.Done():
				return out[:i], refused
			case <-time.After(d):
			}
		}
		select {
		case <-ctx.Done():
			return out[:i], refused
		case slots <- struct{}{}:
		}
		wg.Go(func() {
			defer func() { <-slots }()
			body := webhookBody(run, i)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, cfg.Gateway+"/webhooks", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("service-api-key", cfg.WebhookKey)
			out[i].at = time.Now()
			resp, err := client.Do(req)
			if err != nil {
				refuse(err.Error())
				return
			}
			defer resp.Body.Close()
			var ans struct {
				ID string `json:"id"`
			}
			if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&ans) != nil {
				refuse(fmt.Sprintf("status %d", resp.StatusCode))
				return
			}
			out[i].id = ans.ID
		})
	}
	return out, refused
}

// webhookBody is event seq of run: a ClientProgressChanged whose wid carries both, so every
// body is unique (the gateway de-duplicates identical ones) and every frame says which it is.
func webhookBody(run string, seq int) []byte {
	body, _ := json.Marshal(map[string]any{
		"EventType": "ClientProgressChanged", "Wid": widPrefix(run) + strconv.Itoa(seq),
		"Timestamp": time.Now().UTC().Format(time.RFC3339), "EstateStatus": "InProgress", "CompletionPercentage": seq % 101,
	})
	return body
}

func runID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

var subscribersGauge = regexp.MustCompile(`(?m)^advisor_event_subscribers (\d+)`)

// gaugeSubscribers reads the gateway's count of open event subscriptions from /metrics.
func gaugeSubscribers(ctx context.Context, gateway string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, gateway+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := subscribersGauge.FindSubmatch(body)
	if m == nil {
		return 0, errors.New("/metrics has no advisor_event_subscribers")
	}
	return strconv.Atoi(string(m[1]))
}

func waitSubscribers(ctx context.Context, gateway string, want int, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		n, err := gaugeSubscribers(ctx, gateway)
		if err == nil && n >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the gateway counts %d subscriptions, want %d (%v)", n, want, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

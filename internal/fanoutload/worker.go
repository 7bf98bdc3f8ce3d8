package fanoutload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// WorkerFlag, as a process's first argument, makes the load tool a worker: it opens its share of
// the subscribers and speaks the coordinator's protocol on stdin and stdout.
const WorkerFlag = "-worker"

// workerConfig is one worker's share of the subscribers.
type workerConfig struct {
	gateway   string
	sockets   int
	perSocket int
	sse       bool
	// initWithUpgrade sends connection_init with the upgrade request (initWithUpgrade).
	initWithUpgrade bool
	run             string
	dial            int // sockets being opened at once
	timeout         time.Duration
	// events is how many events the run posts: each subscription's record is made that large
	// at once, so that recording an event does not allocate.
	events int
}

func (c *workerConfig) args() []string {
	return []string{WorkerFlag,
		"-gateway", c.gateway, "-sockets", strconv.Itoa(c.sockets), "-per-socket", strconv.Itoa(c.perSocket),
		"-sse=" + strconv.FormatBool(c.sse), "-init-with-upgrade=" + strconv.FormatBool(c.initWithUpgrade), "-run", c.run, "-dial", strconv.Itoa(c.dial), "-timeout", c.timeout.String(), "-events", strconv.Itoa(c.events)}
}

func parseWorker(args []string) (*workerConfig, error) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	var c workerConfig
	fs.StringVar(&c.gateway, "gateway", "", "")
	fs.IntVar(&c.sockets, "sockets", 0, "")
	fs.IntVar(&c.perSocket, "per-socket", 1, "")
	fs.BoolVar(&c.sse, "sse", false, "")
	fs.BoolVar(&c.initWithUpgrade, "init-with-upgrade", false, "")
	fs.StringVar(&c.run, "run", "", "")
	fs.IntVar(&c.dial, "dial", 64, "")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "")
	fs.IntVar(&c.events, "events", 0, "")
	if len(args) > 0 && args[0] == WorkerFlag {
		args = args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.gateway == "" || c.sockets < 1 || c.perSocket < 1 || c.run == "" || c.dial < 1 {
		return nil, errors.New("worker: -gateway, -run, -sockets ≥ 1, -per-socket ≥ 1 and -dial ≥ 1 are required")
	}
	return &c, nil
}

// The worker's messages to the coordinator, one JSON object a line on stdout.
type workerMsg struct {
	Kind string `json:"kind"` // "ready" or "result"
	// Ready: subscriptions opened and failed, and the first failure.
	Open   int    `json:"open,omitempty"`
	Failed int    `json:"failed,omitempty"`
	Error  string `json:"error,omitempty"`
	// Failures counts the sockets that failed to open by why (failureKind): in a reconnect
	// storm, how many the gateway closed 4408 is the figure that counts.
	Failures map[string]int `json:"failures,omitempty"`
	// Inits places the connection_init of each socket closed 4408.
	Inits *InitTimings `json:"inits,omitempty"`
	// Result: what every subscription received.
	Subs []subResult `json:"subs,omitempty"`
	// CPUSeconds is the worker's own user+system time so far, so that the coordinator can say
	// what the clients cost the machine the gateway shares.
	CPUSeconds float64 `json:"cpuSeconds"`
}

// subResult is what one subscription received: the sequence number of each of this run's
// events, in arrival order, with its arrival time in Unix nanoseconds, and why it ended early.
type subResult struct {
	Seq   []int32 `json:"seq"`
	At    []int64 `json:"at"`
	Ended string  `json:"ended,omitempty"`
}

// sub is one subscription's record, written by its socket's reader.
type sub struct {
	mu sync.Mutex
	// got is each event's arrival, in order: sequence number and time side by side, so that
	// recording one writes one line of memory, not two (tens of thousands of subscriptions'
	// records are more than the processor's caches hold, and each frame touches its own).
	got   []arrival
	ended string
}

// arrival is one event's arrival at a subscription.
type arrival struct {
	at  int64 // Unix nanoseconds
	seq int32
}

func (s *sub) add(seq int32, at int64) {
	s.mu.Lock()
	s.got = append(s.got, arrival{at, seq})
	s.mu.Unlock()
}

func (s *sub) end(why string) {
	s.mu.Lock()
	if s.ended == "" {
		s.ended = why
	}
	s.mu.Unlock()
}

func (s *sub) snapshot() (n int, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got), s.ended != ""
}

// result is what s received so far, as reported.
func (s *sub) result() subResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := subResult{Seq: make([]int32, len(s.got)), At: make([]int64, len(s.got)), Ended: s.ended}
	for i, a := range s.got {
		r.Seq[i], r.At[i] = a.seq, a.at
	}
	return r
}

// RunWorker is a worker's life: open the subscribers, report "ready", wait for "expect N" on
// stdin, report what every subscription received once each has N events (or the deadline the
// command gives passes), and close everything when stdin ends.
func RunWorker(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	cfg, err := parseWorker(args)
	if err != nil {
		return err
	}
	RaiseFileLimit()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	enc := json.NewEncoder(stdout)
	subs := make([]*sub, cfg.sockets*cfg.perSocket)
	room := min(cfg.events, 1<<16) // a hint: more are appended
	for i := range subs {
		subs[i] = &sub{got: make([]arrival, 0, room)}
	}
	var readers sync.WaitGroup
	defer readers.Wait()
	defer cancel() // runs before readers.Wait: the readers stop with ctx
	open, failed, firstErr, failures, inits := openAll(ctx, cfg, subs, &readers)
	// The opening's garbage is collected now, before the events, rather than while the
	// clients' CPU per frame is measured and the gateway waits for the cores they share.
	runtime.GC()
	if err := enc.Encode(workerMsg{Kind: "ready", Open: open, Failed: failed, Error: firstErr, Failures: failures, Inits: inits, CPUSeconds: OwnCPU()}); err != nil {
		return err
	}
	lines := bufio.NewScanner(stdin)
	if !lines.Scan() {
		return lines.Err() // the coordinator gave up
	}
	var expect int
	var wait time.Duration
	if _, err := fmt.Sscanf(lines.Text(), "expect %d %s", &expect, new(string)); err != nil {
		return fmt.Errorf("worker: want \"expect N DURATION\", got %q", lines.Text())
	}
	fields := strings.Fields(lines.Text())
	if wait, err = time.ParseDuration(fields[2]); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	waitFor(ctx, subs, expect, time.Now().Add(wait))
	out := workerMsg{Kind: "result", Subs: make([]subResult, len(subs)), CPUSeconds: OwnCPU()}
	for i, s := range subs {
		out.Subs[i] = s.result()
	}
	if err := enc.Encode(out); err != nil {
		return err
	}
	// Keep the sockets open until the coordinator has measured the gateway.
	for lines.Scan() {
	}
	return nil
}

// OwnCPU is this process's user+system time, in seconds.
func OwnCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// waitFor returns when every subscription that is still open has n events, or at deadline.
func waitFor(ctx context.Context, subs []*sub, n int, deadline time.Time) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		done := true
		for _, s := range subs {
			if got, ended := s.snapshot(); got < n && !ended {
				done = false
				break
			}
		}
		if done {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// openAll opens cfg.sockets sockets, dial at a time, each carrying perSocket subscriptions,
// and starts their readers. failures counts the sockets that failed by failureKind, and inits
// places the connection_init of those closed 4408 (nil when there are none).
func openAll(ctx context.Context, cfg *workerConfig, subs []*sub, readers *sync.WaitGroup) (open, failed int, firstErr string, failures map[string]int, inits *InitTimings) {
	failures = map[string]int{}
	var mu sync.Mutex
	sem := make(chan struct{}, cfg.dial)
	var dialing sync.WaitGroup
	client := sseClient()
	defer client.CloseIdleConnections()
	for i := range cfg.sockets {
		sem <- struct{}{}
		dialing.Go(func() {
			defer func() { <-sem }()
			mine := subs[i*cfg.perSocket : (i+1)*cfg.perSocket]
			dctx, cancel := context.WithTimeout(ctx, cfg.timeout)
			defer cancel()
			var err error
			if cfg.sse {
				err = openSSE(dctx, ctx, client, cfg.gateway, widPrefix(cfg.run), mine[0], readers)
			} else {
				err = openWS(dctx, ctx, cfg.gateway, widPrefix(cfg.run), mine, readers, cfg.initWithUpgrade)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed += len(mine)
				failures[failureKind(err)]++
				if p, ok := asInitClosed(err); ok {
					if inits == nil {
						inits = &InitTimings{}
					}
					inits.add(p)
				}
				if firstErr == "" {
					firstErr = err.Error()
				}
				for _, s := range mine {
					s.end("not opened: " + err.Error())
				}
				return
			}
			open += len(mine)
		})
	}
	dialing.Wait()
	return open, failed, firstErr, failures, inits
}

// failureKind names why a socket failed to open, so that failures can be counted: the close
// code the gateway sent ("closed 4408"), or the error without what differs from socket to
// socket (addresses, ports).
func failureKind(err error) string {
	var ce *closeError
	if errors.As(err, &ce) {
		return "closed " + strconv.Itoa(ce.code)
	}
	return addrs.ReplaceAllString(err.Error(), "ADDR")
}

var addrs = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+:\d+`)

// Query is the operation every subscriber runs.
const Query = `subscription Fanout { events { id wid eventType } }`

// frame is what the worker reads of a message: its type and operation, and its payload, which
// is a result for "next" and a list of errors for "error".
type frame struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// result is a "next" payload (or an SSE "next" event's data): the event's wid, which carries
// its sequence number, or the errors that end the subscription (SLOW_CONSUMER, ...).
type result struct {
	Data struct {
		Events struct {
			Wid string `json:"wid"`
		} `json:"events"`
	} `json:"data"`
	Errors []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code string `json:"code"`
		} `json:"extensions"`
	} `json:"errors"`
}

// quickNext reads the common frame without decoding it: a next message, without errors, of an
// event this run posted: {"id":"<i>","type":"next","payload":{"data":{"events":{...,"wid":
// "<prefix><seq>",...}}}}. Anything else (ok false) is decoded in full. Decoding every frame
// twice cost the clients four times what the gateway spends writing it.
func quickNext(data []byte, prefix string) (sub int, seq int32, ok bool) {
	const head = `{"id":"`
	if !bytes.HasPrefix(data, []byte(head)) || bytes.Contains(data, []byte(`"errors"`)) {
		return 0, 0, false
	}
	rest := data[len(head):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || !bytes.HasPrefix(rest[end:], []byte(`","type":"next"`)) {
		return 0, 0, false
	}
	i, err := strconv.Atoi(string(rest[:end]))
	if err != nil {
		return 0, 0, false
	}
	w := bytes.Index(rest, []byte(`"wid":"`))
	if w < 0 {
		return 0, 0, false
	}
	wid := rest[w+len(`"wid":"`):]
	if q := bytes.IndexByte(wid, '"'); q >= 0 {
		wid = wid[:q]
	}
	n, ok := seqOf(prefix, string(wid))
	if !ok {
		return 0, 0, false
	}
	return i, n, true
}

// record adds a result to s, or ends s with its first error.
func (r *result) record(s *sub, prefix string, at int64) {
	if len(r.Errors) > 0 {
		s.end(strings.TrimSpace(r.Errors[0].Extensions.Code + " " + r.Errors[0].Message))
		return
	}
	if seq, ok := seqOf(prefix, r.Data.Events.Wid); ok {
		s.add(seq, at)
	}
}

// openWS opens a graphql-transport-ws socket carrying a subscription for each of mine, sending
// connection_init right after the upgrade, or with it when initWithUpgrade is set. dctx bounds
// the opening; ctx, the run, the socket's life.
func openWS(dctx, ctx context.Context, gateway, prefix string, mine []*sub, readers *sync.WaitGroup, initWithUpgrade bool) error {
	probe := &initProbe{withRequest: initWithUpgrade}
	c, err := dialWS(dctx, gateway, probe)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(dctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	err = c.start(initWithUpgrade, probe, len(mine))
	if !stop() {
		err = fmt.Errorf("open: %w", context.Cause(dctx))
	}
	if err != nil {
		c.conn.Close()
		return err
	}
	_ = c.conn.SetDeadline(time.Time{})
	c.opened()
	readers.Go(func() {
		defer c.conn.Close()
		stop := context.AfterFunc(ctx, func() { c.closeWith(closeNormal) })
		defer stop()
		readWS(ctx, c, prefix, mine)
	})
	return nil
}

// start sends connection_init (unless the upgrade request carried it), waits for the gateway's
// connection_ack and subscribes n times.
func (c *wsConn) start(initSent bool, probe *initProbe, n int) error {
	if !initSent {
		probe.beforeInit()
		err := c.writeJSON(map[string]any{"type": "connection_init"})
		probe.afterInit()
		if err != nil {
			return fmt.Errorf("connection_init: %w", err)
		}
	}
	for {
		data, err := c.readMessage()
		if err != nil {
			return &initClosed{fmt.Errorf("connection_init: %w", err), probe}
		}
		var m frame
		_ = json.Unmarshal(data, &m)
		if m.Type == "connection_ack" {
			break
		}
	}
	for i := range n {
		if err := c.writeJSON(map[string]any{"id": strconv.Itoa(i + 1), "type": "subscribe", "payload": map[string]any{"query": Query}}); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
	}
	return nil
}

// pingMsg and pongMsg are graphql-transport-ws's keep-alive and its answer.
var pingMsg, pongMsg = []byte(`{"type":"ping"}`), []byte(`{"type":"pong"}`)

// readWS reads the socket's messages into mine until it closes; an end before the run's is
// recorded on every subscription.
func readWS(ctx context.Context, c *wsConn, prefix string, mine []*sub) {
	// The first subscription, usually the only one, is kept on the goroutine's stack, which each
	// frame touches anyway, rather than fetched from mine's array, one more line per frame.
	first := mine[0]
	for {
		data, err := c.readMessage() // ended by closing the socket
		at := time.Now().UnixNano()
		if err != nil {
			c.closeFor(err)
			if ctx.Err() == nil {
				for _, s := range mine {
					s.end("socket: " + err.Error())
				}
			}
			return
		}
		if i, seq, ok := quickNext(data, prefix); ok {
			switch {
			case i == 1:
				first.add(seq, at)
			case i >= 2 && i <= len(mine):
				mine[i-1].add(seq, at)
			}
			continue
		}
		if bytes.Equal(data, pingMsg) { // the keep-alive: every socket's, at once
			_ = c.writeFrame(opText, pongMsg)
			continue
		}
		var m frame
		if err := json.Unmarshal(data, &m); err != nil {
			continue
		}
		switch m.Type {
		case "ping":
			_ = c.writeFrame(opText, pongMsg)
			continue
		case "next", "error", "complete":
		default:
			continue
		}
		i, err := strconv.Atoi(m.ID)
		if err != nil || i < 1 || i > len(mine) {
			continue
		}
		s := mine[i-1]
		switch m.Type {
		case "next":
			var r result
			if json.Unmarshal(m.Payload, &r) != nil {
				s.end("next: not a result: " + string(m.Payload))
				continue
			}
			r.record(s, prefix, at)
		case "error":
			var r result
			if json.Unmarshal(m.Payload, &r.Errors) != nil || len(r.Errors) == 0 {
				s.end("error: " + string(m.Payload))
				continue
			}
			r.record(s, prefix, at)
		default:
			s.end("complete")
		}
	}
}

func sseClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 1,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}}
}

func openSSE(dctx, ctx context.Context, client *http.Client, gateway, prefix string, s *sub, readers *sync.WaitGroup) error {
	body, _ := json.Marshal(map[string]any{"query": Query})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, gateway+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	type answer struct {
		resp *http.Response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := client.Do(req)
		got <- answer{resp, err}
	}()
	var resp *http.Response
	select {
	case a := <-got:
		if a.err != nil {
			return a.err
		}
		resp = a.resp
	case <-dctx.Done():
		go func() {
			if a := <-got; a.resp != nil {
				a.resp.Body.Close()
			}
		}()
		return fmt.Errorf("no answer: %w", dctx.Err())
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		return fmt.Errorf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	readers.Go(func() {
		defer resp.Body.Close()
		readSSE(ctx, resp.Body, prefix, s)
	})
	return nil
}

func readSSE(ctx context.Context, body io.Reader, prefix string, s *sub) {
	r := bufio.NewReaderSize(body, 4096)
	var name string
	var data []byte
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if ctx.Err() == nil {
				s.end("stream: " + err.Error())
			}
			return
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			at := time.Now().UnixNano()
			switch name {
			case "next":
				var r result
				if json.Unmarshal(data, &r) != nil {
					s.end("next: not a result: " + string(data))
				} else {
					r.record(s, prefix, at)
				}
			case "complete":
				s.end("complete")
			}
			name, data = "", data[:0]
		case bytes.HasPrefix(line, []byte("event:")):
			name = string(bytes.TrimSpace(line[len("event:"):]))
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimSpace(line[len("data:"):])...)
		}
	}
}

// RaiseFileLimit lifts the soft open-file limit to the hard one: a load process holds many
// sockets.
func RaiseFileLimit() {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}

// widPrefix starts the wid of every event of run: the sequence number follows it.
func widPrefix(run string) string { return "c-fanout-" + run + "-" }

// seqOf is the sequence number of one of this run's events, from its wid.
func seqOf(prefix, wid string) (int32, bool) {
	rest, ok := strings.CutPrefix(wid, prefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 32)
	return int32(n), err == nil
}

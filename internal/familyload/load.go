package familyload

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/advisorhq/gateway/internal/gatewayproc"
)

// AcceptEncoding is what a browser (Chrome, Firefox) asks for; the gateway answers gzip, the
// first of the codings it has at the best quality.
const AcceptEncoding = "gzip, deflate, br, zstd"

// Config is one measurement of a gateway.
type Config struct {
	// Gateway is the gateway's base URL.
	Gateway string
	// GatewayPID is the gateway's process id, whose CPU and memory are read from /proc; 0
	// reports neither.
	GatewayPID int
	// WID is the top account of the family the query asks for, and Contacts its cards, the
	// count every answer must have.
	WID      string
	Contacts int
	// Connections is how many clients send at once, each on a keep-alive connection of its
	// own, its next query as soon as the last is answered; 8 if zero.
	Connections int
	// Warmup is how long the loop runs before the measured window, unmeasured.
	Warmup time.Duration
	// Duration is the measured window, or Queries, when set, the queries it holds.
	Duration time.Duration
	Queries  int
}

// Result is one measurement's figures.
type Result struct {
	Contacts    int     `json:"contacts"`
	Connections int     `json:"connections"`
	Queries     int     `json:"queries"`
	Seconds     float64 `json:"seconds"`
	QPS         float64 `json:"queriesPerSecond"`
	// CPUSeconds is the gateway's user+system time over the window (/proc/<pid>/stat, in
	// ticks of 10 ms), and CPUPerQueryUS that per query in microseconds.
	CPUSeconds    float64 `json:"cpuSeconds"`
	CPUPerQueryUS float64 `json:"cpuPerQueryUs"`
	LatencyMS     struct {
		P50 float64 `json:"p50"`
		P99 float64 `json:"p99"`
	} `json:"latencyMs"`
	// RSSKB is the gateway's resident memory after the window.
	RSSKB int64 `json:"rssKB"`
	// AnswerBytes is one answer's body as sent, in Encoding ("gzip", or "" for none).
	AnswerBytes int    `json:"answerBytes"`
	Encoding    string `json:"encoding"`
}

// Run warms the gateway up, then measures one window.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Duration <= 0 && cfg.Queries <= 0 {
		return nil, errors.New("familyload: give a Duration or a number of Queries")
	}
	g, err := newGateway(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer g.close()
	var until time.Time
	if cfg.Queries <= 0 {
		until = time.Now().Add(cfg.Duration)
	}
	if err := g.window(ctx, until, cfg.Queries); err != nil {
		return nil, err
	}
	return g.result()
}

// RunTurns measures several gateways in turns of turn each, until each has had its Duration
// (Queries are not taken): every one is warmed up, then they send in turn, in the order
// given and then in the reverse order (ABBA), so that the machine's changes while they run
// fall on all of them alike. Turns of a second or two make gateways measured on a busy
// machine comparable, where windows of ten seconds one after the other are not.
func RunTurns(ctx context.Context, cfgs []Config, turn time.Duration) ([]*Result, error) {
	if turn <= 0 {
		return nil, errors.New("familyload: a turn must be longer than zero")
	}
	gs := make([]*gateway, len(cfgs))
	for i, cfg := range cfgs {
		if cfg.Duration <= 0 {
			return nil, fmt.Errorf("familyload: %s: turns need a Duration", cfg.Gateway)
		}
		g, err := newGateway(ctx, cfg)
		if err != nil {
			return nil, err
		}
		defer g.close()
		gs[i] = g
	}
	for k := 0; ; k++ {
		order := slices.Clone(gs)
		if k%2 == 1 {
			slices.Reverse(order)
		}
		left := false
		for _, g := range order {
			remaining := g.cfg.Duration - g.elapsed
			if remaining <= 0 {
				continue
			}
			left = true
			if err := g.window(ctx, time.Now().Add(min(turn, remaining)), 0); err != nil {
				return nil, fmt.Errorf("%s: %w", g.cfg.Gateway, err)
			}
		}
		if !left {
			break
		}
	}
	out := make([]*Result, len(gs))
	for i, g := range gs {
		r, err := g.result()
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// gateway is one gateway's clients, warmed up, and what its windows have measured so far.
type gateway struct {
	cfg     Config
	clients []*client
	lat     []time.Duration
	elapsed time.Duration
	ticks   int64 // its CPU over the windows, -1 when unknown
}

func newGateway(ctx context.Context, cfg Config) (*gateway, error) {
	if cfg.Connections == 0 {
		cfg.Connections = 8
	}
	body, err := json.Marshal(map[string]any{"operationName": "Family", "query": Query, "variables": map[string]any{"wid": cfg.WID}})
	if err != nil {
		return nil, err
	}
	g := &gateway{cfg: cfg, clients: make([]*client, cfg.Connections)}
	for i := range g.clients {
		g.clients[i] = &client{http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}},
			url: cfg.Gateway + "/graphql", body: body, want: cfg.Contacts}
	}
	if cfg.Warmup > 0 {
		if _, err := loop(ctx, g.clients, time.Now().Add(cfg.Warmup), 0); err != nil {
			g.close()
			return nil, fmt.Errorf("%s: warm-up: %w", cfg.Gateway, err)
		}
	}
	return g, nil
}

func (g *gateway) close() {
	for _, c := range g.clients {
		c.http.CloseIdleConnections()
	}
}

// window measures one window, until the deadline or n queries, and adds it to g's.
func (g *gateway) window(ctx context.Context, until time.Time, n int) error {
	// Between windows no query is in flight, so the CPU read on each side is the window's.
	cpu0 := gatewayproc.CPUTicks(g.cfg.GatewayPID)
	start := time.Now()
	lat, err := loop(ctx, g.clients, until, n)
	if err != nil {
		return err
	}
	g.elapsed += time.Since(start)
	cpu1 := gatewayproc.CPUTicks(g.cfg.GatewayPID)
	if cpu0 < 0 || cpu1 < 0 || g.ticks < 0 {
		g.ticks = -1
	} else {
		g.ticks += cpu1 - cpu0
	}
	g.lat = append(g.lat, lat...)
	return nil
}

// result is the figures of g's windows together.
func (g *gateway) result() (*Result, error) {
	if len(g.lat) == 0 {
		return nil, fmt.Errorf("familyload: %s: no query in the window", g.cfg.Gateway)
	}
	res := &Result{Contacts: g.cfg.Contacts, Connections: g.cfg.Connections, Queries: len(g.lat), Seconds: g.elapsed.Seconds(),
		RSSKB: gatewayproc.RSSKB(g.cfg.GatewayPID), AnswerBytes: g.clients[0].answerBytes, Encoding: g.clients[0].encoding}
	res.QPS = float64(len(g.lat)) / g.elapsed.Seconds()
	if g.ticks >= 0 { // -1 when unknown, and always without a GatewayPID (CPUTicks)
		res.CPUSeconds = float64(g.ticks) / gatewayproc.ClockTicks
		res.CPUPerQueryUS = res.CPUSeconds * 1e6 / float64(len(g.lat))
	}
	lat := slices.Clone(g.lat)
	slices.Sort(lat)
	at := func(p int) float64 { return float64(lat[min(len(lat)-1, len(lat)*p/100)]) / float64(time.Millisecond) }
	res.LatencyMS.P50, res.LatencyMS.P99 = at(50), at(99)
	return res, nil
}

// loop runs every client until the deadline (when not zero) or until n queries have started
// (when n > 0), and returns the latencies of all; the first wrong answer stops it.
func loop(ctx context.Context, clients []*client, until time.Time, n int) ([]time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var started atomic.Int64
	lat := make([][]time.Duration, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				if n > 0 && started.Add(1) > int64(n) || !until.IsZero() && time.Now().After(until) {
					return
				}
				t0 := time.Now()
				if err := c.query(ctx); err != nil {
					cancel(err)
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return slices.Concat(lat...), nil
}

// client is one connection of the loop.
type client struct {
	http        *http.Client
	url         string
	body        []byte
	want        int
	buf         bytes.Buffer
	zr          *gzip.Reader
	answerBytes int
	encoding    string
}

// query sends the family query and checks its answer: 200, no errors, and every card.
func (c *client) query(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/graphql-response+json, application/json")
	req.Header.Set("Accept-Encoding", AcceptEncoding)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	c.buf.Reset()
	if _, err := c.buf.ReadFrom(resp.Body); err != nil {
		return fmt.Errorf("read the answer: %w", err)
	}
	c.answerBytes = c.buf.Len()
	data := c.buf.Bytes()
	c.encoding = resp.Header.Get("Content-Encoding")
	switch enc := c.encoding; enc {
	case "":
	case "gzip":
		if c.zr == nil {
			c.zr, err = gzip.NewReader(&c.buf)
		} else {
			err = c.zr.Reset(&c.buf)
		}
		if err == nil {
			data, err = io.ReadAll(c.zr)
		}
		if err != nil {
			return fmt.Errorf("gunzip the answer: %w", err)
		}
	default:
		return fmt.Errorf("the answer's Content-Encoding is %q: the tool reads gzip only", enc)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.500s", resp.StatusCode, data)
	}
	var answer struct {
		Data struct {
			TopAccount *struct {
				Contacts []json.RawMessage `json:"contacts"`
			} `json:"topAccount"`
		} `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(data, &answer); err != nil {
		return fmt.Errorf("the answer is not JSON: %w: %.500s", err, data)
	}
	if len(answer.Errors) > 0 {
		return fmt.Errorf("the answer has errors: %s", answer.Errors[0])
	}
	if answer.Data.TopAccount == nil || len(answer.Data.TopAccount.Contacts) != c.want {
		return fmt.Errorf("the answer does not have the family's %d cards: %.500s", c.want, data)
	}
	return nil
}

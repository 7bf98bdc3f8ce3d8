//go:build ignore

// Command probe runs issue 9's reproductions against a freshly built gateway and watches the
// gateway's own /proc entry while it does: open descriptors, resident memory and CPU time.
//
//	go run .ci/probe.go                  # every reproduction, one after another
//	go run .ci/probe.go -only a,b,c      # some of them (ids as printed)
//	go run .ci/probe.go -body-timeout=   # probe the default REQUEST_BODY_TIMEOUT (30s) in (h)
//
// It builds the gateway from this working tree, starts it on a free loopback port with no
// setting but ADDR (and REQUEST_BODY_TIMEOUT, see -body-timeout), in its own process group,
// runs each reproduction and stops the gateway with SIGTERM. The exit status is 1 when a
// reproduction fails issue 9's "Done when": the gateway's descriptors do not come back to
// within a few of where they were, its resident memory goes over 300 MB, or a request it
// refuses costs it more than 50 ms of CPU. Answers other than what the issue asks for are
// reported as "unexpected" (and fail the run with -strict). Exit status 2: the probe could not
// run (the build failed, the gateway did not start).
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/coder/websocket"
)

// Issue 9's "Done when", and how the probe applies it.
const (
	rssLimitMB  = 300              // peak resident memory through every reproduction
	cpuLimitMS  = 50.0             // gateway CPU per refused request
	fdSlack     = 5                // "within a few" of the descriptors before a reproduction
	settleFor   = 10 * time.Second // how long descriptors may take to come back
	clockTicks  = 100              // sysconf(_SC_CLK_TCK) on Linux
	maxBodyRead = 32 << 20         // the probe reads at most this much of one answer
)

var (
	flagOnly        = flag.String("only", "", "comma-separated reproductions to run (ids as printed: 0,a,a2,b,c,d1,d2,d3,d4,e,f,g,h,i,j); all when empty")
	flagBodyTimeout = flag.String("body-timeout", "5s", "REQUEST_BODY_TIMEOUT given to the gateway so that (h) is short; empty leaves the gateway's default (30s)")
	flagSafetyMB    = flag.Int("safety-mb", 2000, "cancel a reproduction when the gateway's RSS passes this many MB, and kill the gateway at twice it, to protect the machine")
	flagStrict      = flag.Bool("strict", false, "also fail when the gateway answers otherwise than issue 9 asks")
	flagKeep        = flag.Bool("keep", false, "keep the temporary directory with the binary and the gateway's log")
)

func main() {
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx)
	stop()
	os.Exit(code)
}

func logf(format string, args ...any) { fmt.Printf("probe: "+format+"\n", args...) }

func run(ctx context.Context) int {
	raiseNoFile()
	root, err := moduleRoot()
	if err != nil {
		logf("%v", err)
		return 2
	}
	query, err := os.ReadFile(filepath.Join(root, "internal", "httpserver", "ide", "family.graphql"))
	if err != nil {
		logf("read the README's family query: %v", err)
		return 2
	}
	readmeFamilyQuery = string(query)
	tmp, err := os.MkdirTemp("", "gateway-probe-")
	if err != nil {
		logf("temporary directory: %v", err)
		return 2
	}
	if *flagKeep {
		logf("keeping %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	bin := filepath.Join(tmp, "gateway")
	start := time.Now()
	buildCtx, cancelBuild := context.WithTimeout(ctx, 10*time.Minute)
	build := exec.CommandContext(buildCtx, "go", "build", "-o", bin, ".")
	build.Dir = root
	out, err := build.CombinedOutput()
	cancelBuild()
	if err != nil {
		logf("go build failed (%v):\n%s", err, out)
		return 2
	}
	logf("built the gateway from %s in %.1f s", root, time.Since(start).Seconds())

	env, removed := gatewayEnv()
	settings := []string{}
	if *flagBodyTimeout != "" {
		env = append(env, "REQUEST_BODY_TIMEOUT="+*flagBodyTimeout)
		settings = append(settings, "REQUEST_BODY_TIMEOUT="+*flagBodyTimeout+" (default 30s; set only to keep (h) short, -body-timeout= probes the default)")
	}
	bodyTimeout := 30 * time.Second
	if *flagBodyTimeout != "" {
		if bodyTimeout, err = time.ParseDuration(*flagBodyTimeout); err != nil {
			logf("-body-timeout: %v", err)
			return 2
		}
	}
	// launch starts a gateway and its prober (again, after a reproduction left the gateway
	// dead or holding more than the memory limit, so that the next is not blamed for it).
	var (
		gws     []*gateway
		gw      *gateway
		p       *prober
		hwm     bool
		baseFDs int
	)
	launch := func() error {
		gw, err = startGateway(ctx, bin, root, env, filepath.Join(tmp, fmt.Sprintf("gateway-%d.log", len(gws)+1)))
		if err != nil {
			return err
		}
		gws = append(gws, gw)
		p = newProber(gw, bodyTimeout)
		if p.wid, err = p.firstWid(ctx); err != nil {
			return fmt.Errorf("could not read a top account's wid: %v\n%s", err, gw.logTail(20))
		}
		hwm = resetHWM(gw.pid) == nil
		baseFDs, _ = countFDs(gw.pid)
		baseRSS, _ := statusKB(gw.pid, "VmRSS")
		logf("gateway pid %d (own process group) on %s, log %s", gw.pid, gw.addr, gw.logPath)
		logf("gateway at rest: %d descriptors, RSS %.1f MB; wid for the lookups: %s", baseFDs, mb(baseRSS), p.wid)
		return nil
	}
	defer func() {
		if p != nil {
			p.close()
		}
		for _, g := range gws {
			g.stop()
		}
	}()
	if err := launch(); err != nil {
		logf("%v", err)
		return 2
	}
	logf("gateway settings: ADDR only, defaults for the rest; also %s", strings.Join(append(settings, "nothing else"), "; "))
	if len(removed) > 0 {
		logf("removed from the gateway's environment so that its defaults are probed: %s", strings.Join(removed, ", "))
	}
	if lim := openFileLimit(gw.pid); lim != "" {
		logf("gateway %s", lim)
	}
	logf("peak RSS per reproduction from VmHWM, reset through clear_refs (%v), and sampled every 25 ms; CLK_TCK taken as %d", hwm, clockTicks)
	logf("REQUEST_BODY_TIMEOUT for (h): %s", bodyTimeout)
	fmt.Println()

	only := map[string]bool{}
	for _, id := range strings.Split(*flagOnly, ",") {
		if id = strings.TrimSpace(id); id != "" {
			only[id] = true
		}
	}
	var results []result
	restart, aborted := "", false
	for _, it := range items() {
		if len(only) > 0 && !only[it.id] {
			continue
		}
		if ctx.Err() != nil {
			logf("interrupted")
			break
		}
		if restart != "" {
			logf("restarting the gateway before (%s): %s", it.id, restart)
			p.close()
			p = nil
			if took, err := gw.stop(); !gw.killedByProbe.Load() {
				logf("  the old one stopped on SIGTERM in %.1f s (%s)", took.Seconds(), exitText(err))
			}
			if err := launch(); err != nil {
				logf("%v", err)
				aborted = true
				break
			}
			restart = ""
		}
		r := p.measure(ctx, it, hwm)
		fmt.Print(r.report())
		results = append(results, r)
		switch {
		case gw.killedByProbe.Load():
			restart = "the probe killed it"
		case gw.exited():
			restart = fmt.Sprintf("it exited (%s)", exitText(gw.waitErr))
		case mb(r.rssAfter) > rssLimitMB:
			restart = fmt.Sprintf("its RSS is still %.0f MB after (%s)", mb(r.rssAfter), it.id)
		}
	}

	fmt.Println()
	summary(results)
	fmt.Println()
	failed := len(results) == 0 || aborted
	for _, r := range results {
		if len(r.failures) > 0 {
			failed = true
		}
	}
	if p != nil && gw != nil && !gw.exited() {
		endFDs, _ := countFDs(gw.pid)
		endRSS, _ := statusKB(gw.pid, "VmRSS")
		for _, r := range results {
			if !r.control && r.pid == gw.pid {
				baseFDs = r.fdBefore // after the control's upstream connections, if it ran
				break
			}
		}
		logf("gateway after everything: %d descriptors (%d before its first reproduction), RSS %.1f MB", endFDs, baseFDs, mb(endRSS))
		p.close()
		p = nil
		took, err := gw.stop()
		logf("gateway stopped on SIGTERM in %.1f s (%s)", took.Seconds(), exitText(err))
		if err != nil {
			failed = true
		}
	} else if gw != nil {
		logf("the gateway is not running: %s\n%s", exitText(gw.waitErr), gw.logTail(20))
		failed = true
	}
	if len(gws) > 1 {
		logf("the gateway was started %d times", len(gws))
	}
	for _, g := range gws {
		if lines := g.problems(12); lines != "" {
			logf("warnings and errors in %s:\n%s", filepath.Base(g.logPath), lines)
		}
	}
	if failed {
		logf("FAIL")
		return 1
	}
	logf("PASS")
	return 0
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// ---------------------------------------------------------------------------------------------
// The reproductions.

type item struct {
	id, name string
	// control: the README's own query, to show the gateway works; its descriptors are not
	// checked (it opens upstream connections, which stay idle in their pool).
	control bool
	// cpuChecked: a refused request, held to cpuLimitMS.
	cpuChecked bool
	// fdPeak > 0: the descriptors must also stay within this many of where they were while it
	// runs (one upload's file is opened once, not once per path).
	fdPeak int
	run    func(p *prober, ctx context.Context, o *outcome)
}

func items() []item {
	return []item{
		{id: "0", name: "control: the README's family query", control: true, run: func(p *prober, ctx context.Context, o *outcome) {
			o.series(ctx, 5, time.Minute, func(ctx context.Context) (string, string) {
				return p.graphql(ctx, readmeFamilyQuery, 30*time.Second)
			})
			o.expect(func(k string) bool { return k == "HTTP 200 data" }, "200 with data and no error")
		}},
		{id: "a", name: "200 WebSocket upgrades dropped after 0.3 s without a close frame (FIN, as curl --max-time 0.3)", run: func(p *prober, ctx context.Context, o *outcome) {
			p.wsDrops(ctx, o, 200, false)
		}},
		{id: "a2", name: "200 WebSockets that init and subscribe, then reset (RST) after 0.3 s", run: func(p *prober, ctx context.Context, o *outcome) {
			p.wsDrops(ctx, o, 200, true)
		}},
		{id: "b", name: "20 WebSocket messages over the read limit (2 MiB + 1 KiB)", run: (*prober).wsTooBig},
		{id: "c", name: "20,000 subscribe messages on one WebSocket", run: (*prober).wsManySubscriptions},
		{id: "d1", name: "relationships recursing 8 levels deep, ×50", cpuChecked: true, run: func(p *prober, ctx context.Context, o *outcome) {
			p.refusedSeries(ctx, o, 50, recursion(p.wid, 8), 30*time.Second)
		}},
		{id: "d2", name: "relationships recursing 10 levels deep, ×50", cpuChecked: true, run: func(p *prober, ctx context.Context, o *outcome) {
			p.refusedSeries(ctx, o, 50, recursion(p.wid, 10), 30*time.Second)
		}},
		{id: "d3", name: "relationships recursing 4 levels (within the depth limit), ×50", cpuChecked: true, run: func(p *prober, ctx context.Context, o *outcome) {
			p.refusedSeries(ctx, o, 50, recursion(p.wid, 4), 30*time.Second)
		}},
		{id: "d4", name: "relationships recursing 10 levels, the client gives up after 1 s, ×5", cpuChecked: true, run: (*prober).recursionClientLeaves},
		{id: "e", name: "6,000 aliases of __schema { types { name fields { name } } }, ×50", cpuChecked: true, run: func(p *prober, ctx context.Context, o *outcome) {
			p.refusedSeries(ctx, o, 50, aliased(6000, "__schema { types { name fields { name } } }"), 30*time.Second)
		}},
		{id: "f", name: "10,000 repeated fields, ×50", cpuChecked: true, run: func(p *prober, ctx context.Context, o *outcome) {
			p.refusedSeries(ctx, o, 50, "{ topAccounts(limit: 1) { nodes {"+strings.Repeat(" wid", 10000)+" } } }", 30*time.Second)
		}},
		{id: "g", name: "2,400 aliased topAccount(wid:) lookups, ×50", cpuChecked: true, run: func(p *prober, ctx context.Context, o *outcome) {
			p.refusedSeries(ctx, o, 50, aliased(2400, fmt.Sprintf(`topAccount(wid: %q) { name }`, p.wid)), 30*time.Second)
		}},
		{id: "h", name: "2,000 connections whose bodies drip 1 byte / 5 s", run: (*prober).dripBodies},
		{id: "i", name: "multipart upload of one file mapped to 25,000 paths, ×5", fdPeak: 100, run: (*prober).multipartPaths},
		{id: "j", name: "POSTs as text/plain, application/graphql and a form, ×50 each", cpuChecked: true, run: (*prober).unsupportedMedia},
		{id: "k", name: "forged bearer tokens: made-up kids, alg none, HS256, 8 KiB and 60 KiB, ×400 each", cpuChecked: true, run: (*prober).forgedTokens},
	}
}

// readmeFamilyQuery is the README's family query, as the IDE embeds it (go generate keeps that
// copy equal to the README's block); run reads it.
var readmeFamilyQuery string

// recursion is the query: relationships through their targets' cards, levels deep.
func recursion(wid string, levels int) string {
	inner := "role"
	for range levels - 1 {
		inner = "role target { contact { ... on ContactCard { displayName relationships { " + inner + " } } } }"
	}
	return fmt.Sprintf(`{ topAccount(wid: %q) { relationships { %s } } }`, wid, inner)
}

// aliased selects field n times under distinct aliases.
func aliased(n int, field string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	b.WriteString(" }")
	return b.String()
}

func isLimitRefusal(k string) bool { return strings.HasSuffix(k, " OPERATION_LIMIT_EXCEEDED") }

// refusedSeries sends one query n times, one after another.
func (p *prober) refusedSeries(ctx context.Context, o *outcome, n int, query string, timeout time.Duration) {
	o.notes = append(o.notes, fmt.Sprintf("query of %s bytes", thousands(len(query))))
	o.series(ctx, n, 2*time.Minute, func(ctx context.Context) (string, string) {
		return p.graphql(ctx, query, timeout)
	})
	o.expect(isLimitRefusal, "refused with OPERATION_LIMIT_EXCEEDED")
}

// recursionClientLeaves sends the 10-level query with a client that gives up after 1 s, and
// watches the gateway's CPU for 3 s after the last one left: work must stop with the client.
func (p *prober) recursionClientLeaves(ctx context.Context, o *outcome) {
	query := recursion(p.wid, 10)
	o.series(ctx, 5, time.Minute, func(ctx context.Context) (string, string) {
		return p.graphql(ctx, query, time.Second)
	})
	left, _ := cpuTicks(p.gw.pid)
	rss0, _ := statusKB(p.gw.pid, "VmRSS")
	select {
	case <-ctx.Done():
		return
	case <-time.After(3 * time.Second):
	}
	after, _ := cpuTicks(p.gw.pid)
	rss1, _ := statusKB(p.gw.pid, "VmRSS")
	ms := float64(after-left) * 1000 / clockTicks
	gaveUp := o.answers.count(func(k string) bool { return strings.HasPrefix(k, "client gave up") })
	why := ""
	if gaveUp == 0 {
		why = " (each was answered within the second: nothing was left running to stop)"
	}
	o.notes = append(o.notes, fmt.Sprintf("%d of %d clients gave up before an answer%s; gateway CPU in the 3 s after the last left: %.0f ms, RSS %.1f → %.1f MB",
		gaveUp, o.sent, why, ms, mb(rss0), mb(rss1)))
	if ms > 500 {
		o.unexpected = append(o.unexpected, fmt.Sprintf("the gateway kept working after its clients left (%.0f ms of CPU in 3 s)", ms))
	}
	o.expect(func(k string) bool { return isLimitRefusal(k) || strings.HasPrefix(k, "client gave up") }, "refused, or given up by the client")
}

// unsupportedMedia posts GraphQL in the media types the gateway does not serve.
func (p *prober) unsupportedMedia(ctx context.Context, o *outcome) {
	kinds := []struct{ ct, body string }{
		{"text/plain", `{"query":"{ __typename }"}`},
		{"application/graphql", `{ __typename }`},
		{"application/x-www-form-urlencoded", "query=" + url.QueryEscape("{ __typename }")},
	}
	for _, k := range kinds {
		o.series(ctx, 50, time.Minute, func(ctx context.Context) (string, string) {
			key, msg := p.post(ctx, k.ct, []byte(k.body), nil, 10*time.Second)
			return k.ct + ": " + key, msg
		})
	}
	o.expect(func(k string) bool {
		_, ans, _ := strings.Cut(k, ": ")
		return strings.HasPrefix(ans, "HTTP 415 ") && !strings.HasSuffix(ans, "(no code)")
	}, "415 with extensions.code")
}

// forgedTokens sends tokens the identity provider never signed. Each made-up kid asks for
// the JWKS again, which the gateway does at most every 30 s however many arrive.
func (p *prober) forgedTokens(ctx context.Context, o *outcome) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	claims := b64(`{"sub":"adv-001","firm_id":"firm-001","iss":"advisor-sandbox","aud":"advisor-gateway","exp":4102444800}`)
	kinds := []struct{ name, token func(i int) string }{
		{func(int) string { return "unknown kid" }, func(i int) string {
			return b64(fmt.Sprintf(`{"alg":"EdDSA","kid":"forged-%d"}`, i)) + "." + claims + "." + b64(strings.Repeat("s", 64))
		}},
		{func(int) string { return "alg none" }, func(int) string { return b64(`{"alg":"none"}`) + "." + claims + "." }},
		{func(int) string { return "HS256" }, func(int) string { return b64(`{"alg":"HS256","typ":"JWT"}`) + "." + claims + "." + b64("mac") }},
		{func(int) string { return "8 KiB" }, func(int) string { return strings.Repeat("a", 8<<10) + "." + claims + ".x" }},
		{func(int) string { return "60 KiB" }, func(int) string { return strings.Repeat("a", 60<<10) }},
	}
	for _, k := range kinds {
		i := 0
		o.series(ctx, 400, time.Minute, func(ctx context.Context) (string, string) {
			i++
			key, msg := p.post(ctx, "application/json", []byte(`{"query":"{ viewer { advisorId } }"}`),
				map[string]string{"Authorization": "Bearer " + k.token(i)}, 10*time.Second)
			return k.name(i) + ": " + key, msg
		})
	}
	o.expect(func(k string) bool {
		_, ans, _ := strings.Cut(k, ": ")
		return ans == "HTTP 401 UNAUTHENTICATED" || strings.HasPrefix(ans, "HTTP 431 ")
	}, "401 UNAUTHENTICATED (or 431 for a header over the limit)")
}

// multipartPaths uploads one small file whose map names it at 25,000 paths.
func (p *prober) multipartPaths(ctx context.Context, o *outcome) {
	const paths = 25000
	var vars, mp strings.Builder
	vars.WriteString(`{"query":"query($files: [Upload]) { __typename }","variables":{"files":[`)
	mp.WriteString(`{"0":[`)
	for i := range paths {
		if i > 0 {
			vars.WriteByte(',')
			mp.WriteByte(',')
		}
		vars.WriteString("null")
		fmt.Fprintf(&mp, `"variables.files.%d"`, i)
	}
	vars.WriteString("]}}")
	mp.WriteString("]}")
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("operations", vars.String())
	_ = w.WriteField("map", mp.String())
	fw, _ := w.CreateFormFile("0", "notes.csv")
	_, _ = fw.Write([]byte("a,b\n1,2\n"))
	_ = w.Close()
	o.notes = append(o.notes, fmt.Sprintf("request of %s bytes; one file, %s paths", thousands(body.Len()), thousands(paths)))
	o.series(ctx, 5, time.Minute, func(ctx context.Context) (string, string) {
		return p.post(ctx, w.FormDataContentType(), body.Bytes(), map[string]string{"GraphQL-Require-Preflight": "1"}, 30*time.Second)
	})
	o.expect(func(k string) bool { return strings.HasPrefix(k, "HTTP 4") && !strings.HasSuffix(k, "(no code)") },
		"refused with a 4xx and extensions.code (a file is mapped to at most a few paths)")
}

// ---------------------------------------------------------------------------------------------
// WebSockets.

// wsDrops opens n WebSockets at once (50 at a time) and drops each 0.3 s after it started,
// without a close frame: with a FIN, as curl --max-time does, or, subscribed, with a reset.
func (p *prober) wsDrops(ctx context.Context, o *outcome, n int, subscribed bool) {
	sem := make(chan struct{}, 50)
	var wg sync.WaitGroup
	for i := range n {
		select {
		case <-ctx.Done():
			o.notes = append(o.notes, "cancelled")
			wg.Wait()
			return
		case sem <- struct{}{}:
		}
		o.sent++
		wg.Go(func() {
			defer func() { <-sem }()
			start := time.Now()
			conn, status, err := p.rawUpgrade(ctx, start.Add(2*time.Second))
			if err != nil {
				o.answers.add(status, short(err))
				return
			}
			if subscribed && status == "HTTP 101" {
				_, err = conn.Write(append(wsFrame(1, []byte(`{"type":"connection_init"}`)),
					wsFrame(1, fmt.Appendf(nil, `{"type":"subscribe","id":"s%d","payload":{"query":"subscription { events { id } }"}}`, i))...))
				if err != nil {
					status += ", write failed"
				}
			}
			o.answers.add(status, "")
			time.Sleep(time.Until(start.Add(300 * time.Millisecond)))
			if subscribed {
				_ = conn.(*net.TCPConn).SetLinger(0) // close with RST
			}
			_ = conn.Close()
		})
	}
	wg.Wait()
	o.expect(func(k string) bool { return strings.HasPrefix(k, "HTTP 101") }, "101 Switching Protocols")
}

// rawUpgrade sends a graphql-transport-ws upgrade over plain TCP and reads the answer's head.
func (p *prober) rawUpgrade(ctx context.Context, deadline time.Time) (net.Conn, string, error) {
	d := net.Dialer{Timeout: 3 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, "dial failed", err
	}
	_ = conn.SetDeadline(deadline)
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	_, err = fmt.Fprintf(conn, "GET /graphql HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: graphql-transport-ws\r\n\r\n",
		p.addr, base64.StdEncoding.EncodeToString(key))
	if err != nil {
		conn.Close()
		return nil, "write failed", err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		conn.Close()
		return nil, "no answer", err
	}
	return conn, fmt.Sprintf("HTTP %d", resp.StatusCode), nil
}

// wsFrame is one masked client frame.
func wsFrame(opcode byte, payload []byte) []byte {
	b := []byte{0x80 | opcode}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	mask := make([]byte, 4)
	_, _ = rand.Read(mask)
	b = append(b, mask...)
	for i, c := range payload {
		b = append(b, c^mask[i%4])
	}
	return b
}

// wsDial opens a graphql-transport-ws WebSocket and initialises it.
func (p *prober) wsDial(ctx context.Context) (*websocket.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(dctx, "ws://"+p.addr+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	c.SetReadLimit(64 << 20)
	if err := c.Write(dctx, websocket.MessageText, []byte(`{"type":"connection_init"}`)); err != nil {
		c.CloseNow()
		return nil, fmt.Errorf("connection_init: %w", err)
	}
	for {
		_, data, err := c.Read(dctx)
		if err != nil {
			c.CloseNow()
			return nil, fmt.Errorf("waiting for connection_ack: %w", err)
		}
		var m struct{ Type string }
		if json.Unmarshal(data, &m) == nil && m.Type == "connection_ack" {
			return c, nil
		}
	}
}

// wsCloseKey names how a WebSocket ended.
func wsCloseKey(err error, timedOut bool) (string, string) {
	var ce websocket.CloseError
	switch {
	case errors.As(err, &ce):
		return fmt.Sprintf("closed %d", ce.Code), ce.Reason
	case timedOut:
		return "no close from the gateway within 10 s", ""
	default:
		return "dropped without a close frame", short(err)
	}
}

// wsTooBig sends, on each of 20 WebSockets, one message over the read limit.
func (p *prober) wsTooBig(ctx context.Context, o *outcome) {
	big := []byte(`{"type":"subscribe","id":"big","payload":{"query":"{ __typename }","extensions":{"pad":"` +
		strings.Repeat("x", 2<<20+1<<10) + `"}}}`)
	o.notes = append(o.notes, fmt.Sprintf("message of %s bytes (MAX_REQUEST_BYTES, 2 MiB by default, bounds a WebSocket message)", thousands(len(big))))
	var wg sync.WaitGroup
	for range 20 {
		o.sent++
		wg.Go(func() {
			c, err := p.wsDial(ctx)
			if err != nil {
				o.answers.add("could not open", short(err))
				return
			}
			defer c.CloseNow()
			wctx, cancelW := context.WithTimeout(ctx, 15*time.Second)
			defer cancelW()
			wrote := make(chan error, 1)
			go func() { wrote <- c.Write(wctx, websocket.MessageText, big) }()
			rctx, cancelR := context.WithTimeout(ctx, 10*time.Second)
			var rerr error
			for rerr == nil {
				_, _, rerr = c.Read(rctx)
			}
			timedOut := rctx.Err() != nil && ctx.Err() == nil
			cancelR()
			o.answers.add(wsCloseKey(rerr, timedOut))
			c.CloseNow()
			<-wrote
		})
	}
	wg.Wait()
	o.expect(func(k string) bool { return k == "closed 1009" }, "close 1009 (message too big)")
}

// wsManySubscriptions sends 20,000 subscribe messages on one WebSocket while reading what the
// gateway answers, then holds the socket until the answers stop and closes it normally.
func (p *prober) wsManySubscriptions(ctx context.Context, o *outcome) {
	const n = 20000
	c, err := p.wsDial(ctx)
	if err != nil {
		o.answers.add("could not open", short(err))
		return
	}
	defer c.CloseNow()

	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	rctx, cancelR := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelR()
	readDone := make(chan struct{})
	var closedBy atomic.Value
	var closing atomic.Bool // the probe has begun closing: a close that follows is its own
	go func() {
		defer close(readDone)
		for {
			_, data, err := c.Read(rctx)
			if err != nil {
				var ce websocket.CloseError
				if closing.Load() {
					return
				}
				if errors.As(err, &ce) {
					closedBy.Store(fmt.Sprintf("closed %d: %s", ce.Code, ce.Reason))
				} else if rctx.Err() == nil {
					closedBy.Store("dropped: " + short(err))
				}
				return
			}
			last.Store(time.Now().UnixNano())
			var m struct {
				Type    string
				Payload json.RawMessage
			}
			_ = json.Unmarshal(data, &m)
			switch m.Type {
			case "error":
				var errs []gqlError
				_ = json.Unmarshal(m.Payload, &errs)
				k, msg := codesKey(errs)
				o.answers.add("error "+k, msg)
			case "next", "complete", "ping", "pong":
				o.answers.add(m.Type, "")
			default:
				o.answers.add("message "+m.Type, string(data))
			}
		}
	}()

	start := time.Now()
	for i := range n {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := c.Write(wctx, websocket.MessageText, fmt.Appendf(nil, `{"type":"subscribe","id":"s%d","payload":{"query":"subscription { events { id } }"}}`, i))
		cancel()
		if err != nil {
			o.notes = append(o.notes, fmt.Sprintf("writing stopped after %d subscribes: %s", i, short(err)))
			break
		}
		o.sent++
		if time.Since(start) > 90*time.Second {
			o.notes = append(o.notes, fmt.Sprintf("writing stopped after %d subscribes (90 s)", o.sent))
			break
		}
	}
	written := time.Now()
	// Until the answers stop for 2 s (at most 30 s), or the gateway closes the socket.
wait:
	for {
		quiet := time.Since(time.Unix(0, last.Load()))
		if quiet > 2*time.Second && time.Since(written) > 2*time.Second || time.Since(written) > 30*time.Second {
			break
		}
		select {
		case <-readDone:
			break wait
		case <-ctx.Done():
			break wait
		case <-time.After(100 * time.Millisecond):
		}
	}
	refused := o.answers.count(func(k string) bool { return strings.HasPrefix(k, "error") || k == "complete" })
	held := o.sent - refused
	rss, _ := statusKB(p.gw.pid, "VmRSS")
	select {
	case <-readDone:
		held = 0
	default:
		note := fmt.Sprintf("holding %d subscriptions on the socket: RSS %.1f MB", held, mb(rss))
		o.notes = append(o.notes, note)
		if held > 100 {
			o.unexpected = append(o.unexpected, fmt.Sprintf("%d subscriptions held on one socket (MAX_SUBSCRIPTIONS_PER_SOCKET is 100 by default)", held))
		}
		closing.Store(true)
		cctx, cancel := context.WithTimeout(ctx, 6*time.Second)
		go func() { <-cctx.Done(); c.CloseNow() }()
		_ = c.Close(websocket.StatusNormalClosure, "probe done")
		cancel()
	}
	<-readDone
	if v, ok := closedBy.Load().(string); ok {
		o.notes = append(o.notes, "the gateway ended the socket: "+v)
	}
	if refused < o.sent-100 {
		o.unexpected = append(o.unexpected, fmt.Sprintf("%d of %d subscribes refused; expected errors beyond the first 100", refused, o.sent))
	}
}

// ---------------------------------------------------------------------------------------------
// Stalled bodies.

// dripBodies opens 2,000 connections, each a POST whose body drips one byte every 5 s, and
// waits for the gateway to end them.
func (p *prober) dripBodies(ctx context.Context, o *outcome) {
	const n = 2000
	giveUp := time.Now().Add(p.bodyTimeout + 30*time.Second)
	type end struct {
		key string
		at  time.Duration
	}
	ends := make(chan end, n)
	sem := make(chan struct{}, 100)
	var wg sync.WaitGroup
	begin := time.Now()
	for range n {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		o.sent++
		wg.Go(func() {
			d := net.Dialer{Timeout: 5 * time.Second}
			conn, err := d.DialContext(ctx, "tcp", p.addr)
			if err != nil {
				<-sem
				ends <- end{"dial failed: " + short(err), 0}
				return
			}
			defer conn.Close()
			start := time.Now()
			_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
			_, err = fmt.Fprintf(conn, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", p.addr)
			<-sem
			if err != nil {
				ends <- end{"write failed: " + short(err), 0}
				return
			}
			done := make(chan struct{})
			go func() { // drip
				t := time.NewTicker(5 * time.Second)
				defer t.Stop()
				for {
					select {
					case <-done:
						return
					case <-ctx.Done():
						return
					case <-t.C:
						_ = conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			defer close(done)
			stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
			defer stop()
			_ = conn.SetReadDeadline(giveUp)
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				if isTimeout(err) {
					ends <- end{"still open when the probe gave up", time.Since(start)}
				} else {
					ends <- end{"closed without an answer", time.Since(start)}
				}
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answered := time.Since(start)
			if _, err := io.Copy(io.Discard, br); err != nil && isTimeout(err) {
				ends <- end{fmt.Sprintf("HTTP %d, connection left open", resp.StatusCode), answered}
				return
			}
			ends <- end{fmt.Sprintf("HTTP %d, then closed", resp.StatusCode), time.Since(start)}
		})
	}
	dialed := time.Since(begin)
	// While they are held: does the gateway still answer?
	time.Sleep(time.Second)
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	t0 := time.Now()
	req, _ := http.NewRequestWithContext(hctx, http.MethodGet, p.base+"/healthz", nil)
	resp, err := p.side.Do(req)
	healthz := time.Since(t0)
	cancel()
	if err != nil {
		o.notes = append(o.notes, fmt.Sprintf("/healthz while they were held: no answer (%s)", short(err)))
		o.unexpected = append(o.unexpected, "/healthz did not answer while the stalled bodies were held")
	} else {
		resp.Body.Close()
		o.notes = append(o.notes, fmt.Sprintf("%d connections opened in %.1f s; /healthz while they were held: %d in %d ms", o.sent, dialed.Seconds(), resp.StatusCode, healthz.Milliseconds()))
	}
	wg.Wait()
	close(ends)
	var times []time.Duration
	for e := range ends {
		o.answers.add(e.key, "")
		if e.at > 0 {
			times = append(times, e.at)
		}
	}
	if len(times) > 0 {
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		o.notes = append(o.notes, fmt.Sprintf("connections ended after %.1f s (first) / %.1f s (median) / %.1f s (last); REQUEST_BODY_TIMEOUT %s",
			times[0].Seconds(), times[len(times)/2].Seconds(), times[len(times)-1].Seconds(), p.bodyTimeout))
		if times[len(times)-1] > p.bodyTimeout+10*time.Second {
			o.unexpected = append(o.unexpected, fmt.Sprintf("a stalled body was held %.1f s, past REQUEST_BODY_TIMEOUT (%s)", times[len(times)-1].Seconds(), p.bodyTimeout))
		}
	}
	o.expect(func(k string) bool { return strings.HasSuffix(k, "then closed") || k == "closed without an answer" }, "ended by the gateway (408, then closed)")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// ---------------------------------------------------------------------------------------------
// Measuring.

type outcome struct {
	sent       int
	answers    *tally
	notes      []string
	unexpected []string
}

// series sends n requests one after another, within budget.
func (o *outcome) series(ctx context.Context, n int, budget time.Duration, one func(context.Context) (string, string)) {
	end := time.Now().Add(budget)
	for i := range n {
		if ctx.Err() != nil {
			o.notes = append(o.notes, fmt.Sprintf("cancelled after %d of %d requests", i, n))
			return
		}
		if time.Now().After(end) {
			o.notes = append(o.notes, fmt.Sprintf("stopped after %d of %d requests: over the %s budget", i, n, budget))
			return
		}
		o.sent++
		o.answers.add(one(ctx))
	}
}

// expect records the answers that are not what the issue asks for.
func (o *outcome) expect(ok func(key string) bool, want string) {
	for _, k := range o.answers.keys() {
		if !ok(k) {
			o.unexpected = append(o.unexpected, fmt.Sprintf("%d× %q, expected %s", o.answers.get(k), k, want))
		}
	}
}

type result struct {
	item
	outcome
	pid                          int
	fdBefore, fdPeak, fdAfter    int
	rssBefore, rssPeak, rssAfter int64 // kB
	cpuMS, perRequest            float64
	upstream                     int64 // -1: unknown
	settled                      time.Duration
	sockets                      string
	failures                     []string
}

func (p *prober) measure(parent context.Context, it item, hwm bool) result {
	r := result{item: it, outcome: outcome{answers: newTally()}, pid: p.gw.pid}
	pid := r.pid
	up0 := p.upstreamCalls(parent)
	p.tr.CloseIdleConnections()
	time.Sleep(50 * time.Millisecond)
	r.fdBefore, _ = countFDs(pid)
	r.rssBefore, _ = statusKB(pid, "VmRSS")
	if hwm {
		_ = resetHWM(pid)
	}
	ctx, cancel := context.WithCancel(parent)
	p.samp.begin(cancel)
	cpu0, _ := cpuTicks(pid)
	it.run(p, ctx, &r.outcome)
	cpu1, _ := cpuTicks(pid)
	cancel()
	peakRSS, peakFDs, over := p.samp.end()
	if hwm {
		if h, err := statusKB(pid, "VmHWM"); err == nil && h > peakRSS {
			peakRSS = h
		}
	}
	r.rssPeak, r.fdPeak = peakRSS, max(peakFDs, r.fdBefore)
	r.cpuMS = float64(cpu1-cpu0) * 1000 / clockTicks
	if r.sent > 0 {
		r.perRequest = r.cpuMS / float64(r.sent)
	}

	p.tr.CloseIdleConnections()
	settle := time.Now()
	for {
		r.fdAfter, _ = countFDs(pid)
		if r.fdAfter <= r.fdBefore+fdSlack || it.control || time.Since(settle) > settleFor || p.gw.exited() {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.settled = time.Since(settle)
	r.fdPeak = max(r.fdPeak, r.fdAfter)
	r.rssAfter, _ = statusKB(pid, "VmRSS")
	r.upstream = -1
	if up1 := p.upstreamCalls(parent); up0 >= 0 && up1 >= 0 {
		r.upstream = up1 - up0
	}
	p.tr.CloseIdleConnections()

	if p.gw.exited() {
		r.failures = append(r.failures, "the gateway exited")
	}
	if over != "" {
		r.failures = append(r.failures, over)
	}
	if !it.control && r.fdAfter > r.fdBefore+fdSlack {
		r.failures = append(r.failures, fmt.Sprintf("descriptors %d → %d, not back within %s", r.fdBefore, r.fdAfter, settleFor))
		r.sockets = socketSummary(pid, p.port)
	}
	if it.fdPeak > 0 && r.fdPeak > r.fdBefore+it.fdPeak {
		r.failures = append(r.failures, fmt.Sprintf("descriptors peaked at %d during it (%d before)", r.fdPeak, r.fdBefore))
	}
	if mb(r.rssPeak) > rssLimitMB {
		carried := ""
		if mb(r.rssBefore) > rssLimitMB {
			carried = fmt.Sprintf("; %.0f MB of it was there before", mb(r.rssBefore))
		}
		r.failures = append(r.failures, fmt.Sprintf("RSS peaked at %.0f MB (limit %d MB%s)", mb(r.rssPeak), rssLimitMB, carried))
	}
	if it.cpuChecked && r.perRequest > cpuLimitMS {
		r.failures = append(r.failures, fmt.Sprintf("%.1f ms of CPU per request (limit %.0f ms per refused request)", r.perRequest, cpuLimitMS))
	}
	if *flagStrict && len(r.unexpected) > 0 {
		r.failures = append(r.failures, "unexpected answers (-strict)")
	}
	return r
}

func (r result) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "(%s) %s\n", r.id, r.name)
	fmt.Fprintf(&b, "    sent %d; answered: %s\n", r.sent, r.answers)
	up := "?"
	if r.upstream >= 0 {
		up = strconv.FormatInt(r.upstream, 10)
	}
	fmt.Fprintf(&b, "    descriptors %d → %d (peak %d, settled in %.1f s); RSS %.1f → peak %.1f → %.1f MB; CPU %.2f ms/request (%.0f ms in all); upstream calls %s\n",
		r.fdBefore, r.fdAfter, r.fdPeak, r.settled.Seconds(), mb(r.rssBefore), mb(r.rssPeak), mb(r.rssAfter), r.perRequest, r.cpuMS, up)
	for _, n := range r.notes {
		fmt.Fprintf(&b, "    note: %s\n", n)
	}
	for i, k := range r.answers.keys() {
		if s := r.answers.sample(k); s != "" && i < 4 {
			fmt.Fprintf(&b, "    e.g. %s: %s\n", k, clip(s, 200))
		}
	}
	if r.sockets != "" {
		fmt.Fprintf(&b, "    descriptors left: %s\n", r.sockets)
	}
	for _, u := range r.unexpected {
		fmt.Fprintf(&b, "    UNEXPECTED: %s\n", u)
	}
	for _, f := range r.failures {
		fmt.Fprintf(&b, "    FAIL: %s\n", f)
	}
	return b.String()
}

func summary(results []result) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "item\tsent\tdescriptors\tpeak RSS MB\tCPU ms/req\tupstream\tverdict")
	for _, r := range results {
		fds := fmt.Sprintf("%d→%d (peak %d)", r.fdBefore, r.fdAfter, r.fdPeak)
		cpu := fmt.Sprintf("%.2f", r.perRequest)
		if !r.cpuChecked {
			cpu += " (n/c)"
		}
		up := "?"
		if r.upstream >= 0 {
			up = strconv.FormatInt(r.upstream, 10)
		}
		verdict := "ok"
		if len(r.failures) > 0 {
			verdict = "FAIL: " + strings.Join(r.failures, "; ")
		} else if r.control {
			verdict = "ok (control)"
		}
		if len(r.unexpected) > 0 {
			verdict += fmt.Sprintf(" [%d unexpected]", len(r.unexpected))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.1f\t%s\t%s\t%s\n", r.id, r.sent, fds, mb(r.rssPeak), cpu, up, verdict)
	}
	tw.Flush()
	fmt.Printf("limits: descriptors back within %d of before (within %s), peak RSS ≤ %d MB, CPU ≤ %.0f ms per refused request (n/c: not checked)\n",
		fdSlack, settleFor, rssLimitMB, cpuLimitMS)
}

// ---------------------------------------------------------------------------------------------
// The prober: HTTP clients and the sampler.

type prober struct {
	gw          *gateway
	addr, base  string
	port        int
	tr          *http.Transport
	client      *http.Client
	side        *http.Client // /metrics and /healthz, without keep-alive
	wid         string
	bodyTimeout time.Duration
	samp        *sampler
	stopSamp    chan struct{}
	sampDone    chan struct{}
}

func newProber(gw *gateway, bodyTimeout time.Duration) *prober {
	_, port, _ := net.SplitHostPort(gw.addr)
	portN, _ := strconv.Atoi(port)
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     10 * time.Second,
	}
	p := &prober{
		gw: gw, addr: gw.addr, base: "http://" + gw.addr, port: portN, tr: tr,
		client:      &http.Client{Transport: tr, Timeout: 2 * time.Minute},
		side:        &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: (&net.Dialer{Timeout: 3 * time.Second}).DialContext}, Timeout: 10 * time.Second},
		bodyTimeout: bodyTimeout,
		samp:        &sampler{pid: gw.pid, safetyKB: int64(*flagSafetyMB) * 1e6 / 1024, kill: gw.kill},
		stopSamp:    make(chan struct{}),
		sampDone:    make(chan struct{}),
	}
	go func() { defer close(p.sampDone); p.samp.run(p.stopSamp) }()
	return p
}

func (p *prober) close() {
	close(p.stopSamp)
	<-p.sampDone
	p.tr.CloseIdleConnections()
}

type gqlError struct {
	Message    string
	Extensions struct{ Code string }
}

// codesKey names a list of errors by their distinct codes.
func codesKey(errs []gqlError) (string, string) {
	var codes []string
	seen := map[string]bool{}
	for _, e := range errs {
		c := e.Extensions.Code
		if c == "" {
			c = "(no code)"
		}
		if !seen[c] {
			seen[c] = true
			codes = append(codes, c)
		}
	}
	msg := ""
	if len(errs) > 0 {
		msg = errs[0].Message
	}
	return strings.Join(codes, "+"), msg
}

func (p *prober) graphql(ctx context.Context, query string, timeout time.Duration) (string, string) {
	body, _ := json.Marshal(map[string]string{"query": query})
	return p.post(ctx, "application/json", body, nil, timeout)
}

// post sends one request and names its answer: "HTTP 200 OPERATION_LIMIT_EXCEEDED", "HTTP 200
// data", "client gave up after 1s", with the first error's message.
func (p *prober) post(parent context.Context, contentType string, body []byte, header map[string]string, timeout time.Duration) (string, string) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return "request error", err.Error()
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		switch {
		case parent.Err() != nil:
			return "cancelled by the probe", ""
		case ctx.Err() != nil:
			return "client gave up after " + timeout.String(), ""
		default:
			return "transport error", short(err)
		}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyRead+1))
	if err != nil {
		if ctx.Err() != nil && parent.Err() == nil {
			return fmt.Sprintf("HTTP %d, client gave up reading after %s", resp.StatusCode, timeout), ""
		}
		return fmt.Sprintf("HTTP %d, body cut", resp.StatusCode), short(err)
	}
	if len(data) > maxBodyRead {
		n, _ := io.Copy(io.Discard, resp.Body)
		return fmt.Sprintf("HTTP %d, body over %d MB", resp.StatusCode, maxBodyRead>>20), fmt.Sprintf("%s bytes", thousands(len(data)+int(n)))
	}
	var r struct {
		Data   json.RawMessage
		Errors []gqlError
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return fmt.Sprintf("HTTP %d, not JSON", resp.StatusCode), clip(string(data), 120)
	}
	if len(r.Errors) == 0 {
		return fmt.Sprintf("HTTP %d data", resp.StatusCode), ""
	}
	k, msg := codesKey(r.Errors)
	return fmt.Sprintf("HTTP %d %s", resp.StatusCode, k), msg
}

func (p *prober) firstWid(ctx context.Context) (string, error) {
	body, _ := json.Marshal(map[string]string{"query": "{ topAccounts(limit: 1) { nodes { wid } } }"})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.side.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			TopAccounts struct{ Nodes []struct{ Wid string } }
		}
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err := json.Unmarshal(data, &r); err != nil || len(r.Data.TopAccounts.Nodes) == 0 || r.Data.TopAccounts.Nodes[0].Wid == "" {
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, clip(string(data), 300))
	}
	return r.Data.TopAccounts.Nodes[0].Wid, nil
}

// upstreamCalls is the gateway's count of requests to the Advisor service, from /metrics; -1
// when it cannot be read.
func (p *prober) upstreamCalls(ctx context.Context) int64 {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/metrics", nil)
	resp, err := p.side.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var total float64
	found := false
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "advisor_upstream_requests_total") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				total += v
				found = true
			}
		}
	}
	if !found && resp.StatusCode != http.StatusOK {
		return -1
	}
	return int64(total)
}

// sampler watches the gateway's RSS and descriptors every 25 ms, for the peaks of the current
// reproduction, and stops a reproduction (then the gateway) that endangers the machine.
type sampler struct {
	pid      int
	safetyKB int64
	kill     func()

	mu      sync.Mutex
	peakRSS int64
	peakFDs int
	cancel  context.CancelFunc
	over    string
	killed  bool
}

func (s *sampler) run(stop <-chan struct{}) {
	t := time.NewTicker(25 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		rss, err := statusKB(s.pid, "VmRSS")
		if err != nil {
			continue
		}
		fds, _ := countFDs(s.pid)
		s.mu.Lock()
		s.peakRSS = max(s.peakRSS, rss)
		s.peakFDs = max(s.peakFDs, fds)
		if rss > s.safetyKB && s.cancel != nil && s.over == "" {
			s.over = fmt.Sprintf("cancelled by the probe: the gateway's RSS passed %d MB (-safety-mb)", *flagSafetyMB)
			s.cancel()
		}
		if rss > 2*s.safetyKB && !s.killed {
			s.killed = true
			s.over = fmt.Sprintf("the probe killed the gateway: its RSS passed %d MB (twice -safety-mb)", 2*(*flagSafetyMB))
			go s.kill()
		}
		s.mu.Unlock()
	}
}

func (s *sampler) begin(cancel context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peakRSS, s.peakFDs, s.cancel, s.over = 0, 0, cancel, ""
}

func (s *sampler) end() (int64, int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel = nil
	return s.peakRSS, s.peakFDs, s.over
}

// tally counts answers by kind, in the order they first appeared, with one message of each.
type tally struct {
	mu      sync.Mutex
	order   []string
	n       map[string]int
	samples map[string]string
}

func newTally() *tally { return &tally{n: map[string]int{}, samples: map[string]string{}} }

func (t *tally) add(key, sample string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.n[key]; !ok {
		t.order = append(t.order, key)
		t.samples[key] = sample
	}
	t.n[key]++
}

func (t *tally) keys() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.order...)
}

func (t *tally) get(k string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n[k]
}

func (t *tally) sample(k string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.samples[k]
}

func (t *tally) count(match func(string) bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k, v := range t.n {
		if match(k) {
			n += v
		}
	}
	return n
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.order) == 0 {
		return "nothing"
	}
	parts := make([]string, len(t.order))
	for i, k := range t.order {
		parts[i] = fmt.Sprintf("%d× %s", t.n[k], k)
	}
	return strings.Join(parts, ", ")
}

// ---------------------------------------------------------------------------------------------
// The gateway process.

type gateway struct {
	cmd     *exec.Cmd
	pid     int
	addr    string
	logPath string
	logFile *os.File
	done    chan struct{}
	waitErr error

	killedByProbe atomic.Bool

	stopOnce sync.Once
	stopTook time.Duration
	stopErr  error
}

// gatewaySettings are the environment variables that configure the gateway (config.Load), and
// the Go runtime's own, removed from its environment so that the defaults are probed.
var gatewaySettings = []string{
	"ADDR", "ADVISOR_", "UPSTREAM_", "CORS_ALLOWED_ORIGINS", "MAX_", "GRAPHQL_", "REDIS_", "WEBHOOK_API_KEY", "AUTH_",
	"EVENT_", "EVENTS_", "SUBSCRIBER_BUFFER", "STREAM_KEEPALIVE", "UPLOAD_DISK_BUDGET", "REQUEST_BODY_TIMEOUT",
	"SANDBOX_", "GOGC", "GOMEMLIMIT", "GOMAXPROCS", "GODEBUG",
}

func gatewayEnv() (env, removed []string) {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, s := range gatewaySettings {
			if k == s || strings.HasSuffix(s, "_") && strings.HasPrefix(k, s) {
				drop = true
				break
			}
		}
		if drop {
			removed = append(removed, k)
		} else {
			env = append(env, kv)
		}
	}
	return env, removed
}

func startGateway(ctx context.Context, bin, dir string, env []string, logPath string) (*gateway, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("find a free port: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = append(env, "ADDR="+addr)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start the gateway: %w", err)
	}
	g := &gateway{cmd: cmd, pid: cmd.Process.Pid, addr: addr, logPath: logPath, logFile: logFile, done: make(chan struct{})}
	go func() { g.waitErr = cmd.Wait(); close(g.done) }()

	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if g.exited() {
			return nil, fmt.Errorf("the gateway exited at start (%v):\n%s", g.waitErr, g.logTail(30))
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("the gateway did not answer /healthz within 60 s:\n%s", g.logTail(30))
		}
		if resp, err := client.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (g *gateway) exited() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the gateway's process group and waits for it (SIGKILL after 20 s).
func (g *gateway) stop() (time.Duration, error) {
	g.stopOnce.Do(func() {
		defer g.logFile.Close()
		if g.exited() {
			g.stopErr = g.waitErr
			if g.killedByProbe.Load() {
				g.stopErr = fmt.Errorf("killed by the probe: its RSS passed twice -safety-mb")
			}
			return
		}
		start := time.Now()
		_ = syscall.Kill(-g.pid, syscall.SIGTERM)
		select {
		case <-g.done:
			g.stopTook, g.stopErr = time.Since(start), g.waitErr
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-g.pid, syscall.SIGKILL)
			<-g.done
			g.stopTook, g.stopErr = time.Since(start), fmt.Errorf("did not stop within 20 s of SIGTERM; killed")
		}
	})
	return g.stopTook, g.stopErr
}

func (g *gateway) kill() {
	g.killedByProbe.Store(true)
	_ = syscall.Kill(-g.pid, syscall.SIGKILL)
}

func (g *gateway) logTail(n int) string {
	data, _ := os.ReadFile(g.logPath)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// problems lists the distinct WARN and ERROR messages of the gateway's log, with how often.
func (g *gateway) problems(n int) string {
	data, _ := os.ReadFile(g.logPath)
	counts := map[string]int{}
	var order []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if !strings.Contains(line, "level=WARN") && !strings.Contains(line, "level=ERROR") && !strings.Contains(line, "http: ") {
			continue
		}
		key := line
		if i := strings.Index(line, "level="); i >= 0 {
			key = line[i:]
		}
		if i := strings.Index(key, " msg="); i >= 0 {
			rest := key[i+5:]
			if j := strings.Index(rest, "\" "); strings.HasPrefix(rest, "\"") && j > 0 {
				rest = rest[:j+1]
			} else if j := strings.IndexByte(rest, ' '); j > 0 {
				rest = rest[:j]
			}
			key = key[:i] + " msg=" + rest
		} else if i := strings.Index(key, "http: "); i >= 0 {
			key = clip(key[i:], 100)
		}
		if counts[key] == 0 {
			order = append(order, key)
		}
		counts[key]++
	}
	var b strings.Builder
	for i, k := range order {
		if i == n {
			fmt.Fprintf(&b, "  ... and %d more kinds\n", len(order)-n)
			break
		}
		fmt.Fprintf(&b, "  %d× %s\n", counts[k], clip(k, 200))
	}
	return strings.TrimRight(b.String(), "\n")
}

// ---------------------------------------------------------------------------------------------
// /proc.

func countFDs(pid int) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	return len(names), err
}

// statusKB reads one kB field of /proc/PID/status (VmRSS, VmHWM).
func statusKB(pid int, field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// cpuTicks is utime + stime of /proc/PID/stat, in clock ticks.
func cpuTicks(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("malformed stat")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed stat")
	}
	return u + s, nil
}

// resetHWM resets VmHWM to the current RSS (clear_refs 5, Linux 4.0 and later).
func resetHWM(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

func openFileLimit(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.HasPrefix(line, "Max open files") {
			f := strings.Fields(line)
			if len(f) >= 5 {
				return fmt.Sprintf("open-file limit: soft %s, hard %s", f[3], f[4])
			}
		}
	}
	return ""
}

// socketSummary says what the gateway's descriptors are: TCP sockets on its port by state
// (CLOSE_WAIT: the client left and the gateway never closed), other sockets, and the rest.
func socketSummary(pid, port int) string {
	states := map[string]string{"01": "ESTABLISHED", "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "0A": "LISTEN", "04": "FIN_WAIT1", "05": "FIN_WAIT2", "09": "LAST_ACK"}
	type sock struct {
		local int
		state string
	}
	byInode := map[string]sock{}
	for _, f := range []string{"tcp", "tcp6"} {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		for i, line := range strings.Split(string(data), "\n") {
			fs := strings.Fields(line)
			if i == 0 || len(fs) < 10 {
				continue
			}
			_, hexPort, _ := strings.Cut(fs[1], ":")
			lp, _ := strconv.ParseInt(hexPort, 16, 32)
			st := states[fs[3]]
			if st == "" {
				st = fs[3]
			}
			byInode[fs[9]] = sock{int(lp), st}
		}
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	onPort := map[string]int{}
	other, files := 0, 0
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		ino, ok := strings.CutPrefix(link, "socket:[")
		if !ok {
			files++
			continue
		}
		s, ok := byInode[strings.TrimSuffix(ino, "]")]
		if ok && s.local == port {
			onPort[s.state]++
		} else {
			other++
		}
	}
	var parts []string
	for st, n := range onPort {
		parts = append(parts, fmt.Sprintf("%d %s", n, st))
	}
	sort.Strings(parts)
	return fmt.Sprintf("sockets on the gateway's port: %s; other sockets %d; other descriptors %d",
		strings.Join(parts, ", "), other, files)
}

// raiseNoFile raises the probe's own open-file limit to its hard limit, for (h)'s 2,000
// connections. The gateway inherits it (and raises its own anyway, as every Go program does).
func raiseNoFile() {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		logf("RLIMIT_NOFILE: %v", err)
		return
	}
	if lim.Cur < lim.Max {
		old := lim.Cur
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			logf("raise RLIMIT_NOFILE: %v", err)
			return
		}
		logf("raised the probe's RLIMIT_NOFILE from %d to %d", old, lim.Cur)
	} else if lim.Cur < 4500 {
		logf("RLIMIT_NOFILE is %d: (h) needs about 2,100 descriptors", lim.Cur)
	}
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: run the probe from the gateway's module", dir)
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Small helpers.

func mb(kb int64) float64 { return float64(kb) * 1024 / 1e6 }

func short(err error) string {
	if err == nil {
		return ""
	}
	return clip(err.Error(), 120)
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

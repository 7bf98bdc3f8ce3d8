package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/advisorhq/gateway/internal/eventlog/eventlogtest"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/testrun"
)

// replicaEnv, set in a child's environment, makes the test binary run the gateway instead of
// the tests (TestMain): a replica that a test can kill as a crash would.
const replicaEnv = "GATEWAY_TEST_REPLICA"

// replica is a gateway in a process of its own.
type replica struct {
	url  string
	cmd  *exec.Cmd
	dead atomic.Bool
}

// startReplica runs the gateway with env in a child process, stopped when the test ends.
func startReplica(t *testing.T, env map[string]string) *replica {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), replicaEnv+"=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &replica{cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "gateway serving") {
				found <- testrun.URL(sc.Text())
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case r.url = <-found:
	case <-time.After(20 * time.Second):
		t.Fatal("a replica did not start within 20 s")
	}
	return r
}

// kill ends the replica as a crash would: no socket is closed in order.
func (r *replica) kill() {
	r.dead.Store(true)
	_ = r.cmd.Process.Kill()
}

// runReplicaIfAsked runs the gateway when this process is a replica a test started, and exits.
func runReplicaIfAsked() {
	if os.Getenv(replicaEnv) == "" {
		return
	}
	if err := serve(context.Background(), os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestMain(m *testing.M) {
	runReplicaIfAsked()
	os.Exit(m.Run())
}

// Three replicas share one Redis Cluster (three masters of the test's own); subscribers are
// spread over them; webhooks arrive at any replica; one replica is killed mid-stream. Its
// subscribers reconnect to another replica with `after` set to the last event they received,
// and in the end every subscriber has every event exactly once, in order.
func TestSubscribersOfAKilledReplicaResumeOnAnotherWithoutLoss(t *testing.T) {
	t.Parallel()
	cluster := eventlogtest.StartCluster(t)
	up := newUpstream(t, false)
	env := map[string]string{
		"ADDR": "127.0.0.1:0", "ADVISOR_BASE_URL": up.URL, "ADVISOR_FIRM": sandbox.DemoFirmID, "ADVISOR_ACCESS_TOKEN": upstreamToken,
		"ADVISOR_BASIC_CREDENTIALS": upstreamBasic, "WEBHOOK_API_KEY": webhookKey, "AUTH_DISABLED": "true",
		"REDIS_URL": cluster.URL(), "REDIS_KEY_PREFIX": "failover:", "LOG_LEVEL": "warn",
	}
	replicas := []*replica{startReplica(t, env), startReplica(t, env), startReplica(t, env)}
	const subscribers, events, killAfter = 30, 60, 20
	const wid = "w-failover"

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	got := make([][]int, subscribers)
	var resumed atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, subscribers+1)
	for i := range subscribers {
		wg.Go(func() {
			received, again, err := subscribeThroughFailover(ctx, replicas, i, wid, events)
			got[i] = received
			resumed.Add(int32(again))
			if err != nil {
				errs <- fmt.Errorf("subscriber %d (on replica %d first): %w", i, i%len(replicas), err)
			}
		})
	}
	for _, r := range replicas {
		waitGauge(t, &testGateway{url: r.url, up: up}, "advisor_event_subscribers", subscribers/len(replicas))
	}

	for n := range events {
		if n == killAfter {
			replicas[0].kill()
		}
		if err := deliverToAnyReplica(ctx, replicas, n, progress(wid, n)); err != nil {
			t.Fatalf("event %d: %v", n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, seq := range got {
		for n, pct := range seq {
			if pct != n {
				t.Fatalf("subscriber %d got %v: event %d is %d%%, want %d%% (a gap or a repeat)", i, seq, n, pct, n)
			}
		}
		if len(seq) != events {
			t.Fatalf("subscriber %d got %d events, want %d", i, len(seq), events)
		}
	}
	if n := int(resumed.Load()); n < subscribers/len(replicas) {
		t.Fatalf("%d subscriptions resumed on another replica, want at least the killed one's %d", n, subscribers/len(replicas))
	}
}

// subscribeThroughFailover subscribes to wid's events on replica i%3, and whenever its socket
// dies resumes on the next live replica after the last event it received, until it has want
// events. It returns the completion percentages received and how often it resumed.
func subscribeThroughFailover(ctx context.Context, replicas []*replica, i int, wid string, want int) ([]int, int, error) {
	var got []int
	last := ""
	resumes := 0
	for r := i % len(replicas); len(got) < want; r = (r + 1) % len(replicas) {
		if ctx.Err() != nil {
			return got, resumes, fmt.Errorf("%d of %d events before the deadline", len(got), want)
		}
		if replicas[r].dead.Load() {
			continue
		}
		if last != "" {
			resumes++
		}
		err := subscribeOnce(ctx, replicas[r].url, wid, last, func(id string, pct int) {
			got, last = append(got, pct), id
		}, func() bool { return len(got) >= want })
		if err == nil {
			return got, resumes, nil
		}
		if !replicas[r].dead.Load() {
			return got, resumes, fmt.Errorf("replica %d, which is alive: %w", r, err)
		}
	}
	return got, resumes, nil
}

// subscribeOnce runs one subscription on the gateway at url until done says so (nil) or the
// socket fails (the error).
func subscribeOnce(ctx context.Context, url, wid, after string, received func(id string, pct int), done func() bool) error {
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	send := func(m map[string]any) error {
		b, _ := json.Marshal(m)
		return conn.Write(ctx, websocket.MessageText, b)
	}
	vars := map[string]any{"filter": map[string]any{"wids": []string{wid}}}
	if after != "" {
		vars["after"] = after
	}
	if err := send(map[string]any{"type": "connection_init"}); err != nil {
		return err
	}
	if err := send(map[string]any{"id": "s", "type": "subscribe", "payload": map[string]any{"query": progressSubscription, "variables": vars}}); err != nil {
		return err
	}
	for !done() {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return err
		}
		var m struct {
			Type    string
			Payload struct {
				Data struct {
					Events struct {
						ID                   string
						CompletionPercentage int
					}
				}
				Errors []any
			}
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
		switch m.Type {
		case "next":
			if len(m.Payload.Errors) > 0 {
				return fmt.Errorf("next with errors: %s", data)
			}
			received(m.Payload.Data.Events.ID, m.Payload.Data.Events.CompletionPercentage)
		case "error", "complete":
			return fmt.Errorf("the subscription ended: %s", data)
		}
	}
	return nil
}

// deliverToAnyReplica posts one webhook to a live replica, trying the others when one fails;
// a replica that stored it before dying makes the retry a duplicate, acknowledged and not
// published again.
func deliverToAnyReplica(ctx context.Context, replicas []*replica, n int, ev map[string]any) error {
	body, _ := json.Marshal(ev)
	var last error
	for k := range len(replicas) {
		r := replicas[(n+k)%len(replicas)]
		if r.dead.Load() {
			continue
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/webhooks", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("service-api-key", webhookKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
		last = fmt.Errorf("status %d", resp.StatusCode)
	}
	return errors.Join(errors.New("no replica took the webhook"), last)
}

package fanoutload

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestWorkerReadsWhatEndsASubscription checks the graphql-transport-ws messages a worker reads:
// results are recorded, and an "error" (whose payload is a list) or a "next" with errors ends
// the subscription with its code, so that a SLOW_CONSUMER is not counted as silent loss.
func TestWorkerReadsWhatEndsASubscription(t *testing.T) {
	const prefix = "c-fanout-test-"
	next := func(id string, seq int) string {
		return fmt.Sprintf(`{"id":%q,"type":"next","payload":{"data":{"events":{"id":"1-%d","wid":"%s%d","eventType":"CLIENT_PROGRESS_CHANGED"}}}}`, id, seq, prefix, seq)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			return
		}
		defer conn.CloseNow()
		ctx := r.Context()
		_, _, _ = conn.Read(ctx) // connection_init
		_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_ack"}`))
		for range 3 {
			_, _, _ = conn.Read(ctx) // subscribe 1, 2 and 3
		}
		for _, m := range []string{
			next("1", 0), next("2", 0), next("3", 0), `{"type":"ping"}`, next("1", 1),
			`{"id":"1","type":"error","payload":[{"message":"fell behind","extensions":{"code":"SLOW_CONSUMER"}}]}`,
			`{"id":"2","type":"next","payload":{"data":null,"errors":[{"message":"store down","extensions":{"code":"EVENTS_UNAVAILABLE"}}]}}`,
			next("3", 1), `{"id":"3","type":"next","payload":{"data":{"events":{"wid":"someone-else"}}}}`,
		} {
			_ = conn.Write(ctx, websocket.MessageText, []byte(m))
		}
		_, data, _ := conn.Read(ctx)
		var pong struct{ Type string }
		if err := json.Unmarshal(data, &pong); err != nil || pong.Type != "pong" {
			t.Errorf("the worker answered a ping with %s, want a pong", data)
		}
		for { // until the worker closes: read, so its close handshake completes
			if _, _, err := conn.Read(ctx); err != nil {
				return
			}
		}
	}))
	defer srv.Close()

	subs := []*sub{{}, {}, {}}
	ctx, cancel := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	if err := openWS(ctx, ctx, srv.URL, prefix, subs, &readers, false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, _ := subs[2].snapshot()
		_, ended := subs[1].snapshot()
		if n == 2 && ended || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	readers.Wait()
	for i, want := range []struct {
		seqs  int
		ended string
	}{{2, "SLOW_CONSUMER fell behind"}, {1, "EVENTS_UNAVAILABLE store down"}, {2, ""}} {
		got := subs[i].result()
		if len(got.Seq) != want.seqs || !strings.Contains(got.Ended, want.ended) || want.ended == "" && got.Ended != "" {
			t.Errorf("subscription %d: got %d events, ended %q; want %d, %q", i+1, len(got.Seq), got.Ended, want.seqs, want.ended)
		}
	}
}

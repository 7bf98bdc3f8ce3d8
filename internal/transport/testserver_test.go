package transport

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/advisorhq/gateway/internal/apperr"
)

// probeSchema is a schema small enough to reason about in transport tests: uploads that report
// what they read, and a subscription that stays open until its client completes it.
const probeSchema = `
scalar Upload
type Query { ok: Boolean }
type Mutation {
  "Reads every file and reports, for each, its size, its SHA-256 and the upload descriptors open meanwhile."
  read(files: [Upload!]!): [String!]!
}
type Subscription {
  "One event at once, then nothing until the client completes the operation."
  hold: Boolean
  "n strings of size bytes, one every so many milliseconds, then the end of the stream."
  ticks(n: Int!, size: Int!, every: Int!): String
}
`

// probeExecutor executes probeSchema without generated code.
func probeExecutor() graphql.ExecutableSchema {
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "probe.graphqls", Input: probeSchema})
	return &graphql.ExecutableSchemaMock{
		SchemaFunc:     func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) { return 0, false },
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			opCtx := graphql.GetOperationContext(ctx)
			switch opCtx.Operation.Operation {
			case ast.Mutation:
				return graphql.OneShot(readUploads(opCtx.Variables["files"]))
			case ast.Subscription:
				if f, ok := opCtx.Operation.SelectionSet[0].(*ast.Field); ok && f.Name == "ticks" {
					args := f.ArgumentMap(opCtx.Variables)
					return ticks(int(args["n"].(int64)), int(args["size"].(int64)), time.Duration(args["every"].(int64))*time.Millisecond)
				}
				sent := false
				return func(ctx context.Context) *graphql.Response {
					if !sent {
						sent = true
						return &graphql.Response{Data: json.RawMessage(`{"hold":true}`)}
					}
					<-ctx.Done()
					return nil
				}
			default:
				return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"ok":true}`)})
			}
		},
	}
}

// ticks answers the ticks subscription: n responses of size bytes, "<i>:xxx...", every apart.
func ticks(n, size int, every time.Duration) graphql.ResponseHandler {
	i := 0
	return func(ctx context.Context) *graphql.Response {
		if i == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
		tick := fmt.Sprintf("%d:", i)
		tick += strings.Repeat("x", max(0, size-len(tick)))
		i++
		data, _ := json.Marshal(map[string]string{"ticks": tick})
		return &graphql.Response{Data: data}
	}
}

// readUploads answers the read mutation: "size sha256 descriptors" for each file.
func readUploads(v any) *graphql.Response {
	list, _ := v.([]any)
	out := []string{}
	for _, item := range list {
		up, ok := item.(graphql.Upload)
		if !ok {
			out = append(out, "not an upload")
			continue
		}
		h := sha256.New()
		n, err := io.Copy(h, up.File)
		if err != nil {
			out = append(out, "read error: "+err.Error())
			continue
		}
		out = append(out, fmt.Sprintf("%d %x %d", n, h.Sum(nil), uploadDescriptors()))
	}
	data, _ := json.Marshal(map[string]any{"read": out})
	return &graphql.Response{Data: data}
}

// uploadDescriptors counts this process's descriptors open on the gateway's temporary upload
// files.
func uploadDescriptors() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(filepath.Base(target), "gateway-upload-") {
			n++
		}
	}
	return n
}

// openDescriptors counts this process's open descriptors: the server under test runs in it.
func openDescriptors(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("descriptors cannot be counted here: %v", err)
	}
	return len(entries)
}

// eventually polls cond until it holds or a few seconds pass, and returns its last answer.
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(8 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// probeServer serves probeSchema through the transports with cfg, whose zero sizes get small
// working values, as the gateway's handler wires them: gqlgen's executor with the gateway's
// error presenter.
func probeServer(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	return probeServerOn(t, cfg, nil)
}

// probeServerOn is probeServer on a listener that wrap, when not nil, makes of the test
// server's.
func probeServerOn(t *testing.T, cfg Config, wrap func(net.Listener) net.Listener) *httptest.Server {
	t.Helper()
	if cfg.MaxMessageBytes == 0 {
		cfg.MaxMessageBytes = 1 << 20
	}
	if cfg.MaxUploadBytes == 0 {
		cfg.MaxUploadBytes = 8 << 20
	}
	if cfg.MaxUploadFiles == 0 {
		cfg.MaxUploadFiles = 10
	}
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = time.Minute
	}
	log := slog.New(slog.DiscardHandler)
	cfg.Log = log
	cfg.Streams = NewStreams()
	h := handler.New(probeExecutor())
	for _, tr := range New(cfg) {
		h.AddTransport(tr)
	}
	h.SetErrorPresenter(apperr.Presenter(log))
	h.SetRecoverFunc(apperr.Recover(log))
	mux := http.NewServeMux()
	mux.Handle("/graphql", h)
	srv := httptest.NewUnstartedServer(mux)
	if wrap != nil {
		srv.Listener = wrap(srv.Listener)
	}
	srv.Start()
	t.Cleanup(func() {
		cfg.Streams.Close()
		srv.Close()
	})
	return srv
}

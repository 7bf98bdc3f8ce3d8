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

// testSchema is a schema small enough to reason about in transport tests, served by
// testExecutor without generated code: uploads that report what they read, answers as large
// as a test asks, deferred parts that come or never do, and subscriptions that stay open until
// their client completes them or tick and end.
const testSchema = `
scalar Upload
type Query {
  ok: Boolean
  "value, as the operation's variables gave it."
  echo(value: String): String
  "A string of size bytes."
  big(size: Int!): String
  "A first part of size bytes that says more follows; the rest never comes, until the operation ends."
  deferred(size: Int!): String
  "{a: 1} first, then b deferred: {b: 2} at path [split] labelled b."
  split: Split
}
type Split { a: Int, b: Int }
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

// testExecutor executes testSchema, answering each operation by its first field.
func testExecutor() graphql.ExecutableSchema {
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "test.graphqls", Input: testSchema})
	return &graphql.ExecutableSchemaMock{
		SchemaFunc:     func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) { return 0, false },
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			opCtx := graphql.GetOperationContext(ctx)
			f, _ := opCtx.Operation.SelectionSet[0].(*ast.Field)
			args := f.ArgumentMap(opCtx.Variables)
			switch f.Name {
			case "read":
				return graphql.OneShot(readUploads(args["files"]))
			case "echo":
				data, _ := json.Marshal(map[string]any{"echo": args["value"]})
				return graphql.OneShot(&graphql.Response{Data: data})
			case "big":
				data, _ := json.Marshal(map[string]string{"big": strings.Repeat("x", int(args["size"].(int64)))})
				return graphql.OneShot(&graphql.Response{Data: data})
			case "deferred":
				first := true
				return func(ctx context.Context) *graphql.Response {
					if !first {
						<-ctx.Done() // as the generated executor waits for a deferred part
						return nil
					}
					first = false
					data, _ := json.Marshal(map[string]string{"deferred": strings.Repeat("x", int(args["size"].(int64)))})
					return &graphql.Response{Data: data, HasNext: ptr(true)}
				}
			case "split":
				parts := []*graphql.Response{
					// The deferred field's place is held by a null, as gqlrun's placeholders hold it.
					{Data: json.RawMessage(`{"split":{"a":1,"b":null}}`), HasNext: ptr(true)},
					{Data: json.RawMessage(`{"b":2}`), Path: ast.Path{ast.PathName("split")}, Label: "b", HasNext: ptr(false)},
				}
				return func(context.Context) *graphql.Response {
					if len(parts) == 0 {
						return nil
					}
					next := parts[0]
					parts = parts[1:]
					return next
				}
			case "ticks":
				return ticks(int(args["n"].(int64)), int(args["size"].(int64)), time.Duration(args["every"].(int64))*time.Millisecond)
			case "hold":
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

func ptr[T any](v T) *T { return &v }

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

// testHandler serves es through the transports with cfg as the gateway's handler wires them:
// gqlgen's executor with the gateway's error presenter and recovery.
func testHandler(es graphql.ExecutableSchema, cfg Config) *handler.Server {
	log := slog.New(slog.DiscardHandler)
	cfg.Log = log
	h := handler.New(es)
	for _, tr := range New(cfg) {
		h.AddTransport(tr)
	}
	h.SetErrorPresenter(apperr.Presenter(log))
	h.SetRecoverFunc(apperr.Recover(log))
	return h
}

// probeServer serves testSchema through the transports with cfg, whose zero sizes get small
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
	cfg.Streams = NewStreams()
	mux := http.NewServeMux()
	mux.Handle("/graphql", testHandler(testExecutor(), cfg))
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

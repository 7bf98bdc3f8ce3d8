package transport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
)

// multipartBody is a multipart request as a client sends it: operations, map, then one file
// part for each name in files, written as given.
func multipartBody(t testing.TB, operations, fileMap string, files ...string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("operations", operations)
	_ = mw.WriteField("map", fileMap)
	for _, name := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename="f.bin"`, name))
		h.Set("Content-Type", "application/octet-stream")
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte("file " + name))
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// readOp is the operations part of the read mutation with one file slot, and members more.
func readOp(members string) string {
	return `{"query":"mutation($files: [Upload!]!) { read(files: $files) }","variables":{"files":[null]` + members + `}}`
}

const oneFile = `{"0":["variables.files.0"]}`

// Every bound of a JSON body holds for the operations part of a multipart request, with the
// same refusal; the map part has bounds of its own. A refusal is 400 (413 for a size or the
// number of files) with BAD_USER_INPUT and a message naming the bound; a request at every
// limit runs.
func TestAMultipartBodyPastItsBoundsIsRefusedAsAJSONBodyIs(t *testing.T) {
	t.Parallel()
	srv := probeServer(t, Config{BatchLimit: 3, MaxRequestBytes: 4096, MaxUploadFiles: 2, BodyBounds: BodyBounds{Depth: 4, Values: 20}})
	off := probeServer(t, Config{BodyBounds: BodyBounds{Depth: 4, Values: 20}})
	const (
		tooMany = "variables hold more than 20 values; a request may send at most 20 in its variables and extensions together"
		tooDeep = "variables nest deeper than 4 levels; at most 4 are allowed"
		badOps  = `the "operations" part must be a JSON object whose query, operationName and documentId are strings and whose variables and extensions are objects`
		badMap  = `the "map" part must be a JSON object whose members are lists of paths, such as {"0": ["variables.file"]}`
		batch   = `{"query":"{ ok }"}`
	)
	for _, c := range []struct {
		name                string
		srv                 *httptest.Server
		operations, fileMap string
		files               []string
		status              int
		message             string // "" runs
	}{
		// files, its array and its null, then a's array and its 17 objects: 20 values.
		{"values at the limit", srv, readOp(`,"a":` + values(17)), oneFile, []string{"0"}, 200, ""},
		{"values past the limit", srv, readOp(`,"a":` + values(18)), oneFile, []string{"0"}, 400, tooMany},
		{"extensions past the limit", srv, `{"query":"{ ok }","variables":{"files":[null]},"extensions":{"a":` + values(18) + `}}`, oneFile, []string{"0"}, 400,
			"extensions hold more than 20 values; a request may send at most 20 in its variables and extensions together"},
		{"depth past the limit", srv, readOp(`,"a":` + nested(4)), oneFile, []string{"0"}, 400, tooDeep},
		{"members nobody reads count", srv, `{"query":"{ ok }"` + strings.Repeat(`,"x":1`, 21) + `}`, oneFile, []string{"0"}, 400,
			"the request's values hold more than 20 values; a request may send at most 20 in its variables and extensions together"},
		{"a query of the wrong type", srv, `{"query":5,"variables":{"files":[null]}}`, oneFile, []string{"0"}, 400, badOps},
		{"operations that are not JSON", srv, `{"query":`, oneFile, []string{"0"}, 400, badOps},
		{"trailing data", srv, readOp(``) + `{}`, oneFile, []string{"0"}, 400, badOps},
		{"empty operations", srv, ` `, oneFile, []string{"0"}, 400, `the "operations" part is empty: send a JSON object with a query`},
		{"no query", srv, `{"variables":{"files":[null]}}`, oneFile, []string{"0"}, 400, "the request has no query"},
		{"operations past the size", srv, readOp(`,"s":"` + strings.Repeat("x", 4096) + `"`), oneFile, []string{"0"}, 413,
			`the "operations" part is larger than the limit of 4 KiB`},
		{"a batch past the limit", srv, "[" + strings.Repeat(batch+",", 3) + batch + "]", oneFile, []string{"0"}, 400,
			"the batch holds more than 3 operations; at most 3 are allowed (GRAPHQL_BATCH_LIMIT)"},
		{"a batch refused at its first operation too many", srv, "[" + strings.Repeat(batch+",", 3) + `{"query": nonsense`, oneFile, []string{"0"}, 400,
			"the batch holds more than 3 operations; at most 3 are allowed (GRAPHQL_BATCH_LIMIT)"},
		{"a batch nests as deep as one operation", srv, "[" + readOp(`,"a":`+nested(4)) + "]", oneFile, []string{"0"}, 400, tooDeep},
		{"a batch within the limit", srv, "[" + batch + "]", oneFile, []string{"0"}, 400,
			`the "operations" part holds a batch, which a multipart request does not carry: send one operation per multipart request`},
		{"a batch that is not JSON", srv, "[" + batch + ",", oneFile, []string{"0"}, 400, badOps},
		{"a batch with batches off", off, "[" + batch + "]", oneFile, []string{"0"}, 400, errBatchesOff.Error()},
		{"a map at the limit of files", srv, `{"query":"mutation($files: [Upload!]!) { read(files: $files) }","variables":{"files":[null,null]}}`,
			`{"0":["variables.files.0"],"1":["variables.files.1"]}`, []string{"0", "1"}, 200, ""},
		{"a map past the limit of files", srv, readOp(``), `{"0":["variables.files.0"],"1":[],"2":[]}`, []string{"0"}, 413,
			"the request carries 3 files; at most 2 are accepted"},
		{"a map past the limit of paths", srv, readOp(``), `{"0":["` + strings.Repeat(`variables.files.0","`, maxPathsPerFile) + `variables.files.0"]}`, []string{"0"}, 400,
			fmt.Sprintf(`the map gives file "0" %d paths; one file may fill at most %d`, maxPathsPerFile+1, maxPathsPerFile)},
		{"a map path deeper than the variables nest", srv, readOp(``), `{"0":["variables` + strings.Repeat(".a", 5) + `"]}`, []string{"0"}, 400,
			`the map's path for file "0" has 6 segments; the variables nest at most 4 levels, so a path has at most 5`},
		{"a map path deeper than the variables nest, its dots escaped", srv, readOp(``), `{"0":["variables` + strings.Repeat(`\u002ea`, 5) + `"]}`, []string{"0"}, 400,
			`the map's path for file "0" has 6 segments; the variables nest at most 4 levels, so a path has at most 5`},
		{"a map past the size", srv, readOp(``), `{"0":["variables.files.0"],"` + strings.Repeat("x", 4096) + `":[]}`, []string{"0"}, 413,
			`the "map" part is larger than the limit of 4 KiB`},
		{"a map that is a list", srv, readOp(``), `["variables.files.0"]`, []string{"0"}, 400, badMap},
		{"a map of strings", srv, readOp(``), `{"0":"variables.files.0"}`, []string{"0"}, 400, badMap},
		{"a map of lists of numbers", srv, readOp(``), `{"0":[0]}`, []string{"0"}, 400, badMap},
		{"a map cut off", srv, readOp(``), `{"0":["variables.files.0"]`, []string{"0"}, 400, badMap},
		{"a map with trailing data", srv, readOp(``), oneFile + `{}`, []string{"0"}, 400, badMap},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			body, ct := multipartBody(t, c.operations, c.fileMap, c.files...)
			a := postUpload(t, c.srv, bytes.NewReader(body), ct, "")
			if c.message == "" {
				if reads := a.reads(t); len(reads) == 0 || strings.HasPrefix(reads[0], "not") {
					t.Errorf("got %q, want the files read", reads)
				}
				return
			}
			msg, code := a.errorMessage(t)
			if a.status != c.status || msg != c.message || code != string(apperr.BadUserInput) {
				t.Errorf("got %d %s %q, want %d BAD_USER_INPUT %q", a.status, code, msg, c.status, c.message)
			}
		})
	}
}

// multipartRequest is a multipart body and the Content-Type that carries its boundary.
type multipartRequest struct {
	body        []byte
	contentType string
}

func (m multipartRequest) serve(h http.Handler) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(m.body))
	req.Header.Set("Content-Type", m.contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// multipartBombs are multipart requests whose operations part is one of the 2 MiB JSON bombs,
// or whose map is 2 MiB of files, of paths, or of one path's segments.
func multipartBombs(t testing.TB) map[string]multipartRequest {
	out := map[string]multipartRequest{}
	add := func(name, operations, fileMap string) {
		body, ct := multipartBody(t, operations, fileMap, "0")
		out[name] = multipartRequest{body, ct}
	}
	for name, ops := range bombs() {
		add("operations "+name, string(ops), oneFile)
	}
	const size = 2<<20 - 1024
	add("map of files", readOp(``), `{`+strings.Repeat(`"a":[],`, size/7)+`"0":["variables.files.0"]}`)
	add("map of paths", readOp(``), `{"0":[`+strings.Repeat(`"variables.files.0",`, size/20)+`"variables.files.0"]}`)
	add("map of one long path", readOp(``), `{"0":["variables`+strings.Repeat(".", size)+`"]}`)
	return out
}

// multipartBombHandler is the upload transport as the gateway serves it by default, batches
// on: a 2 MiB JSON body, and so a 2 MiB operations part.
func multipartBombHandler(count func(context.Context) error) http.Handler {
	return testHandler(testExecutor(), Config{BatchLimit: 10, MaxRequestBytes: 2 << 20, MaxUploadBytes: 8 << 20, MaxUploadFiles: 10,
		Streams: NewStreams(), CountRefused: count})
}

// A 2 MiB bomb in a multipart body is refused unread: refusing it allocates a few hundred
// times, where decoding it would allocate once for each of its 700,000 values.
func TestAMultipartBombIsRefusedBeforeItIsDecoded(t *testing.T) {
	h := multipartBombHandler(nil)
	for name, m := range multipartBombs(t) {
		t.Run(name, func(t *testing.T) {
			var status int
			var message string
			allocs := testing.AllocsPerRun(2, func() {
				rec := m.serve(h)
				status, message = rec.Code, rec.Body.String()
			})
			if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d (%.300s), want a refusal", status, message)
			}
			if allocs > 2000 {
				t.Errorf("refusing it allocated %.0f times, want it refused before it is decoded (%.200s)", allocs, message)
			}
			t.Logf("%d, %.0f allocations: %.160s", status, allocs, message)
		})
	}
}

// BenchmarkRefuseMultipartBomb measures what refusing a multipart request whose operations or
// map part is a 2 MiB bomb costs: the CPU of one refusal (ns/op) and what it allocates (B/op).
func BenchmarkRefuseMultipartBomb(b *testing.B) {
	h := multipartBombHandler(nil)
	for name, m := range multipartBombs(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(m.body)))
			for b.Loop() {
				rec := m.serve(h)
				if rec.Code != http.StatusBadRequest && rec.Code != http.StatusRequestEntityTooLarge {
					b.Fatalf("status %d: %.200s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}

// countingServer serves the probe schema with a CountRefused that counts, and past budget
// refusals answers as the rate limits do: 429 with Retry-After.
func countingServer(t *testing.T, budget int64) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var counted atomic.Int64
	srv := probeServer(t, Config{MaxRequestBytes: 1024, MaxUploadBytes: 64 << 10, BodyBounds: BodyBounds{Values: 5},
		CountRefused: func(context.Context) error {
			if counted.Add(1) > budget {
				return &gqlerror.Error{Message: "Too many operations", Err: rateLimited{}}
			}
			return nil
		}})
	return srv, &counted
}

// send sends a request to srv's /graphql and reads its answer.
func send(t *testing.T, srv *httptest.Server, method, contentType, accept string, body []byte, header ...string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+"/graphql", bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

// Every refusal of the multipart, SSE and fallback transports counts against the caller's rate
// limit, as the JSON transport's do; an operation that runs is left to the rate limits'
// extension. A caller past its budget is told so with 429 and Retry-After, on each of them.
func TestEveryRefusalOfEveryTransportCountsAgainstTheRateLimit(t *testing.T) {
	t.Parallel()
	const sse = "text/event-stream"
	bomb, bombCT := multipartBody(t, readOp(`,"a":`+values(50)), oneFile, "0")
	badMapBody, badMapCT := multipartBody(t, readOp(``), `{"0":"variables.files.0"}`, "0")
	large, largeCT := multipartBody(t, readOp(``), oneFile, "0")
	large = append(large, make([]byte, 64<<10)...) // past MaxUploadBytes by its declared length
	good, goodCT := multipartBody(t, readOp(``), oneFile, "0")
	type request struct {
		name                        string
		method, contentType, accept string
		body                        []byte
		header                      []string
	}
	refused := []request{
		{"multipart past the body bounds", http.MethodPost, bombCT, "", bomb, nil},
		{"multipart with a bad map", http.MethodPost, badMapCT, "", badMapBody, nil},
		{"multipart too large", http.MethodPost, largeCT, "", large, nil},
		{"multipart without a boundary", http.MethodPost, "multipart/form-data", "", []byte("x"), nil},
		{"SSE of the wrong type", http.MethodPost, mediaJSON, sse, []byte(`{"query":5}`), nil},
		{"SSE past the body bounds", http.MethodPost, mediaJSON, sse, []byte(`{"query":"{ ok }","variables":{"a":` + values(9) + `}}`), nil},
		{"SSE too large", http.MethodPost, mediaJSON, sse, []byte(`{"query":"{ ok }","variables":{"s":"` + strings.Repeat("x", 2000) + `"}}`), nil},
		{"a method no transport serves", http.MethodPut, mediaJSON, "", []byte(`{"query":"{ ok }"}`), nil},
		{"a media type no transport serves", http.MethodPost, "text/plain", "", []byte(`{"query":"{ ok }"}`), nil},
		{"no media type", http.MethodPost, "", "", []byte(`{"query":"{ ok }"}`), nil},
		{"an upgrade no transport serves", http.MethodGet, "", "", nil, []string{"Upgrade", "h2c", "Connection", "Upgrade"}},
	}
	srv, counted := countingServer(t, int64(len(refused)))
	for _, r := range refused {
		if a := send(t, srv, r.method, r.contentType, r.accept, r.body, r.header...); a.status/100 != 4 {
			t.Errorf("%s: status %d (%.200s), want a refusal", r.name, a.status, a.body)
		}
	}
	if a := send(t, srv, http.MethodPost, goodCT, "", good, "GraphQL-Require-Preflight", "1"); a.status != 200 {
		t.Errorf("an upload: status %d (%.200s)", a.status, a.body)
	}
	if a := send(t, srv, http.MethodPost, mediaJSON, sse, []byte(`{"query":"{ ok }"}`)); a.status != 200 || !bytes.Contains(a.body, []byte("event: complete")) {
		t.Errorf("an SSE operation: status %d (%.200s)", a.status, a.body)
	}
	if got := counted.Load(); got != int64(len(refused)) {
		t.Errorf("counted %d refusals, want %d", got, len(refused))
	}
	for _, r := range refused {
		a := send(t, srv, r.method, r.contentType, r.accept, r.body, r.header...)
		if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") != "7" {
			t.Errorf("%s past the budget: status %d, Retry-After %q (%.200s); want 429 with Retry-After", r.name, a.status, a.header.Get("Retry-After"), a.body)
			continue
		}
		if msg, _ := a.errorMessage(t); msg != "Too many operations" {
			t.Errorf("%s past the budget: message %q, want the rate limit's", r.name, msg)
		}
	}
}

// An SSE request's body is bounded as a JSON one is, by its size and by what it holds, and
// refused with the same status and message.
func TestAnSSEBodyPastItsBoundsIsRefusedAsAJSONBodyIs(t *testing.T) {
	t.Parallel()
	srv := probeServer(t, Config{MaxRequestBytes: 1024, BodyBounds: BodyBounds{Depth: 4, Values: 20}})
	for _, c := range []struct {
		name, body string
		status     int
		message    string
	}{
		{"values past the limit", op(`,"variables":{"a":` + values(20) + `}`), 400,
			"variables hold more than 20 values; a request may send at most 20 in its variables and extensions together"},
		{"depth past the limit", op(`,"variables":{"a":` + nested(4) + `}`), 400, "variables nest deeper than 4 levels; at most 4 are allowed"},
		{"too large", op(`,"variables":{"s":"` + strings.Repeat("x", 1024) + `"}`), 413, "The request body is larger than the limit of 1 KiB"},
		{"a query of the wrong type", `{"query":5}`, 400, errBadBody.Error()},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a := send(t, srv, http.MethodPost, mediaJSON, "text/event-stream", []byte(c.body))
			msg, code := a.errorMessage(t)
			if a.status != c.status || msg != c.message || code != string(apperr.BadUserInput) {
				t.Errorf("got %d %s %q, want %d BAD_USER_INPUT %q", a.status, code, msg, c.status, c.message)
			}
		})
	}
}

// Clients that send multipart bombs at once, each with a file behind its bomb that the server
// never reads, are refused while they are still sending, and leave no goroutine, descriptor
// or memory behind.
func TestMultipartBombsSentAtOnceGiveBackWhatTheyHeld(t *testing.T) {
	const clients = 16
	srv := probeServer(t, Config{BatchLimit: 10, MaxRequestBytes: 2 << 20, MaxUploadBytes: 8 << 20})
	ops := bombs()["variables"]
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()

	runtime.GC()
	goroutines, descriptors := runtime.NumGoroutine(), openDescriptors(t)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	file := make([]byte, 4<<20)
	var wg sync.WaitGroup
	statuses := make(chan int, clients)
	for range clients {
		wg.Go(func() {
			full, fct := multipartBody(t, string(ops), oneFile, "0")
			// The file part's content goes after its header: 4 MiB the server never reads.
			i := bytes.LastIndex(full, []byte("file 0"))
			sent := append(append(append([]byte{}, full[:i]...), file...), full[i:]...)
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(sent))
			req.Header.Set("Content-Type", fct)
			resp, err := client.Do(req)
			if err != nil {
				statuses <- 0 // the server closed while the body was still going: refused too
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		})
	}
	wg.Wait()
	close(statuses)
	for status := range statuses {
		if status != 0 && status != http.StatusBadRequest {
			t.Errorf("status %d, want 400", status)
		}
	}
	if !eventually(func() bool { return runtime.NumGoroutine() <= goroutines+2 }) {
		t.Errorf("%d goroutines, want at most %d", runtime.NumGoroutine(), goroutines+2)
	}
	if !eventually(func() bool { return openDescriptors(t) <= descriptors+2 }) {
		t.Errorf("%d descriptors open, want at most %d", openDescriptors(t), descriptors+2)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 16<<20 {
		t.Errorf("the heap grew by %d MB and stayed, want the bombs' buffers given back", grown>>20)
	}
}

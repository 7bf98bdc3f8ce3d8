package transport

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const readMutation = `mutation($files: [Upload!]!) { read(files: $files) }`

// uploadForm builds a multipart request body whose one file, named "0", fills paths; files
// holds as many nulls as the paths need.
type uploadForm struct {
	query string
	slots int      // the length of variables.files
	paths []string // where file "0" goes
	data  []byte   // file "0"
}

// parts returns the body's head (operations, map and the file part's header) and its tail
// (the file and the closing boundary), so that a test can send the head and hold the tail.
func (f uploadForm) parts(t *testing.T) (head, tail []byte, contentType string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	ops, _ := json.Marshal(map[string]any{"query": f.query, "variables": map[string]any{"files": make([]any, f.slots)}})
	fileMap, _ := json.Marshal(map[string][]string{"0": f.paths})
	_ = mw.WriteField("operations", string(ops))
	_ = mw.WriteField("map", string(fileMap))
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="0"; filename="probe.bin"`)
	h.Set("Content-Type", "application/octet-stream")
	if _, err := mw.CreatePart(h); err != nil {
		t.Fatal(err)
	}
	head = bytes.Clone(buf.Bytes())
	buf.Reset()
	buf.Write(f.data)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return head, buf.Bytes(), mw.FormDataContentType()
}

// filesAt returns n paths into variables.files.
func filesAt(n int) []string {
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("variables.files.%d", i)
	}
	return paths
}

// probeData returns n bytes that start with a marker no other file holds.
func probeData(t *testing.T, n int) []byte {
	data := fmt.Appendf(nil, "probe %s %d\n", t.Name(), time.Now().UnixNano())
	for i := 0; len(data) < n; i++ {
		data = append(data, byte('a'+i%26))
	}
	return data[:n]
}

// leftovers lists the temporary upload files that hold data's marker.
func leftovers(data []byte) []string {
	marker := data[:bytes.IndexByte(data, '\n')+1]
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), "gateway-upload-*"))
	var out []string
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && bytes.HasPrefix(b, marker) {
			out = append(out, p)
		}
	}
	return out
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) errorMessage(t *testing.T) (message, code string) {
	t.Helper()
	var out struct {
		Errors []struct {
			Message    string
			Extensions struct{ Code string }
		}
	}
	if err := json.Unmarshal(a.body, &out); err != nil || len(out.Errors) == 0 {
		t.Fatalf("got %s, want a GraphQL error", a.body)
	}
	return out.Errors[0].Message, out.Errors[0].Extensions.Code
}

func postUpload(t *testing.T, srv *httptest.Server, body io.Reader, contentType, accept string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", body)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("GraphQL-Require-Preflight", "1")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

func (f uploadForm) post(t *testing.T, srv *httptest.Server) answer {
	t.Helper()
	head, tail, ct := f.parts(t)
	return postUpload(t, srv, bytes.NewReader(append(head, tail...)), ct, "")
}

// reads returns what the read mutation reported for each file.
func (a answer) reads(t *testing.T) []string {
	t.Helper()
	var out struct {
		Data struct{ Read []string }
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &out) != nil {
		t.Fatalf("got %d %s, want 200 with data", a.status, a.body)
	}
	return out.Data.Read
}

func TestAFileMappedToManyPathsIsStoredOnceAndReadWholeFromEach(t *testing.T) {
	srv := probeServer(t, Config{})
	data := probeData(t, 100<<10)
	const paths = 100
	reads := uploadForm{query: readMutation, slots: paths, paths: filesAt(paths), data: data}.post(t, srv).reads(t)
	if len(reads) != paths {
		t.Fatalf("got %d files read, want %d", len(reads), paths)
	}
	want := fmt.Sprintf("%d %x 1", len(data), sha256.Sum256(data))
	for i, got := range reads {
		// Each use reads the whole file, and however many uses there are, one descriptor is open.
		if got != want {
			t.Fatalf("path %d: got %q (size, SHA-256, open upload descriptors), want %q", i, got, want)
		}
	}
	if left := leftovers(data); len(left) > 0 {
		t.Errorf("got temporary files %v after the request, want none", left)
	}
}

func TestAFileMappedToMorePathsThanTheLimitIsRefusedWith400(t *testing.T) {
	srv := probeServer(t, Config{})
	data := probeData(t, 1<<10)
	a := uploadForm{query: readMutation, slots: maxPathsPerFile + 1, paths: filesAt(maxPathsPerFile + 1), data: data}.post(t, srv)
	if a.status != http.StatusBadRequest {
		t.Fatalf("got status %d (%.200s), want 400", a.status, a.body)
	}
	msg, code := a.errorMessage(t)
	if code != "BAD_USER_INPUT" {
		t.Errorf("got code %s, want BAD_USER_INPUT", code)
	}
	for _, part := range []string{`"0"`, fmt.Sprint(maxPathsPerFile + 1), fmt.Sprint(maxPathsPerFile)} {
		if !strings.Contains(msg, part) {
			t.Errorf("got message %q, want it to name %s", msg, part)
		}
	}
}

func TestUploadsBeyondTheDiskBudgetAreRefusedWith503UntilOthersEnd(t *testing.T) {
	const budget = 64 << 10
	srv := probeServer(t, Config{UploadDiskBudget: budget})

	// The first upload spills 40 KiB and holds its request open.
	first := probeData(t, 48<<10)
	head, tail, ct := uploadForm{query: readMutation, slots: 1, paths: filesAt(1), data: first}.parts(t)
	pr, pw := io.Pipe()
	defer pw.CloseWithError(errors.New("the test ended")) // a failure must not leave the request hanging
	answered := make(chan answer, 1)
	go func() { answered <- postUpload(t, srv, pr, ct, "") }()
	if _, err := pw.Write(append(head, tail[:40<<10]...)); err != nil {
		t.Fatal(err)
	}
	spilled := func() bool {
		for _, p := range leftovers(first) {
			if fi, err := os.Stat(p); err == nil && fi.Size() >= 40<<10 {
				return true
			}
		}
		return false
	}
	if !eventually(spilled) {
		t.Fatal("the first upload was never spilled to a temporary file")
	}

	// A second one that would take the spilled bytes past the budget is refused, and leaves
	// nothing behind.
	second := probeData(t, 40<<10)
	a := uploadForm{query: readMutation, slots: 1, paths: filesAt(1), data: second}.post(t, srv)
	if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" {
		t.Fatalf("got status %d with Retry-After %q (%s), want 503 with Retry-After", a.status, a.header.Get("Retry-After"), a.body)
	}
	if msg, _ := a.errorMessage(t); !strings.Contains(msg, "UPLOAD_DISK_BUDGET") || !strings.Contains(msg, "64 KiB") {
		t.Errorf("got message %q, want it to name UPLOAD_DISK_BUDGET and its value, 64 KiB", msg)
	}
	if left := leftovers(second); len(left) > 0 {
		t.Errorf("got temporary files %v of the refused upload, want none", left)
	}

	// The first completes, and its end returns what it held to the budget.
	if _, err := pw.Write(tail[40<<10:]); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close()
	if got, want := (<-answered).reads(t), fmt.Sprintf("%d %x 1", len(first), sha256.Sum256(first)); len(got) != 1 || got[0] != want {
		t.Fatalf("got %q for the first upload, want [%q]", got, want)
	}
	again := uploadForm{query: readMutation, slots: 1, paths: filesAt(1), data: second}
	if got := again.post(t, srv).reads(t); len(got) != 1 {
		t.Fatalf("got %q for the second upload once the first ended, want one file read", got)
	}
}

func TestMultipartRequestsThatCannotBeExecutedAreAnsweredAsJSONRequestsAre(t *testing.T) {
	srv := probeServer(t, Config{})
	for _, query := range []string{
		`mutation($files: [Upload!]!) { nothing(files: $files) }`, // fails validation
		`mutation($files: [Upload!]!) { read(files: $files) `,     // fails parsing
	} {
		for _, accept := range []string{"", mediaJSON, mediaGraphQLResponse} {
			t.Run(fmt.Sprintf("%q accepting %q", query, accept), func(t *testing.T) {
				ops, _ := json.Marshal(map[string]any{"query": query, "variables": map[string]any{"files": []any{nil}}})
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(ops))
				req.Header.Set("Content-Type", mediaJSON)
				if accept != "" {
					req.Header.Set("Accept", accept)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				jsonBody, _ := io.ReadAll(resp.Body)
				resp.Body.Close()

				head, tail, ct := uploadForm{query: query, slots: 1, paths: filesAt(1), data: probeData(t, 64)}.parts(t)
				a := postUpload(t, srv, bytes.NewReader(append(head, tail...)), ct, accept)
				if a.status != resp.StatusCode {
					t.Errorf("got status %d (%s), want %d as a JSON request gets (%s)", a.status, a.body, resp.StatusCode, jsonBody)
				}
				if got, want := a.header.Get("Content-Type"), resp.Header.Get("Content-Type"); got != want {
					t.Errorf("got Content-Type %q, want %q as a JSON request gets", got, want)
				}
				var out map[string]json.RawMessage
				_ = json.Unmarshal(a.body, &out)
				if _, hasData := out["data"]; hasData || out["errors"] == nil {
					t.Errorf("got %s, want errors and no data", a.body)
				}
				if _, code := a.errorMessage(t); code == "" {
					t.Errorf("got %s, want an extensions.code", a.body)
				}
			})
		}
	}
}

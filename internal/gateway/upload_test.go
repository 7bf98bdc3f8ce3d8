package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Uploads through the GraphQL multipart request specification: the gateway streams each file to
// the vault's presigned address, refuses requests a browser form could forge, bounds their size
// and number of files, and keeps no temporary file once a request ends.

// uplFile is one file part of a multipart request.
type uplFile struct {
	field       string // the part's form name, a key of the map
	filename    string
	contentType string // empty: no Content-Type header on the part
	data        []byte
}

// uplPart is a part written as given, for requests that break the specification's order.
type uplPart struct {
	field string
	body  string
}

// uplBody builds a multipart body: operations, then map, then the files. operations and
// fileMap are JSON-encoded unless they are strings, which are written as they are.
func uplBody(t testing.TB, operations, fileMap any, files ...uplFile) ([]byte, string) {
	t.Helper()
	raw := func(v any) string {
		if s, ok := v.(string); ok {
			return s
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return uplParts(t, []uplPart{{"operations", raw(operations)}, {"map", raw(fileMap)}}, files...)
}

// uplParts builds a multipart body of form fields in the given order, then files.
func uplParts(t testing.TB, fields []uplPart, files ...uplFile) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f.field, f.body); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, f.field, f.filename))
		if f.contentType != "" {
			h.Set("Content-Type", f.contentType)
		}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(f.data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), mw.FormDataContentType()
}

// uplPost sends a multipart body with the preflight header; chunked sends it without a
// declared length.
func uplPost(t testing.TB, gw *testGateway, body []byte, contentType string, chunked bool) *result {
	t.Helper()
	var r io.Reader = bytes.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // hides the length, so the body goes chunked
	}
	req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", r)
	if !chunked {
		req.ContentLength = int64(len(body))
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("GraphQL-Require-Preflight", "1")
	return gw.do(t, req)
}

var uplSeq atomic.Int64

// uplMarker returns bytes no other file holds, so that a temporary copy of them can be told
// from the temporary files of other tests running at the same time.
func uplMarker(t testing.TB) []byte {
	return fmt.Appendf(nil, "upload-marker %d %d %s\n", time.Now().UnixNano(), uplSeq.Add(1), t.Name())
}

// uplData returns n bytes that start with the marker.
func uplData(marker []byte, n int) []byte {
	data := make([]byte, 0, max(n, len(marker)))
	data = append(data, marker...)
	for i := 0; len(data) < n; i++ {
		data = append(data, byte('a'+i%26))
	}
	return data
}

// uplLeftovers lists the gateway's temporary upload files that hold marker. The gateway spills
// uploads to os.TempDir() (it has no setting for another directory), which tests running at
// the same time share, so only files with this test's marker count.
func uplLeftovers(marker []byte) []string {
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), "gateway-upload-*"))
	var out []string
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, marker) {
			out = append(out, p)
		}
	}
	return out
}

// uplNoLeftovers fails the test if a temporary file with marker is still there after a grace
// period (the answer may reach the client just before the handler's deferred cleanup runs),
// and then removes it.
func uplNoLeftovers(t testing.TB, marker []byte) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := uplLeftovers(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("temporary upload files left behind: %v", left)
			for _, p := range left {
				_ = os.Remove(p) // they hold this test's marker: the test's own litter
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// uplWrites returns the recorded requests that change the upstream.
func uplWrites(up *upstream) []string {
	var out []string
	for _, r := range up.Requests() {
		if !strings.HasPrefix(r, "GET ") {
			out = append(out, r)
		}
	}
	return out
}

// uplPayload is a DocumentPayload as the gateway answers it.
type uplPayload struct {
	Document struct {
		VaultID     string
		Extension   string
		FileStatus  string
		DownloadURI *string
	}
	UploadURI *string
}

const (
	uplCreate = `mutation($wid: ID!, $in: CreateDocumentInput!, $file: Upload) {
  createDocument(wid: $wid, input: $in, file: $file) { document { vaultId extension fileStatus downloadUri } uploadUri }
}`
	uplUpdate = `mutation($wid: ID!, $id: ID!, $in: UpdateDocumentInput!, $file: Upload) {
  updateDocument(wid: $wid, vaultId: $id, input: $in, file: $file) { document { vaultId extension fileStatus downloadUri } uploadUri }
}`
)

// uplCheckStored checks that the payload's document holds exactly data, served with
// contentType, and that the gateway kept the upload to itself.
func uplCheckStored(t *testing.T, p uplPayload, data []byte, contentType string) {
	t.Helper()
	if p.UploadURI != nil {
		t.Errorf("uploadUri %q, want null: the gateway uploaded the file", *p.UploadURI)
	}
	if p.Document.FileStatus != "UPLOADED" || p.Document.DownloadURI == nil {
		t.Fatalf("document %+v, want UPLOADED with a downloadUri", p.Document)
	}
	ct, body := docDownload(t, *p.Document.DownloadURI)
	if ct != contentType {
		t.Errorf("the file is served as %q, want %q", ct, contentType)
	}
	if !bytes.Equal(body, data) {
		t.Errorf("the vault holds %d bytes, want the %d sent (equal: false)", len(body), len(data))
	}
}

func TestUploadCreatesADocumentWithItsFile(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "UPLOAD-CREATE")
	for _, tc := range []struct {
		name        string
		extension   string
		partType    string // the Content-Type the client gave the part
		size        int
		contentType string // what the vault must have been sent
		chunked     bool
	}{
		{"a csv", "csv", "text/csv", 300, "text/csv", false},
		{"a png sent as octet-stream", "png", "application/octet-stream", 2000, "image/png", false},
		{"a pdf whose part has no type", ".PDF", "", 500, "application/pdf", false},
		{"a docx, chunked", "docx", "application/zip", 10_000, "application/vnd.openxmlformats-officedocument.wordprocessingml.document", true},
		{"a file larger than a JSON request may be", "bmp", "image/bmp", 3 << 20, "image/bmp", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			marker := uplMarker(t)
			data := uplData(marker, tc.size)
			body, ct := uplBody(t,
				map[string]any{"query": uplCreate, "variables": map[string]any{"wid": wid, "file": nil, "in": map[string]any{
					"name": tc.name, "extension": tc.extension, "category": "MISCELLANEOUS", "subCategory": "UNCATEGORIZED"}}},
				map[string][]string{"0": {"variables.file"}},
				uplFile{"0", "upload." + strings.TrimPrefix(tc.extension, "."), tc.partType, data})
			r := uplPost(t, gw, body, ct, tc.chunked)
			if r.status != http.StatusOK {
				t.Errorf("status %d, want 200", r.status)
			}
			var got struct{ CreateDocument uplPayload }
			r.ok(t, &got)
			uplCheckStored(t, got.CreateDocument, data, tc.contentType)
			stored := up.rest(t, "GET", "/v2/top-accounts/"+wid+"/documents/"+got.CreateDocument.Document.VaultID, nil)
			if stored["file_status"] != "Uploaded" || stored["name"] != tc.name {
				t.Errorf("the service holds %v, want the document named %q with file_status Uploaded", stored, tc.name)
			}
			uplNoLeftovers(t, marker)
		})
	}
}

func TestUploadReplacesADocumentsFileOnUpdate(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "UPLOAD-UPDATE")
	for _, tc := range []struct {
		name        string
		before      []byte // the file the document has, if any
		input       map[string]any
		extension   string // the document's extension after the update
		contentType string
	}{
		{"a document without a file", nil, map[string]any{}, "pdf", "application/pdf"},
		{"a file replaced", []byte("%PDF old bytes"), map[string]any{"description": "Second version"}, "pdf", "application/pdf"},
		{"a file replaced with one of another extension", []byte("%PDF old bytes"), map[string]any{"extension": "CSV"}, "csv", "text/csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id, uri := docAdd(t, up, wid, map[string]any{"name": tc.name, "extension": "pdf", "category": "taxes", "sub_category": "w2"})
			if tc.before != nil {
				if status := docPut(t, uri, "application/pdf", tc.before); status != http.StatusOK {
					t.Fatalf("PUT the first file: status %d", status)
				}
			}
			marker := uplMarker(t)
			data := uplData(marker, 4096)
			body, ct := uplBody(t,
				map[string]any{"query": uplUpdate, "variables": map[string]any{"wid": wid, "id": id, "in": tc.input, "file": nil}},
				map[string][]string{"file": {"variables.file"}},
				uplFile{"file", "new." + tc.extension, "application/octet-stream", data})
			r := uplPost(t, gw, body, ct, false)
			var got struct{ UpdateDocument uplPayload }
			r.ok(t, &got)
			if got.UpdateDocument.Document.VaultID != id || got.UpdateDocument.Document.Extension != tc.extension {
				t.Errorf("document %+v, want %s with extension %s", got.UpdateDocument.Document, id, tc.extension)
			}
			uplCheckStored(t, got.UpdateDocument, data, tc.contentType)
			// And a later read sees the same file.
			if d := docGet(t, gw, wid, id); d == nil || d.FileStatus != "UPLOADED" || d.DownloadURI == nil {
				t.Errorf("read back: %+v, want UPLOADED with a downloadUri", d)
			} else if _, again := docDownload(t, *d.DownloadURI); !bytes.Equal(again, data) {
				t.Error("read back: the vault holds other bytes than those sent")
			}
			uplNoLeftovers(t, marker)
		})
	}
}

func TestUploadOfSeveralFilesInOneRequest(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "UPLOAD-SEVERAL")
	const twice = `mutation($wid: ID!, $a: Upload, $b: Upload) {
  a: createDocument(wid: $wid, input: {name: "A", extension: "csv", category: MISCELLANEOUS, subCategory: UNCATEGORIZED}, file: $a) { document { vaultId extension fileStatus downloadUri } uploadUri }
  b: createDocument(wid: $wid, input: {name: "B", extension: "tsv", category: MISCELLANEOUS, subCategory: UNCATEGORIZED}, file: $b) { document { vaultId extension fileStatus downloadUri } uploadUri }
}`
	for _, tc := range []struct {
		name string
		same bool // one file part mapped to both variables
	}{
		{"two files", false},
		{"one file used twice", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			marker := uplMarker(t)
			a, b := uplData(marker, 5000), uplData(append(marker, 'b'), 7000)
			ops := map[string]any{"query": twice, "variables": map[string]any{"wid": wid, "a": nil, "b": nil}}
			var body []byte
			var ct string
			if tc.same {
				b = a
				body, ct = uplBody(t, ops, map[string][]string{"0": {"variables.a", "variables.b"}}, uplFile{"0", "a.csv", "text/csv", a})
			} else {
				body, ct = uplBody(t, ops, map[string][]string{"0": {"variables.a"}, "1": {"variables.b"}},
					uplFile{"0", "a.csv", "text/csv", a}, uplFile{"1", "b.tsv", "text/tab-separated-values", b})
			}
			var got struct{ A, B uplPayload }
			uplPost(t, gw, body, ct, false).ok(t, &got)
			uplCheckStored(t, got.A, a, "text/csv")
			uplCheckStored(t, got.B, b, "text/tab-separated-values")
			uplNoLeftovers(t, marker)
		})
	}
}

func TestMultipartRequestsNeedAPreflightHeader(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "UPLOAD-PREFLIGHT")
	for _, tc := range []struct {
		name   string
		header string // the preflight header sent, if any
	}{
		{"without a preflight header", ""},
		{"with GraphQL-Require-Preflight", "GraphQL-Require-Preflight"},
		{"with Apollo-Require-Preflight", "Apollo-Require-Preflight"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := uplMarker(t)
			body, ct := uplBody(t,
				map[string]any{"query": uplCreate, "variables": map[string]any{"wid": wid, "file": nil, "in": map[string]any{
					"name": tc.name, "extension": "csv", "category": "MISCELLANEOUS", "subCategory": "UNCATEGORIZED"}}},
				map[string][]string{"0": {"variables.file"}},
				uplFile{"0", "a.csv", "text/csv", uplData(marker, 100)})
			req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", ct)
			if tc.header != "" {
				req.Header.Set(tc.header, "1")
			}
			up.ResetRequests()
			r := gw.do(t, req)
			if tc.header != "" {
				if r.status != http.StatusOK {
					t.Errorf("status %d, want 200", r.status)
				}
				var got struct{ CreateDocument uplPayload }
				r.ok(t, &got)
				if got.CreateDocument.Document.FileStatus != "UPLOADED" {
					t.Errorf("fileStatus %s, want UPLOADED", got.CreateDocument.Document.FileStatus)
				}
			} else {
				if r.status != http.StatusBadRequest {
					t.Errorf("status %d, want 400", r.status)
				}
				r.wantError(t, "BAD_USER_INPUT", "A multipart request must carry a GraphQL-Require-Preflight (or Apollo-Require-Preflight) header")
				if w := uplWrites(up); len(w) > 0 {
					t.Errorf("a request without a preflight header reached the upstream: %v", w)
				}
			}
			uplNoLeftovers(t, marker)
		})
	}
}

func TestUploadsOverTheSizeLimitAre413(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, map[string]string{"MAX_UPLOAD_BYTES": "64KiB"})
	wid := docTopAccount(t, up, "UPLOAD-LIMIT")
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		status  int
	}{
		{"a file within the limit", 32 << 10, false, http.StatusOK},
		{"a file within the limit, chunked", 32 << 10, true, http.StatusOK},
		{"a file over the limit with a declared length", 100 << 10, false, http.StatusRequestEntityTooLarge},
		{"a file over the limit, chunked", 100 << 10, true, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := uplMarker(t)
			body, ct := uplBody(t,
				map[string]any{"query": uplCreate, "variables": map[string]any{"wid": wid, "file": nil, "in": map[string]any{
					"name": tc.name, "extension": "csv", "category": "MISCELLANEOUS", "subCategory": "UNCATEGORIZED"}}},
				map[string][]string{"0": {"variables.file"}},
				uplFile{"0", "big.csv", "text/csv", uplData(marker, tc.size)})
			up.ResetRequests()
			r := uplPost(t, gw, body, ct, tc.chunked)
			if r.status != tc.status {
				t.Errorf("status %d, want %d", r.status, tc.status)
			}
			if tc.status == http.StatusOK {
				r.ok(t, nil)
			} else {
				r.wantError(t, "BAD_USER_INPUT", "The request body is larger than the limit of 64 KiB")
				if w := uplWrites(up); len(w) > 0 {
					t.Errorf("an oversized request reached the upstream: %v", w)
				}
			}
			uplNoLeftovers(t, marker)
		})
	}
}

func TestUploadsWithTooManyFilesAre413(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, map[string]string{"MAX_UPLOAD_FILES": "2"})
	wid := docTopAccount(t, up, "UPLOAD-FILES")
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("%d files", n), func(t *testing.T) {
			marker := uplMarker(t)
			var query strings.Builder
			query.WriteString("mutation($wid: ID!")
			vars := map[string]any{"wid": wid}
			fileMap := map[string][]string{}
			var files []uplFile
			for i := range n {
				fmt.Fprintf(&query, ", $f%d: Upload", i)
				vars[fmt.Sprintf("f%d", i)] = nil
				fileMap[fmt.Sprint(i)] = []string{fmt.Sprintf("variables.f%d", i)}
				files = append(files, uplFile{fmt.Sprint(i), "f.csv", "text/csv", uplData(marker, 200)})
			}
			query.WriteString(") {")
			for i := range n {
				fmt.Fprintf(&query, ` d%d: createDocument(wid: $wid, input: {name: "F%d", extension: "csv", category: MISCELLANEOUS, subCategory: UNCATEGORIZED}, file: $f%d) { uploadUri }`, i, i, i)
			}
			query.WriteString(" }")
			body, ct := uplBody(t, map[string]any{"query": query.String(), "variables": vars}, fileMap, files...)
			up.ResetRequests()
			r := uplPost(t, gw, body, ct, false)
			if n <= 2 {
				if r.status != http.StatusOK {
					t.Errorf("status %d, want 200", r.status)
				}
				r.ok(t, nil)
			} else {
				if r.status != http.StatusRequestEntityTooLarge {
					t.Errorf("status %d, want 413", r.status)
				}
				e := r.wantError(t, "BAD_USER_INPUT", "")
				if !contains(e.Message, fmt.Sprintf("%d files", n), "2") {
					t.Errorf("message %q, want it to give the %d files and the limit of 2", e.Message, n)
				}
				if w := uplWrites(up); len(w) > 0 {
					t.Errorf("a request with too many files reached the upstream: %v", w)
				}
			}
			uplNoLeftovers(t, marker)
		})
	}
}

func TestMultipartOperationsAndMapThatDisagreeAre400(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "UPLOAD-MAP")
	in := map[string]any{"name": "Mismatch", "extension": "csv", "category": "MISCELLANEOUS", "subCategory": "UNCATEGORIZED"}
	ops := map[string]any{"query": uplCreate, "variables": map[string]any{"wid": wid, "file": nil, "in": in}}
	for _, tc := range []struct {
		name    string
		fields  []uplPart // operations and map as sent, in order
		files   []string  // form names of the file parts
		message string    // a part of the message
	}{
		{"the map names a file the request does not carry",
			[]uplPart{{"operations", uplJSON(ops)}, {"map", `{"0":["variables.file"],"1":["variables.file"]}`}}, []string{"0"}, `"1"`},
		{"a file the map does not name",
			[]uplPart{{"operations", uplJSON(ops)}, {"map", `{"0":["variables.file"]}`}}, []string{"0", "extra"}, `"extra"`},
		{"map before operations",
			[]uplPart{{"map", `{"0":["variables.file"]}`}, {"operations", uplJSON(ops)}}, []string{"0"}, "operations"},
		{"no map",
			[]uplPart{{"operations", uplJSON(ops)}}, []string{"0"}, "map"},
		{"a map that is not JSON",
			[]uplPart{{"operations", uplJSON(ops)}, {"map", `{"0":`}}, []string{"0"}, "map"},
		{"a map whose paths are not a list",
			[]uplPart{{"operations", uplJSON(ops)}, {"map", `{"0":"variables.file"}`}}, []string{"0"}, "map"},
		{"operations that are not JSON",
			[]uplPart{{"operations", `{"query":`}, {"map", `{"0":["variables.file"]}`}}, []string{"0"}, "operations"},
		{"a path outside the variables",
			[]uplPart{{"operations", uplJSON(ops)}, {"map", `{"0":["query"]}`}}, []string{"0"}, ""},
		{"a path into operations without variables",
			[]uplPart{{"operations", uplJSON(map[string]any{"query": `{ version }`})}, {"map", `{"0":["variables.file"]}`}}, []string{"0"}, ""},
		{"a path through a variable that is a string",
			[]uplPart{{"operations", uplJSON(ops)}, {"map", `{"0":["variables.wid.file"]}`}}, []string{"0"}, ""},
		{"a path past the end of a list",
			[]uplPart{{"operations", uplJSON(map[string]any{"query": uplCreate, "variables": map[string]any{"wid": wid, "file": nil, "in": in, "list": []any{nil}}})},
				{"map", `{"0":["variables.list.3"]}`}}, []string{"0"}, ""},
		{"a path through a variable that is missing",
			[]uplPart{{"operations", uplJSON(ops)}, {"map", `{"0":["variables.nothing.file"]}`}}, []string{"0"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := uplMarker(t)
			var files []uplFile
			for _, f := range tc.files {
				files = append(files, uplFile{f, f + ".csv", "text/csv", uplData(marker, 300)})
			}
			body, ct := uplParts(t, tc.fields, files...)
			up.ResetRequests()
			r := uplPost(t, gw, body, ct, false)
			if r.status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", r.status)
			}
			e := r.wantError(t, "BAD_USER_INPUT", "")
			if !strings.Contains(e.Message, tc.message) {
				t.Errorf("message %q, want it to name %s", e.Message, tc.message)
			}
			if w := uplWrites(up); len(w) > 0 {
				t.Errorf("a request whose map and operations disagree reached the upstream: %v", w)
			}
			uplNoLeftovers(t, marker)
		})
	}
}

// uplJSON encodes v, for parts written as they are.
func uplJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAnUploadCutOffMidFileLeavesNothingBehind(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := docTopAccount(t, up, "UPLOAD-CUT")
	marker := uplMarker(t)
	body, ct := uplBody(t,
		map[string]any{"query": uplCreate, "variables": map[string]any{"wid": wid, "file": nil, "in": map[string]any{
			"name": "Cut off", "extension": "csv", "category": "MISCELLANEOUS", "subCategory": "UNCATEGORIZED"}}},
		map[string][]string{"0": {"variables.file"}},
		uplFile{"0", "cut.csv", "text/csv", uplData(marker, 256<<10)})
	half := body[:len(body)/2]

	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, gw.url+"/graphql", pr)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("GraphQL-Require-Preflight", "1")
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	if _, err := pw.Write(half); err != nil {
		t.Fatal(err)
	}
	// The gateway has begun to spill the file: the check below is not empty-handed.
	deadline := time.Now().Add(5 * time.Second)
	for len(uplLeftovers(marker)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the gateway never spilled the file to a temporary file in " + os.TempDir())
		}
		time.Sleep(10 * time.Millisecond)
	}
	pw.CloseWithError(io.ErrUnexpectedEOF)
	<-done
	uplNoLeftovers(t, marker)
	if w := uplWrites(up); slices.ContainsFunc(w, func(r string) bool { return strings.HasPrefix(r, "POST /v2/top-accounts/"+wid+"/documents") }) {
		t.Errorf("a cut-off request created a document: %v", w)
	}
}

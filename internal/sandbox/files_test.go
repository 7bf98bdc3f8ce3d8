package sandbox_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// Presigned upload and download addresses: the Upload content operation, the file_status
// transition of the States and transitions table, the extension table and the upload address
// lifetime and file size of the Limits table.

// fileSHA is the ETag the sandbox gives a received file: the quoted SHA-256 hex of its bytes
// (an entity tag is a quoted string).
func fileSHA(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// fileStatus is the file_status Get Document reports.
func fileStatus(t *testing.T, f *fixture, wid, vaultID string) string {
	t.Helper()
	return str(t, docGet(t, f, wid, vaultID), "file_status")
}

func fileWantStatus(t *testing.T, f *fixture, wid, vaultID, want string) {
	t.Helper()
	if got := fileStatus(t, f, wid, vaultID); got != want {
		t.Errorf("file_status is %s, want %s", got, want)
	}
}

// fileDownloadURI is the download_uri of an uploaded document.
func fileDownloadURI(t *testing.T, f *fixture, wid, vaultID string) string {
	t.Helper()
	return str(t, docGet(t, f, wid, vaultID), "download_uri")
}

// fileFetch sends method to a presigned address, with header added.
func fileFetch(t *testing.T, f *fixture, method, uri string, header http.Header) *response {
	t.Helper()
	g := docOn(f, t)
	req := g.request(method, uri, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	return g.do(req)
}

// fileWantBytes downloads a document's file and checks its bytes and Content-Type.
func fileWantBytes(t *testing.T, f *fixture, wid, vaultID, contentType string, want []byte) {
	t.Helper()
	r := fileFetch(t, f, "GET", fileDownloadURI(t, f, wid, vaultID), nil).wantOK(t)
	if !bytes.Equal(r.body, want) {
		t.Errorf("download gave %d bytes %.40q, want %d bytes %.40q", len(r.body), r.body, len(want), want)
	}
	if got := r.header.Get("Content-Type"); got != contentType {
		t.Errorf("download Content-Type is %q, want %q", got, contentType)
	}
}

// fileChunked hides a reader's length from net/http, which then sends the body chunked, as a
// client streaming a file of unknown size does.
type fileChunked struct{ r io.Reader }

func (c fileChunked) Read(p []byte) (int, error) { return c.r.Read(p) }

// filePutBody PUTs body to an upload address; length -1 sends it chunked.
func filePutBody(t *testing.T, f *fixture, uri, contentType string, body []byte, length int64) *response {
	t.Helper()
	g := docOn(f, t)
	var r io.Reader = bytes.NewReader(body)
	if length < 0 {
		r = fileChunked{r}
	}
	req, err := http.NewRequest("PUT", uri, r)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Content-Type", contentType)
	return g.do(req)
}

// fileTamper returns uri with edit applied.
func fileTamper(t *testing.T, uri string, edit func(u *url.URL, q url.Values)) string {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatalf("parse %s: %v", uri, err)
	}
	q := u.Query()
	edit(u, q)
	u.RawQuery = q.Encode()
	return u.String()
}

// fileFlip changes the last character of a hex string.
func fileFlip(s string) string {
	if strings.HasSuffix(s, "0") {
		return s[:len(s)-1] + "1"
	}
	return s[:len(s)-1] + "0"
}

// fileRawPut is a PUT written by hand on its own connection, so that a test can stop part way
// through the body and still read the server's answer, and knows that the server has finished
// with the request once it has read it.
type fileRawPut struct {
	t    *testing.T
	conn *net.TCPConn
	br   *bufio.Reader
	req  *http.Request
}

// fileStartPut sends the request line and headers of a PUT to uri with Expect: 100-continue and
// waits for the 100 Continue. net/http sends that only when the handler first reads the body:
// after the address, the document, the Content-Type and a declared length have been checked.
func fileStartPut(t *testing.T, uri, contentType, framing string) *fileRawPut {
	t.Helper()
	p := fileSendHead(t, uri, contentType, framing)
	if r := p.response(); r.status != http.StatusContinue {
		t.Fatalf("got %d before the body, want 100 Continue; body %s", r.status, r.body)
	}
	return p
}

// fileSendHead sends the request line and headers of a PUT with Expect: 100-continue, and no body.
func fileSendHead(t *testing.T, uri, contentType, framing string) *fileRawPut {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatalf("parse %s: %v", uri, err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatalf("dial %s: %v", u.Host, err)
	}
	t.Cleanup(func() { c.Close() })
	// A deadline, so that a server that never answers fails the test instead of hanging it.
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	p := &fileRawPut{t: t, conn: c.(*net.TCPConn), br: bufio.NewReader(c), req: &http.Request{Method: "PUT"}}
	fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\n%s\r\nExpect: 100-continue\r\n\r\n",
		u.RequestURI(), u.Host, contentType, framing)
	return p
}

func (p *fileRawPut) write(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.conn, s); err != nil {
		p.t.Fatalf("write body: %v", err)
	}
}

// cutOff ends the client's side of the connection mid-body, as a client that dies does, but
// keeps the other side open to read the answer.
func (p *fileRawPut) cutOff() {
	p.t.Helper()
	if err := p.conn.CloseWrite(); err != nil {
		p.t.Fatalf("close the sending side: %v", err)
	}
}

func (p *fileRawPut) response() *response {
	p.t.Helper()
	resp, err := http.ReadResponse(p.br, p.req)
	if err != nil {
		p.t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatalf("read response body: %v", err)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}
}

func TestUploadFileForEveryExtension(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("FILES", "Files family")
	if len(advisorspec.Extensions) != 14 {
		t.Errorf("extension table has %d rows, want the specification's 14 (.jpg and .jpeg count apart)", len(advisorspec.Extensions))
	}
	for i, ext := range advisorspec.Extensions {
		t.Run("."+ext.Name+" needs "+ext.ContentType, func(t *testing.T) {
			// A Content-Type that belongs to another extension and not to this one.
			wrong := advisorspec.Extensions[(i+2)%len(advisorspec.Extensions)].ContentType
			if wrong == ext.ContentType {
				wrong = "application/octet-stream"
			}
			id, uri := docCreate(t, f, wid, docWith(pdfDocument("file "+ext.Name), map[string]any{"extension": "." + ext.Name}))
			data := []byte("the bytes of a ." + ext.Name + " file\x00\xff")
			refusal := "Content-Type must be " + ext.ContentType + " for a ." + ext.Name + " file"

			docOn(f, t).put(uri, wrong, data).wantError(t, http.StatusUnsupportedMediaType, refusal)
			docOn(f, t).put(uri, "", data).wantError(t, http.StatusUnsupportedMediaType, refusal)
			fileWantStatus(t, f, wid, id, "NoFileUploaded")
			if got := docGet(t, f, wid, id)["download_uri"]; got != nil {
				t.Errorf("download_uri is %v before an upload, want none", got)
			}

			// The refused attempts did not use up the address.
			r := docOn(f, t).put(uri, ext.ContentType, data).wantOK(t)
			if got := r.header.Get("ETag"); got != fileSHA(data) {
				t.Errorf("ETag is %s, want %s", got, fileSHA(data))
			}
			fileWantStatus(t, f, wid, id, "Uploaded")
			fileWantBytes(t, f, wid, id, ext.ContentType, data)
		})
	}
}

func TestUploadFileContentType(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("CT", "Content-Type family")
	const refusal = "Content-Type must be application/pdf for a .pdf file"
	for _, tc := range []struct {
		name, contentType string
		ok                bool
	}{
		{"the extension's Content-Type is accepted", "application/pdf", true},
		{"parameters on the Content-Type are accepted", "application/pdf; charset=binary", true},
		{"media types match in any case", "Application/PDF", true},
		{"another extension's Content-Type is refused", "image/png", false},
		{"a generic binary type is refused", "application/octet-stream", false},
		{"a longer type sharing the prefix is refused", "application/pdfx", false},
		{"a missing Content-Type is refused", "", false},
		{"a malformed Content-Type is refused", "application/pdf; =;", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, uri := docCreate(t, f, wid, pdfDocument("file"))
			data := []byte("%PDF-1.7 " + tc.name)
			r := docOn(f, t).put(uri, tc.contentType, data)
			if !tc.ok {
				r.wantError(t, http.StatusUnsupportedMediaType, refusal)
				fileWantStatus(t, f, wid, id, "NoFileUploaded")
				return
			}
			r.wantOK(t)
			fileWantStatus(t, f, wid, id, "Uploaded")
			fileWantBytes(t, f, wid, id, "application/pdf", data)
		})
	}
}

func TestUploadAddressLivesFiveMinutes(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("EXPIRY", "Expiry family")
	early, earlyURI := docCreate(t, f, wid, pdfDocument("early"))
	onTime, onTimeURI := docCreate(t, f, wid, pdfDocument("on time"))
	late, lateURI := docCreate(t, f, wid, pdfDocument("late"))
	data := []byte("%PDF-1.7")

	f.clock.Advance(4*time.Minute + 59*time.Second)
	t.Run("at 4m59s the address still works", func(t *testing.T) {
		docOn(f, t).put(earlyURI, "application/pdf", data).wantOK(t)
		fileWantStatus(t, f, wid, early, "Uploaded")
	})

	f.clock.Advance(time.Second)
	t.Run("at 5m the address is refused", func(t *testing.T) {
		docOn(f, t).put(onTimeURI, "application/pdf", data).wantError(t, http.StatusForbidden, "The address has expired")
		fileWantStatus(t, f, wid, onTime, "NoFileUploaded")
	})

	f.clock.Advance(time.Hour)
	t.Run("long after, the address is still refused", func(t *testing.T) {
		docOn(f, t).put(lateURI, "application/pdf", data).wantError(t, http.StatusForbidden, "The address has expired")
		fileWantStatus(t, f, wid, late, "NoFileUploaded")
	})

	t.Run("an update gives a new address that works", func(t *testing.T) {
		fresh := str(t, docOn(f, t).v2("PATCH", docPath(wid, late), map[string]any{}).wantOK(t).object(t), "upload_uri")
		docOn(f, t).put(fresh, "application/pdf", data).wantOK(t)
		fileWantStatus(t, f, wid, late, "Uploaded")
	})
}

func TestUploadAddressTamperingIsRefused(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("TAMPER", "Tamper family")
	otherWID := f.addTopAccount("TAMPER-2", "Other family")
	id, uri := docCreate(t, f, wid, pdfDocument("target"))
	otherID, _ := docCreate(t, f, wid, pdfDocument("neighbour"))
	uploaded, uploadedURI := docCreate(t, f, wid, pdfDocument("uploaded"))
	f.put(uploadedURI, "application/pdf", []byte("%PDF")).wantOK(t)
	downloadURI := fileDownloadURI(t, f, wid, uploaded)
	const refusal = "The address is not valid: its signature does not match"

	for _, tc := range []struct {
		name string
		uri  string
	}{
		{"signature changed", fileTamper(t, uri, func(_ *url.URL, q url.Values) { q.Set("signature", fileFlip(q.Get("signature"))) })},
		{"signature removed", fileTamper(t, uri, func(_ *url.URL, q url.Values) { q.Del("signature") })},
		{"expires moved later", fileTamper(t, uri, func(_ *url.URL, q url.Values) {
			n, _ := strconv.ParseInt(q.Get("expires"), 10, 64)
			q.Set("expires", strconv.FormatInt(n+3600, 10))
		})},
		{"expires moved earlier", fileTamper(t, uri, func(_ *url.URL, q url.Values) {
			n, _ := strconv.ParseInt(q.Get("expires"), 10, 64)
			q.Set("expires", strconv.FormatInt(n-1, 10))
		})},
		{"expires removed", fileTamper(t, uri, func(_ *url.URL, q url.Values) { q.Del("expires") })},
		{"nonce changed", fileTamper(t, uri, func(_ *url.URL, q url.Values) { q.Set("nonce", fileFlip(q.Get("nonce"))) })},
		{"nonce removed", fileTamper(t, uri, func(_ *url.URL, q url.Values) { q.Del("nonce") })},
		{"path pointing at another document", fileTamper(t, uri, func(u *url.URL, _ url.Values) {
			u.Path = strings.Replace(u.Path, id, otherID, 1)
		})},
		{"path pointing at another top account", fileTamper(t, uri, func(u *url.URL, _ url.Values) {
			u.Path = strings.Replace(u.Path, wid, otherWID, 1)
		})},
		{"a download address used for an upload", fileTamper(t, downloadURI, func(u *url.URL, _ url.Values) {
			u.Path = strings.Replace(u.Path, "/downloads/", "/uploads/", 1)
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.uri == uri {
				t.Fatalf("the tampered address is the original")
			}
			docOn(f, t).put(tc.uri, "application/pdf", []byte("%PDF-forged")).wantError(t, http.StatusForbidden, refusal)
			fileWantStatus(t, f, wid, id, "NoFileUploaded")
			fileWantStatus(t, f, wid, otherID, "NoFileUploaded")
			fileWantBytes(t, f, wid, uploaded, "application/pdf", []byte("%PDF"))
		})
	}

	t.Run("the untouched address still works", func(t *testing.T) {
		docOn(f, t).put(uri, "application/pdf", []byte("%PDF-real")).wantOK(t)
		fileWantBytes(t, f, wid, id, "application/pdf", []byte("%PDF-real"))
	})
}

func TestUploadAddressIsSingleUse(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("ONCE", "Single-use family")
	id, first := docCreate(t, f, wid, pdfDocument("contract"))
	const used = "The address has already been used: ask for a new one by updating the document"

	f.put(first, "application/pdf", []byte("%PDF first")).wantOK(t)

	t.Run("a used address is refused the second time", func(t *testing.T) {
		docOn(f, t).put(first, "application/pdf", []byte("%PDF second")).wantError(t, http.StatusForbidden, used)
		fileWantBytes(t, f, wid, id, "application/pdf", []byte("%PDF first"))
	})

	t.Run("a new address from an update replaces the file", func(t *testing.T) {
		fresh := str(t, docOn(f, t).v2("PATCH", docPath(wid, id), map[string]any{"description": "v2"}).wantOK(t).object(t), "upload_uri")
		docOn(f, t).put(fresh, "application/pdf", []byte("%PDF replacement")).wantOK(t)
		fileWantStatus(t, f, wid, id, "Uploaded")
		fileWantBytes(t, f, wid, id, "application/pdf", []byte("%PDF replacement"))
		docOn(f, t).put(fresh, "application/pdf", []byte("%PDF third")).wantError(t, http.StatusForbidden, used)
	})

	t.Run("the first address stays used", func(t *testing.T) {
		docOn(f, t).put(first, "application/pdf", []byte("%PDF again")).wantError(t, http.StatusForbidden, used)
		fileWantBytes(t, f, wid, id, "application/pdf", []byte("%PDF replacement"))
	})

	t.Run("an address of a deleted document is Vault doesn't exist", func(t *testing.T) {
		gone, uri := docCreate(t, f, wid, pdfDocument("gone"))
		docOn(f, t).v2("DELETE", docPath(wid, gone), nil).wantOK(t)
		docOn(f, t).put(uri, "application/pdf", []byte("%PDF")).wantError(t, http.StatusNotFound, "Vault doesn't exist")
	})
}

func TestUploadWhileAnotherIsStreaming(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("BUSY-UPLOAD", "Busy family")
	id, uri := docCreate(t, f, wid, pdfDocument("contract"))
	data := "%PDF-1.7 streamed"

	p := fileStartPut(t, uri, "application/pdf", "Content-Length: "+strconv.Itoa(len(data)))
	docOn(f, t).put(uri, "application/pdf", []byte("%PDF other")).
		wantError(t, http.StatusConflict, "An upload to this address is already in progress")
	fileWantStatus(t, f, wid, id, "NoFileUploaded")

	p.write(data)
	r := p.response()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	if got := r.header.Get("ETag"); got != fileSHA([]byte(data)) {
		t.Errorf("ETag is %s, want %s", got, fileSHA([]byte(data)))
	}
	fileWantBytes(t, f, wid, id, "application/pdf", []byte(data))
}

func TestUploadFileSizeLimit(t *testing.T) {
	t.Parallel()
	const limit = 1024
	f := newSandbox(t, sandbox.Options{MaxFileSize: limit}, false)
	wid := f.addTopAccount("SIZE", "Size family")
	const refusal = "The file is larger than the maximum of 1 KiB"
	for _, tc := range []struct {
		name   string
		size   int
		length int64 // -1: chunked
		ok     bool
	}{
		{"exactly the limit passes", limit, limit, true},
		{"exactly the limit passes chunked", limit, -1, true},
		{"a declared Content-Length one over the limit is refused", limit + 1, limit + 1, false},
		{"a declared Content-Length far over the limit is refused", 64 * limit, 64 * limit, false},
		{"a chunked body one over the limit is refused", limit + 1, -1, false},
		{"a chunked body far over the limit is refused", 64 * limit, -1, false},
		{"an empty file passes", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, uri := docCreate(t, f, wid, pdfDocument("sized"))
			data := bytes.Repeat([]byte("%"), tc.size)
			r := filePutBody(t, f, uri, "application/pdf", data, tc.length)
			if tc.ok {
				r.wantOK(t)
				fileWantBytes(t, f, wid, id, "application/pdf", data)
				return
			}
			r.wantError(t, http.StatusRequestEntityTooLarge, refusal)
			fileWantStatus(t, f, wid, id, "NoFileUploaded")
			// The refused upload did not use up the address.
			fits := bytes.Repeat([]byte("+"), limit)
			filePutBody(t, f, uri, "application/pdf", fits, tc.length).wantOK(t)
			fileWantBytes(t, f, wid, id, "application/pdf", fits)
		})
	}
}

// The specification's maximum is 5 GB; the sandbox reads it as 5 GiB, like the object stores that
// impose it. Only the declared length is sent, so the test moves no gigabytes.
func TestUploadFileDefaultSizeLimitIsFiveGB(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("SIZE-5GB", "Large family")

	t.Run("a declared length over 5 GiB is refused before the body is sent", func(t *testing.T) {
		id, uri := docCreate(t, f, wid, pdfDocument("too large"))
		p := fileSendHead(t, uri, "application/pdf", "Content-Length: "+strconv.FormatInt(advisorspec.MaxFileSize+1, 10))
		p.response().wantError(t, http.StatusRequestEntityTooLarge, "The file is larger than the maximum of 5 GiB")
		fileWantStatus(t, f, wid, id, "NoFileUploaded")
	})

	t.Run("a declared length of exactly 5 GiB is let through to the body", func(t *testing.T) {
		id, uri := docCreate(t, f, wid, pdfDocument("largest"))
		p := fileStartPut(t, uri, "application/pdf", "Content-Length: "+strconv.FormatInt(advisorspec.MaxFileSize, 10))
		p.write("%PDF")
		p.cutOff()
		p.response().wantError(t, http.StatusBadRequest, "The upload was cut off before the whole file arrived")
		fileWantStatus(t, f, wid, id, "NoFileUploaded")
	})
}

func TestUploadCutOffMidBody(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("CUT", "Cut-off family")
	const refusal = "The upload was cut off before the whole file arrived"
	for _, tc := range []struct {
		name    string
		framing string
		partial string
	}{
		{"a body shorter than its Content-Length", "Content-Length: 100", strings.Repeat("a", 40)},
		{"a chunked body without its last chunk", "Transfer-Encoding: chunked", "28\r\n" + strings.Repeat("a", 40) + "\r\n"},
		{"a chunked body cut inside a chunk", "Transfer-Encoding: chunked", "64\r\n" + strings.Repeat("a", 40)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, uri := docCreate(t, f, wid, pdfDocument("cut"))
			p := fileStartPut(t, uri, "application/pdf", tc.framing)
			p.write(tc.partial)
			p.cutOff()
			p.response().wantError(t, http.StatusBadRequest, refusal)
			fileWantStatus(t, f, wid, id, "NoFileUploaded")

			// The answer came after the server let go of the address, so it is free again.
			docOn(f, t).put(uri, "application/pdf", []byte("%PDF whole")).wantOK(t)
			fileWantBytes(t, f, wid, id, "application/pdf", []byte("%PDF whole"))
		})
	}

	t.Run("a client whose body fails gets an error, and the file is not taken", func(t *testing.T) {
		id, uri := docCreate(t, f, wid, pdfDocument("failing reader"))
		req, err := http.NewRequest("PUT", uri, io.MultiReader(strings.NewReader("%PDF-1.7 part"), fileFailingReader{}))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = 1000
		req.Header.Set("Content-Type", "application/pdf")
		if resp, err := f.srv.Client().Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("PUT of a failing body got status %d, want a client error", resp.StatusCode)
		}
		fileWantStatus(t, f, wid, id, "NoFileUploaded")
	})
}

// fileFailingReader fails, as a file being read from a disk that dies does.
type fileFailingReader struct{}

func (fileFailingReader) Read([]byte) (int, error) { return 0, errors.New("disk went away") }

func TestUploadProcessingDelay(t *testing.T) {
	t.Parallel()
	f := newSandbox(t, sandbox.Options{ProcessingDelay: 2 * time.Minute}, false)
	wid := f.addTopAccount("SLOW", "Processing family")
	id, uri := docCreate(t, f, wid, pdfDocument("scan"))
	f.put(uri, "application/pdf", []byte("%PDF scanned")).wantOK(t)

	f.v2("GET", docPath(wid, id), nil).wantError(t, http.StatusNotFound, "Vault file not ready")
	f.clock.Advance(2*time.Minute - time.Second)
	f.v2("GET", docPath(wid, id), nil).wantError(t, http.StatusNotFound, "Vault file not ready")
	if p := docList(t, f, wid, ""); p.total(t) != 1 {
		t.Errorf("list has %d documents while the file is processed, want 1", p.total(t))
	}

	f.clock.Advance(time.Second)
	fileWantStatus(t, f, wid, id, "Uploaded")
	fileWantBytes(t, f, wid, id, "application/pdf", []byte("%PDF scanned"))
}

func TestDownloadFile(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("DOWN", "Download family")
	data := []byte("abcdefghijklmnopqrstuvwxyz")
	id, uri := docCreate(t, f, wid, pdfDocument("Trust Agreement"))
	f.put(uri, "application/pdf", data).wantOK(t)
	download := fileDownloadURI(t, f, wid, id)

	t.Run("GET serves the bytes as an attachment named with its extension", func(t *testing.T) {
		r := fileFetch(t, f, "GET", download, nil).wantOK(t)
		if !bytes.Equal(r.body, data) {
			t.Errorf("body %q, want %q", r.body, data)
		}
		fileWantDisposition(t, r, "Trust Agreement.pdf")
	})

	for _, tc := range []struct {
		rng, contentRange, body string
	}{
		{"bytes=2-5", "bytes 2-5/26", "cdef"},
		{"bytes=-3", "bytes 23-25/26", "xyz"},
		{"bytes=20-", "bytes 20-25/26", "uvwxyz"},
	} {
		t.Run("Range "+tc.rng+" is a 206 with that range", func(t *testing.T) {
			r := fileFetch(t, f, "GET", download, http.Header{"Range": {tc.rng}})
			if r.status != http.StatusPartialContent {
				t.Fatalf("status %d, want 206; body %s", r.status, r.body)
			}
			if got := r.header.Get("Content-Range"); got != tc.contentRange {
				t.Errorf("Content-Range %q, want %q", got, tc.contentRange)
			}
			if string(r.body) != tc.body {
				t.Errorf("body %q, want %q", r.body, tc.body)
			}
		})
	}

	t.Run("HEAD answers the headers without the body", func(t *testing.T) {
		r := fileFetch(t, f, "HEAD", download, nil).wantOK(t)
		if got := r.header.Get("Content-Length"); got != "26" {
			t.Errorf("Content-Length %q, want 26", got)
		}
		if got := r.header.Get("Content-Type"); got != "application/pdf" {
			t.Errorf("Content-Type %q, want application/pdf", got)
		}
		if len(r.body) != 0 {
			t.Errorf("HEAD gave a body of %d bytes, want none", len(r.body))
		}
		fileWantDisposition(t, r, "Trust Agreement.pdf")
	})

	for _, tc := range []struct{ name, ext, want string }{
		{"scan.PDF", ".pdf", "scan.PDF"},
		{"Übersicht – Q3", ".xlsx", "Übersicht – Q3.xlsx"},
		{`Memo "final", v2`, ".docx", `Memo "final", v2.docx`},
	} {
		t.Run("file name "+tc.name+" downloads as "+tc.want, func(t *testing.T) {
			id, uri := docCreate(t, f, wid, docWith(pdfDocument(tc.name), map[string]any{"extension": tc.ext}))
			ct, _ := advisorspec.ContentTypeFor(tc.ext)
			docOn(f, t).put(uri, ct, []byte("x")).wantOK(t)
			fileWantDisposition(t, fileFetch(t, f, "GET", fileDownloadURI(t, f, wid, id), nil).wantOK(t), tc.want)
		})
	}

	t.Run("a tampered download address is refused", func(t *testing.T) {
		forged := fileTamper(t, download, func(_ *url.URL, q url.Values) { q.Set("signature", fileFlip(q.Get("signature"))) })
		fileFetch(t, f, "GET", forged, nil).wantError(t, http.StatusForbidden, "The address is not valid: its signature does not match")
	})

	t.Run("an upload address does not download", func(t *testing.T) {
		_, upload := docCreate(t, f, wid, pdfDocument("other"))
		asDownload := strings.Replace(upload, "/uploads/", "/downloads/", 1)
		fileFetch(t, f, "GET", asDownload, nil).wantError(t, http.StatusForbidden, "The address is not valid: its signature does not match")
	})

	t.Run("a document deleted after its address was issued is Vault doesn't exist", func(t *testing.T) {
		gone, uri := docCreate(t, f, wid, pdfDocument("gone"))
		docOn(f, t).put(uri, "application/pdf", []byte("%PDF")).wantOK(t)
		address := fileDownloadURI(t, f, wid, gone)
		docOn(f, t).v2("DELETE", docPath(wid, gone), nil).wantOK(t)
		fileFetch(t, f, "GET", address, nil).wantError(t, http.StatusNotFound, "Vault doesn't exist")
	})
}

// fileWantDisposition checks that a download is an attachment with that file name.
func fileWantDisposition(t *testing.T, r *response, want string) {
	t.Helper()
	cd := r.header.Get("Content-Disposition")
	typ, params, err := mime.ParseMediaType(cd)
	if err != nil || typ != "attachment" || params["filename"] != want {
		t.Errorf("Content-Disposition %q gives %q, filename %q, error %v; want attachment, filename %q", cd, typ, params["filename"], err, want)
	}
}

func TestDownloadAddressExpires(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("DOWN-EXP", "Expiry family")
	id, uri := docCreate(t, f, wid, pdfDocument("statement"))
	f.put(uri, "application/pdf", []byte("%PDF")).wantOK(t)
	download := fileDownloadURI(t, f, wid, id)

	// The specification gives no download lifetime; the sandbox's is DefaultDownloadTTL.
	f.clock.Advance(sandbox.DefaultDownloadTTL - time.Second)
	fileFetch(t, f, "GET", download, nil).wantOK(t)
	f.clock.Advance(time.Second)
	fileFetch(t, f, "GET", download, nil).wantError(t, http.StatusForbidden, "The address has expired")
	fileFetch(t, f, "GET", fileDownloadURI(t, f, wid, id), nil).wantOK(t)
}

func TestFileAddressMethods(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("METHODS", "Methods family")
	id, upload := docCreate(t, f, wid, pdfDocument("contract"))
	other, otherUpload := docCreate(t, f, wid, pdfDocument("uploaded"))
	f.put(otherUpload, "application/pdf", []byte("%PDF")).wantOK(t)
	download := fileDownloadURI(t, f, wid, other)

	for _, tc := range []struct {
		method, uri, allow string
	}{
		{"GET", upload, "PUT"},
		{"POST", upload, "PUT"},
		{"PATCH", upload, "PUT"},
		{"DELETE", upload, "PUT"},
		{"PUT", download, "GET, HEAD"},
		{"POST", download, "GET, HEAD"},
		{"DELETE", download, "GET, HEAD"},
	} {
		kind := "upload"
		if tc.uri == download {
			kind = "download"
		}
		t.Run(tc.method+" on an "+kind+" address is 405", func(t *testing.T) {
			r := fileFetch(t, f, tc.method, tc.uri, nil)
			r.wantError(t, http.StatusMethodNotAllowed, "Method Not Allowed")
			if got := r.header.Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
		})
	}

	t.Run("the upload address still works after the refused methods", func(t *testing.T) {
		docOn(f, t).put(upload, "application/pdf", []byte("%PDF")).wantOK(t)
		fileWantStatus(t, f, wid, id, "Uploaded")
	})
}

// fileGenerator yields size pseudo-random bytes without holding them, hashing them on the way
// and calling sample every sampleEvery bytes.
type fileGenerator struct {
	block       []byte
	pos, size   int64
	hash        io.Writer
	sampleEvery int64
	sample      func()
}

func (g *fileGenerator) Read(p []byte) (int, error) {
	if g.pos >= g.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), g.size-g.pos)]
	n := 0
	for n < len(p) {
		off := int((g.pos + int64(n)) % int64(len(g.block)))
		n += copy(p[n:], g.block[off:])
	}
	before := g.pos
	g.pos += int64(n)
	g.hash.Write(p[:n])
	if g.pos/g.sampleEvery != before/g.sampleEvery {
		g.sample()
	}
	return n, nil
}

// TestUploadStreamsLargeFile is not parallel: HeapInuse is the whole process's, and other
// tests' allocations would blur it.
func TestUploadStreamsLargeFile(t *testing.T) {
	f := emptySandbox(t)
	wid := f.addTopAccount("BIG", "Big family")
	id, uri := docCreate(t, f, wid, pdfDocument("archive"))

	const size = 64 << 20
	// A block whose length divides no buffer size, so that a chunk stored out of place changes
	// the hash.
	block := make([]byte, 1<<20+17)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range block {
		block[i] = byte(rng.Uint32())
	}
	h := sha256.New()
	var stats runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&stats)
	baseline, peak := stats.HeapInuse, stats.HeapInuse
	// The server runs in this process, so sampling while the client sends sees what the
	// server holds of the bytes it has received so far.
	sample := func() {
		runtime.ReadMemStats(&stats)
		peak = max(peak, stats.HeapInuse)
	}
	samples := 0
	gen := &fileGenerator{block: block, size: size, hash: h, sampleEvery: 4 << 20, sample: func() { samples++; sample() }}

	req, err := http.NewRequest("PUT", uri, gen)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/pdf")
	r := f.do(req).wantOK(t)
	sample()

	if samples < size/(4<<20) {
		t.Errorf("heap was sampled %d times during the upload, want %d", samples, size/(4<<20))
	}
	if growth := int64(peak) - int64(baseline); growth >= 16<<20 {
		t.Errorf("HeapInuse grew by %d MiB during a %d MiB upload, want less than 16 MiB", growth>>20, size>>20)
	}
	if want := `"` + hex.EncodeToString(h.Sum(nil)) + `"`; r.header.Get("ETag") != want {
		t.Errorf("ETag is %s, want %s", r.header.Get("ETag"), want)
	}
	fileWantStatus(t, f, wid, id, "Uploaded")
	head := fileFetch(t, f, "HEAD", fileDownloadURI(t, f, wid, id), nil).wantOK(t)
	if got := head.header.Get("Content-Length"); got != strconv.Itoa(size) {
		t.Errorf("download Content-Length %s, want %d", got, size)
	}
}

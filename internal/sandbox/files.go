package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// Presigned addresses live under these first path segments of the sandbox's own host.
const (
	uploadPrefix   = "uploads"
	downloadPrefix = "downloads"
)

// signer signs presigned addresses. An address is valid for one firm, one method, one
// document, until its expiry, and (for uploads) for its nonce; changing any of them breaks the
// signature. Each firm has its own key, so an address one firm was given cannot be made to
// reach another firm's document.
type signer struct {
	key []byte
}

func (s signer) signature(firm, method, wid, vaultID, nonce string, expires int64) string {
	mac := hmac.New(sha256.New, s.key)
	// Lengths first: no choice of fields can make two addresses sign the same text.
	for _, f := range []string{firm, method, wid, vaultID, nonce} {
		fmt.Fprintf(mac, "%d:%s\n", len(f), f)
	}
	fmt.Fprintf(mac, "%d", expires)
	return hex.EncodeToString(mac.Sum(nil))
}

func (s signer) valid(firm, method, wid, vaultID, nonce string, expires int64, signature string) bool {
	want := s.signature(firm, method, wid, vaultID, nonce, expires)
	return hmac.Equal([]byte(want), []byte(signature))
}

// baseURL is where the sandbox's own addresses start: its public URL, or the host the request
// came to and the path it came below (MountPath on a gateway's origin), so that an address
// leads back the way the request came.
func baseURL(publicURL string, r *http.Request) string {
	if publicURL != "" {
		return publicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + mounted(r)
}

// presign returns the address of d's file for method, valid until expires. The address is on
// the sandbox's public URL, or on the host the request came to.
func (t *Tenant) presign(r *http.Request, method string, d *document, nonce string, expires time.Time) string {
	base := baseURL(t.opts.PublicURL, r)
	prefix := downloadPrefix
	if method == http.MethodPut {
		prefix = uploadPrefix
	}
	// Rounded up to the second, so an address never lives less than its full lifetime.
	unix := expires.Unix()
	if expires.Nanosecond() > 0 {
		unix++
	}
	q := url.Values{}
	q.Set("expires", strconv.FormatInt(unix, 10))
	if nonce != "" {
		q.Set("nonce", nonce)
	}
	q.Set("signature", t.signer.signature(t.firm.ID, method, d.WID, d.VaultID, nonce, unix))
	return fmt.Sprintf("%s/%s/%s/%s?%s", base, prefix, url.PathEscape(d.WID), url.PathEscape(d.VaultID), q.Encode())
}

// checkAddress verifies the signature and expiry of a presigned address used with method. It
// returns the firm that signed it, whose document the address reaches, and the address's
// nonce. Every firm's key is tried, so the time taken does not say which firm signed.
func (s *Sandbox) checkAddress(r *http.Request, method, wid, vaultID string) (*Tenant, string, *apiError) {
	q := r.URL.Query()
	expires, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	nonce := q.Get("nonce")
	var signer *Tenant
	if err == nil {
		for _, t := range s.firms {
			if t.signer.valid(t.firm.ID, method, wid, vaultID, nonce, expires, q.Get("signature")) {
				signer = t
			}
		}
	}
	if signer == nil {
		return nil, "", errorf(http.StatusForbidden, "The address is not valid: its signature does not match")
	}
	if !s.opts.Now().Before(time.Unix(expires, 0)) {
		return nil, "", errorf(http.StatusForbidden, "The address has expired")
	}
	return signer, nonce, nil
}

// serveUpload takes the PUT of a document's bytes to its upload address. The bytes stream to a
// temporary file and replace the document's file only when all have arrived, so a failed
// upload changes nothing and can be tried again at the same address.
func (s *Sandbox) serveUpload(w http.ResponseWriter, r *http.Request, wid, vaultID string) {
	if r.Method != http.MethodPut {
		w.Header().Set("Allow", http.MethodPut)
		writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	t, nonce, err := s.checkAddress(r, http.MethodPut, wid, vaultID)
	if err == nil {
		err = t.claimUpload(r, wid, vaultID, nonce)
	}
	if err != nil {
		respond(w, nil, err)
		return
	}
	tmp, size, sum, err := t.receive(r)
	if err == nil {
		err = t.finishUpload(wid, vaultID, nonce, tmp, size)
	}
	if err != nil {
		t.releaseUpload(nonce)
		_ = os.Remove(tmp)
		respond(w, nil, err)
		return
	}
	w.Header().Set("ETag", `"`+sum+`"`)
	w.WriteHeader(http.StatusOK)
}

// claimUpload checks that the address is unused and that the request fits the document, then
// marks the address as in use.
func (t *Tenant) claimUpload(r *http.Request, wid, vaultID, nonce string) *apiError {
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	now := t.opts.Now()
	for n, u := range t.store.uploads {
		if now.After(u.expires) { // refused for its expiry before its state matters
			delete(t.store.uploads, n)
		}
	}
	if u, seen := t.store.uploads[nonce]; seen {
		if u.done {
			return errorf(http.StatusForbidden, "The address has already been used: ask for a new one by updating the document")
		}
		return errorf(http.StatusConflict, "An upload to this address is already in progress")
	}
	_, d, err := t.document(wid, vaultID)
	if err != nil {
		return err
	}
	want, _ := advisorspec.ContentTypeFor(d.Extension)
	if got, _, perr := mime.ParseMediaType(r.Header.Get("Content-Type")); perr != nil || !strings.EqualFold(got, want) {
		return errorf(http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type must be %s for a .%s file", want, d.Extension))
	}
	if r.ContentLength > t.opts.MaxFileSize {
		return t.tooLarge()
	}
	expires, _ := strconv.ParseInt(r.URL.Query().Get("expires"), 10, 64)
	t.store.uploads[nonce] = uploadState{expires: time.Unix(expires, 0)}
	return nil
}

func (t *Tenant) releaseUpload(nonce string) {
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	delete(t.store.uploads, nonce)
}

func (t *Tenant) tooLarge() *apiError {
	return errorf(http.StatusRequestEntityTooLarge, "The file is larger than the maximum of "+formatSize(t.opts.MaxFileSize))
}

// receive streams the request body to a temporary file, never holding more than a buffer of
// it in memory, and returns the file's path, size and SHA-256.
func (t *Tenant) receive(r *http.Request) (path string, size int64, sum string, _ *apiError) {
	f, err := t.files.temp()
	if err != nil {
		return "", 0, "", errorf(http.StatusInternalServerError, "Internal server error")
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r.Body, t.opts.MaxFileSize+1))
	switch {
	case err != nil:
		return f.Name(), 0, "", errorf(http.StatusBadRequest, "The upload was cut off before the whole file arrived")
	case n > t.opts.MaxFileSize:
		return f.Name(), 0, "", t.tooLarge()
	}
	if err := f.Close(); err != nil {
		return f.Name(), 0, "", errorf(http.StatusInternalServerError, "Internal server error")
	}
	return f.Name(), n, hex.EncodeToString(h.Sum(nil)), nil
}

// finishUpload makes the received file the document's and moves it to Uploaded.
func (t *Tenant) finishUpload(wid, vaultID, nonce, tmp string, size int64) *apiError {
	t.store.mu.Lock()
	defer t.store.mu.Unlock()
	ta, d, err := t.document(wid, vaultID) // it may have been deleted while the bytes streamed
	if err != nil {
		return err
	}
	if err := t.files.commit(tmp, vaultID); err != nil {
		return errorf(http.StatusInternalServerError, "Internal server error")
	}
	now := t.opts.Now()
	updated := *d
	updated.Uploaded, updated.Size = true, size
	updated.ModificationDate, updated.ReadyAt = now, now.Add(t.opts.ProcessingDelay)
	ta.documents[vaultID] = &updated
	u := t.store.uploads[nonce]
	u.done = true
	t.store.uploads[nonce] = u
	return nil
}

// serveDownload serves a document's file at its download address, with ranges and conditional
// requests as any static file.
func (s *Sandbox) serveDownload(w http.ResponseWriter, r *http.Request, wid, vaultID string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	t, _, err := s.checkAddress(r, http.MethodGet, wid, vaultID)
	if err != nil {
		respond(w, nil, err)
		return
	}
	f, d, err := t.openFile(wid, vaultID)
	if err != nil {
		respond(w, nil, err)
		return
	}
	defer f.Close()
	contentType, _ := advisorspec.ContentTypeFor(d.Extension)
	filename := d.Name
	if !strings.HasSuffix(strings.ToLower(filename), "."+d.Extension) {
		filename += "." + d.Extension
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": filename}))
	http.ServeContent(w, r, "", d.ModificationDate, f)
}

// openFile opens a document's file under the lock, so that it is the file of the record
// returned; once open it stays readable even if it is replaced or deleted meanwhile.
func (t *Tenant) openFile(wid, vaultID string) (*os.File, *document, *apiError) {
	t.store.mu.RLock()
	defer t.store.mu.RUnlock()
	_, d, err := t.document(wid, vaultID)
	if err != nil {
		return nil, nil, err
	}
	if !d.Uploaded || t.opts.Now().Before(d.ReadyAt) {
		return nil, nil, errorf(http.StatusNotFound, advisorspec.MessageFileNotReady)
	}
	f, oerr := t.files.open(vaultID)
	if oerr != nil {
		return nil, nil, errorf(http.StatusInternalServerError, "Internal server error")
	}
	return f, d, nil
}

// fileStore keeps uploaded files in a directory, one per document, named by vault_id.
type fileStore struct {
	dir   string
	owned bool // made by the sandbox, removed by close
}

func newFileStore(dir string) (*fileStore, error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "advisor-sandbox-files-")
		if err != nil {
			return nil, fmt.Errorf("make a directory for uploaded files: %w", err)
		}
		return &fileStore{dir: tmp, owned: true}, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("make the directory for uploaded files %s: %w", dir, err)
	}
	return &fileStore{dir: dir}, nil
}

// path is the file of a document. Vault ids are UUIDs the sandbox made, so they are safe names.
func (fs *fileStore) path(vaultID string) string { return filepath.Join(fs.dir, vaultID) }

func (fs *fileStore) temp() (*os.File, error) { return os.CreateTemp(fs.dir, ".upload-*") }

// commit puts a received file in place of the document's, atomically.
func (fs *fileStore) commit(tmp, vaultID string) error { return os.Rename(tmp, fs.path(vaultID)) }

func (fs *fileStore) open(vaultID string) (*os.File, error) { return os.Open(fs.path(vaultID)) }

// write stores bytes as a document's file, for the demo data.
func (fs *fileStore) write(vaultID string, data []byte) error {
	return os.WriteFile(fs.path(vaultID), data, 0o600)
}

func (fs *fileStore) remove(vaultID string) error {
	if err := os.Remove(fs.path(vaultID)); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return err
	}
	return nil
}

func (fs *fileStore) close() error {
	if !fs.owned {
		return nil
	}
	return os.RemoveAll(fs.dir)
}

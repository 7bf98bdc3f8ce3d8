// Package sandbox is an in-process implementation of the Advisor service's REST interface, as
// exact as its specification: the same paths, fields, limits, validation rules, status codes
// and messages. The gateway runs against it when no upstream is configured, the tests run
// against it, and integrators run it alone (`go run . sandbox`) as a local Advisor service.
//
// It serves several firms, the specification's API users, each with its own credentials (a
// bearer token for v2, Basic credentials for v1, an SFTP login for bulk files), its own webhook
// key and its own data: a request is served from the store of the firm whose credentials it
// carries, and another firm's records answer as records that do not exist. With no Firms set
// it serves DefaultFirms: DemoFirmID with the Hartwell demo family and SecondFirmID with the
// Castellano family.
//
// State lives in memory; uploaded file bytes live in a directory on disk so that large files
// are never held in memory.
package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// Defaults of the sandbox's settings.
const (
	DefaultAccessToken      = "sandbox-token"
	DefaultBasicCredentials = "sandbox:sandbox"
	DefaultSFTPCredentials  = "sandbox:sandbox"
	DefaultUploadTTL        = 5 * time.Minute
	DefaultDownloadTTL      = 15 * time.Minute
	// maxJSONBody bounds a JSON request body; the largest valid one (a Class with notes and
	// many parties) is far smaller.
	maxJSONBody = 1 << 20
)

// Options configure a Sandbox. The zero value is a sandbox serving DefaultFirms with their demo
// data, random ids and the specification's limits.
type Options struct {
	// Firms are the firms the sandbox serves, each with its own credentials and data. Nil: a
	// first firm (DemoFirmID) that AccessToken, BasicCredentials, WebhookKey, SFTPCredentials,
	// SFTPAuthorizedKeys and Empty describe, and the second default firm (SecondFirmID) with its
	// own defaults whatever those say. With Firms set, those single-firm settings must be empty.
	Firms []Firm
	// AccessToken is the bearer token of the first firm's v2 requests when Firms is nil.
	AccessToken string
	// BasicCredentials is the "user:password" of the first firm's v1 requests when Firms is nil.
	BasicCredentials string
	// Seed, when non-zero, makes ids, signatures and the demo data the same on every run.
	Seed uint64
	// Empty starts the first firm with no data instead of the demo data when Firms is nil.
	Empty bool
	// Now is the clock; tests move it to expire presigned addresses without waiting.
	Now func() time.Time
	// MaxFileSize is the largest file an upload address accepts.
	MaxFileSize int64
	// UploadTTL is how long an upload address stays valid.
	UploadTTL time.Duration
	// DownloadTTL is how long a download address stays valid.
	DownloadTTL time.Duration
	// ProcessingDelay is how long an uploaded file stays "not ready" before Get Document reports
	// it; zero makes it ready at once.
	ProcessingDelay time.Duration
	// FileDir is where uploaded bytes are kept. Empty: a temporary directory that Close removes.
	FileDir string
	// PublicURL is the base of presigned addresses, such as "https://sandbox.example.com". Empty:
	// the scheme and Host of the request that asked for the address.
	PublicURL string
	// Logger receives one line per request. Nil: nothing is logged.
	Logger *slog.Logger
	// WebhookURL is where the sandbox POSTs every firm's webhook events, each with its firm's
	// key. Empty: it sends none, and POST /sandbox/events answers 409.
	WebhookURL string
	// WebhookKey goes in the service-api-key header of the first firm's deliveries when Firms
	// is nil.
	WebhookKey string
	// WebhookAttempts bounds the tries of one delivery; zero means DefaultWebhookAttempts.
	WebhookAttempts int
	// WebhookRetryBase is the first wait between tries, doubling up to 30s; zero means
	// DefaultWebhookRetryBase.
	WebhookRetryBase time.Duration
	// SFTPCredentials is the "user:password" of the first firm's SFTP login when Firms is nil.
	SFTPCredentials string
	// SFTPAuthorizedKeys, when set, is an authorized_keys file of public keys that log in to
	// the SFTP server as the first firm's user, when Firms is nil.
	SFTPAuthorizedKeys string
	// SessionTTL is the lifetime of an assistant session token; zero means DefaultSessionTTL.
	// Tests shorten it to see a chat session expire.
	SessionTTL time.Duration
	// EmbedOrigins are the origins of the pages that may embed the chat (scheme, host and any
	// non-default port); empty means DefaultEmbedOrigins.
	EmbedOrigins []string
	// EmbedSameOrigin lets pages on the sandbox's own origin, whatever the browser calls it,
	// embed the chat too: a gateway that serves the sandbox under MountPath on its own origin
	// sets it, since its pop-out assistant is there.
	EmbedSameOrigin bool

	// ReferralAPIKey is the x-api-key of POST /v1/refer/{partner_id}; empty means
	// DefaultReferralAPIKey.
	ReferralAPIKey string
	// ReferralSecret signs referral bodies (user-data-signature); empty means
	// DefaultReferralSecret.
	ReferralSecret string
	// Partners are the referral partner ids the sandbox knows; nil means
	// DefaultReferralPartners.
	Partners []string
}

// Sandbox is the Advisor service in process. It is an http.Handler.
type Sandbox struct {
	opts  Options
	files *fileStore // the file directory; each firm's files are in its own part of it
	// firms are the firms served, in the order Options gave them; never empty.
	firms []*Tenant

	identity *identity // signs the tokens of POST /sandbox/token
	// sessions are the assistant's session tokens: minted by the session host, accepted by
	// the chat page.
	sessions *assistantSessions

	sftpMu sync.Mutex
	sftp   *sftpd.Server // made by the first call of SFTP
	ingest *ingester     // started with sftp; ingests the bulk files it receives
}

// New returns a sandbox ready to serve every firm of opts, each with its demo data unless it
// is Empty. It refuses firms that share an id or a credential.
func New(opts Options) (*Sandbox, error) {
	firms, err := firmsOf(opts)
	if err != nil {
		return nil, err
	}
	if err := checkFirms(firms, opts.WebhookURL != ""); err != nil {
		return nil, err
	}
	if opts.ReferralAPIKey == "" {
		opts.ReferralAPIKey = DefaultReferralAPIKey
	}
	if opts.ReferralSecret == "" {
		opts.ReferralSecret = DefaultReferralSecret
	}
	if opts.Partners == nil {
		opts.Partners = DefaultReferralPartners
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = advisorspec.MaxFileSize
	}
	if opts.UploadTTL <= 0 {
		opts.UploadTTL = DefaultUploadTTL
	}
	if opts.DownloadTTL <= 0 {
		opts.DownloadTTL = DefaultDownloadTTL
	}
	if opts.PublicURL != "" {
		u, err := url.Parse(opts.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("public URL %q must be an absolute http or https URL", opts.PublicURL)
		}
		opts.PublicURL = strings.TrimSuffix(opts.PublicURL, "/")
	}
	if opts.WebhookURL != "" {
		u, err := url.Parse(opts.WebhookURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("webhook URL %q must be an absolute http or https URL", opts.WebhookURL)
		}
	}
	files, err := newFileStore(opts.FileDir)
	if err != nil {
		return nil, err
	}
	id, err := newIdentity()
	if err != nil {
		_ = files.close()
		return nil, err
	}
	sb := &Sandbox{
		opts:     opts,
		files:    files,
		identity: id,
		sessions: newAssistantSessions(opts.SessionTTL, opts.Now),
	}
	for i, f := range firms {
		t, err := sb.newTenant(i, f)
		if err != nil {
			_ = sb.Close()
			return nil, fmt.Errorf("firm %q: %w", f.ID, err)
		}
		sb.firms = append(sb.firms, t)
	}
	return sb, nil
}

// newTenant makes the i-th firm's store, file directory, signing key and webhook sender, and
// loads its demo data unless it is Empty.
func (s *Sandbox) newTenant(i int, f Firm) (*Tenant, error) {
	user, pass, _ := strings.Cut(f.BasicCredentials, ":") // checked by checkFirms
	sftpUser, sftpPass, _ := strings.Cut(f.SFTPCredentials, ":")
	files := s.files
	if dir := firmFileDir(s.files.dir, i); dir != s.files.dir {
		var err error
		if files, err = newFileStore(dir); err != nil {
			return nil, err
		}
	}
	st := newStore(firmSeed(s.opts.Seed, i))
	t := &Tenant{
		firm: f, basicUser: user, basicPass: pass, sftpUser: sftpUser, sftpPass: sftpPass,
		opts: &s.opts, store: st, files: files,
		signer: signer{key: st.ids.bytes(32)},
	}
	if !f.Empty && i < len(demoSets) {
		if err := t.loadDemo(demoSets[i]()); err != nil {
			return nil, fmt.Errorf("load demo data: %w", err)
		}
	}
	if s.opts.WebhookURL != "" {
		log := s.opts.Logger
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		t.sender = newSender(s.opts.WebhookURL, f.WebhookKey, s.opts.WebhookAttempts, s.opts.WebhookRetryBase, log.With("firm", f.ID))
	}
	return t, nil
}

// Close stops bulk file ingestion and webhook deliveries (files and events still queued are
// dropped) and removes the uploaded files when the sandbox made their directory itself.
func (s *Sandbox) Close() error {
	s.sftpMu.Lock()
	in := s.ingest
	s.sftpMu.Unlock()
	if in != nil {
		in.stop()
	}
	for _, t := range s.firms {
		if t.sender != nil {
			t.sender.stop()
		}
	}
	return s.files.close()
}

// ServeHTTP routes a request. Credentials are checked before anything about the path is looked
// at, so a caller without them learns nothing, not even whether a record exists.
func (s *Sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.opts.Now()
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	s.route(rec, r)
	if s.opts.Logger != nil {
		// The path only: the query of a presigned address carries its signature.
		s.opts.Logger.Info("sandbox request", "method", r.Method, "path", r.URL.Path,
			"status", rec.status, "duration", s.opts.Now().Sub(start))
	}
}

// MountPath is where a server that holds the sandbox (the gateway, with no upstream
// configured) serves it on its own origin. The sandbox answers below it as at its root, and its
// own endpoints (/sandbox/events, /sandbox/token, /sandbox/jwks.json) keep their paths, so a
// server can hand every request under MountPath to the sandbox unchanged.
const MountPath = "/sandbox"

// mountKey is the request's MountPath when it came below it, for the addresses the sandbox
// gives: they lead back the way the request came.
type mountKey struct{}

// mounted is the path below which the request came: MountPath or "".
func mounted(r *http.Request) string {
	p, _ := r.Context().Value(mountKey{}).(string)
	return p
}

// ownEndpoints are the sandbox's own endpoints, which are already below MountPath.
var ownEndpoints = map[string]bool{"events": true, "token": true, "jwks.json": true}

// route serves a request from the store of the firm whose credentials it carries: a bearer
// token on v2 and the identity provider, Basic credentials on v1, the signature of a presigned
// address. A request of one firm cannot name another's records: they are not in its store, and
// answer as records that do not exist. Below MountPath it serves the same, with the same
// credentials required: the mount is a second address of each endpoint, never a way around one.
func (s *Sandbox) route(w http.ResponseWriter, r *http.Request) {
	segs, ok := splitPath(r.URL.EscapedPath())
	if !ok {
		writeError(w, http.StatusBadRequest, "Bad Request")
		return
	}
	if len(segs) > 0 && "/"+segs[0] == MountPath && !(len(segs) == 2 && ownEndpoints[segs[1]]) {
		segs = segs[1:]
		r = r.WithContext(context.WithValue(r.Context(), mountKey{}, MountPath))
	}
	switch {
	case len(segs) == 0:
		s.serveIndex(w, r)
	case segs[0] == "healthz" && len(segs) == 1:
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case segs[0] == "v2":
		t := s.bearerFirm(r)
		if t == nil {
			writeError(w, http.StatusForbidden, "Access Denied")
			return
		}
		t.routeV2(w, r, segs[1:])
	case segs[0] == "v1" && len(segs) >= 2 && (segs[1] == "sdk" || segs[1] == "chat"):
		// The embed host: public files, and a chat API that takes session tokens.
		s.routeEmbed(w, r, segs[1:])

	case segs[0] == "v1" && len(segs) >= 2 && segs[1] == "refer":
		// The referral service has its own credentials (x-api-key and a signature), not v1's.
		s.serveReferral(w, r, segs[2:])
	case segs[0] == "v1":
		t := s.basicFirm(r)
		if t == nil {
			writeError(w, http.StatusForbidden, "Access Denied")
			return
		}
		t.routeV1(w, r, segs[1:])
	case segs[0] == "sandbox" && len(segs) == 2 && segs[1] == "jwks.json":
		// Public keys: anyone may read them, as a provider's JWKS.
		methods(w, r, handlers{http.MethodGet: func() (any, *apiError) { return s.identity.jwks(), nil }})
	case segs[0] == "sandbox" && len(segs) == 2 && segs[1] == "token":
		t := s.bearerFirm(r)
		if t == nil {
			writeError(w, http.StatusForbidden, "Access Denied")
			return
		}
		methods(w, r, handlers{
			http.MethodPost: withBody(w, r, func(b []byte) (any, *apiError) { return s.postToken(t, b) }),
		})
	case segs[0] == "sandbox" && len(segs) == 2 && segs[1] == "events":
		t := s.bearerFirm(r)
		if t == nil {
			writeError(w, http.StatusForbidden, "Access Denied")
			return
		}
		methods(w, r, handlers{
			http.MethodPost: withBody(w, r, func(b []byte) (any, *apiError) { return t.postEvents(b) }),
		})
	case segs[0] == uploadPrefix && len(segs) == 3:
		s.serveUpload(w, r, segs[1], segs[2])
	case segs[0] == downloadPrefix && len(segs) == 3:
		s.serveDownload(w, r, segs[1], segs[2])
	default:
		writeError(w, http.StatusNotFound, "Not Found")
	}
}

// routeV2 serves /v2/top-accounts and everything below it.
func (t *Tenant) routeV2(w http.ResponseWriter, r *http.Request, segs []string) {
	if len(segs) == 0 || segs[0] != "top-accounts" {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	segs = segs[1:]
	switch {
	case len(segs) == 0:
		methods(w, r, handlers{
			http.MethodGet:  func() (any, *apiError) { return t.listTopAccounts(r.URL.Query()) },
			http.MethodPost: withBody(w, r, func(b []byte) (any, *apiError) { return t.createTopAccount(b) }),
			http.MethodPut:  fail(http.StatusBadRequest, "Missing required parameters"),
		})
	case len(segs) == 1:
		wid := segs[0]
		methods(w, r, handlers{
			http.MethodGet: func() (any, *apiError) { return t.getTopAccount(wid) },
			http.MethodPut: withBody(w, r, func(b []byte) (any, *apiError) { return t.updateTopAccount(wid, b) }),
		})
	case segs[1] == "contacts" && len(segs) <= 3:
		scope := t.topAccountScope(segs[0])
		if len(segs) == 2 {
			t.contactCollection(w, r, scope)
		} else {
			t.contactItem(w, r, scope, segs[2])
		}
	case segs[1] == "documents" && len(segs) == 2:
		wid := segs[0]
		methods(w, r, handlers{
			http.MethodGet:    func() (any, *apiError) { return t.listDocuments(wid, r.URL.Query()) },
			http.MethodPost:   withBody(w, r, func(b []byte) (any, *apiError) { return t.uploadDocument(r, wid, b) }),
			http.MethodPatch:  fail(http.StatusBadRequest, "Bad Request"),
			http.MethodDelete: fail(http.StatusBadRequest, "Bad Request"),
		})
	case segs[1] == "documents" && len(segs) == 3:
		wid, vaultID := segs[0], segs[2]
		methods(w, r, handlers{
			http.MethodGet:    func() (any, *apiError) { return t.getDocument(r, wid, vaultID) },
			http.MethodPatch:  withBody(w, r, func(b []byte) (any, *apiError) { return t.updateDocument(r, wid, vaultID, b) }),
			http.MethodDelete: func() (any, *apiError) { return t.deleteDocument(wid, vaultID) },
		})
	case segs[1] == "documents" && len(segs) == 4 && segs[3] == "analysis":
		wid, vaultID := segs[0], segs[2]
		methods(w, r, handlers{
			http.MethodPost: withBody(w, r, func(b []byte) (any, *apiError) { return t.startAnalysis(wid, vaultID, b) }),
		})
	default:
		writeError(w, http.StatusNotFound, "Not Found")
	}
}

// routeV1 serves /v1/clients (Add Client), /v1/clients/{external_id} (Delete Client), and
// /v1/clients/{wid}/contacts and its items.
func (t *Tenant) routeV1(w http.ResponseWriter, r *http.Request, segs []string) {
	switch {
	case len(segs) == 1 && segs[0] == "clients":
		sc := t.clientScope(r, "")
		methods(w, r, handlers{
			http.MethodPost: withBody(w, r, func(b []byte) (any, *apiError) { return t.putClient(sc, b) }),
		})
		return
	case len(segs) == 2 && segs[0] == "clients":
		sc := t.clientScope(r, segs[1])
		methods(w, r, handlers{
			http.MethodDelete: func() (any, *apiError) { return t.deleteClient(sc) },
		})
		return
	}
	if len(segs) < 3 || len(segs) > 4 || segs[0] != "clients" || segs[2] != "contacts" {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	scope := t.clientScope(r, segs[1])
	if len(segs) == 3 {
		t.contactCollection(w, r, scope)
	} else {
		t.contactItem(w, r, scope, segs[3])
	}
}

func (t *Tenant) contactCollection(w http.ResponseWriter, r *http.Request, sc contactScope) {
	methods(w, r, handlers{
		http.MethodGet:  func() (any, *apiError) { return t.listContacts(sc) },
		http.MethodPost: withBody(w, r, func(b []byte) (any, *apiError) { return t.addContact(sc, b) }),
		http.MethodPut:  fail(http.StatusBadRequest, "Missing id parameter"),
	})
}

func (t *Tenant) contactItem(w http.ResponseWriter, r *http.Request, sc contactScope, id string) {
	methods(w, r, handlers{
		http.MethodGet: func() (any, *apiError) { return t.getContact(sc, id) },
		http.MethodPut: withBody(w, r, func(b []byte) (any, *apiError) { return t.updateContact(sc, id, b) }),
	})
}

// handlers maps the methods a path supports to the operations that answer them. An operation
// returns the response body or the error; methods writes either.
type handlers map[string]func() (any, *apiError)

// methods answers with the operation for the request's method, or 405 with the methods the path
// supports.
func methods(w http.ResponseWriter, r *http.Request, hs handlers) {
	if h, ok := hs[r.Method]; ok {
		v, err := h()
		respond(w, v, err)
		return
	}
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if _, ok := hs[m]; ok {
			allowed = append(allowed, m)
		}
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
}

// withBody is an operation that reads the request's JSON body and passes it to op.
func withBody(w http.ResponseWriter, r *http.Request, op func(body []byte) (any, *apiError)) func() (any, *apiError) {
	return func() (any, *apiError) {
		body, err := readJSON(w, r)
		if err != nil {
			return nil, err
		}
		return op(body)
	}
}

// fail is an operation that always answers with the same error.
func fail(status int, message string) func() (any, *apiError) {
	return func() (any, *apiError) { return nil, errorf(status, message) }
}

// splitPath splits an escaped path into unescaped segments. A trailing slash is dropped, so the
// collection paths the specification writes with one ("/v2/top-accounts/") also match without
// it; an empty segment elsewhere is kept, and reads as a missing path parameter.
func splitPath(escaped string) ([]string, bool) {
	escaped = strings.TrimPrefix(escaped, "/")
	escaped = strings.TrimSuffix(escaped, "/")
	if escaped == "" {
		return nil, true
	}
	segs := strings.Split(escaped, "/")
	for i, seg := range segs {
		u, err := url.PathUnescape(seg)
		if err != nil {
			return nil, false
		}
		segs[i] = u
	}
	return segs, true
}

// missing reports whether a path parameter is absent: empty or only spaces.
func missing(param string) bool { return strings.TrimSpace(param) == "" }

func (s *Sandbox) serveIndex(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "Advisor service sandbox")
	if p := mounted(r); p != "" {
		fmt.Fprintf(w, `
Served below %[1]s on this origin: put %[1]s before each path below (%[1]s/v2/top-accounts/);
the /sandbox/... endpoints keep their paths.
`, p)
	}
	fmt.Fprintf(w, `
Firms: %s. Each firm has its own access token, Basic credentials, SFTP login, webhook key
and data; a request sees the data of the firm whose credentials it carries, and nothing else.

v2 (top accounts, contacts by top account, documents):
  Authorization: Bearer <the firm's access token>
  GET  /v2/top-accounts/                    POST /v2/top-accounts/
  GET  /v2/top-accounts/{wid}               PUT  /v2/top-accounts/{wid}
  GET  /v2/top-accounts/{wid}/contacts/     POST /v2/top-accounts/{wid}/contacts/
  GET  /v2/top-accounts/{wid}/contacts/{id} PUT  /v2/top-accounts/{wid}/contacts/{id}
  GET  /v2/top-accounts/{wid}/documents/    POST /v2/top-accounts/{wid}/documents/
  GET, PATCH, DELETE /v2/top-accounts/{wid}/documents/{vault_id}
  POST /v2/top-accounts/{wid}/documents/{vault_id}/analysis   {"start_tax_job": true} optional

Webhook events (sent to the target the sandbox was started with, with the firm's key):
  POST /sandbox/events   an event, an array of events, or {"scenario": "onboarding", "interval": "1s"}
  POST /sandbox/token    {"advisor": "...", "team": "...", "roles": ["..."]}: a signed JWT for a
                         caller of the firm whose access token asks ("firm" may name only it)
  GET  /sandbox/jwks.json the public key those tokens are signed with

v1 (clients, and contacts by client addressed by wid or external_id):
  Authorization: Basic <the firm's user:password>
  POST   /v1/clients                    one Clients-file row: 201 added, 200 updated, with the client
  DELETE /v1/clients/{external_id}      revokes access; POST the same id again to restore it
  GET  /v1/clients/{wid}/contacts           POST /v1/clients/{wid}/contacts
  GET  /v1/clients/{wid}/contacts/{id}      PUT  /v1/clients/{wid}/contacts/{id}

Chat embed host (no credentials; the chat shows only to pages of the embed allow-list):
  GET  /v1/sdk/assistant-sdk.js             the chat SDK (protocol assistant-embed/1.0)
  GET  /v1/chat                             the chat page the SDK frames
  GET  /v1/chat/history   POST /v1/chat/messages {"text": "..."}
                                            Authorization: Bearer <session token>

Referrals (the referral service's own credentials):
  x-api-key: <referral API key>   user-data-signature: lower-case hex HMAC-SHA256 of the body
  POST /v1/refer/{partner_id}   JSON or user[firstName]=... form: {"referralToken", "url"}

Uploads: PUT the file's bytes to the upload_uri a create or update returned, with the
Content-Type of its extension, within %s.
`, strings.Join(s.FirmIDs(), ", "), s.opts.UploadTTL)
}

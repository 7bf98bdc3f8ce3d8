package sandbox

import (
	"crypto/hmac"
	"crypto/subtle"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// The referral service's demo credentials: its x-api-key and the secret its
// user-data-signature is an HMAC-SHA256 with (README.md of the spec: "one replaceable
// signer"). Both are for the sandbox only.
const (
	DefaultReferralAPIKey = "sandbox-referral-key"
	DefaultReferralSecret = "sandbox-referral-secret"
)

// DefaultReferralPartners are the partner ids the sandbox knows unless Options.Partners (the
// -partners flag) replaces them.
var DefaultReferralPartners = []string{"demo-partner", "acme-wealth"}

// serveReferral answers POST /v1/refer/{partner_id}. Its own credentials are checked first:
// the API key (401 when missing or wrong), then, over the body read within its bound, the
// signature (403 when missing or not the body's): the key says who calls, the signature that
// the body is what they sent. Only then is the partner looked up (404) and the body read (400).
func (s *Sandbox) serveReferral(w http.ResponseWriter, r *http.Request, segs []string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	key := r.Header.Get(advisorspec.ReferralKeyHeader)
	if subtle.ConstantTimeCompare([]byte(key), []byte(s.opts.ReferralAPIKey)) != 1 {
		writeError(w, http.StatusUnauthorized, "Missing or invalid x-api-key")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, advisorspec.MaxReferralBody))
	if errors.As(err, new(*http.MaxBytesError)) {
		writeError(w, http.StatusRequestEntityTooLarge, "Request body too large")
		return
	} else if err != nil {
		writeError(w, http.StatusBadRequest, "Request body could not be read")
		return
	}
	sig := r.Header.Get(advisorspec.ReferralSignatureHeader)
	want := advisorspec.SignReferral(s.opts.ReferralSecret, body)
	if !hmac.Equal([]byte(sig), []byte(want)) {
		writeError(w, http.StatusForbidden, "Missing or invalid user-data-signature")
		return
	}
	if len(segs) != 1 || missing(segs[0]) || !slices.Contains(s.opts.Partners, segs[0]) {
		writeError(w, http.StatusNotFound, "Partner not found")
		return
	}
	ref, apiErr := readReferral(r, body)
	if apiErr != nil {
		writeJSON(w, apiErr.status, apiErr)
		return
	}
	token := s.first().store.ids.newID() // 36 characters
	q := url.Values{"referral": {token}, "product": {advisorspec.ReferralProducts[ref.Product-1]}}
	writeJSON(w, http.StatusOK, advisorspec.ReferralAnswer{
		ReferralToken: token,
		URL:           baseURL(s.opts.PublicURL, r) + "/onboarding/" + url.PathEscape(segs[0]) + "?" + q.Encode(),
	})
}

// readReferral reads the body as JSON (also when no Content-Type is given) or as the bracketed
// form encoding.
func readReferral(r *http.Request, body []byte) (advisorspec.Referral, *apiError) {
	mt := "application/json"
	if ct := r.Header.Get("Content-Type"); ct != "" {
		var err error
		if mt, _, err = mime.ParseMediaType(ct); err != nil {
			mt = ""
		}
	}
	var ref advisorspec.Referral
	var specErr *advisorspec.Error
	switch mt {
	case "application/json":
		ref, specErr = advisorspec.ParseReferral(body)
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return ref, errorf(http.StatusBadRequest, "Request body is not a valid form")
		}
		ref, specErr = advisorspec.ParseReferralForm(form)
	default:
		return ref, errorf(http.StatusUnsupportedMediaType, "Content-Type must be application/json or application/x-www-form-urlencoded")
	}
	if specErr != nil {
		return ref, errorf(http.StatusBadRequest, specErr.Message)
	}
	return ref, nil
}

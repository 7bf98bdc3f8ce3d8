package callerauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// acceptedAlgs are the only signature algorithms a token may use. Naming them is what stops
// alg "none" and the key-confusion attack (HS256 with the RSA public key as the HMAC secret):
// the parser refuses any other alg before it looks for a key.
var acceptedAlgs = []string{jwt.SigningMethodRS256.Alg(), jwt.SigningMethodES256.Alg(), jwt.SigningMethodEdDSA.Alg()}

// Caller is who a verified token says is asking.
type Caller struct {
	AdvisorID string
	FirmID    string
	// TeamID is the caller's advisor team, from the optional team claim; empty without one.
	TeamID string
	// Roles are the caller's roles, from the optional roles claim.
	Roles []string
	// Subject is the token's sub, whatever claim the advisor id comes from.
	Subject   string
	ExpiresAt time.Time
}

// errKeysUnavailable marks a key lookup that failed because the JWKS could not be fetched,
// as opposed to a kid the fetched JWKS does not hold.
var errKeysUnavailable = errors.New("JWKS unavailable")

// fetchError is why a JWKS fetch failed. It is the gateway's own words (the URL, a status, a
// network error), so unlike golang-jwt's errors it can go in an Error's Detail for the log.
type fetchError struct{ err error }

func (e *fetchError) Error() string { return e.err.Error() }
func (e *fetchError) Unwrap() error { return e.err }

// Verifier checks callers' tokens against a JWKS it keeps cached. It is safe for concurrent
// use. Keys are fetched at start, re-read every RefreshInterval, and re-read when a token names
// a kid the cache lacks, at most once every MinRefreshInterval whatever asks.
//
// Why not keyfunc's own HTTP storage (keyfunc.NewDefaultOverrideCtx): it reads the JWKS body
// without a size limit, turns a failed refresh into "key not found" (so a JWKS outage could not
// be told from a forged kid, and answered 503 rather than 401), makes a caller wait on its rate
// limiter for up to RateLimitWaitMax, a wait that also bounds the fetch itself, and its refresh
// goroutine cannot be waited for by Close. So the fetching is here, and keyfunc (over a
// jwkset.Storage of this package) does what it is good at: kid lookup, the JWK's alg and use,
// and the public key for golang-jwt.
type Verifier struct {
	cfg       Config
	transport *http.Transport
	client    *http.Client
	parser    *jwt.Parser
	keyfunc   keyfunc.Keyfunc
	keys      *jwkset.MemoryJWKSet

	mu          sync.Mutex
	loaded      bool      // a JWKS has been fetched at least once
	lastErr     error     // the last fetch's error; nil after a success
	lastAttempt time.Time // start of the last fetch, for MinRefreshInterval
	inflight    *flight   // the fetch under way, which concurrent askers share

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// flight is one JWKS fetch; done is closed when err is set.
type flight struct {
	done chan struct{}
	err  error
}

// New validates cfg, fetches the JWKS once and starts the background refresh, which lives until
// ctx ends or Close is called.
//
// An unreachable or invalid JWKS does not fail New: the gateway starts, Ready reports the fault
// for /readyz (so a load balancer sends it no traffic), tokens are answered 503 keys_unavailable,
// and the fetch is retried every MinRefreshInterval until it succeeds. A gateway that crashed
// instead would restart in a loop during an identity-provider outage and take its health
// endpoints and metrics down with it. Only an invalid Config is an error.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()

	// An own transport, so Close can drop its idle connections and leave no goroutine behind.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	v := &Verifier{
		cfg:       cfg,
		transport: transport,
		client:    &http.Client{Transport: transport, Timeout: cfg.FetchTimeout},
		keys:      jwkset.NewMemoryStorage(),
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(acceptedAlgs),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	v.parser = jwt.NewParser(opts...)
	kf, err := keyfunc.New(keyfunc.Options{
		Storage: keyStore{MemoryJWKSet: v.keys, v: v},
		// A key published for encryption is not one to verify signatures with; a key that does
		// not say is taken for signing, as most providers leave use out.
		UseWhitelist: []jwkset.USE{jwkset.UseSig, ""},
	})
	if err != nil {
		return nil, fmt.Errorf("callerauth: %w", err)
	}
	v.keyfunc = kf

	// The first fetch's outcome is kept for Ready; see the doc comment for why it is not fatal.
	_, _ = v.refresh(ctx)

	ctx, v.cancel = context.WithCancel(ctx)
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		v.refreshLoop(ctx)
	}()
	return v, nil
}

// Close stops the background refresh, waits for it to end and closes idle JWKS connections.
func (v *Verifier) Close() error {
	v.cancel()
	v.wg.Wait()
	v.transport.CloseIdleConnections()
	return nil
}

// Ready reports whether tokens can be verified: nil once a JWKS has been fetched. Before that it
// tries a fetch (subject to MinRefreshInterval, so a probe every second costs no more) and
// returns the fetch's error, naming the URL. After the first success it stays nil through later
// JWKS outages: the cached keys still verify every token signed by a known key, and taking
// every replica out of the load balancer because the identity provider blinked would be worse.
func (v *Verifier) Ready(ctx context.Context) error {
	if v.isLoaded() {
		return nil
	}
	_, _ = v.refresh(ctx)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.loaded {
		return nil
	}
	if v.lastErr == nil {
		return fmt.Errorf("callerauth: no JWKS yet from %s: the first fetch is under way", v.cfg.JWKSURL)
	}
	return fmt.Errorf("callerauth: no JWKS yet from %s: %w", v.cfg.JWKSURL, v.lastErr)
}

// FromRequest verifies the bearer token of r's Authorization header. A missing header, another
// scheme and an empty token are told apart by ErrNoAuthorization, ErrNotBearer and
// ErrEmptyToken.
func (v *Verifier) FromRequest(r *http.Request) (Caller, error) {
	return v.FromHeader(r.Context(), r.Header)
}

// FromHeader is FromRequest for headers that came some other way, such as a WebSocket's
// connection_init payload merged into its upgrade request's headers.
func (v *Verifier) FromHeader(ctx context.Context, h http.Header) (Caller, error) {
	values := h.Values("Authorization")
	switch {
	case len(values) == 0 || values[0] == "":
		return Caller{}, &Error{Reason: ReasonMissing, Err: ErrNoAuthorization}
	case len(values) > 1:
		return Caller{}, &Error{Reason: ReasonMalformed, Detail: "more than one Authorization header"}
	}
	scheme, token, _ := strings.Cut(values[0], " ")
	// Auth schemes are case-insensitive (RFC 9110 section 11.1). Another scheme is answered
	// like no credentials at all (RFC 6750 section 3.1): a challenge without an error code.
	if !strings.EqualFold(scheme, "Bearer") {
		return Caller{}, &Error{Reason: ReasonMissing, Detail: ErrNotBearer.Error(), Err: ErrNotBearer}
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return Caller{}, &Error{Reason: ReasonMalformed, Detail: ErrEmptyToken.Error(), Err: ErrEmptyToken}
	}
	return v.Verify(ctx, token)
}

// Verify checks token's signature, times, issuer and audience, and returns the caller its
// claims name. Every error is an *Error.
func (v *Verifier) Verify(ctx context.Context, token string) (Caller, error) {
	if token == "" {
		return Caller{}, &Error{Reason: ReasonMissing, Err: ErrEmptyToken}
	}
	if len(token) > v.cfg.MaxTokenBytes {
		return Caller{}, &Error{
			Reason: ReasonMalformed,
			Detail: fmt.Sprintf("%d bytes, over the limit of %d", len(token), v.cfg.MaxTokenBytes),
			Err:    ErrTokenTooLarge,
		}
	}
	claims := jwt.MapClaims{}
	parsed, err := v.parser.ParseWithClaims(token, claims, v.keyfunc.KeyfuncCtx(ctx))
	if err != nil {
		return Caller{}, refusal(parsed, err)
	}

	c := Caller{}
	if c.AdvisorID, err = stringClaim(claims, v.cfg.AdvisorClaim); err != nil {
		return Caller{}, err
	}
	if c.FirmID, err = stringClaim(claims, v.cfg.FirmClaim); err != nil {
		return Caller{}, err
	}
	if c.TeamID, err = optionalStringClaim(claims, v.cfg.TeamClaim); err != nil {
		return Caller{}, err
	}
	if c.Roles, err = rolesClaim(claims, v.cfg.RolesClaim); err != nil {
		return Caller{}, err
	}
	// The parser has made sure these are well-typed, so the errors cannot happen here.
	c.Subject, _ = claims.GetSubject()
	if exp, _ := claims.GetExpirationTime(); exp != nil {
		c.ExpiresAt = exp.Time
	}
	return c, nil
}

// stringClaim is the named claim, which must be a non-blank string.
func stringClaim(claims jwt.MapClaims, name string) (string, error) {
	s, ok := claims[name].(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", &Error{Reason: ReasonMissingClaim, Detail: fmt.Sprintf("claim %q must be a non-empty string", name)}
	}
	return s, nil
}

// optionalStringClaim is the named claim, "" when absent; present, it must be a non-blank string.
func optionalStringClaim(claims jwt.MapClaims, name string) (string, error) {
	if _, ok := claims[name]; !ok {
		return "", nil
	}
	return stringClaim(claims, name)
}

// maxRoles bounds the roles read from one token: a role list is short, and the token's size
// already bounds it, but nothing below should loop over thousands.
const maxRoles = 64

// rolesClaim is the named claim as a list of roles: absent, one string (space-separated, as
// OAuth's scope is), or a list of strings.
func rolesClaim(claims jwt.MapClaims, name string) ([]string, error) {
	bad := &Error{Reason: ReasonMalformed, Detail: fmt.Sprintf("claim %q must be a string or a list of at most %d strings", name, maxRoles)}
	switch v := claims[name].(type) {
	case nil:
		return nil, nil
	case string:
		roles := strings.Fields(v)
		if len(roles) > maxRoles {
			return nil, bad
		}
		return roles, nil
	case []any:
		if len(v) > maxRoles {
			return nil, bad
		}
		roles := make([]string, 0, len(v))
		for _, r := range v {
			s, ok := r.(string)
			if !ok {
				return nil, bad
			}
			roles = append(roles, s)
		}
		return roles, nil
	default:
		return nil, bad
	}
}

// refusal turns golang-jwt's error into an *Error. The order matters where several apply:
// the key and signature first (nothing else is trustworthy until the signature is), then the
// times, then iss and aud.
func refusal(parsed *jwt.Token, err error) *Error {
	e := &Error{Err: err}
	switch {
	case errors.Is(err, errKeysUnavailable):
		e.Reason = ReasonKeysUnavailable
		if fe := (*fetchError)(nil); errors.As(err, &fe) {
			e.Detail = fe.Error()
		}
	case errors.Is(err, jwkset.ErrKeyNotFound):
		e.Reason = ReasonUnknownKey
		if parsed != nil {
			if kid, ok := parsed.Header["kid"].(string); ok {
				e.Detail = fmt.Sprintf("kid %q", truncate(kid, 64))
			}
		}
	case errors.Is(err, jwt.ErrTokenMalformed):
		e.Reason = ReasonMalformed
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		e.Reason = ReasonBadSignature
		if parsed != nil {
			if alg, ok := parsed.Header["alg"].(string); ok && !accepted(alg) {
				e.Detail = fmt.Sprintf("alg %q is not one of %s", truncate(alg, 16), strings.Join(acceptedAlgs, ", "))
			}
		}
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		// golang-jwt's own words name the claim (exp, or iss or aud when they are configured)
		// and nothing of the token.
		e.Reason, e.Detail = ReasonMissingClaim, err.Error()
	case errors.Is(err, jwt.ErrTokenExpired):
		e.Reason = ReasonExpired
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		e.Reason = ReasonNotYetValid
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		e.Reason = ReasonWrongIssuer
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		e.Reason = ReasonWrongAudience
	default:
		// A claim of the wrong type (exp as a string, say) and anything golang-jwt adds later.
		e.Reason = ReasonMalformed
	}
	return e
}

func accepted(alg string) bool {
	for _, a := range acceptedAlgs {
		if a == alg {
			return true
		}
	}
	return false
}

// truncate bounds what a token can make the log hold.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (v *Verifier) isLoaded() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.loaded
}

// refreshLoop re-reads the JWKS every RefreshInterval, and every MinRefreshInterval while none
// has been fetched yet, until ctx ends.
func (v *Verifier) refreshLoop(ctx context.Context) {
	for {
		wait := v.cfg.RefreshInterval
		if !v.isLoaded() {
			wait = v.cfg.MinRefreshInterval
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		_, _ = v.refreshWith(ctx, ctx)
	}
}

// refresh fetches the JWKS unless one was started less than MinRefreshInterval ago; concurrent
// callers share a fetch under way rather than each starting one. fetched is false when nothing
// was fetched because of the limit. The fetch does not end with the asking request, since
// others may be waiting on it; FetchTimeout bounds it.
func (v *Verifier) refresh(ctx context.Context) (fetched bool, err error) {
	return v.refreshWith(ctx, context.WithoutCancel(ctx))
}

// refreshWith is refresh with the fetch's own context: the background loop passes its own, so
// that Close cancels a fetch under way instead of waiting up to FetchTimeout for it.
func (v *Verifier) refreshWith(ctx, fetchCtx context.Context) (fetched bool, err error) {
	v.mu.Lock()
	if f := v.inflight; f != nil {
		v.mu.Unlock()
		select {
		case <-f.done:
			return true, f.err
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	if !v.lastAttempt.IsZero() && time.Since(v.lastAttempt) < v.cfg.MinRefreshInterval {
		v.mu.Unlock()
		return false, nil
	}
	f := &flight{done: make(chan struct{})}
	v.inflight = f
	v.lastAttempt = time.Now()
	v.mu.Unlock()

	if err := v.fetch(fetchCtx); err != nil {
		f.err = &fetchError{err}
	}

	v.mu.Lock()
	v.inflight = nil
	v.lastErr = f.err
	if f.err == nil {
		v.loaded = true
	}
	v.mu.Unlock()
	close(f.done)
	return true, f.err
}

// fetch reads the JWKS and, when it holds at least one usable key, replaces the cache with it.
// A failed fetch keeps the keys cached before it.
func (v *Verifier) fetch(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, v.cfg.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.cfg.JWKSURL, nil)
	if err != nil {
		return fmt.Errorf("JWKS request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return fmt.Errorf("JWKS request: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("JWKS request to %s: status %d", v.cfg.JWKSURL, resp.StatusCode)
	}
	// One byte over the limit is enough to know the response is too large.
	body, err := io.ReadAll(io.LimitReader(resp.Body, v.cfg.MaxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("JWKS response from %s: %w", v.cfg.JWKSURL, err)
	}
	if int64(len(body)) > v.cfg.MaxJWKSBytes {
		return fmt.Errorf("JWKS response from %s is over the limit of %d bytes", v.cfg.JWKSURL, v.cfg.MaxJWKSBytes)
	}
	var set jwkset.JWKSMarshal
	if err := json.Unmarshal(body, &set); err != nil {
		return fmt.Errorf("JWKS response from %s is not a JWK Set: %w", v.cfg.JWKSURL, err)
	}
	keys := make([]jwkset.JWK, 0, len(set.Keys))
	var skipped []error
	for _, m := range set.Keys {
		// Public parts only: a provider that publishes private material by mistake must not
		// make the gateway hold it.
		k, err := jwkset.NewJWKFromMarshal(m, jwkset.JWKMarshalOptions{}, jwkset.JWKValidateOptions{})
		if err != nil {
			// One key the gateway cannot use (an RSA-OAEP key, an Ed448 key) must not keep it
			// from the others.
			skipped = append(skipped, fmt.Errorf("kid %q: %w", m.KID, err))
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return fmt.Errorf("JWKS from %s holds no usable key: %w", v.cfg.JWKSURL, errors.Join(skipped...))
	}
	return v.keys.KeyReplaceAll(ctx, keys)
}

// keyStore is the jwkset.Storage keyfunc reads keys from: the cache, which a read of an unknown
// kid refreshes (within MinRefreshInterval) before it gives up.
type keyStore struct {
	*jwkset.MemoryJWKSet
	v *Verifier
}

func (s keyStore) KeyRead(ctx context.Context, kid string) (jwkset.JWK, error) {
	if err := s.ensureLoaded(ctx); err != nil {
		return jwkset.JWK{}, err
	}
	k, err := s.MemoryJWKSet.KeyRead(ctx, kid)
	if !errors.Is(err, jwkset.ErrKeyNotFound) {
		return k, err
	}
	// The provider may have rotated in a new key since the last fetch.
	fetched, ferr := s.v.refresh(ctx)
	switch {
	case ferr != nil:
		// The token may be signed by a key the provider just published; the gateway cannot
		// tell, so the fault is its own.
		return jwkset.JWK{}, fmt.Errorf("%w: %w", errKeysUnavailable, ferr)
	case !fetched:
		return jwkset.JWK{}, err
	}
	return s.MemoryJWKSet.KeyRead(ctx, kid)
}

// KeyReadAll serves tokens without a kid, which keyfunc tries against every key.
func (s keyStore) KeyReadAll(ctx context.Context) ([]jwkset.JWK, error) {
	if err := s.ensureLoaded(ctx); err != nil {
		return nil, err
	}
	return s.MemoryJWKSet.KeyReadAll(ctx)
}

// ensureLoaded fails with errKeysUnavailable when no JWKS has ever been fetched, after trying
// once more (within MinRefreshInterval).
func (s keyStore) ensureLoaded(ctx context.Context) error {
	if s.v.isLoaded() {
		return nil
	}
	_, _ = s.v.refresh(ctx)
	s.v.mu.Lock()
	defer s.v.mu.Unlock()
	if s.v.loaded {
		return nil
	}
	if s.v.lastErr == nil {
		// A fetch started by someone else is still under way.
		return errKeysUnavailable
	}
	return fmt.Errorf("%w: %w", errKeysUnavailable, s.v.lastErr)
}

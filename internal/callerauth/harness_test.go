package callerauth_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"

	"github.com/advisorhq/gateway/internal/callerauth"
)

const (
	testIssuer   = "https://idp.test"
	testAudience = "advisor-gateway"
)

// testKey is a signing key of the test's identity provider.
type testKey struct {
	kid    string
	method jwt.SigningMethod
	priv   crypto.Signer
}

// The keys are made once: RSA key generation is slow enough to matter on two shared cores.
var testKeys = sync.OnceValue(func() map[string]testKey {
	rsaKey := func() *rsa.PrivateKey {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		return k
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	return map[string]testKey{
		"rsa": {kid: "rsa-1", method: jwt.SigningMethodRS256, priv: rsaKey()},
		"ec":  {kid: "ec-1", method: jwt.SigningMethodES256, priv: ecKey},
		"ed":  {kid: "ed-1", method: jwt.SigningMethodEdDSA, priv: edKey},
		// rotated is published only when a test rotates the JWKS.
		"rotated": {kid: "rsa-2", method: jwt.SigningMethodRS256, priv: rsaKey()},
		// impostor claims rsa-1's kid but is not the key the JWKS holds.
		"impostor": {kid: "rsa-1", method: jwt.SigningMethodRS256, priv: rsaKey()},
	}
})

func key(name string) testKey { return testKeys()[name] }

// idp is the test's identity provider: a JWKS endpoint whose keys and health the test sets, and
// which counts its requests.
type idp struct {
	srv  *httptest.Server
	hits atomic.Int64

	mu     sync.Mutex
	body   []byte
	status int
	delay  time.Duration
}

// newIDP serves a JWKS of keys (by name in testKeys); it is closed when the test ends.
func newIDP(t *testing.T, keys ...string) *idp {
	t.Helper()
	p := &idp{status: http.StatusOK}
	p.publish(t, keys...)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		p.mu.Lock()
		body, status, delay := p.body, p.status, p.delay
		p.mu.Unlock()
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *idp) url() string { return p.srv.URL + "/.well-known/jwks.json" }

// publish replaces the JWKS with the public halves of the named keys.
func (p *idp) publish(t *testing.T, names ...string) {
	t.Helper()
	p.serve(http.StatusOK, p.jwks(t, names...))
}

// jwks is a JWK Set of the public halves of the named keys.
func (p *idp) jwks(t *testing.T, names ...string) []byte {
	t.Helper()
	var set jwkset.JWKSMarshal
	for _, n := range names {
		k := key(n)
		jwk, err := jwkset.NewJWKFromKey(k.priv.Public(), jwkset.JWKOptions{
			Metadata: jwkset.JWKMetadataOptions{KID: k.kid, ALG: jwkset.ALG(k.method.Alg()), USE: jwkset.UseSig},
		})
		if err != nil {
			t.Fatalf("JWK of %s: %v", n, err)
		}
		set.Keys = append(set.Keys, jwk.Marshal())
	}
	body, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// serve makes the endpoint answer status and body from now on.
func (p *idp) serve(status int, body []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status, p.body = status, body
}

func (p *idp) setDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// config is a Verifier's configuration for p, with the issuer and audience checked.
func (p *idp) config() callerauth.Config {
	return callerauth.Config{
		JWKSURL:      p.url(),
		Issuer:       testIssuer,
		Audience:     testAudience,
		FetchTimeout: 2 * time.Second,
	}
}

// newVerifier starts a Verifier that is closed when the test ends.
func newVerifier(t *testing.T, cfg callerauth.Config) *callerauth.Verifier {
	t.Helper()
	v, err := callerauth.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = v.Close() })
	return v
}

// goodClaims are claims every check accepts; tests change or delete what they test.
func goodClaims() jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"iss":     testIssuer,
		"aud":     testAudience,
		"sub":     "adv-42",
		"firm_id": "firm-7",
		"iat":     now.Unix(),
		"nbf":     now.Unix(),
		"exp":     now.Add(10 * time.Minute).Unix(),
	}
}

// sign makes a token of claims signed with the named key, its kid in the header.
func sign(t *testing.T, name string, claims jwt.MapClaims) string {
	t.Helper()
	k := key(name)
	tok := jwt.NewWithClaims(k.method, claims)
	tok.Header["kid"] = k.kid
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatalf("sign with %s: %v", name, err)
	}
	return s
}

// signWithKid is sign with another kid in the header.
func signWithKid(t *testing.T, name, kid string, claims jwt.MapClaims) string {
	t.Helper()
	k := key(name)
	tok := jwt.NewWithClaims(k.method, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatalf("sign with %s: %v", name, err)
	}
	return s
}

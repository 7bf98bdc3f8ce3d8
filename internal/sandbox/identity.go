package sandbox

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"
)

// The sandbox is also an identity provider for the gateway's callers, so that a gateway run
// with no configuration verifies tokens as it would a real provider's: it publishes its
// public key as a JWK Set (GET /sandbox/jwks.json) and mints signed JWTs for whichever
// advisor and firm it is asked for (POST /sandbox/token, with the sandbox's bearer token).
const (
	// TokenIssuer and TokenAudience are the iss and aud of the tokens the sandbox mints.
	TokenIssuer   = "advisor-sandbox"
	TokenAudience = "advisor-gateway"
	// TokenTTL is how long a minted token lasts.
	TokenTTL = time.Hour
	// DemoFirmID is the firm of the demo advisor (DefaultAdvisorID), who a gateway running
	// the embedded sandbox takes a caller without a token for.
	DemoFirmID = "firm-001"
	// maxTokenID bounds the advisor and firm ids a token carries.
	maxTokenID = 255
)

// identity is the sandbox's signing key. It is made at each start: tokens of an earlier run
// stop verifying, as a provider's do when it rotates its key.
type identity struct {
	key ed25519.PrivateKey
	kid string
}

func newIdentity() (*identity, error) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("make the sandbox's token signing key: %w", err)
	}
	sum := sha256.Sum256(pub)
	return &identity{key: key, kid: base64.RawURLEncoding.EncodeToString(sum[:12])}, nil
}

// jwks is the public key as a JWK Set (RFC 8037 for Ed25519 keys).
func (id *identity) jwks() map[string]any {
	pub := id.key.Public().(ed25519.PublicKey)
	return map[string]any{"keys": []map[string]any{{
		"kty": "OKP", "crv": "Ed25519", "x": base64.RawURLEncoding.EncodeToString(pub),
		"kid": id.kid, "alg": "EdDSA", "use": "sig",
	}}}
}

// mint signs a JWT (RFC 7519, EdDSA) for advisor at firm, valid from now for TokenTTL.
func (id *identity) mint(advisor, firm string, now time.Time) (string, time.Time, error) {
	exp := now.Add(TokenTTL).Truncate(time.Second)
	header, err := json.Marshal(map[string]string{"alg": "EdDSA", "typ": "JWT", "kid": id.kid})
	if err != nil {
		return "", exp, err
	}
	claims, err := json.Marshal(map[string]any{
		"iss": TokenIssuer, "aud": TokenAudience, "sub": advisor, "firm_id": firm,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": exp.Unix(),
	})
	if err != nil {
		return "", exp, err
	}
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(claims)
	sig := ed25519.Sign(id.key, []byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), exp, nil
}

// tokenRequest is POST /sandbox/token's body.
type tokenRequest struct {
	Advisor *string `json:"advisor"`
	Firm    *string `json:"firm"`
}

// postToken mints a token for the advisor and firm the body names.
func (s *Sandbox) postToken(body []byte) (any, *apiError) {
	var req tokenRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, errorf(http.StatusBadRequest, `The body must be {"advisor": "<advisor id>", "firm": "<firm id>"}: `+err.Error())
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"advisor", req.Advisor}, {"firm", req.Firm}} {
		switch {
		case f.v == nil || *f.v == "":
			return nil, errorf(http.StatusBadRequest, f.name+" is required")
		case utf8.RuneCountInString(*f.v) > maxTokenID:
			return nil, errorf(http.StatusBadRequest, fmt.Sprintf("%s must be at most %d characters", f.name, maxTokenID))
		}
	}
	token, exp, err := s.identity.mint(*req.Advisor, *req.Firm, s.opts.Now())
	if err != nil {
		return nil, errorf(http.StatusInternalServerError, "The token could not be signed")
	}
	return map[string]string{"token": token, "expires_at": exp.UTC().Format(time.RFC3339)}, nil
}

// decodeStrict decodes one JSON object into v, refusing members v does not have.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("one object only")
	}
	return nil
}

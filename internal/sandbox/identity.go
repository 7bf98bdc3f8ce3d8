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
// advisor it is asked for, of the firm whose bearer token asks (POST /sandbox/token).
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

// maxTokenRoles bounds the roles one minted token carries.
const maxTokenRoles = 32

// tokenClaims are who a minted token speaks for: an advisor of a firm, and optionally the
// advisor's team and roles, which a gateway may use to scope what the advisor sees.
type tokenClaims struct {
	Advisor, Firm string
	Team          string   // "" : no team_id claim
	Roles         []string // nil: no roles claim
}

// mint signs a JWT (RFC 7519, EdDSA) with the claims, valid from now for TokenTTL.
func (id *identity) mint(c tokenClaims, now time.Time) (string, time.Time, error) {
	exp := now.Add(TokenTTL).Truncate(time.Second)
	header, err := json.Marshal(map[string]string{"alg": "EdDSA", "typ": "JWT", "kid": id.kid})
	if err != nil {
		return "", exp, err
	}
	claims := map[string]any{
		"iss": TokenIssuer, "aud": TokenAudience, "sub": c.Advisor, "firm_id": c.Firm,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": exp.Unix(),
	}
	if c.Team != "" {
		claims["team_id"] = c.Team
	}
	if c.Roles != nil {
		claims["roles"] = c.Roles
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", exp, err
	}
	signing := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	sig := ed25519.Sign(id.key, []byte(signing))
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig), exp, nil
}

// tokenRequest is POST /sandbox/token's body.
type tokenRequest struct {
	Advisor *string  `json:"advisor"`
	Firm    *string  `json:"firm"`
	Team    *string  `json:"team"`
	Roles   []string `json:"roles"`
}

// tokenBodyShape is what the body must look like, for the message that refuses another.
const tokenBodyShape = `{"advisor": "<advisor id>", "firm": "<firm id, optional>", "team": "<team id, optional>", "roles": ["<role>", ...] optional}`

// postToken mints a token for the advisor the body names at firm t, whose access token the
// request carried. A firm mints tokens for its own callers only: the body's firm may be left
// out, and naming another firm is refused as any request beyond the credentials' reach.
func (s *Sandbox) postToken(t *Tenant, body []byte) (any, *apiError) {
	var req tokenRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, errorf(http.StatusBadRequest, "The body must be "+tokenBodyShape+": "+err.Error())
	}
	// The shape of the body is checked before the firm, so that a malformed request is told so
	// whichever firm it names.
	if req.Advisor == nil || *req.Advisor == "" {
		return nil, errorf(http.StatusBadRequest, "advisor is required")
	}
	if len(req.Roles) > maxTokenRoles {
		return nil, errorf(http.StatusBadRequest, fmt.Sprintf("roles must have at most %d entries", maxTokenRoles))
	}
	type field struct {
		name string
		v    *string // nil: left out
	}
	fields := []field{{"advisor", req.Advisor}, {"firm", req.Firm}, {"team", req.Team}}
	for i := range req.Roles {
		fields = append(fields, field{fmt.Sprintf("roles[%d]", i), &req.Roles[i]})
	}
	for _, f := range fields {
		switch {
		case f.v == nil:
		case *f.v == "" && f.name == "firm":
			return nil, errorf(http.StatusBadRequest, "firm must not be empty: leave it out for the firm of the access token")
		case *f.v == "":
			return nil, errorf(http.StatusBadRequest, f.name+" must not be empty")
		case utf8.RuneCountInString(*f.v) > maxTokenID:
			return nil, errorf(http.StatusBadRequest, fmt.Sprintf("%s must be at most %d characters", f.name, maxTokenID))
		}
	}
	if req.Firm != nil && *req.Firm != t.firm.ID {
		return nil, errorf(http.StatusForbidden, "Access Denied")
	}
	c := tokenClaims{Advisor: *req.Advisor, Firm: t.firm.ID, Roles: req.Roles}
	if req.Team != nil {
		c.Team = *req.Team
	}
	token, exp, err := s.identity.mint(c, s.opts.Now())
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

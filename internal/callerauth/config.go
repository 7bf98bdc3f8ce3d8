// Package callerauth verifies the bearer JWTs that callers present to the gateway against the
// identity provider's JWKS, and says who the caller is: the advisor and the firm named in the
// token's claims. It knows nothing of HTTP routes or GraphQL; the transports call FromRequest or
// Verify and turn an *Error into a 401 (or a 503) with Error.WWWAuthenticate.
package callerauth

import (
	"errors"
	"fmt"
	"net/url"
	"time"
)

// The defaults, declared once; New fills a zero field with these.
const (
	DefaultAdvisorClaim = "sub"
	DefaultFirmClaim    = "firm_id"
	// DefaultTeamClaim names the claim with the caller's team, which v1 calls act for.
	DefaultTeamClaim = "team_id"
	// DefaultRolesClaim names the claim with the caller's roles: a string or a list of them.
	DefaultRolesClaim = "roles"
	// DefaultLeeway absorbs clock skew between the identity provider and the gateway.
	DefaultLeeway = 30 * time.Second
	// DefaultFetchTimeout bounds one JWKS request, connection and body included.
	DefaultFetchTimeout = 10 * time.Second
	// DefaultRefreshInterval re-reads the JWKS even when no unknown kid asks for it, so a key the
	// identity provider withdraws stops being accepted within this long.
	DefaultRefreshInterval = time.Hour
	// DefaultMinRefreshInterval is the least time between two JWKS requests, whatever asks for
	// them: a flood of tokens with made-up kids costs the identity provider one request per
	// interval, not one per token.
	DefaultMinRefreshInterval = 30 * time.Second
	// DefaultMaxTokenBytes: real tokens are well under 2 KiB; a larger one is refused before any
	// base64 or JSON decoding is spent on it.
	DefaultMaxTokenBytes = 8 << 10
	// DefaultMaxJWKSBytes: a JWKS of a dozen RSA keys is under 20 KiB.
	DefaultMaxJWKSBytes = 256 << 10
)

// Config says where the keys are and what a valid token must say. The caller maps its settings
// onto it (the names in Validate's messages are those settings); zero fields take the defaults.
type Config struct {
	// JWKSURL is the identity provider's JWK Set (AUTH_JWKS_URL). Required.
	JWKSURL string
	// Issuer, when set, must equal the token's iss (AUTH_ISSUER).
	Issuer string
	// Audience, when set, must be one of the token's aud (AUTH_AUDIENCE).
	Audience string
	// AdvisorClaim names the claim holding the advisor's external id (AUTH_ADVISOR_CLAIM).
	AdvisorClaim string
	// FirmClaim names the claim holding the firm's external id (AUTH_FIRM_CLAIM).
	FirmClaim string
	// TeamClaim names the optional claim holding the caller's advisor team (AUTH_TEAM_CLAIM).
	TeamClaim string
	// RolesClaim names the optional claim holding the caller's roles (AUTH_ROLES_CLAIM).
	RolesClaim string
	// Leeway is the clock skew allowed on exp, nbf and iat.
	Leeway time.Duration
	// FetchTimeout bounds one JWKS request.
	FetchTimeout time.Duration
	// RefreshInterval is how often the JWKS is re-read in the background.
	RefreshInterval time.Duration
	// MinRefreshInterval is the least time between two JWKS requests (unknown kids, Ready, retries).
	MinRefreshInterval time.Duration
	// MaxTokenBytes is the largest token looked at.
	MaxTokenBytes int
	// MaxJWKSBytes is the largest JWKS response accepted.
	MaxJWKSBytes int64
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.AdvisorClaim == "" {
		c.AdvisorClaim = DefaultAdvisorClaim
	}
	if c.FirmClaim == "" {
		c.FirmClaim = DefaultFirmClaim
	}
	if c.TeamClaim == "" {
		c.TeamClaim = DefaultTeamClaim
	}
	if c.RolesClaim == "" {
		c.RolesClaim = DefaultRolesClaim
	}
	if c.Leeway == 0 {
		c.Leeway = DefaultLeeway
	}
	if c.FetchTimeout == 0 {
		c.FetchTimeout = DefaultFetchTimeout
	}
	if c.RefreshInterval == 0 {
		c.RefreshInterval = DefaultRefreshInterval
	}
	if c.MinRefreshInterval == 0 {
		c.MinRefreshInterval = DefaultMinRefreshInterval
	}
	if c.MaxTokenBytes == 0 {
		c.MaxTokenBytes = DefaultMaxTokenBytes
	}
	if c.MaxJWKSBytes == 0 {
		c.MaxJWKSBytes = DefaultMaxJWKSBytes
	}
	return c
}

// Validate reports every setting that is wrong, each by the name an operator sets it by, so
// start-up can stop with a message that says what to fix. Zero fields are valid: they take the
// defaults.
func (c Config) Validate() error {
	var errs []error
	if c.JWKSURL == "" {
		errs = append(errs, errors.New("AUTH_JWKS_URL is required"))
	} else if u, err := url.Parse(c.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		// http is allowed for the embedded sandbox and for an identity provider on loopback.
		errs = append(errs, fmt.Errorf("AUTH_JWKS_URL must be an absolute http or https URL, got %q", c.JWKSURL))
	}
	d := c.withDefaults()
	if d.AdvisorClaim == d.FirmClaim {
		errs = append(errs, fmt.Errorf("AUTH_ADVISOR_CLAIM and AUTH_FIRM_CLAIM both name the claim %q; an advisor and a firm are different ids", d.AdvisorClaim))
	}
	for _, s := range []struct {
		name string
		d    time.Duration
	}{
		{"leeway", c.Leeway},
		{"JWKS fetch timeout", c.FetchTimeout},
		{"JWKS refresh interval", c.RefreshInterval},
		{"JWKS minimum refresh interval", c.MinRefreshInterval},
	} {
		if s.d < 0 {
			errs = append(errs, fmt.Errorf("the %s must not be negative, got %s", s.name, s.d))
		}
	}
	if c.MaxTokenBytes < 0 {
		errs = append(errs, fmt.Errorf("the token size limit must not be negative, got %d", c.MaxTokenBytes))
	}
	if c.MaxJWKSBytes < 0 {
		errs = append(errs, fmt.Errorf("the JWKS size limit must not be negative, got %d", c.MaxJWKSBytes))
	}
	return errors.Join(errs...)
}

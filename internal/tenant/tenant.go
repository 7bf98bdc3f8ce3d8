// Package tenant says which firms the gateway serves and who may act for whom within them.
//
// A firm is a tenant: the Advisor service's API user is a firm, so each firm the gateway serves
// has its own upstream credentials, its own webhook key and its own bulk-file login, and a caller
// acts only within the firm its token names. Within a firm, a caller acts as the advisor and team
// in its token; acting for another advisor or team needs a role the operator names.
//
// The transports admit a caller (Admit) once its token is verified: the firm it names must be
// one the gateway serves, or the request is refused before any upstream call. Everything after
// reads the firm from the context (FromContext), so no argument of a request can choose it.
package tenant

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Firm is one firm the gateway serves, with the credentials the gateway uses on its behalf.
// None of them ever leaves the gateway.
type Firm struct {
	// ID is the firm's id as callers' tokens carry it (the firm claim).
	ID string
	// AccessToken is the bearer token of the v2 endpoints.
	AccessToken string
	// BasicCredentials is the "user:password" of the v1 endpoints; empty leaves v1 calls
	// unauthenticated, which the service refuses.
	BasicCredentials string
	// WebhookKey is the service-api-key of the firm's webhook deliveries: it tells which firm an
	// event belongs to.
	WebhookKey string
	// SFTP is the firm's bulk-file login; zero when bulk loads are off.
	SFTP SFTPLogin
}

// SFTPLogin is a firm's login on the bulk-file SFTP server: a password or a private key file.
type SFTPLogin struct {
	User     string
	Password string
	KeyFile  string
}

// String names the firm and nothing else, so that a Firm printed by mistake shows no secret.
func (f *Firm) String() string { return "firm " + f.ID }

// Directory is the firms the gateway serves. It is read-only once made.
type Directory struct {
	firms []*Firm
	byID  map[string]*Firm
}

// NewDirectory checks firms and makes their directory: at least one firm, ids and every
// credential distinct, since a credential shared by two firms could not say whose data it reads.
// The errors name the firm (never the secret).
func NewDirectory(firms []Firm) (*Directory, error) {
	if len(firms) == 0 {
		return nil, errors.New("no firm to serve")
	}
	d := &Directory{byID: make(map[string]*Firm, len(firms))}
	seen := map[string]string{} // "kind\x00secret" -> firm id
	var errs []error
	distinct := func(id, kind, secret string) {
		if secret == "" {
			return
		}
		k := kind + "\x00" + secret
		if other, dup := seen[k]; dup {
			errs = append(errs, fmt.Errorf("firm %q: its %s is also firm %q's: each firm needs its own", id, kind, other))
			return
		}
		seen[k] = id
	}
	for i := range firms {
		f := firms[i]
		switch {
		case strings.TrimSpace(f.ID) == "":
			errs = append(errs, fmt.Errorf("firm %d: the id is empty", i+1))
			continue
		case d.byID[f.ID] != nil:
			errs = append(errs, fmt.Errorf("firm %q: listed twice", f.ID))
			continue
		case f.AccessToken == "":
			errs = append(errs, fmt.Errorf("firm %q: the access token is empty", f.ID))
		}
		distinct(f.ID, "access token", f.AccessToken)
		distinct(f.ID, "basic credentials", f.BasicCredentials)
		distinct(f.ID, "webhook key", f.WebhookKey)
		distinct(f.ID, "SFTP user", f.SFTP.User)
		d.firms = append(d.firms, &f)
		d.byID[f.ID] = &f
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return d, nil
}

// Lookup is the firm of this id, if the gateway serves it.
func (d *Directory) Lookup(id string) (*Firm, bool) {
	f, ok := d.byID[id]
	return f, ok
}

// Firms are the firms served, in the order they were configured.
func (d *Directory) Firms() []*Firm { return slices.Clone(d.firms) }

// Only is the one firm of a one-firm directory, nil when it serves several.
func (d *Directory) Only() *Firm {
	if len(d.firms) == 1 {
		return d.firms[0]
	}
	return nil
}

type firmKey struct{}

// WithFirm returns ctx acting for firm f.
func WithFirm(ctx context.Context, f *Firm) context.Context {
	return context.WithValue(ctx, firmKey{}, f)
}

// FromContext is the firm the request acts for; ok is false when no firm was admitted.
func FromContext(ctx context.Context) (*Firm, bool) {
	f, ok := ctx.Value(firmKey{}).(*Firm)
	return f, ok && f != nil
}

// ErrNoFirm is the cause of a call made outside any firm: a bug of the gateway's (every path
// that reaches data admits its caller first), refused rather than served with some firm's
// credentials.
var ErrNoFirm = errors.New("no firm: the request was not admitted")

// Refusal is why a caller of a verified token may not go on: its token names no firm the
// gateway serves, or it asks to act for someone it may not. It answers 403 (WebSocket 4403) with
// the code FORBIDDEN, and never names a firm the gateway serves.
type Refusal struct {
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Status is the HTTP status of the refusal.
func (r *Refusal) Status() int { return http.StatusForbidden }

// WWWAuthenticate is empty: another token of the same caller would not help.
func (r *Refusal) WWWAuthenticate() string { return "" }

package sandbox

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// Firm is one firm the sandbox serves. The specification's API user is a firm ("top accounts
// carry the caller firm's identifier"): its credentials say which firm a request is for, and
// the firm's data is all that request can reach. Every credential must be the firm's own, so
// that a request can belong to one firm only.
type Firm struct {
	// ID is the firm's identifier, the firm_id of the caller tokens POST /sandbox/token mints
	// with the firm's access token.
	ID string
	// AccessToken is the bearer token of the firm's v2 requests.
	AccessToken string
	// BasicCredentials is the "user:password" of the firm's v1 requests; the user is the
	// firm's own.
	BasicCredentials string
	// WebhookKey goes in the service-api-key header of every delivery of the firm's events, so
	// that the receiver can tell the firms apart: with a webhook target, no two firms may share
	// one (an empty key counts as a key).
	WebhookKey string
	// SFTPCredentials is the "user:password" of the firm's SFTP login for bulk files; a file its
	// user uploads is ingested into the firm's data. Empty: the firm has no SFTP login.
	SFTPCredentials string
	// SFTPAuthorizedKeys, when set, is an authorized_keys file of public keys that log in as
	// the firm's SFTP user.
	SFTPAuthorizedKeys string
	// AdvisorID and TeamID are the advisor and team a client added with neither belongs to
	// while the firm reaches none yet. Empty: DefaultAdvisorID and DefaultTeamID.
	AdvisorID, TeamID string
	// Empty starts the firm with no data instead of its demo data. The first firm's demo data is
	// the Hartwell family and the second's the Castellano family; later firms have none.
	Empty bool
}

// The second firm a sandbox serves when Options.Firms is nil, with its demo data.
const (
	SecondFirmID           = "firm-002"
	SecondAccessToken      = "sandbox-token-002"
	SecondBasicCredentials = "sandbox-002:sandbox-002"
	SecondSFTPCredentials  = "sandbox-002:sandbox-002"
	SecondWebhookKey       = "sandbox-webhook-key-002"
	SecondAdvisorID        = "adv-201"
	SecondTeamID           = "team-east"
)

// DefaultFirms are the firms a sandbox serves when Options sets neither Firms nor any
// single-firm setting: DemoFirmID with the default credentials (and no webhook key, as
// Options.WebhookKey defaults to none) and SecondFirmID with its own.
func DefaultFirms() []Firm {
	return []Firm{
		{
			ID: DemoFirmID, AccessToken: DefaultAccessToken, BasicCredentials: DefaultBasicCredentials,
			SFTPCredentials: DefaultSFTPCredentials, AdvisorID: DefaultAdvisorID, TeamID: DefaultTeamID,
		},
		{
			ID: SecondFirmID, AccessToken: SecondAccessToken, BasicCredentials: SecondBasicCredentials,
			WebhookKey: SecondWebhookKey, SFTPCredentials: SecondSFTPCredentials,
			AdvisorID: SecondAdvisorID, TeamID: SecondTeamID,
		},
	}
}

// firmsOf is the firms opts describe: Firms as given, or, when Firms is nil, a first firm that
// the single-firm settings describe (defaults where they are empty) and the second default firm.
func firmsOf(opts Options) ([]Firm, error) {
	if opts.Firms == nil {
		first, second := DefaultFirms()[0], DefaultFirms()[1]
		if opts.AccessToken != "" {
			first.AccessToken = opts.AccessToken
		}
		if opts.BasicCredentials != "" {
			first.BasicCredentials = opts.BasicCredentials
		}
		if opts.SFTPCredentials != "" {
			first.SFTPCredentials = opts.SFTPCredentials
		}
		first.WebhookKey, first.SFTPAuthorizedKeys, first.Empty = opts.WebhookKey, opts.SFTPAuthorizedKeys, opts.Empty
		return []Firm{first, second}, nil
	}
	if len(opts.Firms) == 0 {
		return nil, errors.New("firms: name at least one firm, or leave Firms nil for the default firms")
	}
	for _, set := range []struct {
		name string
		set  bool
	}{
		{"AccessToken", opts.AccessToken != ""}, {"BasicCredentials", opts.BasicCredentials != ""},
		{"WebhookKey", opts.WebhookKey != ""}, {"SFTPCredentials", opts.SFTPCredentials != ""},
		{"SFTPAuthorizedKeys", opts.SFTPAuthorizedKeys != ""}, {"Empty", opts.Empty},
	} {
		if set.set {
			return nil, fmt.Errorf("firms: Options.%s describes the only firm of a sandbox without Firms; with Firms, set it on each Firm", set.name)
		}
	}
	firms := make([]Firm, len(opts.Firms))
	copy(firms, opts.Firms)
	for i := range firms {
		if firms[i].AdvisorID == "" {
			firms[i].AdvisorID = DefaultAdvisorID
		}
		if firms[i].TeamID == "" {
			firms[i].TeamID = DefaultTeamID
		}
	}
	return firms, nil
}

// checkFirms refuses a firm without an id or credentials, malformed credentials, and any
// credential or id two firms share, naming the firms. Webhook keys are compared only when
// events are sent.
func checkFirms(firms []Firm, webhooks bool) error {
	owners := map[string]string{} // "what:value" to the firm that has it
	claim := func(f Firm, what, value string) error {
		key := what + "\x00" + value
		if other, taken := owners[key]; taken {
			return fmt.Errorf("firm %q: its %s is also firm %q's; each firm needs its own", f.ID, what, other)
		}
		owners[key] = f.ID
		return nil
	}
	for _, f := range firms {
		switch {
		case missing(f.ID):
			return errors.New("firms: every firm needs an ID")
		case utf8.RuneCountInString(f.ID) > maxTokenID:
			return fmt.Errorf("firm %.40q...: an ID must be at most %d characters", f.ID, maxTokenID)
		case f.AccessToken == "" || strings.ContainsAny(f.AccessToken, " \t\r\n"):
			return fmt.Errorf("firm %q: an access token without spaces is required", f.ID)
		}
		user, _, ok := strings.Cut(f.BasicCredentials, ":")
		if !ok || user == "" {
			return fmt.Errorf(`firm %q: basic credentials must have the form "user:password"`, f.ID)
		}
		if f.SFTPCredentials != "" || f.SFTPAuthorizedKeys != "" {
			if user, pass, ok := strings.Cut(f.SFTPCredentials, ":"); !ok || user == "" || pass == "" {
				return fmt.Errorf(`firm %q: SFTP credentials must have the form "user:password"`, f.ID)
			}
		}
		if err := claim(f, "ID", f.ID); err != nil {
			return err
		}
		if err := claim(f, "access token", f.AccessToken); err != nil {
			return err
		}
		if err := claim(f, "basic credentials user", user); err != nil {
			return err
		}
		if sftpUser, _, _ := strings.Cut(f.SFTPCredentials, ":"); sftpUser != "" {
			// Compared without case: each user's files live in a directory of its name.
			if err := claim(f, "SFTP user", strings.ToLower(sftpUser)); err != nil {
				return err
			}
		}
		if webhooks {
			if err := claim(f, "webhook key", f.WebhookKey); err != nil {
				return err
			}
		}
	}
	return nil
}

// firmSeed is the seed of the i-th firm's ids: the sandbox's for the first, so that a seeded
// single-firm sandbox makes the ids it always made, and a different one for each other firm.
func firmSeed(seed uint64, i int) uint64 {
	if seed == 0 || i == 0 {
		return seed
	}
	s := seed + uint64(i)*0x9e3779b97f4a7c15
	if s == 0 {
		s = 1
	}
	return s
}

// firmFileDir is where the i-th firm's document files live: the first firm's in the file
// directory itself, where a single-firm sandbox always kept them, the others' each in a
// directory of their own. Document files are named by UUID, so these names cannot collide.
func firmFileDir(root string, i int) string {
	if i == 0 {
		return root
	}
	return filepath.Join(root, "firm-"+strconv.Itoa(i+1))
}

// Tenant is one firm's side of the sandbox: its data, its signing key for presigned addresses,
// and its webhook deliveries. Every request is served by the tenant of the firm whose
// credentials it carries, and a tenant reaches only its own store.
type Tenant struct {
	firm                 Firm
	basicUser, basicPass string
	sftpUser, sftpPass   string   // "" when the firm has no SFTP login
	opts                 *Options // the sandbox's, shared by every tenant and never changed after New
	store                *store
	files                *fileStore
	signer               signer
	sender               *sender // nil without a webhook target
}

// ID is the firm's identifier.
func (t *Tenant) ID() string { return t.firm.ID }

// Tenant returns the firm with id, for tests and tools that seed or inspect one firm's data.
func (s *Sandbox) Tenant(id string) (*Tenant, bool) {
	for _, t := range s.firms {
		if t.firm.ID == id {
			return t, true
		}
	}
	return nil, false
}

// FirmIDs lists the firms the sandbox serves, the first firm first.
func (s *Sandbox) FirmIDs() []string {
	out := make([]string, len(s.firms))
	for i, t := range s.firms {
		out[i] = t.firm.ID
	}
	return out
}

// first is the first firm, which the single-firm methods (TopAccountWID, AddClient,
// LinkedCard) act on.
func (s *Sandbox) first() *Tenant { return s.firms[0] }

// bearerFirm is the firm whose access token the request carries, or nil. Every firm's token is
// compared in full, so the time taken says nothing about which firm, if any, came close.
func (s *Sandbox) bearerFirm(r *http.Request) *Tenant {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	token = strings.TrimSpace(token)
	var found *Tenant
	for _, t := range s.firms {
		if subtle.ConstantTimeCompare([]byte(token), []byte(t.firm.AccessToken)) == 1 {
			found = t
		}
	}
	return found
}

// basicFirm is the firm whose Basic credentials the request carries, or nil. Both parts are
// compared for every firm, so the time taken does not tell which one failed.
func (s *Sandbox) basicFirm(r *http.Request) *Tenant {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return nil
	}
	var found *Tenant
	for _, t := range s.firms {
		userOK := subtle.ConstantTimeCompare([]byte(user), []byte(t.basicUser))
		passOK := subtle.ConstantTimeCompare([]byte(pass), []byte(t.basicPass))
		if userOK&passOK == 1 {
			found = t
		}
	}
	return found
}

// TopAccountWID is the wid of the first firm's top account with externalID, if there is one.
func (s *Sandbox) TopAccountWID(externalID string) (string, bool) {
	return s.first().TopAccountWID(externalID)
}

// AddClient adds a client of the first firm; see Tenant.AddClient.
func (s *Sandbox) AddClient(c Client) (string, error) { return s.first().AddClient(c) }

// LinkedCard is Tenant.LinkedCard of the first firm.
func (s *Sandbox) LinkedCard(clientID, peopleID string) (advisorspec.Contact, bool) {
	return s.first().LinkedCard(clientID, peopleID)
}

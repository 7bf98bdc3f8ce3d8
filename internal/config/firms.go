package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/advisorhq/gateway/internal/tenant"
)

// maxFirmsFile bounds FIRMS_FILE: a thousand firms' credentials are well under it.
const maxFirmsFile = 4 << 20

// perFirmSettings are the settings of a one-firm gateway that FIRMS_FILE holds for each firm.
var perFirmSettings = []string{"ADVISOR_FIRM", "ADVISOR_ACCESS_TOKEN", "ADVISOR_BASIC_CREDENTIALS", "WEBHOOK_API_KEY",
	"BULK_SFTP_USER", "BULK_SFTP_PASSWORD", "BULK_SFTP_KEY_FILE"}

// loadFirms works out the firms the gateway serves and returns what is wrong with them: against
// the Advisor service, FIRMS_FILE's, or the one firm ADVISOR_FIRM names with the credentials of
// ADVISOR_ACCESS_TOKEN, ADVISOR_BASIC_CREDENTIALS, WEBHOOK_API_KEY and BULK_SFTP_*'s login.
// With the embedded sandbox it sets none: the gateway serves the sandbox's own firms.
func loadFirms(getenv func(string) string, cfg *Gateway) []error {
	given := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if getenv(n) != "" {
				out = append(out, n)
			}
		}
		return out
	}
	if cfg.Sandboxed() {
		if g := given("FIRMS_FILE", "ADVISOR_FIRM", "ADVISOR_ACCESS_TOKEN", "ADVISOR_BASIC_CREDENTIALS"); len(g) > 0 {
			return []error{fmt.Errorf("ADVISOR_BASE_URL: required when %s is set (without it the gateway runs its embedded sandbox and serves the sandbox's firms)", strings.Join(g, ", "))}
		}
		return nil
	}
	if cfg.FirmsFile != "" {
		if g := given(perFirmSettings...); len(g) > 0 {
			return []error{fmt.Errorf("FIRMS_FILE: holds every firm's credentials; unset %s", strings.Join(g, ", "))}
		}
		firms, err := readFirmsFile(cfg.FirmsFile, cfg.Bulk.Configured())
		if err != nil {
			return []error{fmt.Errorf("FIRMS_FILE: %w", err)}
		}
		cfg.Firms = firms
		return nil
	}
	var errs []error
	if cfg.AdvisorFirm == "" {
		errs = append(errs, errors.New("ADVISOR_FIRM: required when ADVISOR_BASE_URL is set: the firm (its callers' firm claim) whose API user ADVISOR_ACCESS_TOKEN is; several firms go in FIRMS_FILE"))
	}
	if cfg.AdvisorAccessToken == "" {
		errs = append(errs, errors.New("ADVISOR_ACCESS_TOKEN: required when ADVISOR_BASE_URL is set"))
	}
	if cfg.WebhookAPIKey == "" {
		errs = append(errs, errors.New("WEBHOOK_API_KEY: required when ADVISOR_BASE_URL is set: webhook deliveries are authenticated with it"))
	}
	if len(errs) > 0 {
		return errs
	}
	cfg.Firms = []tenant.Firm{{
		ID: cfg.AdvisorFirm, AccessToken: cfg.AdvisorAccessToken, BasicCredentials: cfg.AdvisorBasicCredentials,
		WebhookKey: cfg.WebhookAPIKey,
		SFTP:       tenant.SFTPLogin{User: cfg.Bulk.User, Password: cfg.Bulk.Password, KeyFile: cfg.Bulk.KeyFile},
	}}
	return nil
}

// firmsFile is FIRMS_FILE's format.
type firmsFile struct {
	Firms []firmEntry `json:"firms"`
}

type firmEntry struct {
	ID               string `json:"id"`
	AccessToken      string `json:"access_token"`
	BasicCredentials string `json:"basic_credentials"`
	WebhookAPIKey    string `json:"webhook_api_key"`
	BulkSFTPUser     string `json:"bulk_sftp_user"`
	BulkSFTPPassword string `json:"bulk_sftp_password"`
	BulkSFTPKeyFile  string `json:"bulk_sftp_key_file"`
}

// readFirmsFile reads and checks the firms of path. Its errors name the firm and the field,
// never a credential.
func readFirmsFile(path string, bulk bool) ([]tenant.Firm, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFirmsFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxFirmsFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxFirmsFile)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var file firmsFile
	if err := dec.Decode(&file); err != nil {
		// encoding/json's messages name the field and offset, never a value.
		return nil, fmt.Errorf("%s is not a firms file (%w); see docs/authorization.md", path, err)
	}
	if len(file.Firms) == 0 {
		return nil, fmt.Errorf("%s lists no firm under \"firms\"", path)
	}
	var errs []error
	firms := make([]tenant.Firm, 0, len(file.Firms))
	for i, e := range file.Firms {
		name := fmt.Sprintf("firm %d", i+1)
		if e.ID != "" {
			name = fmt.Sprintf("firm %q", e.ID)
		}
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s: "+format, append([]any{name}, args...)...))
		}
		if strings.TrimSpace(e.ID) == "" {
			bad("id is required: the value of its callers' firm claim")
		}
		if e.AccessToken == "" {
			bad("access_token is required")
		} else if strings.ContainsAny(e.AccessToken, " \t\r\n") {
			bad("access_token must not contain spaces")
		}
		if e.BasicCredentials != "" {
			if user, pass, ok := strings.Cut(e.BasicCredentials, ":"); !ok || user == "" || pass == "" {
				bad(`basic_credentials must have the form "user:password"`)
			}
		}
		if len(e.WebhookAPIKey) < 16 {
			bad("webhook_api_key is required, at least 16 characters: it is what tells the firm's webhook deliveries from another's")
		}
		switch {
		case !bulk && (e.BulkSFTPUser != "" || e.BulkSFTPPassword != "" || e.BulkSFTPKeyFile != ""):
			bad("bulk_sftp_* need BULK_SFTP_ADDR, the server bulk files go to")
		case bulk && e.BulkSFTPUser == "":
			bad("bulk_sftp_user is required with BULK_SFTP_ADDR")
		case bulk && (e.BulkSFTPPassword == "") == (e.BulkSFTPKeyFile == ""):
			bad("give bulk_sftp_password or bulk_sftp_key_file, one of them")
		}
		firms = append(firms, tenant.Firm{
			ID: e.ID, AccessToken: e.AccessToken, BasicCredentials: e.BasicCredentials, WebhookKey: e.WebhookAPIKey,
			SFTP: tenant.SFTPLogin{User: e.BulkSFTPUser, Password: e.BulkSFTPPassword, KeyFile: e.BulkSFTPKeyFile},
		})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Distinct ids and credentials: the directory's own check, here so start-up names it.
	if _, err := tenant.NewDirectory(firms); err != nil {
		return nil, err
	}
	return firms, nil
}

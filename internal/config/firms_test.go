package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/config"
)

func TestFirmsAreOneNamedFirmOrAFirmsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	two := write("two.json", `{"firms":[
		{"id":"firm-a","access_token":"tok-a","basic_credentials":"ua:pa","webhook_api_key":"key-a-0123456789"},
		{"id":"firm-b","access_token":"tok-b","webhook_api_key":"key-b-0123456789"}]}`)
	sharedToken := write("shared.json", `{"firms":[
		{"id":"firm-a","access_token":"same","webhook_api_key":"key-a-0123456789"},
		{"id":"firm-b","access_token":"same","webhook_api_key":"key-b-0123456789"}]}`)
	unknownField := write("unknown.json", `{"firms":[{"id":"firm-a","acces_token":"t","webhook_api_key":"key-a-0123456789"}]}`)
	noKey := write("nokey.json", `{"firms":[{"id":"firm-a","access_token":"t"}]}`)
	empty := write("empty.json", `{"firms":[]}`)
	withLogins := write("logins.json", `{"firms":[
		{"id":"firm-a","access_token":"tok-a","webhook_api_key":"key-a-0123456789","bulk_sftp_user":"a","bulk_sftp_password":"pa"},
		{"id":"firm-b","access_token":"tok-b","webhook_api_key":"key-b-0123456789","bulk_sftp_user":"b"}]}`)

	base := map[string]string{"ADVISOR_BASE_URL": "https://advisor.example", "AUTH_JWKS_URL": "https://idp.example/jwks.json"}
	tests := []struct {
		name    string
		env     map[string]string
		firms   []string // ids served, when accepted
		wantErr []string // every one must be in the error
	}{
		{"one named firm", map[string]string{"ADVISOR_FIRM": "firm-a", "ADVISOR_ACCESS_TOKEN": "t", "WEBHOOK_API_KEY": "0123456789abcdef"}, []string{"firm-a"}, nil},
		{"one firm must be named", map[string]string{"ADVISOR_ACCESS_TOKEN": "t", "WEBHOOK_API_KEY": "0123456789abcdef"}, nil, []string{"ADVISOR_FIRM: required"}},
		{"a firms file", map[string]string{"FIRMS_FILE": two}, []string{"firm-a", "firm-b"}, nil},
		{"a firms file replaces the one firm's settings", map[string]string{"FIRMS_FILE": two, "ADVISOR_ACCESS_TOKEN": "t", "WEBHOOK_API_KEY": "0123456789abcdef"}, nil,
			[]string{"FIRMS_FILE: holds every firm's credentials; unset ADVISOR_ACCESS_TOKEN, WEBHOOK_API_KEY"}},
		{"a token shared by two firms", map[string]string{"FIRMS_FILE": sharedToken}, nil, []string{`firm "firm-b": its access token is also firm "firm-a"'s`}},
		{"a misspelt field", map[string]string{"FIRMS_FILE": unknownField}, nil, []string{`unknown field "acces_token"`}},
		{"a firm without a webhook key", map[string]string{"FIRMS_FILE": noKey}, nil, []string{`firm "firm-a": webhook_api_key is required`}},
		{"no firm listed", map[string]string{"FIRMS_FILE": empty}, nil, []string{"lists no firm"}},
		{"a missing file", map[string]string{"FIRMS_FILE": filepath.Join(dir, "nope.json")}, nil, []string{"FIRMS_FILE: open"}},
		{"several firms cannot go unauthenticated", map[string]string{"FIRMS_FILE": two, "AUTH_JWKS_URL": "", "AUTH_DISABLED": "true"}, nil,
			[]string{"AUTH_DISABLED: true with several firms"}},
		{"each firm's bulk login", map[string]string{"FIRMS_FILE": withLogins, "BULK_SFTP_ADDR": "sftp.example:22",
			"BULK_SFTP_HOST_KEY_FINGERPRINT": "SHA256:" + strings.Repeat("A", 43)}, nil,
			[]string{`firm "firm-b": give bulk_sftp_password or bulk_sftp_key_file`}},
		{"the embedded sandbox serves its own firms", map[string]string{"ADVISOR_BASE_URL": "", "AUTH_JWKS_URL": "", "ADVISOR_FIRM": "firm-a"}, nil,
			[]string{"ADVISOR_BASE_URL: required when ADVISOR_FIRM is set"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tc.env {
				env[k] = v
			}
			cfg, err := config.Load(func(k string) string { return env[k] })
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("accepted, want an error with %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				for _, secret := range []string{"tok-a", "tok-b", "same", "key-a-0123456789"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("error %q shows the secret %q", err, secret)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			var ids []string
			for _, f := range cfg.Firms {
				ids = append(ids, f.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tc.firms, ",") {
				t.Errorf("firms %v, want %v", ids, tc.firms)
			}
		})
	}
}

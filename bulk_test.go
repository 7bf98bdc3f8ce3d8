package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sftpupload"
)

// The embedded sandbox takes bulk files over SFTP at the address the gateway prints, and the
// host key the gateway prints is the one it presents: an uploader that trusts nothing else
// gets both sample files in, Clients first.
func TestTheEmbeddedSandboxTakesBulkFilesOverSFTP(t *testing.T) {
	t.Parallel()
	lines := startedLines(t, nil, map[string]string{"ADDR": "127.0.0.1:0"}, "gateway serving", "its bulk files:")
	m := regexp.MustCompile(`sftp://(\w+)@(\S+) \(password (\S+), host key (SHA256:\S+)\)`).FindStringSubmatch(lines[1])
	if m == nil {
		t.Fatalf("the start-up line %q does not give the SFTP server's address, login and host key", lines[1])
	}
	up, err := sftpupload.New(sftpupload.Config{Addr: m[2], User: m[1], Password: m[3], Dir: ".", HostKeyFingerprint: m[4]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var files []sftpupload.File
	for _, f := range []struct {
		kind sftpupload.Kind
		path string
	}{{sftpupload.People, "testdata/bulk/people.jsonl"}, {sftpupload.Clients, "testdata/bulk/clients.jsonl"}} {
		body, err := os.Open(f.path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = body.Close() })
		files = append(files, sftpupload.File{Kind: f.kind, Body: body})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := up.Upload(ctx, files...)
	if err != nil {
		t.Fatalf("upload the sample files: %v", err)
	}
	if len(got) != 2 || got[0].Kind != sftpupload.Clients || !strings.HasPrefix(got[0].Name, "clients-") || !strings.HasPrefix(got[1].Name, "people-") {
		t.Fatalf("uploaded %+v, want the Clients file, then the People file", got)
	}
}

// `go run . sandbox` says where its SFTP server is and which host key it presents, and names
// the setting its password came from rather than printing it.
func TestTheSandboxCommandTakesBulkFilesWithTheConfiguredLogin(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SANDBOX_SFTP_CREDENTIALS": "bob:hunter22"}
	lines := startedLines(t, []string{"sandbox", "-addr", "127.0.0.1:0", "-sftp-addr", "127.0.0.1:0"}, env, "bulk:")
	if strings.Contains(lines[0], "hunter22") || !strings.Contains(lines[0], "$SANDBOX_SFTP_CREDENTIALS") {
		t.Fatalf("the start-up line %q prints the password, or does not say where it came from", lines[0])
	}
	m := regexp.MustCompile(`sftp://(\S+) .*host key (SHA256:\S+)`).FindStringSubmatch(lines[0])
	if m == nil {
		t.Fatalf("the start-up line %q does not give the SFTP server's address and host key", lines[0])
	}
	for _, tc := range []struct {
		name, password string
		ok             bool
	}{{"the configured password", "hunter22", true}, {"the default password", "sandbox", false}} {
		t.Run(tc.name, func(t *testing.T) {
			up, err := sftpupload.New(sftpupload.Config{Addr: m[1], User: "bob", Password: tc.password, Dir: ".", HostKeyFingerprint: m[2]}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = up.Upload(ctx, sftpupload.File{Kind: sftpupload.Clients, Body: strings.NewReader(`{"id":"C-9","first_name":"A","last_name":"B"}` + "\n")})
			if (err == nil) != tc.ok {
				t.Fatalf("upload: %v, want success %v", err, tc.ok)
			}
		})
	}
}

package sftpd_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// OpenSSH's sftp, which operators use, uploads under a .part name and renames (with its
// posix-rename extension) as the gateway does; it trusts the server through known_hosts.
func TestOpenSSHClient(t *testing.T) {
	sftpTool, err := exec.LookPath("sftp")
	if err != nil {
		t.Skip("no OpenSSH sftp on PATH")
	}
	dir := t.TempDir()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "id_ed25519")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, ssh.MarshalAuthorizedKey(sshPub), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, sftpd.Config{AuthorizedKeysFile: authorized})

	host, port, _ := net.SplitHostPort(s.addr)
	hostKey, err := os.ReadFile(filepath.Join(s.fileDir, "ssh_host_ed25519_key"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(hostKey)
	if err != nil {
		t.Fatal(err)
	}
	knownHosts := filepath.Join(dir, "known_hosts")
	line := "[" + host + "]:" + port + " " + string(ssh.MarshalAuthorizedKey(signer.PublicKey()))
	if err := os.WriteFile(knownHosts, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "rows.jsonl")
	if err := os.WriteFile(local, []byte(`{"id":"c1","first_name":"Ann","last_name":"Lee"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	batch := filepath.Join(dir, "batch")
	script := strings.Join([]string{
		"mkdir incoming",
		"cd incoming",
		"put " + local + " " + clientsName + ".part",
		"rename " + clientsName + ".part " + clientsName,
		"ls -1",
		"cd ..",
		"put " + local + " notes.txt",
		"rm notes.txt",
		"", // a final newline
	}, "\n")
	if err := os.WriteFile(batch, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, sftpTool, "-b", batch, "-P", port, "-i", keyFile,
		"-o", "UserKnownHostsFile="+knownHosts, "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
		"-o", "IdentitiesOnly=yes", "-F", "/dev/null", testUser+"@"+host)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sftp: %v\n%s", err, out)
	}
	var names []string
	for _, f := range s.files() {
		names = append(names, f.Name)
	}
	if want := []string{"/incoming/" + clientsName}; !slices.Equal(names, want) {
		t.Errorf("got handed over %q, want %q\nsftp said:\n%s", names, want, out)
	}
	if data, err := os.ReadFile(filepath.Join(s.root, "incoming", clientsName)); err != nil || !strings.Contains(string(data), `"Ann"`) {
		t.Errorf("got %q, %v, want the uploaded rows", data, err)
	}
}

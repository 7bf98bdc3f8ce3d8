package sandboxtest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

// ServeSFTP serves sb's SFTP server on a free loopback port until the test ends, and returns its
// address and the fingerprint of its host key.
func ServeSFTP(t testing.TB, sb *sandbox.Sandbox) (addr, fingerprint string) {
	t.Helper()
	srv, err := sb.SFTP()
	if err != nil {
		t.Fatalf("SFTP: got %v, want no error", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: got %v, want nil after cancel", err)
		}
	})
	return ln.Addr().String(), srv.Fingerprint()
}

// DialSFTP logs in to the SFTP server at addr as user with password, trusting only the host key
// of fingerprint. The client is closed when the test ends.
func DialSFTP(t testing.TB, addr, fingerprint, user, password string) (*sftp.Client, error) {
	t.Helper()
	conn, err := ssh.Dial("tcp", addr, &ssh.ClientConfig{
		User: user,
		Auth: []ssh.AuthMethod{ssh.Password(password)},
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			if ssh.FingerprintSHA256(key) != fingerprint {
				return errors.New("unknown host key")
			}
			return nil
		},
		Timeout: 5 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	c, err := sftp.NewClient(conn)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	t.Cleanup(func() { _ = c.Close(); _ = conn.Close() })
	return c, nil
}

// Bulk uploads bulk files over SFTP as the gateway does and reads the results the sandbox writes
// beside them.
type Bulk struct {
	*sftp.Client
	// Next is the timestamp the next file's name carries; each upload moves it a second on.
	Next time.Time
}

// NewBulk uploads through c, naming its first file for 2026-11-23 21:00:00 UTC.
func NewBulk(c *sftp.Client) *Bulk {
	return &Bulk{Client: c, Next: time.Date(2026, 11, 23, 21, 0, 0, 0, time.UTC)}
}

// Upload writes a bulk file of kind under a .part name and renames it into place, and returns
// its name.
func (b *Bulk) Upload(t testing.TB, kind sftpd.Kind, data []byte) string {
	t.Helper()
	name := "/" + sftpd.Name(kind, b.Next)
	b.Next = b.Next.Add(time.Second)
	b.Write(t, name+".part", data)
	if err := b.Rename(name+".part", name); err != nil {
		t.Fatalf("rename %s into place: %v", name, err)
	}
	return name
}

// Write writes a file under name.
func (b *Bulk) Write(t testing.TB, name string, data []byte) {
	t.Helper()
	f, err := b.Create(name)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("close %s: %v", name, err)
	}
}

// Result waits up to 10 seconds for the result the sandbox writes beside the bulk file name,
// and reads it.
func (b *Bulk) Result(t testing.TB, name string) advisorspec.BulkResult {
	t.Helper()
	resultName := advisorspec.BulkResultName(name)
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, err := b.Open(resultName)
		if err == nil {
			data, err := io.ReadAll(f)
			_ = f.Close()
			if err != nil {
				t.Fatalf("read %s: %v", resultName, err)
			}
			var res advisorspec.BulkResult
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatalf("decode %s: %v\n%s", resultName, err, data)
			}
			return res
		}
		if !errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			t.Fatalf("open %s: got %v, want the result within 10s", resultName, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

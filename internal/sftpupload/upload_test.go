package sftpupload_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/advisorhq/gateway/internal/clock"
	"github.com/advisorhq/gateway/internal/sftpupload"
)

var start = time.Date(2026, 11, 23, 20, 45, 0, 0, time.UTC)

const stamp = "20261123T204500Z"

func passwordConfig(s *testServer) sftpupload.Config {
	return sftpupload.Config{
		Addr: s.addr, User: testUser, Password: testPassword, Dir: remoteDir,
		HostKeyFingerprint: s.fingerprint(),
		DialTimeout:        2 * time.Second, HandshakeTimeout: 2 * time.Second, IdleTimeout: 2 * time.Second,
	}
}

func newUploader(t *testing.T, cfg sftpupload.Config) *sftpupload.Uploader {
	t.Helper()
	u, err := sftpupload.New(cfg, clock.NewSettable(start).Now)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return u
}

// body returns n bytes of JSONL that differ from line to line, so that a misplaced chunk shows.
func body(kind string, n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "{\"id\":\"%s-%07d\",\"first_name\":\"Name %d\"}\n", kind, i, i*7919)
	}
	return b.Bytes()[:n]
}

// noLeaks fails the test if, once it has finished, more goroutines run or more descriptors are
// open than when noLeaks was called. Both are polled for a while: closed connections' goroutines
// end shortly after Close returns. Register it after the test server, so it runs first.
func noLeaks(t *testing.T) {
	t.Helper()
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			g, f := runtime.NumGoroutine(), openFDs(t)
			if g <= goroutines && f <= fds {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				t.Errorf("leak: %d goroutines and %d descriptors, want at most %d and %d\n%s",
					g, f, goroutines, fds, buf[:runtime.Stack(buf, true)])
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("counting descriptors: %v", err)
	}
	return len(entries)
}

func both(clients, people []byte) []sftpupload.File {
	return []sftpupload.File{
		// People first on purpose: Upload must put the Clients file in place first anyway.
		{Kind: sftpupload.People, Body: bytes.NewReader(people)},
		{Kind: sftpupload.Clients, Body: bytes.NewReader(clients)},
	}
}

func wantReason(t *testing.T, err error, want sftpupload.Reason) *sftpupload.Error {
	t.Helper()
	var e *sftpupload.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v (%T), want *sftpupload.Error with reason %s", err, err, want)
	}
	t.Logf("error: %v", err)
	if e.Reason != want {
		t.Fatalf("got reason %s (%v), want %s", e.Reason, err, want)
	}
	if strings.Contains(err.Error(), testPassword) {
		t.Errorf("error %q holds the password", err)
	}
	return e
}

// wantNoFinalFiles fails if anything but ".part" files is in the remote directory: a failed
// upload must never leave a file the service would ingest.
func wantNoFinalFiles(t *testing.T, s *testServer) {
	t.Helper()
	for _, n := range s.names() {
		if !strings.HasSuffix(n, ".part") {
			t.Errorf("after a failed upload the directory holds %s, want only .part files or none", n)
		}
	}
	for _, op := range s.operations() {
		if strings.HasPrefix(op, "rename ") {
			t.Errorf("after a failed upload the server saw %q, want no rename", op)
		}
	}
}

func TestUploadPutsBothFilesClientsFirstByteIdentical(t *testing.T) {
	s := newTestServer(t)
	noLeaks(t)
	u := newUploader(t, passwordConfig(s))
	clients, people := body("c", 700_000), body("p", 1_300_001)

	var progress []int64
	files := both(clients, people)
	files[1].Progress = func(n int64) { progress = append(progress, n) }
	got, err := u.Upload(context.Background(), files...)
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}

	want := []sftpupload.Uploaded{
		{Kind: sftpupload.Clients, Name: "clients-" + stamp + ".jsonl", Path: remoteDir + "/clients-" + stamp + ".jsonl", Bytes: int64(len(clients))},
		{Kind: sftpupload.People, Name: "people-" + stamp + ".jsonl", Path: remoteDir + "/people-" + stamp + ".jsonl", Bytes: int64(len(people))},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Upload returned %+v, want %+v", got, want)
	}
	remote := s.files()
	if len(remote) != 2 {
		t.Errorf("remote directory holds %v, want the two files only", s.names())
	}
	if !bytes.Equal(remote["clients-"+stamp+".jsonl"], clients) {
		t.Errorf("clients file on the server differs from the one uploaded (%d bytes, want %d)", len(remote["clients-"+stamp+".jsonl"]), len(clients))
	}
	if !bytes.Equal(remote["people-"+stamp+".jsonl"], people) {
		t.Errorf("people file on the server differs from the one uploaded (%d bytes, want %d)", len(remote["people-"+stamp+".jsonl"]), len(people))
	}
	wantOps := []string{
		"create clients-" + stamp + ".jsonl.part",
		"create people-" + stamp + ".jsonl.part",
		"rename clients-" + stamp + ".jsonl.part clients-" + stamp + ".jsonl",
		"rename people-" + stamp + ".jsonl.part people-" + stamp + ".jsonl",
	}
	if ops := s.operations(); !slices.Equal(ops, wantOps) {
		t.Errorf("server saw %q, want %q", ops, wantOps)
	}
	if len(progress) == 0 || progress[len(progress)-1] != int64(len(clients)) || !slices.IsSorted(progress) {
		t.Errorf("clients progress went %v, want rising to %d", progress, len(clients))
	}
}

func TestUploadLogsInWithAKeyOrPassword(t *testing.T) {
	for _, tc := range []struct {
		name         string
		authorised   bool
		password     string
		keyboardOnly bool
		want         sftpupload.Reason // "" for success
		wantText     string
	}{
		{name: "authorised key", authorised: true},
		{name: "unauthorised key", want: sftpupload.ReasonAuth, wantText: "BULK_SFTP_KEY_FILE"},
		{name: "unauthorised key falls back to the password", password: testPassword},
		{name: "password through keyboard-interactive", password: testPassword, keyboardOnly: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t)
			noLeaks(t)
			keyFile, pub := newClientKey(t, "")
			if tc.authorised {
				s.authorise(pub)
			}
			s.mu.Lock()
			s.keyboardOnly = tc.keyboardOnly
			s.mu.Unlock()
			cfg := passwordConfig(s)
			cfg.Password, cfg.KeyFile = tc.password, keyFile
			_, err := newUploader(t, cfg).Upload(context.Background(), sftpupload.File{Kind: sftpupload.Clients, Body: strings.NewReader("{}\n")})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Upload: %v", err)
				}
				if got := s.names(); !slices.Equal(got, []string{"clients-" + stamp + ".jsonl"}) {
					t.Errorf("remote directory holds %v, want the clients file", got)
				}
				return
			}
			e := wantReason(t, err, tc.want)
			if !strings.Contains(e.Error(), tc.wantText) {
				t.Errorf("error %q does not name %s", e, tc.wantText)
			}
		})
	}
}

func TestUploadFailsBeforeWritingAnything(t *testing.T) {
	down := func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}
	otherKey := func(t *testing.T) ssh.PublicKey {
		_, pub := newClientKey(t, "")
		return pub
	}
	knownHosts := func(t *testing.T, lines ...string) string {
		f := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		name     string
		edit     func(t *testing.T, s *testServer, c *sftpupload.Config)
		want     sftpupload.Reason // "" for success
		wantText string
	}{
		{
			name:     "wrong password",
			edit:     func(_ *testing.T, _ *testServer, c *sftpupload.Config) { c.Password = "not-it" },
			want:     sftpupload.ReasonAuth,
			wantText: `refused user "advisor" with the configured password: check BULK_SFTP_USER and BULK_SFTP_PASSWORD`,
		},
		{
			name:     "unknown user",
			edit:     func(_ *testing.T, _ *testServer, c *sftpupload.Config) { c.User = "nobody" },
			want:     sftpupload.ReasonAuth,
			wantText: "BULK_SFTP_USER",
		},
		{
			name: "pinned fingerprint of another key",
			edit: func(t *testing.T, _ *testServer, c *sftpupload.Config) {
				c.HostKeyFingerprint = ssh.FingerprintSHA256(otherKey(t))
			},
			want:     sftpupload.ReasonHostKey,
			wantText: "which is not BULK_SFTP_HOST_KEY_FINGERPRINT",
		},
		{
			name: "host missing from known_hosts",
			edit: func(t *testing.T, _ *testServer, c *sftpupload.Config) {
				c.HostKeyFingerprint = ""
				c.KnownHostsFile = knownHosts(t, knownhosts.Line([]string{"other.example:22"}, otherKey(t)))
			},
			want:     sftpupload.ReasonHostKey,
			wantText: "is not in BULK_SFTP_KNOWN_HOSTS",
		},
		{
			name: "known_hosts holds another key for the host",
			edit: func(t *testing.T, s *testServer, c *sftpupload.Config) {
				c.HostKeyFingerprint = ""
				c.KnownHostsFile = knownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(s.addr)}, otherKey(t)))
			},
			want:     sftpupload.ReasonHostKey,
			wantText: "someone may be intercepting the connection",
		},
		{
			name: "known_hosts holds the host's key",
			edit: func(t *testing.T, s *testServer, c *sftpupload.Config) {
				c.HostKeyFingerprint = ""
				c.KnownHostsFile = knownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(s.addr)}, s.hostKey.PublicKey()))
			},
		},
		{
			name: "known_hosts and pinned fingerprint both accept",
			edit: func(t *testing.T, s *testServer, c *sftpupload.Config) {
				c.KnownHostsFile = knownHosts(t, knownhosts.Line([]string{knownhosts.Normalize(s.addr)}, s.hostKey.PublicKey()))
			},
		},
		{
			name:     "server down",
			edit:     func(t *testing.T, _ *testServer, c *sftpupload.Config) { c.Addr = down(t) },
			want:     sftpupload.ReasonUnreachable,
			wantText: "connection refused): is the SFTP server running, and is BULK_SFTP_ADDR right?",
		},
		{
			name: "not an SSH server: the handshake times out",
			edit: func(t *testing.T, _ *testServer, c *sftpupload.Config) {
				c.Addr = silentServer(t)
				c.HandshakeTimeout = 200 * time.Millisecond
			},
			want:     sftpupload.ReasonTimeout,
			wantText: "did not finish within 200ms",
		},
		{
			name:     "remote directory missing",
			edit:     func(_ *testing.T, _ *testServer, c *sftpupload.Config) { c.Dir = "/nowhere" },
			want:     sftpupload.ReasonRemote,
			wantText: `the directory "/nowhere" does not exist on the server`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t)
			noLeaks(t)
			cfg := passwordConfig(s)
			tc.edit(t, s, &cfg)
			_, err := newUploader(t, cfg).Upload(context.Background(), both(body("c", 10_000), body("p", 10_000))...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Upload: %v", err)
				}
				if got := len(s.names()); got != 2 {
					t.Errorf("remote directory holds %v, want two files", s.names())
				}
				return
			}
			e := wantReason(t, err, tc.want)
			if !strings.Contains(e.Error(), tc.wantText) {
				t.Errorf("got error %q, want it to say %q", e, tc.wantText)
			}
			if ops := s.operations(); len(ops) != 0 {
				t.Errorf("server saw %q, want nothing written", ops)
			}
		})
	}
}

func TestUploadKnownHostsPicksTheKnownKeyOfSeveral(t *testing.T) {
	s := newTestServer(t)
	// x/crypto prefers ECDSA to Ed25519: unless the client asks for the algorithm known_hosts
	// holds, the server presents its ECDSA key and the check fails.
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecSigner, err := ssh.NewSignerFromKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	s.addHostKey(ecSigner)
	cfg := passwordConfig(s)
	cfg.HostKeyFingerprint = ""
	cfg.KnownHostsFile = filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(s.addr)}, s.hostKey.PublicKey()) + "\n"
	if err := os.WriteFile(cfg.KnownHostsFile, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := newUploader(t, cfg).Upload(context.Background(), sftpupload.File{Kind: sftpupload.People, Body: strings.NewReader("{}\n")}); err != nil {
		t.Fatalf("Upload with the server's Ed25519 key in known_hosts: %v", err)
	}
}

// silentServer accepts connections and never says a word, like a service that is not SSH. It
// closes its side when the client closes, so that it holds no descriptor after the client.
func silentServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

func TestUploadDroppedMidUploadRenamesNothingAndRetrySucceeds(t *testing.T) {
	s := newTestServer(t)
	noLeaks(t)
	u := newUploader(t, passwordConfig(s))
	clients, people := body("c", 600_000), body("p", 900_000)

	s.dropAfter.Store(300_000) // inside the Clients file
	_, err := u.Upload(context.Background(), both(clients, people)...)
	e := wantReason(t, err, sftpupload.ReasonConnectionLost)
	if !strings.Contains(e.Step, "write clients-"+stamp+".jsonl.part") {
		t.Errorf("failed step %q, want the write of the clients .part file", e.Step)
	}
	wantNoFinalFiles(t, s)

	s.dropAfter.Store(0)
	got, err := u.Upload(context.Background(), both(clients, people)...)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	// The dropped upload's .part may still be there, so the retry moves one second on.
	retry := "20261123T204501Z"
	if got[0].Name != "clients-"+retry+".jsonl" || got[1].Name != "people-"+retry+".jsonl" {
		t.Errorf("retry uploaded %+v, want the %s names", got, retry)
	}
	remote := s.files()
	if !bytes.Equal(remote["clients-"+retry+".jsonl"], clients) || !bytes.Equal(remote["people-"+retry+".jsonl"], people) {
		t.Errorf("files after the retry differ from the ones uploaded")
	}
}

func TestUploadFailureAfterClientsWrittenRemovesBothParts(t *testing.T) {
	s := newTestServer(t)
	noLeaks(t)
	u := newUploader(t, passwordConfig(s))
	readErr := errors.New("disk read error")
	_, err := u.Upload(context.Background(),
		sftpupload.File{Kind: sftpupload.Clients, Body: bytes.NewReader(body("c", 50_000))},
		sftpupload.File{Kind: sftpupload.People, Body: io.MultiReader(bytes.NewReader(body("p", 70_000)), iotestErrReader{readErr})},
	)
	e := wantReason(t, err, sftpupload.ReasonInput)
	if !errors.Is(err, readErr) || !strings.Contains(e.Step, "read the people file (after 70000 bytes)") {
		t.Errorf("got %v, want the people file's read error after 70000 bytes", err)
	}
	if names := s.names(); len(names) != 0 {
		t.Errorf("remote directory holds %v after the failure, want both .part files removed", names)
	}
	wantNoFinalFiles(t, s)
}

func TestUploadWriteRefusedByServerRemovesThePart(t *testing.T) {
	s := newTestServer(t)
	noLeaks(t)
	u := newUploader(t, passwordConfig(s))
	s.failWrite.Store(true)
	_, err := u.Upload(context.Background(), both(body("c", 50_000), body("p", 50_000))...)
	e := wantReason(t, err, sftpupload.ReasonRemote)
	if !strings.HasPrefix(e.Step, "write clients-"+stamp+".jsonl.part") || len(e.Leftover) != 0 {
		t.Errorf("got step %q and leftovers %v, want the clients write to fail and nothing left", e.Step, e.Leftover)
	}
	if names := s.names(); len(names) != 0 {
		t.Errorf("remote directory holds %v, want the .part file removed", names)
	}
	wantNoFinalFiles(t, s)

	// Retrying once the disk has room is safe and uses the same names, which are free again.
	s.failWrite.Store(false)
	got, err := u.Upload(context.Background(), both(body("c", 50_000), body("p", 50_000))...)
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got[0].Name != "clients-"+stamp+".jsonl" {
		t.Errorf("retry uploaded %s, want clients-%s.jsonl", got[0].Name, stamp)
	}
}

func TestUploadPeopleRenameRefusedReportsTheClientsFileUploaded(t *testing.T) {
	s := newTestServer(t)
	noLeaks(t)
	s.mu.Lock()
	s.refuseRename = "people-"
	s.mu.Unlock()
	clients := body("c", 40_000)
	got, err := newUploader(t, passwordConfig(s)).Upload(context.Background(), both(clients, body("p", 40_000))...)
	e := wantReason(t, err, sftpupload.ReasonRemote)
	if !strings.HasPrefix(e.Step, "rename people-"+stamp+".jsonl.part") || !strings.Contains(e.Msg, "clients-"+stamp+".jsonl was already uploaded") {
		t.Errorf("got %q, want the people rename to fail and the clients file reported", err)
	}
	if len(got) != 1 || got[0].Name != "clients-"+stamp+".jsonl" {
		t.Errorf("Upload returned %+v, want the clients file that is in place", got)
	}
	if names := s.names(); !slices.Equal(names, []string{"clients-" + stamp + ".jsonl"}) {
		t.Errorf("remote directory holds %v, want the clients file only, the people .part removed", names)
	}
	if !bytes.Equal(s.files()["clients-"+stamp+".jsonl"], clients) {
		t.Errorf("clients file differs from the one uploaded")
	}
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

func TestUploadCancelledMidUpload(t *testing.T) {
	s := newTestServer(t)
	noLeaks(t)
	u := newUploader(t, passwordConfig(s))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The reader cancels once 300 kB have been read and goes on giving data, as a live request
	// body would.
	r := &cancellingReader{r: bytes.NewReader(body("c", 2_000_000)), after: 300_000, cancel: cancel}
	_, err := u.Upload(ctx, sftpupload.File{Kind: sftpupload.Clients, Body: r})
	wantReason(t, err, sftpupload.ReasonCancelled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want it to wrap context.Canceled", err)
	}
	wantNoFinalFiles(t, s)

	// The same Uploader works again at once: the cancelled upload gave back its turn.
	if _, err := u.Upload(context.Background(), sftpupload.File{Kind: sftpupload.Clients, Body: strings.NewReader("{}\n")}); err != nil {
		t.Fatalf("upload after a cancelled one: %v", err)
	}
}

func TestUploadCancelledDuringHandshakeReturnsAtOnce(t *testing.T) {
	s := newTestServer(t)
	cfg := passwordConfig(s)
	cfg.Addr, cfg.HandshakeTimeout = silentServer(t), time.Minute
	noLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := newUploader(t, cfg).Upload(ctx, sftpupload.File{Kind: sftpupload.Clients, Body: strings.NewReader("{}\n")})
	wantReason(t, err, sftpupload.ReasonCancelled)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want it to wrap context.DeadlineExceeded", err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("Upload took %v after its context ended, want it to close the connection at once", took)
	}
}

func TestConcurrentUploadsTakeTurnsAndGetDistinctNames(t *testing.T) {
	s := newTestServer(t)
	noLeaks(t)
	u := newUploader(t, passwordConfig(s)) // its clock stands still: both uploads see the same second
	errs := make(chan error, 3)
	var got [3][]sftpupload.Uploaded
	var bodies [3][]byte
	for i := range got {
		bodies[i] = body(fmt.Sprint(i), 200_000)
		go func() {
			var err error
			got[i], err = u.Upload(context.Background(), sftpupload.File{Kind: sftpupload.Clients, Body: bytes.NewReader(bodies[i])})
			errs <- err
		}()
	}
	for range got {
		if err := <-errs; err != nil {
			t.Fatalf("Upload: %v", err)
		}
	}
	names := map[string]bool{}
	for _, g := range got {
		names[g[0].Name] = true
	}
	if len(names) != 3 {
		t.Fatalf("three uploads got names %v, want three distinct names", names)
	}
	remote := s.files()
	for i, g := range got {
		if !bytes.Equal(remote[g[0].Name], bodies[i]) {
			t.Errorf("%s differs from upload %d's body", g[0].Name, i)
		}
	}
}

type cancellingReader struct {
	r      io.Reader
	n      int
	after  int
	cancel func()
}

func (c *cancellingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += n
	if c.n >= c.after {
		c.cancel()
	}
	return n, err
}

func TestUploadStalledServerTimesOut(t *testing.T) {
	s := newTestServer(t)
	cfg := passwordConfig(s)
	cfg.IdleTimeout = 300 * time.Millisecond
	u := newUploader(t, cfg)
	s.stall.Store(true)
	began := time.Now()
	_, err := u.Upload(context.Background(), sftpupload.File{Kind: sftpupload.Clients, Body: bytes.NewReader(body("c", 100_000))})
	e := wantReason(t, err, sftpupload.ReasonTimeout)
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("Upload took %v against a stalled server, want about the 300ms idle timeout", took)
	}
	if !strings.Contains(e.Msg, "did not answer within 300ms") {
		t.Errorf("got %q, want it to name the idle timeout", e.Msg)
	}
	if len(e.Leftover) != 1 {
		t.Errorf("Leftover = %v, want the one .part file the closed connection could not remove", e.Leftover)
	}
	wantNoFinalFiles(t, s)
}

func TestUploadNeverOverwritesAnExistingFile(t *testing.T) {
	s := newTestServer(t)
	u := newUploader(t, passwordConfig(s))
	old := []byte("{\"id\":\"old\"}\n")
	s.put("clients-"+stamp+".jsonl", old)
	s.put("people-20261123T204501Z.jsonl", old)

	got, err := u.Upload(context.Background(), both(body("c", 100), body("p", 100))...)
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	// Both names are taken at :00 (clients) and :01 (people), so the pair goes to :02.
	if got[0].Name != "clients-20261123T204502Z.jsonl" || got[1].Name != "people-20261123T204502Z.jsonl" {
		t.Errorf("uploaded as %s and %s, want the first second free for both", got[0].Name, got[1].Name)
	}
	remote := s.files()
	if !bytes.Equal(remote["clients-"+stamp+".jsonl"], old) || !bytes.Equal(remote["people-20261123T204501Z.jsonl"], old) {
		t.Errorf("an existing file was overwritten")
	}
}

func TestUploadRejectsWrongCalls(t *testing.T) {
	s := newTestServer(t)
	u := newUploader(t, passwordConfig(s))
	r := strings.NewReader("{}\n")
	for _, tc := range []struct {
		name  string
		files []sftpupload.File
		want  string
	}{
		{"no file", nil, "no file to upload"},
		{"kind twice", []sftpupload.File{{Kind: sftpupload.Clients, Body: r}, {Kind: sftpupload.Clients, Body: r}}, "the clients file is given 2 times"},
		{"unknown kind", []sftpupload.File{{Kind: "trusts", Body: r}}, `unknown file kind "trusts"`},
		{"no body", []sftpupload.File{{Kind: sftpupload.People}}, "the people file has no body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := u.Upload(context.Background(), tc.files...)
			e := wantReason(t, err, sftpupload.ReasonUsage)
			if !strings.Contains(e.Msg, tc.want) {
				t.Errorf("got %q, want %q", e.Msg, tc.want)
			}
		})
	}
	if ops := s.operations(); len(ops) != 0 {
		t.Errorf("server saw %q, want no connection used", ops)
	}
}

// "People rows name ... top_account_id (an existing top account or one in the Add/Update Top
// Accounts file)": in the deprecated model the Top Accounts file goes up as
// top-accounts-<UTC timestamp>.jsonl, in place before the People file whose rows name it.
func TestUploadPutsTheTopAccountsFileInPlaceBeforeThePeopleFile(t *testing.T) {
	s := newTestServer(t)
	u := newUploader(t, passwordConfig(s))
	accounts, people := body("t", 1000), body("p", 2000)
	got, err := u.Upload(context.Background(),
		sftpupload.File{Kind: sftpupload.People, Body: bytes.NewReader(people)},
		sftpupload.File{Kind: sftpupload.TopAccounts, Body: bytes.NewReader(accounts)})
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	want := []sftpupload.Uploaded{
		{Kind: sftpupload.TopAccounts, Name: "top-accounts-" + stamp + ".jsonl", Path: remoteDir + "/top-accounts-" + stamp + ".jsonl", Bytes: int64(len(accounts))},
		{Kind: sftpupload.People, Name: "people-" + stamp + ".jsonl", Path: remoteDir + "/people-" + stamp + ".jsonl", Bytes: int64(len(people))},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Upload returned %+v, want %+v", got, want)
	}
	wantOps := []string{
		"create top-accounts-" + stamp + ".jsonl.part",
		"create people-" + stamp + ".jsonl.part",
		"rename top-accounts-" + stamp + ".jsonl.part top-accounts-" + stamp + ".jsonl",
		"rename people-" + stamp + ".jsonl.part people-" + stamp + ".jsonl",
	}
	if ops := s.operations(); !slices.Equal(ops, wantOps) {
		t.Errorf("server saw %q, want %q", ops, wantOps)
	}
}

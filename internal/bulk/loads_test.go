package bulk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulk"
	"github.com/advisorhq/gateway/internal/bulkprogress"
	"github.com/advisorhq/gateway/internal/sftpupload"
)

// fakeUploader keeps what it is sent, and has the service process each file after polls
// reads of its result (never, when polls is negative).
type fakeUploader struct {
	mu       sync.Mutex
	sent     map[sftpupload.Kind]string
	reads    int
	polls    int
	fail     error
	blocking chan struct{} // when set, Upload waits for it or the context
	refuse   string        // when set, the service applies no row, refusing each with it
}

func (f *fakeUploader) Upload(ctx context.Context, files ...sftpupload.File) ([]sftpupload.Uploaded, error) {
	if f.blocking != nil {
		select {
		case <-f.blocking:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.fail != nil {
		return nil, f.fail
	}
	var out []sftpupload.Uploaded
	for _, file := range files {
		data, err := io.ReadAll(file.Body)
		if err != nil {
			return nil, err
		}
		if file.Progress != nil {
			file.Progress(int64(len(data)))
		}
		f.mu.Lock()
		f.sent[file.Kind] = string(data)
		f.mu.Unlock()
		out = append(out, sftpupload.Uploaded{Kind: file.Kind, Name: string(file.Kind) + "-x.jsonl", Path: "./" + string(file.Kind) + "-x.jsonl", Bytes: int64(len(data))})
	}
	return out, nil
}

func (f *fakeUploader) ReadResult(_ context.Context, up sftpupload.Uploaded) (advisorspec.BulkResult, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.polls < 0 || f.reads <= f.polls {
		return advisorspec.BulkResult{}, false, nil
	}
	rows := strings.Count(f.sent[up.Kind], "\n")
	if f.refuse != "" {
		return advisorspec.BulkResult{File: up.Name, Kind: string(up.Kind), Rows: rows, Invalid: rows, ErrorCount: 1,
			Errors: []advisorspec.BulkLineError{{Line: 1, Message: f.refuse}}}, true, nil
	}
	return advisorspec.BulkResult{File: up.Name, Kind: string(up.Kind), Rows: rows, Applied: rows}, true, nil
}

// recording is a store that also keeps the phase of every Put, which a watcher, seeing the
// latest progress, may not.
type recording struct {
	bulkprogress.Store
	mu     sync.Mutex
	phases []bulkprogress.Phase
}

func (r *recording) Put(ctx context.Context, p bulkprogress.Progress) error {
	r.mu.Lock()
	if len(r.phases) == 0 || r.phases[len(r.phases)-1] != p.Phase {
		r.phases = append(r.phases, p.Phase)
	}
	r.mu.Unlock()
	return r.Store.Put(ctx, p)
}

func (r *recording) seen() []bulkprogress.Phase {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.phases)
}

func newLoads(t *testing.T, up *fakeUploader, cfg bulk.LoadsConfig) (*bulk.Loads, *recording, string) {
	t.Helper()
	if up.sent == nil {
		up.sent = map[sftpupload.Kind]string{}
	}
	spool := t.TempDir()
	store := &recording{Store: bulkprogress.NewMemory(time.Now)}
	cfg.Uploader, cfg.Progress, cfg.SpoolDir = up, store, spool
	if cfg.PollEvery == 0 {
		cfg.PollEvery = time.Millisecond
	}
	l := bulk.NewLoads(cfg)
	t.Cleanup(l.Close)
	return l, store, spool
}

// watch follows a load to its end and returns the phases it saw and its last progress.
func watch(t *testing.T, store bulkprogress.Store, id string) ([]bulkprogress.Phase, bulkprogress.Progress) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var phases []bulkprogress.Phase
	var last bulkprogress.Progress
	if err := store.Watch(ctx, id, func(p bulkprogress.Progress) {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
		last = p
	}); err != nil {
		t.Fatalf("watch load %s: %v", id, err)
	}
	return phases, last
}

func TestALoadIsValidatedSentAndFollowedUntilProcessed(t *testing.T) {
	t.Parallel()
	up := &fakeUploader{polls: 2}
	l, store, spool := newLoads(t, up, bulk.LoadsConfig{})
	clients, people := sample(t, "clients.jsonl"), sample(t, "people.jsonl")
	id, err := l.Start(asFirm, bulk.Load{Clients: bytes.NewReader(clients), People: bytes.NewReader(people)})
	if err != nil {
		t.Fatal(err)
	}
	_, last := watch(t, store, id)
	want := []bulkprogress.Phase{bulkprogress.Validating, bulkprogress.Uploading, bulkprogress.Processing, bulkprogress.Done}
	if phases := store.seen(); !slices.Equal(phases, want) {
		t.Fatalf("phases %v, want %v", phases, want)
	}
	if up.sent[sftpupload.Clients] != string(clients) || up.sent[sftpupload.People] != string(people) {
		t.Fatal("the files sent are not the files given")
	}
	if last.Bytes != int64(len(clients)+len(people)) || last.BytesTotal != last.Bytes || last.RowsTotal != 8 ||
		!strings.Contains(string(last.Result), `"rows":6`) {
		t.Fatalf("the last progress %+v", last)
	}
	waitEmpty(t, spool)
}

func TestALoadWithInvalidRowsSendsNothingUnlessAskedForTheValidOnes(t *testing.T) {
	t.Parallel()
	people := `{"type":"Individual","id":"P-1","client_id":"C-1","first_name":"A","last_name":"B"}
{"type":"Individual","id":"P-2","client_id":"C-1","first_name":"A"}
`
	clients := `{"id":"C-1","first_name":"A","last_name":"B"}` + "\n"
	for _, validOnly := range []bool{false, true} {
		up := &fakeUploader{}
		l, store, spool := newLoads(t, up, bulk.LoadsConfig{})
		id, err := l.Start(asFirm, bulk.Load{Clients: strings.NewReader(clients), People: strings.NewReader(people), ValidRowsOnly: validOnly})
		if err != nil {
			t.Fatal(err)
		}
		_, last := watch(t, store, id)
		switch {
		case !validOnly && (last.Phase != bulkprogress.Failed || !strings.Contains(last.Error, "1 rows are invalid") || len(up.sent) != 0 || !strings.Contains(string(last.Validation), `"line":2`)):
			t.Fatalf("without validRowsOnly: %+v, sent %v", last, up.sent)
		case validOnly && (last.Phase != bulkprogress.Done || strings.Count(up.sent[sftpupload.People], "\n") != 1 || !strings.Contains(up.sent[sftpupload.People], `"P-1"`)):
			t.Fatalf("with validRowsOnly: %+v, sent %q", last, up.sent[sftpupload.People])
		}
		waitEmpty(t, spool)
	}
}

func TestALoadFailsSayingWhy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		up   *fakeUploader
		cfg  bulk.LoadsConfig
		want string
	}{
		{"the upload fails", &fakeUploader{fail: errors.New("wrong password")}, bulk.LoadsConfig{}, "wrong password"},
		{"the service never processes the files", &fakeUploader{polls: -1}, bulk.LoadsConfig{ProcessingTimeout: 50 * time.Millisecond}, "had not processed the files after 50ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, store, _ := newLoads(t, tc.up, tc.cfg)
			id, err := l.Start(asFirm, bulk.Load{Clients: strings.NewReader(`{"id":"C-1","first_name":"A","last_name":"B"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if _, last := watch(t, store, id); last.Phase != bulkprogress.Failed || !strings.Contains(last.Error, tc.want) {
				t.Fatalf("ended %s: %q, want FAILED saying %q", last.Phase, last.Error, tc.want)
			}
		})
	}
}

// A load whose Clients file the service would refuse whole sends nothing, even with
// validRowsOnly: it fails saying why instead of ending DONE with nothing applied.
func TestALoadTheServiceWouldRefuseSendsNothing(t *testing.T) {
	t.Parallel()
	for _, validOnly := range []bool{false, true} {
		up := &fakeUploader{}
		refusing := func(bulk.Scope) bulk.Existing {
			return &existing{refusal: "advisorId is required when the API user can access multiple advisors"}
		}
		l, store, spool := newLoads(t, up, bulk.LoadsConfig{Existing: refusing})
		id, err := l.Start(asFirm, bulk.Load{Clients: strings.NewReader(`{"id":"C-1","first_name":"A","last_name":"B"}` + "\n"), ValidRowsOnly: validOnly})
		if err != nil {
			t.Fatal(err)
		}
		_, last := watch(t, store, id)
		if last.Phase != bulkprogress.Failed || len(up.sent) != 0 || !strings.Contains(string(last.Validation), "advisorId is required") {
			t.Fatalf("validRowsOnly %v: ended %s (%q), sent %v, validation %s", validOnly, last.Phase, last.Error, up.sent, last.Validation)
		}
		waitEmpty(t, spool)
	}
}

// A result of which the service applied no row says why in its file_error, even when the
// service listed only the lines: fileError is null only when rows were applied.
func TestALoadOfWhichNothingWasAppliedSaysWhy(t *testing.T) {
	t.Parallel()
	up := &fakeUploader{refuse: "refused for a reason"}
	l, store, _ := newLoads(t, up, bulk.LoadsConfig{})
	id, err := l.Start(asFirm, bulk.Load{Clients: strings.NewReader(`{"id":"C-1","first_name":"A","last_name":"B"}` + "\n")})
	if err != nil {
		t.Fatal(err)
	}
	_, last := watch(t, store, id)
	if want := `"file_error":"no row was applied; line 1: refused for a reason"`; last.Phase != bulkprogress.Done || !strings.Contains(string(last.Result), want) {
		t.Fatalf("ended %s with result %s, want DONE with %s", last.Phase, last.Result, want)
	}
}

// Loads beyond the limit are refused rather than spooled; Close ends the ones under way, which
// end FAILED, and leaves nothing behind.
func TestLoadsAreBoundedAndEndWithClose(t *testing.T) {
	t.Parallel()
	up := &fakeUploader{blocking: make(chan struct{})}
	l, store, spool := newLoads(t, up, bulk.LoadsConfig{MaxRunning: 1})
	file := func() bulk.Load {
		return bulk.Load{Clients: strings.NewReader(`{"id":"C-1","first_name":"A","last_name":"B"}`)}
	}
	id, err := l.Start(asFirm, file())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Start(asFirm, file()); !errors.Is(err, bulk.ErrBusy) {
		t.Fatalf("a second load while one runs: %v, want ErrBusy", err)
	}
	if _, err := l.Start(asFirm, bulk.Load{}); err == nil {
		t.Fatal("a load of no file started")
	}
	l.Close()
	if p, ok, _ := store.Get(context.Background(), id); !ok || p.Phase != bulkprogress.Failed || !strings.Contains(p.Error, "gateway stopped") {
		t.Fatalf("after Close the load is %+v, want FAILED saying the gateway stopped", p)
	}
	waitEmpty(t, spool)
}

// waitEmpty waits for a load's files kept aside to be removed.
func waitEmpty(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		entries, err := os.ReadDir(dir)
		if err == nil && len(entries) == 0 {
			return
		}
		if time.Now().After(deadline) {
			names := []string{}
			for _, e := range entries {
				names = append(names, filepath.Join(dir, e.Name()))
			}
			t.Fatalf("files kept aside remain: %v (%v)", names, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// In the deprecated model a load takes the "Add/Update Top Accounts file" its People rows may
// name ("an existing top account or one in the Add/Update Top Accounts file"): it goes up
// first, its valid rows only when asked, and the People row naming an invalid one is invalid
// too. The load's Scope reaches what its references are checked against.
func TestALoadInTheContainerModelSendsItsTopAccountsFileFirst(t *testing.T) {
	t.Parallel()
	up := &fakeUploader{}
	var scopes []bulk.Scope
	var mu sync.Mutex
	l, store, _ := newLoads(t, up, bulk.LoadsConfig{Existing: func(s bulk.Scope) bulk.Existing {
		mu.Lock()
		defer mu.Unlock()
		scopes = append(scopes, s)
		return &existing{}
	}})
	accounts := `{"id":"TA-1","name":"Okafor Family"}` + "\n" + `{"id":"TA-2"}` + "\n"
	people := `{"type":"Individual","id":"p1","top_account_id":"TA-1","first_name":"A","last_name":"B"}` + "\n" +
		`{"type":"Individual","id":"p2","top_account_id":"TA-2","first_name":"A","last_name":"B"}` + "\n"
	id, err := l.Start(asFirm, bulk.Load{
		TopAccounts: strings.NewReader(accounts), People: strings.NewReader(people), Model: advisorspec.TopAccountModel,
		Scope: bulk.Scope{AdvisorID: "adv-7", TeamID: "team-7"}, ValidRowsOnly: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, last := watch(t, store, id)
	if last.Phase != bulkprogress.Done {
		t.Fatalf("ended %s: %q", last.Phase, last.Error)
	}
	var results []advisorspec.BulkResult
	if err := json.Unmarshal(last.Result, &results); err != nil || len(results) != 2 || results[0].Kind != "top-accounts" || results[1].Kind != "people" {
		t.Fatalf("results %s (%v), want the Top Accounts file's, then the People file's", last.Result, err)
	}
	if got, want := up.sent[sftpupload.TopAccounts], `{"id":"TA-1","name":"Okafor Family"}`+"\n"; got != want {
		t.Errorf("sent the Top Accounts rows %q, want the valid one %q", got, want)
	}
	if got := up.sent[sftpupload.People]; strings.Contains(got, `"p2"`) || !strings.Contains(got, `"p1"`) {
		t.Errorf("sent the People rows %q, want p1 alone", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := (bulk.Scope{AdvisorID: "adv-7", TeamID: "team-7"}); len(scopes) != 1 || scopes[0] != want {
		t.Errorf("checked as %+v, want %+v", scopes, want)
	}
}

// A Top Accounts file belongs to the deprecated model alone: with the current model the load is
// refused before anything is kept aside.
func TestALoadRefusesATopAccountsFileInTheClientModel(t *testing.T) {
	t.Parallel()
	l, _, spool := newLoads(t, &fakeUploader{}, bulk.LoadsConfig{})
	_, err := l.Start(asFirm, bulk.Load{TopAccounts: strings.NewReader(`{"id":"TA-1","name":"N"}` + "\n")})
	if !errors.Is(err, bulk.ErrTopAccountsInClientModel) {
		t.Fatalf("got %v, want %v", err, bulk.ErrTopAccountsInClientModel)
	}
	waitEmpty(t, spool)
}

package bulk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/bulkfile"
	"github.com/advisorhq/gateway/internal/bulkprogress"
	"github.com/advisorhq/gateway/internal/bytesize"
	"github.com/advisorhq/gateway/internal/diskbudget"
	"github.com/advisorhq/gateway/internal/sftpupload"
	"github.com/advisorhq/gateway/internal/tenant"
)

// Uploader sends files to the service and reads back what it made of them: sftpupload's.
type Uploader interface {
	Upload(ctx context.Context, files ...sftpupload.File) ([]sftpupload.Uploaded, error)
	ReadResult(ctx context.Context, f sftpupload.Uploaded) (advisorspec.BulkResult, bool, error)
}

// Loads runs bulk loads in the background: each is validated, sent and followed until the
// service has processed its files, its progress kept in a bulkprogress.Store so that any
// replica can answer for it. Loads owns its goroutines: Close ends them.
type Loads struct {
	cfg     LoadsConfig
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	running chan struct{} // a slot per load that may run at once
}

// LoadsConfig is what Loads works with.
type LoadsConfig struct {
	Uploader Uploader
	Progress bulkprogress.Store
	// Existing makes what one load's references are checked against, its clients looked up
	// as the load's Scope; its context carries the advisor client's request cache, which the
	// load's requests share.
	Existing func(Scope) Existing
	// SpoolDir holds each load's files while it runs (os.TempDir() when empty): the request
	// that brought them ends before the load does.
	SpoolDir string
	// MaxRunning bounds the loads running at once (DefaultMaxRunning when 0); one more is
	// refused with ErrBusy.
	MaxRunning int
	// DiskBudget bounds the bytes the loads' files (their copies, and their valid rows) hold
	// on the disk, shared with the uploads in flight, which hold the same files while their
	// requests last: together they stay within UPLOAD_DISK_BUDGET. A load that would go
	// past it is refused (an error wrapping diskbudget.ErrSpent); its share is given back
	// when its files are removed. Nil bounds nothing.
	DiskBudget *diskbudget.Budget
	// PollEvery is how often a load asks whether the service has processed its files, and
	// ProcessingTimeout how long it waits before it fails (defaults when 0).
	PollEvery, ProcessingTimeout time.Duration
	Log                          *slog.Logger
}

// Defaults of LoadsConfig.
const (
	DefaultMaxRunning        = 2
	DefaultPollEvery         = 2 * time.Second
	DefaultProcessingTimeout = 15 * time.Minute
	// progressEvery is how often a running load writes its progress at most.
	progressEvery = 500 * time.Millisecond
)

// ErrBusy refuses a load while LoadsConfig.MaxRunning others run.
var ErrBusy = errors.New("other bulk loads are running; start this one when one of them is done")

// NewLoads returns a runner of loads; Close stops it.
func NewLoads(cfg LoadsConfig) *Loads {
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = DefaultMaxRunning
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = DefaultPollEvery
	}
	if cfg.ProcessingTimeout <= 0 {
		cfg.ProcessingTimeout = DefaultProcessingTimeout
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Loads{cfg: cfg, ctx: ctx, cancel: cancel, running: make(chan struct{}, cfg.MaxRunning)}
}

// Close stops the loads under way, which end FAILED, and returns when they have.
func (l *Loads) Close() {
	l.cancel()
	l.wg.Wait()
}

// Load is one load's files; a nil reader is a file not given. TopAccounts belongs to the
// deprecated container model only.
type Load struct {
	TopAccounts, Clients, People io.Reader
	Model                        advisorspec.BulkModel
	// Scope is the advisor and team the checks look the People file's clients up as.
	Scope Scope
	// ValidRowsOnly sends the valid rows of files that have invalid ones; otherwise a file
	// with an invalid row sends nothing.
	ValidRowsOnly bool
}

// Start copies the load's files aside and starts it, returning its id at once; its progress
// is then in the store under that id.
func (l *Loads) Start(ctx context.Context, in Load) (string, error) {
	if err := (Input{TopAccounts: in.TopAccounts, Clients: in.Clients, People: in.People, Model: in.Model}).check(); err != nil {
		return "", err
	}
	select {
	case l.running <- struct{}{}:
	default:
		return "", ErrBusy
	}
	started := false
	defer func() {
		if !started {
			<-l.running
		}
	}()
	id, err := newID()
	if err != nil {
		return "", err
	}
	// The load runs on after the request, for the request's firm: its files go up with the
	// firm's login and its progress is the firm's alone. Nothing else of the request's context
	// goes with it (its upstream budget is the request's, not the load's).
	firm, ok := tenant.FromContext(ctx)
	if !ok {
		return "", fmt.Errorf("start a bulk load: %w", tenant.ErrNoFirm)
	}
	job := &load{Loads: l, ctx: tenant.WithFirm(l.ctx, firm), firm: firm.ID, id: id, model: in.Model, scope: in.Scope, validOnly: in.ValidRowsOnly}
	defer func() {
		if !started {
			job.removeSpool()
		}
	}()
	for _, f := range []struct {
		r    io.Reader
		kind sftpupload.Kind
	}{{in.TopAccounts, sftpupload.TopAccounts}, {in.Clients, sftpupload.Clients}, {in.People, sftpupload.People}} {
		if f.r == nil {
			continue
		}
		path, n, err := l.spool(ctx, f.r, string(f.kind), job)
		if err != nil {
			return "", err
		}
		job.files = append(job.files, spooled{kind: f.kind, path: path, size: n})
		job.bytesTotal += n
	}
	if err := l.cfg.Progress.Put(ctx, bulkprogress.Progress{ID: id, Firm: job.firm, Phase: bulkprogress.Validating, BytesTotal: job.bytesTotal}); err != nil {
		return "", fmt.Errorf("record the start of bulk load %s: %w", id, err)
	}
	started = true
	l.wg.Go(func() {
		defer func() { <-l.running }()
		defer job.removeSpool()
		job.run()
	})
	return id, nil
}

// spool copies r to a file of its own in SpoolDir, within the disk budget: what it takes of the
// budget is job's, given back with its files.
func (l *Loads) spool(ctx context.Context, r io.Reader, kind string, job *load) (string, int64, error) {
	f, err := os.CreateTemp(l.cfg.SpoolDir, "bulk-"+kind+"-*.jsonl")
	if err != nil {
		return "", 0, fmt.Errorf("keep the %s file aside: %w", kind, err)
	}
	w := job.budgeted(f)
	n, err := io.Copy(w, readerWithContext{ctx, r})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		if errors.Is(err, diskbudget.ErrSpent) {
			return "", 0, apperr.Wrap(apperr.OperationLimitExceeded, fmt.Sprintf(
				"The bulk load's %s file would take the temporary files of the uploads and bulk loads in progress past the disk budget, %s (UPLOAD_DISK_BUDGET): start the load again once others are done",
				kind, bytesize.Format(l.cfg.DiskBudget.Limit())), err)
		}
		return "", 0, fmt.Errorf("keep the %s file aside: %w", kind, err)
	}
	return f.Name(), n, nil
}

// readerWithContext stops a copy when its context ends.
type readerWithContext struct {
	ctx context.Context
	r   io.Reader
}

func (r readerWithContext) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

func newID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make a bulk load id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// spooled is one of a load's files, aside.
type spooled struct {
	kind      sftpupload.Kind
	path      string // the file as given
	validPath string // its valid rows, when only those are sent
	size      int64
}

// load is one load under way.
type load struct {
	*Loads
	// ctx is the runner's lifetime, acting for the load's firm; firm is its id.
	ctx        context.Context
	firm       string
	id         string
	model      advisorspec.BulkModel
	scope      Scope
	validOnly  bool
	files      []spooled
	bytesTotal int64
	// last is the progress last stored, lastAt when.
	last   bulkprogress.Progress
	lastAt time.Time
	// writers are the load's files' writers within the disk budget, whose shares removeSpool
	// gives back.
	writers []*diskbudget.Writer
}

// budgeted is w within the disk budget, when there is one.
func (j *load) budgeted(w io.Writer) io.Writer {
	if j.cfg.DiskBudget == nil {
		return w
	}
	bw := j.cfg.DiskBudget.NewWriter(w)
	j.writers = append(j.writers, bw)
	return bw
}

func (j *load) removeSpool() {
	for _, f := range j.files {
		_ = os.Remove(f.path)
		if f.validPath != "" {
			_ = os.Remove(f.validPath)
		}
	}
	for _, w := range j.writers {
		j.cfg.DiskBudget.Release(w.Held())
	}
	j.writers = nil
}

// run takes the load through its phases and leaves it DONE or FAILED.
func (j *load) run() {
	ctx := advisor.WithCache(j.ctx)
	j.last = bulkprogress.Progress{ID: j.id, Firm: j.firm, Phase: bulkprogress.Validating, BytesTotal: j.bytesTotal}
	report, err := j.validate(ctx)
	if err != nil {
		j.fail(err.Error(), report)
		return
	}
	if report.ServiceRefuses() {
		j.fail("the service would apply none of the files as they are, so nothing was sent: see the files' errors", report)
		return
	}
	if !report.Valid() && !j.validOnly {
		j.fail(fmt.Sprintf("%d rows are invalid, so nothing was sent: correct them, or send the valid rows only", invalidRows(report)), report)
		return
	}
	uploaded, err := j.upload(ctx)
	if err != nil {
		j.fail(err.Error(), report)
		return
	}
	results, err := j.await(ctx, uploaded)
	if err != nil {
		j.fail(err.Error(), report)
		return
	}
	j.last.Phase, j.last.Result = bulkprogress.Done, results
	j.put(true)
}

func invalidRows(r *Report) int {
	n := 0
	for _, f := range r.files() {
		n += f.InvalidRows
	}
	return n
}

// validate checks the spooled files, writing their valid rows aside when only those are sent.
func (j *load) validate(ctx context.Context) (*Report, error) {
	in := Input{Model: j.model}
	rows := map[string]int{} // by kind of file: bulkfile counts each file's own
	opts := Options{Progress: func(kind string, p bulkfile.Progress) {
		rows[kind] = p.Rows
		j.last.Rows = 0
		for _, n := range rows {
			j.last.Rows += int64(n)
		}
		j.put(false)
	}}
	for i := range j.files {
		f := &j.files[i]
		r, err := os.Open(f.path)
		if err != nil {
			return nil, fmt.Errorf("read the %s file kept aside: %w", f.kind, err)
		}
		defer r.Close()
		var valid io.Writer
		if j.validOnly {
			w, err := os.CreateTemp(j.cfg.SpoolDir, "bulk-"+string(f.kind)+"-valid-*.jsonl")
			if err != nil {
				return nil, fmt.Errorf("keep the %s file's valid rows aside: %w", f.kind, err)
			}
			defer w.Close()
			f.validPath, valid = w.Name(), j.budgeted(w)
		}
		switch f.kind {
		case sftpupload.TopAccounts:
			in.TopAccounts, opts.ValidTopAccounts = r, valid
		case sftpupload.Clients:
			in.Clients, opts.ValidClients = r, valid
		default:
			in.People, opts.ValidPeople = r, valid
		}
	}
	var existing Existing
	if j.cfg.Existing != nil {
		existing = j.cfg.Existing(j.scope)
	}
	return Validate(ctx, in, existing, opts)
}

// upload sends the files, or their valid rows.
func (j *load) upload(ctx context.Context) ([]sftpupload.Uploaded, error) {
	j.last.Phase, j.last.RowsTotal = bulkprogress.Uploading, j.last.Rows
	j.put(true)
	var files []sftpupload.File
	var sent int64 // bytes of the files before the one going up
	for _, f := range j.files {
		path := f.path
		if j.validOnly {
			path = f.validPath
		}
		r, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("read the %s file kept aside: %w", f.kind, err)
		}
		defer r.Close()
		base := sent
		files = append(files, sftpupload.File{Kind: f.kind, Body: r, Progress: func(written int64) {
			j.last.Bytes = base + written
			j.put(false)
		}})
		if info, err := r.Stat(); err == nil {
			sent += info.Size()
		}
	}
	j.last.BytesTotal = sent
	return j.cfg.Uploader.Upload(ctx, files...)
}

// await waits for the service's result of every uploaded file.
func (j *load) await(ctx context.Context, uploaded []sftpupload.Uploaded) (json.RawMessage, error) {
	j.last.Phase = bulkprogress.Processing
	j.put(true)
	ctx, cancel := context.WithTimeout(ctx, j.cfg.ProcessingTimeout)
	defer cancel()
	results := make([]*advisorspec.BulkResult, len(uploaded))
	tick := time.NewTicker(j.cfg.PollEvery)
	defer tick.Stop()
	for {
		waiting := 0
		for i, f := range uploaded {
			if results[i] != nil {
				continue
			}
			r, ok, err := j.cfg.Uploader.ReadResult(ctx, f)
			if err != nil {
				return nil, fmt.Errorf("read the service's result of %s: %w", f.Name, err)
			}
			if ok {
				// The schema's fileError is null only when rows were applied, whatever the
				// service wrote.
				r.ExplainNoneApplied()
				results[i] = &r
			} else {
				waiting++
			}
		}
		if waiting == 0 {
			return json.Marshal(results)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && j.ctx.Err() == nil {
				return nil, fmt.Errorf("the service had not processed the files after %v", j.cfg.ProcessingTimeout)
			}
			return nil, errors.New("the gateway stopped before the service processed the files")
		}
	}
}

// fail ends the load FAILED, saying why, with the validation report when there is one.
func (j *load) fail(why string, report *Report) {
	if j.ctx.Err() != nil {
		why = "the gateway stopped during the load: " + why
	}
	j.last.Phase, j.last.Error = bulkprogress.Failed, why
	if report != nil {
		if data, err := json.Marshal(report); err == nil {
			j.last.Validation = data
		}
	}
	j.put(true)
}

// put stores the load's progress: always when the phase changes (must), otherwise at most
// every progressEvery, so a fast file is not a write per row.
func (j *load) put(must bool) {
	now := time.Now()
	if !must && now.Sub(j.lastAt) < progressEvery {
		return
	}
	j.lastAt = now
	// The final phases are stored even while the gateway stops: a watcher must see the end.
	ctx := j.ctx
	if j.last.Phase.Final() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(j.ctx), 5*time.Second)
		defer cancel()
	}
	if err := j.cfg.Progress.Put(ctx, j.last); err != nil {
		j.cfg.Log.Warn("bulk load progress not stored", "load", j.id, "phase", j.last.Phase, "error", err)
	}
}

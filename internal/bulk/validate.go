// Package bulk loads a firm's book of business in bulk: a Clients file (or, in the deprecated
// container model, an Add/Update Top Accounts file) and a People/Trusts/Entities file, checked against the specification as they stream, their
// references resolved within the upload or against what the service already has, then sent to
// the service's SFTP server.
package bulk

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulkfile"
)

// Existing answers whether an id the upload does not define names something the service
// already has.
type Existing interface {
	// Exists reports whether a client, or a top account (in the deprecated model), exists.
	Exists(ctx context.Context, kind advisorspec.RefKind, id string) (bool, error)
	// Card reports whether owner, a client or top account Exists has found, has a card that id
	// names, and the card's type: a People row may name only its own client's cards, and may
	// not change a card's type.
	Card(ctx context.Context, owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool, error)
	// ClientsRefusal says why the service would refuse every row of a Clients file, whatever
	// the rows, or "" when it would not: the file names no advisor or team, which an API user
	// reaching several must name.
	ClientsRefusal(ctx context.Context) (string, error)
}

// Input is the files of one load; a nil reader is a file not given. TopAccounts belongs to the
// deprecated container model only.
type Input struct {
	TopAccounts, Clients, People io.Reader
	Model                        advisorspec.BulkModel
}

// ErrTopAccountsInClientModel refuses a Top Accounts file outside the deprecated container
// model, whose People rows alone name top accounts.
var ErrTopAccountsInClientModel = errors.New("a Top Accounts file belongs to the deprecated top-account model, whose People rows name top accounts")

// check refuses an input without a file, or with a file its model has no use for.
func (in Input) check() error {
	switch {
	case in.TopAccounts == nil && in.Clients == nil && in.People == nil:
		return errors.New("no file to validate: give a Top Accounts, Clients or People file")
	case in.TopAccounts != nil && in.Model != advisorspec.TopAccountModel:
		return ErrTopAccountsInClientModel
	}
	return nil
}

// FileReport is what validation found in one file.
type FileReport struct {
	bulkfile.Report
	// FileError says why the file as a whole is refused (it is empty, no row is valid, or the
	// service would refuse every row), in words for its user; empty when it is not.
	FileError string
	// ServiceRefuses marks a file the service would apply none of however valid its rows: not
	// even its valid rows are sent.
	ServiceRefuses bool
}

// Valid reports whether the file can be sent whole: no row breaks a rule.
func (r *FileReport) Valid() bool { return r.FileError == "" && r.InvalidRows == 0 }

// Report is what validation found in the files of one load; a file not given has no report.
type Report struct {
	TopAccounts *FileReport `json:",omitempty"`
	Clients     *FileReport
	People      *FileReport
}

// files are the reports of the files given.
func (r *Report) files() []*FileReport {
	var out []*FileReport
	for _, f := range []*FileReport{r.TopAccounts, r.Clients, r.People} {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

// Valid reports whether every file given can be sent whole.
func (r *Report) Valid() bool {
	for _, f := range r.files() {
		if !f.Valid() {
			return false
		}
	}
	return true
}

// ServiceRefuses reports whether the service would apply none of a file given, so that sending
// the load, or its valid rows, would only end with nothing applied.
func (r *Report) ServiceRefuses() bool {
	for _, f := range r.files() {
		if f.ServiceRefuses {
			return true
		}
	}
	return false
}

// Options are what Validate does beside checking.
type Options struct {
	// Progress, when set, hears how far each file has been read.
	Progress func(kind string, p bulkfile.Progress)
	// ValidTopAccounts, ValidClients and ValidPeople, when set, receive each file's valid rows
	// as they are known valid: what a load of the valid rows only sends.
	ValidTopAccounts, ValidClients, ValidPeople io.Writer
	// MaxLookups bounds the distinct ids Validate asks Existing about (DefaultMaxLookups when 0):
	// each may cost the service a request.
	MaxLookups int
}

// DefaultMaxLookups bounds the existing records one load may name: a firm's whole book is a
// few thousand clients.
const DefaultMaxLookups = 10_000

// ErrTooManyLookups refuses a load that names more existing records than Options.MaxLookups.
var ErrTooManyLookups = errors.New("the files name more existing records than can be checked")

// Validate checks the files of in: the Top Accounts and Clients files first, so that the People
// file's rows may name their top accounts and clients. It returns the report, and an error only when it could not finish: the
// context ended, a file could not be read, or Existing failed. A file refused as a whole is
// in its report, not an error.
func Validate(ctx context.Context, in Input, existing Existing, opts Options) (*Report, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	max := opts.MaxLookups
	if max <= 0 {
		max = DefaultMaxLookups
	}
	var clientsRefused string
	if in.Clients != nil && existing != nil {
		why, err := existing.ClientsRefusal(ctx)
		if err != nil {
			return nil, fmt.Errorf("ask whether the service takes a Clients file: %w", err)
		}
		clientsRefused = why
	}
	look := &lookups{ctx: ctx, existing: existing, known: map[lookup]bool{}, max: max}
	var current string // the kind of the file being read, for Progress
	bopts := bulkfile.Options{Exists: look.exists, Card: look.card}
	if opts.Progress != nil {
		bopts.Progress = func(p bulkfile.Progress) { opts.Progress(current, p) }
	}
	up := bulkfile.NewUpload(bopts)
	rep := &Report{}
	files := []struct {
		kind   string
		r      io.Reader
		format bulkfile.Format
		valid  io.Writer
		into   **FileReport
	}{
		{advisorspec.BulkKindTopAccounts, in.TopAccounts, bulkfile.TopAccounts(), opts.ValidTopAccounts, &rep.TopAccounts},
		{advisorspec.BulkKindClients, in.Clients, bulkfile.Clients(), validUnless(clientsRefused, opts.ValidClients), &rep.Clients},
		{advisorspec.BulkKindPeople, in.People, bulkfile.People(in.Model), opts.ValidPeople, &rep.People},
	}
	for _, f := range files {
		if f.r == nil {
			continue
		}
		current = f.kind
		fr, err := up.Validate(ctx, f.r, f.format, f.valid)
		if look.err != nil {
			return rep, fmt.Errorf("check the %s file's references: %w", f.kind, look.err)
		}
		*f.into = &FileReport{Report: *fr}
		switch {
		case errors.Is(err, bulkfile.ErrEmpty), errors.Is(err, bulkfile.ErrNoValidRows), errors.Is(err, bulkfile.ErrTooManyHeld):
			(*f.into).FileError = err.Error()
		case err != nil:
			return rep, fmt.Errorf("validate the %s file: %w", f.kind, err)
		}
		if f.kind == advisorspec.BulkKindClients && clientsRefused != "" {
			(*f.into).FileError = clientsRefusedMessage(clientsRefused)
			(*f.into).ServiceRefuses = true
		}
	}
	return rep, nil
}

// clientsRefusedMessage says why a Clients file would be refused whole, and what to do instead:
// the service's reason (in the schema's words: "advisorId is required when the API user can
// access multiple advisors"), and that addClient takes what the file cannot say.
func clientsRefusedMessage(why string) string {
	return why + "; a Clients file names no advisor or team, so the service would apply none of its rows: add or update these clients with addClient and its advisorId and teamId"
}

// validUnless is w, or nothing when the file is refused whole: none of its rows is worth
// sending.
func validUnless(refused string, w io.Writer) io.Writer {
	if refused != "" {
		return nil
	}
	return w
}

type lookup struct {
	kind advisorspec.RefKind
	id   string
}

// lookups asks Existing about each client and top account once. bulkfile asks synchronously
// and cannot fail, so the first failure is kept, every later id answered "no", and Validate
// reports the failure when the file ends. Cards are not counted against the bound: Existing
// learns an owner's cards with the owner, so asking about one costs no request.
type lookups struct {
	ctx      context.Context
	existing Existing
	known    map[lookup]bool
	max      int
	err      error
}

func (l *lookups) exists(kind advisorspec.RefKind, id string) bool {
	if l.err != nil || l.existing == nil {
		return false
	}
	k := lookup{kind, id}
	if found, ok := l.known[k]; ok {
		return found
	}
	if len(l.known) >= l.max {
		l.err = fmt.Errorf("%w (at most %d)", ErrTooManyLookups, l.max)
		return false
	}
	found, err := l.existing.Exists(l.ctx, kind, id)
	if err != nil {
		l.err = fmt.Errorf("look up %s %q: %w", kind, id, err)
		return false
	}
	l.known[k] = found
	return found
}

// card asks about a card of owner, which is looked up first (even when the upload defines it:
// a Clients file may update a client whose existing cards its People rows name).
func (l *lookups) card(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool) {
	if !l.exists(owner.Kind, owner.ID) {
		return "", false
	}
	typ, found, err := l.existing.Card(l.ctx, owner, id)
	if err != nil {
		l.err = fmt.Errorf("look up card %q of %s %q: %w", id, owner.Kind, owner.ID, err)
		return "", false
	}
	return typ, found
}

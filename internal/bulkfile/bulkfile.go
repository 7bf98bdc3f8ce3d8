// Package bulkfile checks the JSONL bulk files of an upload as they stream: every line against
// its row's rules, ids unique within a file, and references resolved within the upload or
// against what already exists. It holds no file and no rows, so memory stays flat in file size
// but for a compact hash per id and the rows that wait on rows not yet read.
//
// The row rules themselves live with the specification, in advisorspec; this package knows of
// a row only what a Format tells it: its id, its owner and type, the ids it names, and its
// errors.
package bulkfile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// MaxLineBytes is the longest line a bulk file may have, without its line ending. A longer line
// is an error on that line and reading goes on at the next one.
const MaxLineBytes = advisorspec.MaxBulkLineBytes

// Defaults of Options.
const (
	DefaultMaxErrors     = 1000
	DefaultProgressEvery = 10_000
	DefaultMaxHeldBytes  = 32 << 20
)

// File-level refusals. Validate returns them, wrapped, with the report of what it read.
var (
	// ErrEmpty: the file has no row (nothing, or only blank lines).
	ErrEmpty = errors.New("the file has no rows")
	// ErrNoValidRows: every row of the file is invalid.
	ErrNoValidRows = errors.New("every row of the file is invalid")
	// ErrTooManyHeld: writing valid rows as they stream, more rows waited on rows further down
	// the file (directly, or through rows that wait themselves) than Options.MaxHeldBytes
	// allows to keep.
	ErrTooManyHeld = errors.New("too many rows name rows further down the file to write valid rows as they stream")
)

// Line is what a Format learns of one line of its file. Validate is done with it before it
// checks the next line, so a Format may reuse its slices.
type Line struct {
	ID string // the row's id; empty when the line has none that is usable
	// Owner is the client (or, in the deprecated model, top account) the row's card belongs
	// to: the cards it names must be that owner's. Zero for a row that makes no card.
	Owner advisorspec.RowRef
	// Type is the type of the card the row makes or updates; empty when it makes none or its
	// type is unusable.
	Type   advisorspec.ContactType
	Refs   []advisorspec.RowRef // every id the row names
	Errors []*advisorspec.Error // every rule the line breaks
}

// Format is one kind of bulk file: how to check a line, and which namespace its rows' ids
// belong to. The Clients file plugs in as a Format whose IDKind is advisorspec.RefClient.
type Format struct {
	Name   string              // for messages, e.g. "People/Trusts/Entities"
	IDKind advisorspec.RefKind // the namespace the rows' ids are defined in
	Check  func(line []byte) Line
}

// People is the Format of the People/Trusts/Entities file in the given model. Its Check reuses
// one row and one slice of references from line to line, so a Format serves one Validate call
// at a time.
func People(model advisorspec.BulkModel) Format {
	var row advisorspec.PeopleRow
	var refs []advisorspec.RowRef
	return Format{
		Name:   "People/Trusts/Entities",
		IDKind: advisorspec.RefCard,
		Check: func(line []byte) Line {
			errs := row.Decode(line, model)
			refs = refs[:0]
			for ref := range row.References() {
				refs = append(refs, ref)
			}
			owner := advisorspec.RowRef{Kind: advisorspec.RefClient, Field: "client_id", ID: row.ClientID}
			if model == advisorspec.TopAccountModel {
				owner = advisorspec.RowRef{Kind: advisorspec.RefTopAccount, Field: "top_account_id", ID: row.TopAccountID}
			}
			return Line{ID: row.ID, Owner: owner, Type: row.Type, Refs: refs, Errors: errs}
		},
	}
}

// LineError is a rule a line breaks: the spec README's per-line report, as the service's
// result file spells it too.
type LineError = advisorspec.BulkLineError

// Report is what Validate learned of one file.
type Report struct {
	Rows        int         // non-blank lines
	ValidRows   int         // rows with no error, every card they name existing or a valid row
	InvalidRows int         // rows with at least one error
	Written     int         // valid rows written to the valid-rows writer
	Bytes       int64       // bytes read
	Errors      []LineError // the first Options.MaxErrors errors found, in line order
	ErrorCount  int         // every error, kept or not
}

// Progress is how far Validate has read.
type Progress struct {
	Rows  int
	Bytes int64
}

// Options configure an Upload. The zero value is usable.
type Options struct {
	// Exists reports whether an id not defined in the upload names an existing client or top
	// account. Nil means none exists beyond the upload.
	Exists func(kind advisorspec.RefKind, id string) bool
	// Card reports whether owner, a client or top account, has a card that id names, and its
	// type. Nil means no card exists beyond the upload.
	Card func(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool)
	// Progress, when set, is called every ProgressEvery rows and once at the end of each file.
	Progress      func(Progress)
	ProgressEvery int
	// MaxErrors caps Report.Errors; ErrorCount still counts every error.
	MaxErrors int
	// MaxHeldBytes caps the rows kept back, when writing valid rows, until every row they
	// depend on, further down or itself waiting, is known valid.
	MaxHeldBytes int
}

// Upload validates the files of one upload in turn, Top Accounts and Clients before People, so
// that a People row's top_account_id or client_id can name a row of those files. It remembers the ids of the files it
// has read (as hashes) for the files that follow. It is not safe for concurrent use.
type Upload struct {
	opts Options
	seed maphash.Seed
	// ids maps the hash of each id the upload defines, by namespace, to its entry.
	ids [advisorspec.RefCard + 1]*idTable
}

// NewUpload starts an upload.
func NewUpload(opts Options) *Upload {
	if opts.MaxErrors <= 0 {
		opts.MaxErrors = DefaultMaxErrors
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = DefaultProgressEvery
	}
	if opts.MaxHeldBytes <= 0 {
		opts.MaxHeldBytes = DefaultMaxHeldBytes
	}
	u := &Upload{opts: opts, seed: maphash.MakeSeed()}
	for k := range u.ids {
		u.ids[k] = &idTable{}
	}
	return u
}

func (u *Upload) hash(id string) uint64 { return maphash.String(u.seed, id) }

// file is the state of one Validate call.
type file struct {
	u      *Upload
	ctx    context.Context
	format Format
	valid  io.Writer
	rep    *Report
	refs   // the references of the rows read, and the rows that wait on others
}

// Validate reads one file from r to its end, checking each line with format. When valid is not
// nil, every valid row is written to it, one per line, as soon as it is known valid: at once for
// most rows, or, for a row naming rows further down, once every row it depends on is known
// valid. Blank lines are skipped: they hold no row, though they keep their line numbers. The
// error is a file-level refusal (ErrEmpty, ErrNoValidRows, ErrTooManyHeld), a read or write
// failure, or the context's.
func (u *Upload) Validate(ctx context.Context, r io.Reader, format Format, valid io.Writer) (*Report, error) {
	f := &file{u: u, ctx: ctx, format: format, valid: valid, rep: &Report{}}
	f.refs.init()
	if err := f.read(r); err != nil {
		return f.rep, err
	}
	if err := f.finish(); err != nil {
		return f.rep, err
	}
	// A row waiting on rows further down learns of its errors late; the report still reads from
	// the top of the file down.
	slices.SortStableFunc(f.rep.Errors, func(a, b LineError) int { return a.Line - b.Line })
	if u.opts.Progress != nil {
		u.opts.Progress(Progress{Rows: f.rep.Rows, Bytes: f.rep.Bytes})
	}
	switch {
	case f.rep.Rows == 0:
		return f.rep, fmt.Errorf("%s file: %w", format.Name, ErrEmpty)
	case f.rep.ValidRows == 0:
		return f.rep, fmt.Errorf("%s file: %w", format.Name, ErrNoValidRows)
	}
	return f.rep, nil
}

// bom is the byte-order mark editors on Windows start a UTF-8 file with; it is not part of the
// first row, nor counted in its length.
var bom = []byte("\ufeff")

func (f *file) read(r io.Reader) error {
	// Room for a line of exactly MaxLineBytes with its CRLF, and the mark before a first line.
	br := bufio.NewReaderSize(r, MaxLineBytes+len(bom)+2)
	for lineNo := 1; ; lineNo++ {
		text, err := br.ReadSlice('\n')
		f.rep.Bytes += int64(len(text))
		tooLong := false
		for err == bufio.ErrBufferFull {
			// The rest of an over-long line is read and dropped; reading goes on at the next.
			tooLong = true
			text, err = br.ReadSlice('\n')
			f.rep.Bytes += int64(len(text))
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read %s file line %d: %w", f.format.Name, lineNo, err)
		}
		if len(text) > 0 || tooLong {
			if lineNo > maxLine {
				return fmt.Errorf("%s file has more than %d lines", f.format.Name, maxLine)
			}
			if werr := f.line(uint32(lineNo), text, tooLong); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// line checks one line; a non-nil error stops the file.
func (f *file) line(lineNo uint32, text []byte, tooLong bool) error {
	text = bytes.TrimSuffix(text, []byte("\n"))
	text = bytes.TrimSuffix(text, []byte("\r"))
	if lineNo == 1 {
		text = bytes.TrimPrefix(text, bom)
	}
	tooLong = tooLong || len(text) > MaxLineBytes
	if !tooLong && isJSONSpace(text) {
		return nil
	}
	f.rep.Rows++
	if f.rep.Rows%f.u.opts.ProgressEvery == 0 {
		if err := f.ctx.Err(); err != nil {
			return err
		}
		if f.u.opts.Progress != nil {
			f.u.opts.Progress(Progress{Rows: f.rep.Rows, Bytes: f.rep.Bytes})
		}
	}
	switch {
	case tooLong:
		f.invalid(lineNo, "", []LineError{{Message: fmt.Sprintf("line is longer than %d bytes (1 MiB)", MaxLineBytes)}})
		return nil
	case !utf8.Valid(text):
		f.invalid(lineNo, "", []LineError{{Message: "line is not valid UTF-8"}})
		return nil
	}
	l := f.format.Check(text)
	var errs []LineError
	for _, e := range l.Errors {
		errs = append(errs, LineError{Field: e.Field, Message: e.Message})
	}

	// Ids first: a duplicate is refused before its references are looked at, and its id is not
	// recorded again, so that the first row keeps it.
	var idHash uint64
	if l.ID != "" {
		idHash = f.u.hash(l.ID)
		if prev, dup := f.u.ids[f.format.IDKind].get(idHash); dup {
			errs = append(errs, LineError{Field: "id", Message: fmt.Sprintf(
				"id %q is already used on line %d", l.ID, entry(prev).line())})
			f.invalid(lineNo, l.ID, errs)
			return nil
		}
	}
	for _, ref := range l.Refs {
		if ref.Kind != f.format.IDKind {
			errs = f.checkOwner(errs, ref)
		}
	}
	if l.ID != "" && l.Type != "" {
		// The service updates the card a row's id names, and will not make a person a trust.
		if typ, ok := f.card(l.Owner, l.ID); ok && typ != l.Type {
			errs = append(errs, LineError{Field: "type", Message: fmt.Sprintf(
				"id %q names a %s card; a row cannot change a card's type", l.ID, typ)})
		}
	}
	return f.row(lineNo, text, l, idHash, errs)
}

// isJSONSpace reports whether b holds nothing but the whitespace JSON allows between values
// (RFC 8259): such a line holds no row. Other spaces, a no-break space or a form feed, are not
// blank: the line holds a malformed row.
func isJSONSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// checkOwner checks a reference to a client or top account: a valid row of an earlier file of
// the upload, or one that exists. A client whose row is invalid may still exist, as an invalid
// row leaves what it would have changed as it was. The row's line is not named: it is a line of
// another file.
func (f *file) checkOwner(errs []LineError, ref advisorspec.RowRef) []LineError {
	if e, found := f.u.ids[ref.Kind].get(f.u.hash(ref.ID)); found && entry(e).state() == stateValid {
		return errs
	}
	if f.u.opts.Exists != nil && f.u.opts.Exists(ref.Kind, ref.ID) {
		return errs
	}
	return append(errs, LineError{Field: ref.Field, Message: advisorspec.UnknownOwnerMessage(ref)})
}

// card asks Options.Card.
func (f *file) card(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool) {
	if f.u.opts.Card == nil || owner.ID == "" {
		return "", false
	}
	return f.u.opts.Card(owner, id)
}

// accept counts a valid row and writes it out.
func (f *file) accept(text []byte) error {
	f.rep.ValidRows++
	if f.valid == nil {
		return nil
	}
	if _, err := f.valid.Write(text); err != nil {
		return fmt.Errorf("write valid rows: %w", err)
	}
	if _, err := f.valid.Write([]byte{'\n'}); err != nil {
		return fmt.Errorf("write valid rows: %w", err)
	}
	f.rep.Written++
	return nil
}

// invalid counts an invalid row and reports its errors.
func (f *file) invalid(lineNo uint32, id string, errs []LineError) {
	f.rep.InvalidRows++
	f.report(lineNo, id, errs...)
}

func (f *file) report(lineNo uint32, id string, errs ...LineError) {
	for _, e := range errs {
		// A line may break many rules, so the count is held to GraphQL's Int (errorCount)
		// rather than grow with the file's bytes beyond it.
		f.rep.ErrorCount = min(f.rep.ErrorCount+1, math.MaxInt32)
		if len(f.rep.Errors) < f.u.opts.MaxErrors {
			e.Line, e.ID = int(lineNo), id
			f.rep.Errors = append(f.rep.Errors, e)
		}
	}
}

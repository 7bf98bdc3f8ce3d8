// Package bulkfile checks the JSONL bulk files of an upload as they stream: every line against
// its row's rules, ids unique within a file, and references resolved within the upload or
// against what already exists. It holds no file and no rows, so memory stays flat in file size
// but for a compact hash per id and the references still waiting for a row further down.
//
// The row rules themselves live with the specification, in advisorspec; this package knows of
// a row only what a Format tells it: its id, the ids it names, and its errors.
package bulkfile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
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
	// the file than Options.MaxHeldBytes allows to keep.
	ErrTooManyHeld = errors.New("too many rows name rows further down the file to write valid rows as they stream")
)

// Line is what a Format learns of one line of its file. Validate is done with it before it
// checks the next line, so a Format may reuse its slices.
type Line struct {
	ID     string               // the row's id; empty when the line has none that is usable
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
			return Line{ID: row.ID, Refs: refs, Errors: errs}
		},
	}
}

// LineError is a rule a line breaks: the spec README's per-line report, as the service's
// result file spells it too.
type LineError = advisorspec.BulkLineError

// Report is what Validate learned of one file.
type Report struct {
	Rows        int         // non-blank lines
	ValidRows   int         // rows with no error, their references resolved
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
	// Exists reports whether an id not defined in the upload names an existing client, top
	// account or card. Nil means nothing exists beyond the upload.
	Exists func(kind advisorspec.RefKind, id string) bool
	// Progress, when set, is called every ProgressEvery rows and once at the end of each file.
	Progress      func(Progress)
	ProgressEvery int
	// MaxErrors caps Report.Errors; ErrorCount still counts every error.
	MaxErrors int
	// MaxHeldBytes caps the rows kept back, when writing valid rows, until the rows further
	// down that they name are read.
	MaxHeldBytes int
}

// Upload validates the files of one upload in turn, Clients before People, so that a People
// row's client_id can name a client of the Clients file. It remembers the ids of the files it
// has read (as hashes) for the files that follow. It is not safe for concurrent use.
type Upload struct {
	opts Options
	seed maphash.Seed
	// ids maps the hash of each id the upload defines, by namespace, to its state and line.
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

// An id's entry packs its row's state in the top two bits and its line in the rest, so that a
// million ids cost about 20 MiB (see idTable). Ids are hashed to 64 bits with maphash rather than
// kept: by the birthday bound, n ids collide with probability about n²/2⁶⁵, 3·10⁻⁸ for a
// million-row file and 3·10⁻⁶ for ten million. A collision would report a false duplicate (with
// both lines, for a person to see) or resolve a reference to the wrong row; at those odds that
// is an accepted cost of memory that stays flat.
const (
	stateValid   uint32 = 0
	stateInvalid uint32 = 1 << 30
	stateHeld    uint32 = 2 << 30
	stateMask    uint32 = 3 << 30
	maxLine             = 1<<30 - 1
)

func (u *Upload) hash(id string) uint64 { return maphash.String(u.seed, id) }

// pendingRef is a reference to an id no row of the file has defined yet.
type pendingRef struct {
	line  uint32
	field string
	id    string
}

// held is a row that is valid on its own but waits on rows further down the file.
type held struct {
	id      string
	idHash  uint64
	waiting int
	invalid bool
	text    []byte // kept only when writing valid rows
}

// file is the state of one Validate call.
type file struct {
	u       *Upload
	ctx     context.Context
	format  Format
	valid   io.Writer
	rep     *Report
	pending map[uint64][]pendingRef // by the hash of the id waited for
	held    map[uint32]*held        // by line
	heldLen int
}

// Validate reads one file from r to its end, checking each line with format. When valid is not
// nil, every valid row is written to it, one per line, as soon as it is known valid: at once for
// most rows, or when the rows further down that it names have been read. Blank lines are
// skipped: they hold no row, though they keep their line numbers. The error is a file-level
// refusal (ErrEmpty, ErrNoValidRows, ErrTooManyHeld), a read or write failure, or the context's.
func (u *Upload) Validate(ctx context.Context, r io.Reader, format Format, valid io.Writer) (*Report, error) {
	f := &file{
		u: u, ctx: ctx, format: format, valid: valid, rep: &Report{},
		pending: map[uint64][]pendingRef{}, held: map[uint32]*held{},
	}
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

func (f *file) read(r io.Reader) error {
	// Two bytes more than the limit so that a line of exactly MaxLineBytes fits with its CRLF.
	br := bufio.NewReaderSize(r, MaxLineBytes+2)
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

var bom = []byte("\ufeff")

// line checks one line; a non-nil error stops the file.
func (f *file) line(lineNo uint32, text []byte, tooLong bool) error {
	text = bytes.TrimSuffix(text, []byte("\n"))
	text = bytes.TrimSuffix(text, []byte("\r"))
	if lineNo == 1 {
		// Editors on Windows start a UTF-8 file with a byte-order mark; it is not part of the row.
		text = bytes.TrimPrefix(text, bom)
	}
	if !tooLong && len(bytes.TrimSpace(text)) == 0 {
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
	case tooLong || len(text) > MaxLineBytes:
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
	ids := f.u.ids[f.format.IDKind]
	if l.ID != "" {
		idHash = f.u.hash(l.ID)
		if prev, dup := ids.get(idHash); dup {
			errs = append(errs, LineError{Field: "id", Message: fmt.Sprintf(
				"id %q is already used on line %d", l.ID, prev&^stateMask)})
			f.invalid(lineNo, l.ID, errs)
			return nil
		}
	}

	var waits []pendingRef
	for _, ref := range l.Refs {
		if ref.Kind == f.format.IDKind && ref.ID == l.ID {
			continue // a row naming itself is the Format's error to report
		}
		entry, found := f.u.ids[ref.Kind].get(f.u.hash(ref.ID))
		switch {
		case found && entry&stateMask == stateInvalid:
			errs = append(errs, refToInvalid(ref.Field, ref.ID, entry))
		case found:
			// A valid row, or one held for its own forward references: it is valid on its own,
			// and that is what a reference needs (see settle).
		case f.u.opts.Exists != nil && f.u.opts.Exists(ref.Kind, ref.ID):
		case ref.Kind == f.format.IDKind:
			// Forward references are allowed within a file: the row may come further down.
			waits = append(waits, pendingRef{lineNo, ref.Field, ref.ID})
		default:
			errs = append(errs, LineError{Field: ref.Field, Message: fmt.Sprintf(
				"%s %q names no %s of this upload and no existing one", ref.Field, ref.ID, ref.Kind)})
		}
	}

	switch {
	case len(errs) > 0:
		f.invalid(lineNo, l.ID, errs)
		if l.ID != "" {
			ids.set(idHash, uint32(lineNo)|stateInvalid)
			return f.settle(idHash, false)
		}
		return nil
	case len(waits) > 0:
		h := &held{id: l.ID, idHash: idHash, waiting: len(waits)}
		if f.valid != nil {
			if f.heldLen+len(text) > f.u.opts.MaxHeldBytes {
				return fmt.Errorf("%s file line %d: %w", f.format.Name, lineNo, ErrTooManyHeld)
			}
			h.text = slices.Clone(text)
			f.heldLen += len(text)
		}
		f.held[lineNo] = h
		for _, w := range waits {
			wh := f.u.hash(w.id)
			f.pending[wh] = append(f.pending[wh], w)
		}
		if l.ID != "" {
			ids.set(idHash, uint32(lineNo)|stateHeld)
			return f.settle(idHash, true)
		}
		return nil
	}
	if l.ID != "" {
		ids.set(idHash, uint32(lineNo)|stateValid)
	}
	if err := f.accept(text); err != nil {
		return err
	}
	if l.ID != "" {
		return f.settle(idHash, true)
	}
	return nil
}

func refToInvalid(field, id string, entry uint32) LineError {
	return LineError{Field: field, Message: fmt.Sprintf(
		"%s %q names the row on line %d, which is invalid", field, id, entry&^stateMask)}
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
	f.report(lineNo, id, errs)
}

func (f *file) report(lineNo uint32, id string, errs []LineError) {
	for _, e := range errs {
		f.rep.ErrorCount++
		if len(f.rep.Errors) < f.u.opts.MaxErrors {
			e.Line, e.ID = int(lineNo), id
			f.rep.Errors = append(f.rep.Errors, e)
		}
	}
}

// settle tells the rows waiting on the id with hash h that its row has been read, valid on its
// own or not, and writes those that wait on nothing more. A row held for its own forward
// references counts as valid here: were rows to wait on held rows, two rows naming each other
// (a trust whose trustee is the entity the trust owns part of) would both wait to the end of
// the file, and memory would grow with the file. The price: a row naming a row that turns out
// invalid only because of a reference further down is not made invalid in turn; the report
// shows the named row's error, and fixing it fixes both.
func (f *file) settle(h uint64, valid bool) error {
	waiters, ok := f.pending[h]
	if !ok {
		return nil
	}
	delete(f.pending, h)
	entry := f.u.ids[f.format.IDKind].getLine(h)
	for _, w := range waiters {
		hr := f.held[w.line]
		if !valid {
			f.markInvalid(w.line, hr, refToInvalid(w.field, w.id, entry))
		}
		if hr.waiting--; hr.waiting == 0 {
			if err := f.release(w.line, hr); err != nil {
				return err
			}
		}
	}
	return nil
}

// release decides a held row that waits on nothing more.
func (f *file) release(lineNo uint32, hr *held) error {
	delete(f.held, lineNo)
	f.heldLen -= len(hr.text)
	ids := f.u.ids[f.format.IDKind]
	if hr.invalid {
		if hr.id != "" {
			ids.set(hr.idHash, lineNo|stateInvalid)
		}
		return nil
	}
	if hr.id != "" {
		ids.set(hr.idHash, lineNo|stateValid)
	}
	return f.accept(hr.text)
}

// finish decides what still waits at the end of the file: every reference still pending names
// an id the file never defined and that did not exist when it was read, so it dangles, and its
// row is invalid.
func (f *file) finish() error {
	lines := make([]uint32, 0, len(f.held))
	for line := range f.held {
		lines = append(lines, line)
	}
	// In line order, so that the report does not depend on map iteration.
	slices.Sort(lines)
	dangling := make(map[uint32][]pendingRef, len(lines))
	for _, waiters := range f.pending {
		for _, w := range waiters {
			dangling[w.line] = append(dangling[w.line], w)
		}
	}
	for _, line := range lines {
		hr := f.held[line]
		for _, w := range dangling[line] {
			f.markInvalid(line, hr, LineError{Field: w.field, Message: fmt.Sprintf(
				"%s %q names no row of this file and no existing %s", w.field, w.id, f.format.IDKind)})
		}
		if err := f.release(line, hr); err != nil {
			return err
		}
	}
	clear(f.pending)
	return nil
}

// markInvalid reports an error of a held row, and counts the row invalid the first time.
func (f *file) markInvalid(lineNo uint32, hr *held, e LineError) {
	if hr.invalid {
		f.report(lineNo, hr.id, []LineError{e})
		return
	}
	hr.invalid = true
	f.invalid(lineNo, hr.id, []LineError{e})
}

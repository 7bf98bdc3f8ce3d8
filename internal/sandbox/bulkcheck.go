package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// The sandbox checks a bulk file as the service would, from the specification and the project's
// decisions where it says "not shown" (advisorspec.BulkResult, MaxBulkLineBytes). It shares the
// row rules with the gateway (advisorspec) but not the gateway's file checker (bulkfile): what
// a line is, which lines are rows, ids unique within a file and references resolved are written
// here again, so that a mistake in the gateway's checker shows as a difference from the
// service's (internal/bulkdiff compares the two).

// bulkFileName names a kind of bulk file in file-level errors.
func bulkFileName(kind string) string {
	if kind == advisorspec.BulkKindPeople {
		return "People/Trusts/Entities"
	}
	return "Clients"
}

// bulkLine is one line of a bulk file that holds a row: its number (blank lines count), its
// text without line ending and without the byte-order mark a first line may start with, and
// why it cannot be a row at all ("" when it may).
type bulkLine struct {
	no      int
	text    []byte
	problem string
}

// utf8BOM is the byte-order mark editors on Windows start a UTF-8 file with; it is not part of
// the first row.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readBulkLines calls fn with each line of r that holds a row, in order. A line ends at "\n",
// and a "\r" before it belongs to the ending. A line holding only JSON's whitespace holds no row
// and is skipped, though it keeps its number. A line longer than
// advisorspec.MaxBulkLineBytes is passed with a problem and without its text, which is read and
// dropped. fn may keep no slice of the text beyond its call.
func readBulkLines(ctx context.Context, r io.Reader, fn func(bulkLine)) error {
	br := bufio.NewReader(r)
	// At most the longest line, the mark and a "\r" are kept: that is all a line of the
	// longest length can hold, so a line that goes beyond it is too long.
	keep := advisorspec.MaxBulkLineBytes + len(utf8BOM) + 1
	var buf []byte
	for no := 1; ; no++ {
		if no%1000 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		buf = buf[:0]
		overflow := false
		var err error
		for {
			var part []byte
			part, err = br.ReadSlice('\n')
			part = bytes.TrimSuffix(part, []byte{'\n'})
			if room := keep - len(buf); len(part) > room {
				buf, overflow = append(buf, part[:room]...), true
			} else {
				buf = append(buf, part...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read line %d: %w", no, err)
		}
		text := bytes.TrimSuffix(buf, []byte{'\r'})
		if no == 1 {
			text = bytes.TrimPrefix(text, utf8BOM)
		}
		switch {
		case overflow || len(text) > advisorspec.MaxBulkLineBytes:
			fn(bulkLine{no: no, problem: fmt.Sprintf("line is longer than %d bytes (%s)",
				advisorspec.MaxBulkLineBytes, formatSize(advisorspec.MaxBulkLineBytes))})
		case isJSONSpace(text):
		case !utf8.Valid(text):
			fn(bulkLine{no: no, problem: "line is not valid UTF-8"})
		default:
			fn(bulkLine{no: no, text: text})
		}
		if err == io.EOF {
			return nil
		}
	}
}

// isJSONSpace reports whether b holds nothing but the whitespace JSON allows between values
// (RFC 8259): a line of it holds no row. Other spaces (a no-break space, say) are not blank:
// they make the row malformed.
func isJSONSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// bulkRow is what the check keeps of a row until every row of the file is read: enough to say
// whether the rows it names turned out valid.
type bulkRow struct {
	line    int
	id      string // "" when the row has no usable id or repeats an earlier row's
	invalid bool
	// own says the row is invalid for what it says itself, not only for naming an invalid row.
	own   bool
	cards []advisorspec.RowRef // the person, trust or entity ids it names, but its own
}

// bulkCheck is what checking a file found: its rows, their errors and which are invalid.
type bulkCheck struct {
	rows       int
	errs       []advisorspec.BulkLineError // in line order; at most maxTrackedErrors
	errorCount int                         // every error, kept or not
	invalid    map[int]bool                // by line
	// owners maps each valid People row's id to its client or top account, so that applying a
	// row can tell a reference to a row of another client from one of its own.
	owners map[string]string
}

// checkBulkFile checks every row of a bulk file of kind (advisorspec.BulkKindClients or
// BulkKindPeople; model for People) against the row rules and the file's: a row id is used
// once in a file (the first row keeps it); a People row's client or top account exists (the
// Clients file is applied before the People file that names its clients); every person, trust
// or entity it names exists or is a row of the file, anywhere in it, that is valid. Validity
// follows references: a row naming a row that is invalid, for whatever reason, and names no
// card that exists, is invalid too, as its reference would name nothing once the file is
// applied. exists answers for what the firm already has.
func checkBulkFile(ctx context.Context, r io.Reader, kind string, model advisorspec.BulkModel, exists func(advisorspec.RefKind, string) bool) (*bulkCheck, error) {
	c := &bulkCheck{invalid: map[int]bool{}, owners: map[string]string{}}
	var rows []bulkRow
	firstRow := map[string]int{} // each id to the index in rows of the row that has it
	var people advisorspec.PeopleRow
	err := readBulkLines(ctx, r, func(l bulkLine) {
		c.rows++
		if l.problem != "" {
			c.fail(l.no, "", "", l.problem)
			return
		}
		row := bulkRow{line: l.no}
		var rowErrs []*advisorspec.Error
		var refs []advisorspec.RowRef
		owner := ""
		if kind == advisorspec.BulkKindPeople {
			rowErrs = people.Decode(l.text, model)
			row.id = people.ID
			owner = people.ClientID
			if model == advisorspec.TopAccountModel {
				owner = people.TopAccountID
			}
			refs = slices.Collect(people.References())
		} else {
			var client advisorspec.ClientRow
			client, rowErrs = advisorspec.CheckClientRow(l.text)
			row.id = client.ID
		}
		id := row.id
		for _, e := range rowErrs {
			c.fail(l.no, id, e.Field, e.Message)
		}
		if first, seen := firstRow[id]; seen && id != "" {
			// A repeated id is the row's fault whatever it names, so its references go unchecked.
			c.fail(l.no, id, "id", fmt.Sprintf("id %q is already used on line %d", id, rows[first].line))
			c.invalid[l.no] = true
			return
		}
		for _, ref := range refs {
			switch {
			case ref.Kind == advisorspec.RefCard && ref.ID == id:
				// A row naming itself: the row rules have said so.
			case ref.Kind == advisorspec.RefCard:
				row.cards = append(row.cards, ref)
			case !exists(ref.Kind, ref.ID):
				c.fail(l.no, id, ref.Field, fmt.Sprintf("%s %q names no %s of this upload and no existing one", ref.Field, ref.ID, ref.Kind))
			}
		}
		row.invalid = c.invalid[l.no]
		row.own = row.invalid
		if id != "" {
			firstRow[id] = len(rows)
			if !row.invalid {
				c.owners[id] = owner
			}
		}
		rows = append(rows, row)
	})
	if err != nil {
		return c, err
	}
	c.resolve(rows, firstRow, exists)
	slices.SortStableFunc(c.errs, func(a, b advisorspec.BulkLineError) int { return a.Line - b.Line })
	name := bulkFileName(kind)
	switch {
	case c.rows == 0:
		return c, fmt.Errorf("%s file: the file has no rows", name)
	case len(c.invalid) == c.rows:
		return c, fmt.Errorf("%s file: every row of the file is invalid", name)
	case c.errorCount > len(c.errs):
		return c, fmt.Errorf("the file has more than %d errors; nothing of it was applied", maxTrackedErrors)
	}
	return c, nil
}

// resolve checks the references to persons, trusts and entities once every row is read. A
// reference to a row of the file is good while that row is: an invalid row makes every row
// naming it invalid, and those rows the rows naming them, until nothing changes; rows naming
// each other in a circle stay valid as long as each is valid on its own. A reference to a card
// that exists is good whatever the file says of it. The file's rows are looked at first, as
// asking the store is the dearer question.
func (c *bulkCheck) resolve(rows []bulkRow, firstRow map[string]int, exists func(advisorspec.RefKind, string) bool) {
	namedBy := map[int][]int{} // the index of a row to the indexes of the rows naming it
	var spoilt []int           // rows found invalid, whose namers are still to visit
	for i := range rows {
		if rows[i].invalid {
			spoilt = append(spoilt, i)
		}
	}
	for i := range rows {
		row := &rows[i]
		for _, ref := range row.cards {
			target, inFile := firstRow[ref.ID]
			switch {
			case inFile:
				if by := namedBy[target]; len(by) == 0 || by[len(by)-1] != i {
					namedBy[target] = append(by, i)
				}
			case !exists(ref.Kind, ref.ID):
				c.fail(row.line, row.id, ref.Field, fmt.Sprintf("%s %q names no row of this file and no existing %s", ref.Field, ref.ID, ref.Kind))
				row.own = true
				c.spoil(row, &spoilt, i)
			}
		}
	}
	for len(spoilt) > 0 {
		target := rows[spoilt[len(spoilt)-1]]
		by := namedBy[spoilt[len(spoilt)-1]]
		spoilt = spoilt[:len(spoilt)-1]
		if len(by) == 0 || exists(advisorspec.RefCard, target.id) {
			continue
		}
		for _, i := range by {
			row := &rows[i]
			if row.invalid && !target.own {
				// Blame flows one way: a row already invalid is not told that a row is invalid
				// for naming it, or for naming one that names it, round a circle.
				continue
			}
			for _, ref := range row.cards {
				if ref.ID == target.id {
					c.fail(row.line, row.id, ref.Field, fmt.Sprintf("%s %q names the row on line %d, which is invalid", ref.Field, ref.ID, target.line))
				}
			}
			c.spoil(row, &spoilt, i)
		}
	}
}

// spoil marks a row invalid, and queues it for the rows naming it the first time.
func (c *bulkCheck) spoil(row *bulkRow, spoilt *[]int, i int) {
	if row.invalid {
		return
	}
	row.invalid = true
	c.invalid[row.line] = true
	delete(c.owners, row.id)
	*spoilt = append(*spoilt, i)
}

// fail records an error of a line and makes the line invalid.
func (c *bulkCheck) fail(line int, id, field, msg string) {
	c.invalid[line] = true
	c.errorCount++
	if len(c.errs) < maxTrackedErrors {
		c.errs = append(c.errs, advisorspec.BulkLineError{Line: line, ID: id, Field: field, Message: msg})
	}
}

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
	switch kind {
	case advisorspec.BulkKindPeople:
		return "People/Trusts/Entities"
	case advisorspec.BulkKindTopAccounts:
		return "Top Accounts"
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

// bulkLookup answers the check's questions about what the firm already has, before the file
// changes anything.
type bulkLookup struct {
	// exists reports whether a client (advisorspec.RefClient) or top account
	// (advisorspec.RefTopAccount) the id names exists.
	exists func(kind advisorspec.RefKind, id string) bool
	// card reports the type of the card of owner, a client or top account, that id names.
	card func(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool)
}

// bulkRow is what the check keeps of a row until every row of the file is read: enough to say
// whether the rows it names turned out valid.
type bulkRow struct {
	line  int
	id    string             // "" when the row has no usable id or repeats an earlier row's
	owner advisorspec.RowRef // its client, or top account in the deprecated model
	// own says the row is invalid for what it says itself, not only for naming an invalid row.
	own   bool
	cards []cardRef // the persons, trusts and entities it names, but itself
}

// cardRef is a reference of a row to a person, trust or entity, and what it turned out to name
// (namesCard, ...) once the file is read.
type cardRef struct {
	advisorspec.RowRef
	names int
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

// checkBulkFile checks every row of a bulk file of kind (advisorspec.BulkKindClients,
// BulkKindTopAccounts or BulkKindPeople; model for People) against the row rules and the
// file's, so that every row it passes can be applied: a row id is used once in a file (the first
// row keeps it); a People row's client or top account exists (the Clients and Top Accounts files
// are applied before the People file that names their rows); a row does not change the type of the card its id names; every person,
// trust or entity it names is a card of the row's own client, or a row of the file, anywhere
// in it, for that client, that is valid. Validity follows references: a row naming a row that
// is invalid, for whatever reason, is invalid too, as its reference would name nothing once
// the file is applied. look answers for what the firm already has.
func checkBulkFile(ctx context.Context, r io.Reader, kind string, model advisorspec.BulkModel, look bulkLookup) (*bulkCheck, error) {
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
		if kind == advisorspec.BulkKindPeople {
			rowErrs = people.Decode(l.text, model)
			row.id = people.ID
			row.owner = advisorspec.RowRef{Kind: advisorspec.RefClient, Field: "client_id", ID: people.ClientID}
			if model == advisorspec.TopAccountModel {
				row.owner = advisorspec.RowRef{Kind: advisorspec.RefTopAccount, Field: "top_account_id", ID: people.TopAccountID}
			}
			refs = slices.Collect(people.References())
		} else if kind == advisorspec.BulkKindTopAccounts {
			var account advisorspec.TopAccountRow
			account, rowErrs = advisorspec.CheckTopAccountRow(l.text)
			row.id = account.ID
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
			return
		}
		for _, ref := range refs {
			switch {
			case ref.Kind == advisorspec.RefCard && ref.ID == id:
				// A row naming itself: the row rules have said so.
			case ref.Kind == advisorspec.RefCard:
				row.cards = append(row.cards, cardRef{RowRef: ref})
			case !look.exists(ref.Kind, ref.ID):
				c.fail(l.no, id, ref.Field, advisorspec.UnknownOwnerMessage(ref))
			}
		}
		if kind == advisorspec.BulkKindPeople && id != "" && people.Type != "" {
			// The row updates the card its id names, and a person cannot become a trust.
			if typ, ok := look.card(row.owner, id); ok && typ != people.Type {
				c.fail(l.no, id, "type", fmt.Sprintf("id %q names a %s card; a row cannot change a card's type", id, typ))
			}
		}
		row.own = c.invalid[l.no]
		if id != "" {
			firstRow[id] = len(rows)
		}
		rows = append(rows, row)
	})
	if err != nil {
		return c, err
	}
	c.resolve(rows, firstRow, look.card)
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

// What a reference to a person, trust or entity turned out to name.
const (
	namesCard       = iota // a card of the row's own client: good whatever the file says of its row
	namesRow               // a row of the file for the same client: good while that row is valid
	namesForeignRow        // a row of the file for another client, and no card of the row's own
	namesNothing           // no row of the file, and no card of the row's own client
)

// unreached is the distance of a row that no chain of references leads from a row invalid on
// its own: a valid row.
const unreached = -1

// resolve decides the references to persons, trusts and entities once every row is read, and
// so which rows are valid. A row is invalid when it names a card its client does not have and
// the file does not make: no row of the file, a row of another client's, or a row that is
// invalid. Rows naming each other in a circle are valid as long as each is valid on its own.
//
// A row's distance is the fewest references from it to a row invalid on its own (0 for such a
// row). A row is told of each reference that makes its distance, so that what it hears does not
// depend on the order of the rows, and of every reference to a row invalid on its own; it is
// not told that a row is invalid when that row is invalid only because of it, round a circle.
func (c *bulkCheck) resolve(rows []bulkRow, firstRow map[string]int, card func(advisorspec.RowRef, string) (advisorspec.ContactType, bool)) {
	hasCard := func(owner advisorspec.RowRef, id string) bool {
		if owner.ID == "" {
			return false
		}
		_, ok := card(owner, id)
		return ok
	}
	namedBy := make([][]int, len(rows)) // the index of a row to the indexes of the rows naming it
	for i := range rows {
		row := &rows[i]
		for j := range row.cards {
			ref := &row.cards[j]
			target, inFile := firstRow[ref.ID]
			sameOwner := inFile && rows[target].owner.ID == row.owner.ID
			switch {
			case sameOwner:
				// Whether a card rescues the reference is asked only if the row turns out invalid.
				ref.names = namesRow
				if n := namedBy[target]; len(n) == 0 || n[len(n)-1] != i {
					namedBy[target] = append(n, i)
				}
			case hasCard(row.owner, ref.ID):
				ref.names = namesCard
			case inFile:
				ref.names = namesForeignRow
				row.own = true
			default:
				ref.names = namesNothing
				row.own = true
			}
		}
	}

	// Breadth first from every row invalid on its own, backwards along the references: each row
	// reached first by the shortest chain. A row whose card exists stops the chain, as its
	// references name the card whatever its row says.
	dist := make([]int, len(rows))
	var queue []int
	for i := range rows {
		dist[i] = unreached
		if rows[i].own {
			dist[i] = 0
			queue = append(queue, i)
		}
	}
	stops := make([]bool, len(rows))
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		if stops[t] = rows[t].id == "" || hasCard(rows[t].owner, rows[t].id); stops[t] {
			continue
		}
		for _, i := range namedBy[t] {
			if dist[i] == unreached {
				dist[i] = dist[t] + 1
				queue = append(queue, i)
			}
		}
	}

	for i := range rows {
		row := &rows[i]
		if dist[i] == unreached {
			if row.id != "" {
				c.owners[row.id] = row.owner.ID
			}
			continue
		}
		c.invalid[row.line] = true
		for _, ref := range row.cards {
			switch ref.names {
			case namesRow:
				t := firstRow[ref.ID]
				if d := dist[t]; d != unreached && !stops[t] && (d == 0 || d+1 == dist[i]) {
					c.fail(row.line, row.id, ref.Field, fmt.Sprintf("%s %q names the row on line %d, which is invalid", ref.Field, ref.ID, rows[t].line))
				}
			case namesForeignRow:
				c.fail(row.line, row.id, ref.Field, fmt.Sprintf("%s %q names no person, trust or entity of %s %q", ref.Field, ref.ID, row.owner.Field, row.owner.ID))
			case namesNothing:
				c.fail(row.line, row.id, ref.Field, fmt.Sprintf("%s %q names no row of this file and no existing %s", ref.Field, ref.ID, ref.Kind))
			}
		}
	}
}

// fail records an error of a line and makes the line invalid.
func (c *bulkCheck) fail(line int, id, field, msg string) {
	c.invalid[line] = true
	c.errorCount++
	if len(c.errs) < maxTrackedErrors {
		c.errs = append(c.errs, advisorspec.BulkLineError{Line: line, ID: id, Field: field, Message: msg})
	}
}

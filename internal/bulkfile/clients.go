package bulkfile

import "github.com/advisorhq/gateway/internal/advisorspec"

// Clients is the Format of the Clients file. Its rows define client ids (RefClient), which the
// People file's client_id names; a Clients row names no other row. primary_id and spouse_id are
// not references: they are the ids People rows will have, and link the cards Add Client makes
// to those rows whether or not such a row ever comes.
func Clients() Format {
	return Format{
		Name:   "Clients",
		IDKind: advisorspec.RefClient,
		Check: func(line []byte) Line {
			row, errs := advisorspec.CheckClientRow(line)
			return Line{ID: row.ID, Errors: errs}
		},
	}
}

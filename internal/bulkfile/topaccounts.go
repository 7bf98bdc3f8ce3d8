package bulkfile

import "github.com/advisorhq/gateway/internal/advisorspec"

// TopAccounts is the Format of the deprecated container model's Add/Update Top Accounts file.
// Its rows define top account ids (RefTopAccount), which the People file's top_account_id
// names; a row names no other row.
func TopAccounts() Format {
	return Format{
		Name:   "Top Accounts",
		IDKind: advisorspec.RefTopAccount,
		Check: func(line []byte) Line {
			row, errs := advisorspec.CheckTopAccountRow(line)
			return Line{ID: row.ID, Errors: errs}
		},
	}
}

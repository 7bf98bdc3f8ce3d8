package advisorspec

import "fmt"

// TopAccountRow is one line of the Add/Update Top Accounts file of the deprecated container
// model. The specification names the file ("an existing top account or one in the Add/Update
// Top Accounts file") but not its fields; this is the project's decision: a row is an Add Top
// Account body keyed by the caller's id, as a Clients row is an Add Client body, so the file
// and the endpoint hold a top account to the same limits. id is the top account's external_id
// (what a People row's top_account_id names), at most MaxExternalID characters; name at most
// MaxTopAccountName. Both are required: a row that names a top account not there yet adds it,
// and Add needs a name.
type TopAccountRow struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// topAccountRowFields are the file's fields in the order their rules are checked.
var topAccountRowFields = []struct {
	name string
	max  int
}{{"id", MaxExternalID}, {"name", MaxTopAccountName}}

// CheckTopAccountRow decodes one Top Accounts row and reports every field at fault, one error
// per field, in a fixed order: the row's shape, fields the file does not have, missing fields,
// then each field's value. The row carries what could be read even when there are errors, so a
// report can name the row's id.
func CheckTopAccountRow(data []byte) (TopAccountRow, []*Error) {
	var row TopAccountRow
	obj, err := decodeObject(data)
	if err != nil {
		return row, []*Error{err}
	}
	var errs []*Error
	for _, key := range obj.sortedKeys() {
		switch key {
		case "id", "name":
		case "external_id", "wid":
			// The REST API's names: the row names its top account by id, and the service
			// assigns the wid.
			errs = append(errs, invalid(key, "%s is not a Top Accounts file field: the top account is named by id", key))
		default:
			errs = append(errs, invalid(key, "%s is not a Top Accounts file field", key))
		}
	}
	for _, f := range topAccountRowFields {
		if raw, ok := obj[f.name]; !ok || isNull(raw) {
			errs = append(errs, invalid(f.name, "%s is required", f.name))
		}
	}
	for _, f := range topAccountRowFields {
		raw, ok := obj[f.name]
		if !ok || isNull(raw) {
			continue
		}
		s, err := text(f.name, raw, f.max)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if f.name == "id" {
			row.ID = s
		} else {
			row.Name = s
		}
	}
	return row, errs
}

// UnknownOwnerMessage is the error of a People row whose client_id or top_account_id names
// nothing: no row of the file that defines such owners (the Clients file, or in the deprecated
// model the Top Accounts file) and nothing the service has.
func UnknownOwnerMessage(ref RowRef) string {
	file := "Clients"
	if ref.Kind == RefTopAccount {
		file = "Top Accounts"
	}
	return fmt.Sprintf("%s %q names no %s of the %s file and no existing one", ref.Field, ref.ID, ref.Kind, file)
}

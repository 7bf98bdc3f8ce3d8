package advisorspec

import (
	"fmt"
	"strings"
	"time"
)

// BulkResult is what the service writes beside a bulk file once it has processed it, as
// <name>.result.json (BulkResultName). The specification does not show how bulk rows that fail
// are reported ("Errors"); this is the project's decision (spec README, "bulk row errors"), and
// the sandbox writes it so that the gateway can read it back over SFTP.
type BulkResult struct {
	// File is the bulk file's name, such as "people-20261123T204500Z.jsonl".
	File string `json:"file"`
	// Kind is "clients", "people" or "top-accounts" (the deprecated model's Add/Update Top
	// Accounts file): the first part of the file's name.
	Kind string `json:"kind"`
	// Model is the People file's model, "clients" or "top_accounts" (the deprecated container
	// model); empty for a Clients file.
	Model string `json:"model,omitempty"`
	// Rows counts the file's rows (non-blank lines); Applied those added or updated; Invalid
	// those that were not, for a rule they break or because they could not be applied. Rows is
	// Applied plus Invalid.
	Rows    int `json:"rows"`
	Applied int `json:"applied"`
	Invalid int `json:"invalid"`
	// Errors are the first MaxBulkResultErrors errors in line order; ErrorCount counts them all.
	Errors     []BulkLineError `json:"errors"`
	ErrorCount int             `json:"error_count"`
	// FileError, when set, says why nothing of the file was applied: it is empty, every row is
	// invalid, or it could not be read.
	FileError string `json:"file_error,omitempty"`
	// ProcessedAt is when processing ended, in UTC.
	ProcessedAt time.Time `json:"processed_at"`
}

// ExplainNoneApplied gives a result of which no row was applied a FileError when it has none,
// from its first error: FileError is empty only when rows were applied, whoever wrote the
// result (the sandbox, or a service that lists only the lines).
func (r *BulkResult) ExplainNoneApplied() {
	if r.Applied > 0 || r.FileError != "" {
		return
	}
	r.FileError = "no row was applied"
	if len(r.Errors) > 0 {
		r.FileError += fmt.Sprintf("; line %d: %s", r.Errors[0].Line, r.Errors[0].Message)
	}
}

// BulkLineError is a rule one line of a bulk file breaks: the spec README's per-line report.
type BulkLineError struct {
	Line    int    `json:"line"`
	ID      string `json:"id,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// MaxBulkLineBytes is the longest line of a bulk file, without its line ending and without the
// byte-order mark a first line may start with. The specification does not show a limit
// ("Maximum bulk file size and row counts: not shown"); this is the project's decision, which the
// sandbox applies and the gateway checks before it sends a file. A longer line is an error on
// that line; the lines after it are read as usual.
const MaxBulkLineBytes = 1 << 20

// MaxBulkResultErrors caps BulkResult.Errors, as the gateway's report caps its own.
const MaxBulkResultErrors = 1000

// Bulk file kinds and People-file models as BulkResult spells them.
const (
	BulkKindClients      = "clients"
	BulkKindPeople       = "people"
	BulkKindTopAccounts  = "top-accounts"
	BulkModelClients     = "clients"
	BulkModelTopAccounts = "top_accounts"
)

// String is the model as BulkResult spells it.
func (m BulkModel) String() string {
	if m == TopAccountModel {
		return BulkModelTopAccounts
	}
	return BulkModelClients
}

// BulkResultName is the name of the result written for the bulk file named name: its ".jsonl"
// replaced by ".result.json", so "clients-20261123T204500Z.jsonl" has
// "clients-20261123T204500Z.result.json".
func BulkResultName(name string) string {
	return strings.TrimSuffix(name, ".jsonl") + ".result.json"
}

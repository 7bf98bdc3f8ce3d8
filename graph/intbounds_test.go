package graph_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// intBounds are every field, argument and input field of type Int in the schema, each with the
// bound that keeps its values within Int's 32 bits and where that bound is enforced. GraphQL's
// Int is "a signed 32-bit integer" (the GraphQL specification); the service's integers have no
// bound, so an Int that carries one of them carries no bound either. gqlscalar's Int refuses a
// value beyond 32 bits at run time (an error, not a wrong answer); this table says why each Int
// never needs it.
var intBounds = map[string]string{
	// Bulk files: bulkfile refuses a file of more than 2^30−1 lines (bulkfile.maxLine).
	"BulkFileReport.rows":        "0 to 2^30−1: a file's non-blank lines, bulkfile refuses a file of more lines",
	"BulkFileReport.validRows":   "0 to 2^30−1: some of a file's rows (bulkfile)",
	"BulkFileReport.invalidRows": "0 to 2^30−1: some of a file's rows (bulkfile)",
	"BulkFileReport.errorCount":  "0 to 2^31−1: bulkfile's count stops at Int's largest (a line may break many rules)",
	"BulkLineError.line":         "1 to 2^30−1: a line number, bulkfile refuses a file of more lines",
	"BulkUpload.rows":            "0 to 2^31−2: the rows of a load's two files, each at most 2^30−1 lines (bulkfile)",
	"BulkUpload.rowsTotal":       "0 to 2^31−2: the rows of a load's two files, each at most 2^30−1 lines (bulkfile)",
	"BulkResult.rows":            "the service's count of the rows of a file the gateway sent, at most 2^30−1 (bulkfile); a larger count is refused by gqlscalar.MarshalInt",
	"BulkResult.applied":         "at most the file's rows, 2^30−1 (bulkfile); beyond, gqlscalar.MarshalInt refuses it",
	"BulkResult.invalid":         "at most the file's rows, 2^30−1 (bulkfile); beyond, gqlscalar.MarshalInt refuses it",
	"BulkResult.errorCount":      "at most the file's rows, 2^30−1 (bulkfile); beyond, gqlscalar.MarshalInt refuses it",

	// Pages of the service's lists.
	"Query.topAccounts(page)":                                    "1 to 2^31−1: family.Service.TopAccounts refuses below 1, Int's own range above (gqlscalar.UnmarshalInt)",
	"Query.topAccounts(limit)":                                   "1 to 100, the specification's \"Top account list page size\", checked by family.Service.TopAccounts",
	"Query.topAccounts(first)":                                   "1 to 100, the specification's \"Top account list page size\", checked by cursor.Offsets.Parse",
	"Query.topAccounts(last)":                                    "1 to 100, the specification's \"Top account list page size\", checked by cursor.Offsets.Parse",
	"TopAccount.contactsConnection(first)":                       "1 to 1000 (family.MaxContactPage), checked by cursor.Offsets.Parse",
	"TopAccount.contactsConnection(last)":                        "1 to 1000 (family.MaxContactPage), checked by cursor.Offsets.Parse",
	"ContactConnection.totalCount":                               "a family's cards, which the service lists in one answer; gqlscalar.MarshalInt refuses a count beyond 32 bits",
	"OffsetPageInfo.page":                                        "the page asked for (topAccounts(page), within 32 bits), which the service answers",
	"OffsetPageInfo.limit":                                       "1 to 100, the specification's \"Top account list page size\", asked for by topAccounts(limit)",
	"OffsetPageInfo.totalCount":                                  "a firm's top accounts, which no firm has 2^31 of; the specification sets no bound, so gqlscalar.MarshalInt refuses one beyond",
	"OffsetPageInfo.totalPages":                                  "at most totalCount; gqlscalar.MarshalInt refuses one beyond 32 bits",
	"TopAccount.documents(first)":                                "1 to 1000, the specification's \"Document list page size\", checked by vault.Service.List",
	"DocumentConnection.totalCount":                              "a top account's documents, which none has 2^31 of; the specification sets no bound, so gqlscalar.MarshalInt refuses one beyond",
	"Query.eventHistory(first)":                                  "1 to eventhub.MaxRecent (1000), checked by eventhub.Hub.History",
	"Query.eventHistory(last)":                                   "1 to eventhub.MaxRecent (1000), checked by eventhub.Hub.History",
	"Query.recentEvents(last)":                                   "1 to eventhub.MaxRecent (1000), checked by eventhub.Hub.Recent",
	"ClientProgressChanged.completionPercentage":                 "0 to 100, the specification's \"CompletionPercentage integer 0 to 100\", checked by advisorspec's percent rule when the webhook is received",
	"DocumentStarted.documentProgressPercentage":                 "0 to 100, the specification's \"DocumentProgressPercentage | integer 0 to 100\", checked by advisorspec's percent rule",
	"DocumentPendingValidation.documentProgressPercentage":       "0 to 100, the specification's \"DocumentProgressPercentage | integer 0 to 100\", checked by advisorspec's percent rule",
	"DocumentCompleted.documentProgressPercentage":               "0 to 100, the specification's \"DocumentProgressPercentage | integer 0 to 100\", checked by advisorspec's percent rule",
	"AssistantMultiDocumentRequiresReview.detectedDocumentCount": "0 to 2^31−1: advisorspec's int32 rule keeps a wider count out of the stored event (docs/events.md)",
}

// Every Int in schema/ is in intBounds, so none carries a value outside 32 bits unseen: a new
// Int of the service's unbounded integers fails here until it is a BigInt or its bound is
// stated and enforced.
func TestEveryIntInTheSchemaHasAThirtyTwoBitBound(t *testing.T) {
	files, err := filepath.Glob("../schema/*.graphqls")
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema files: %v", err)
	}
	var sources []*ast.Source
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, &ast.Source{Name: f, Input: string(b)})
	}
	schema, gerr := gqlparser.LoadSchema(sources...)
	if gerr != nil {
		t.Fatalf("load the schema: %v", gerr)
	}
	var ints []string
	for _, def := range schema.Types {
		if def.BuiltIn {
			continue
		}
		for _, f := range def.Fields {
			if isInt(f.Type) {
				ints = append(ints, def.Name+"."+f.Name)
			}
			for _, a := range f.Arguments {
				if isInt(a.Type) {
					ints = append(ints, def.Name+"."+f.Name+"("+a.Name+")")
				}
			}
		}
	}
	slices.Sort(ints)
	for _, name := range ints {
		if intBounds[name] == "" {
			t.Errorf("%s is an Int, which GraphQL holds to 32 bits, and intBounds does not say why its values fit: "+
				"make it a BigInt if it carries one of the service's integers, or state its bound and where it is enforced in intBounds", name)
		}
	}
	for name := range intBounds {
		if !slices.Contains(ints, name) {
			t.Errorf("intBounds lists %s, which is no Int of the schema: remove it", name)
		}
	}
}

// isInt reports whether t is Int, in any list or non-null wrapping.
func isInt(t *ast.Type) bool {
	for t.Elem != nil {
		t = t.Elem
	}
	return t.NamedType == "Int"
}

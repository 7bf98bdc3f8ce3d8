package schemachange_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/schemachange"
)

// record is a docs/schema-changes.md with a section stating the rule above the unreleased one
// and a released section below it.
const record = "# Schema changes\n\n" +
	"Changes are recorded below.\n\n" +
	"## How this page is checked\n\nThe rule's examples name `Query.topAccounts.page` and `Document`: they record nothing.\n\n" +
	"## Unreleased\n\n" +
	"| Field | Was | Now |\n|---|---|---|\n" +
	"| `Charity.ein`, `CharityInput.ein` | `Int` | `String` |\n\n" +
	"### Relay ids\n\n`TopAccount` gained an `id`; `Query.node` ...\n\n" +
	"```graphql\n{ `Fenced.field` }\n```\n\n" +
	"## 1.0.0\n\n`Document.state` was renamed `Document.status`.\n"

func breaking(path string) schemachange.Change {
	return schemachange.Change{Type: "FIELD_TYPE_CHANGED", Path: path, Message: "Field '" + path + "' changed type", Level: schemachange.Breaking}
}

// The issue: `.ci/run` "fails on a breaking change that `docs/schema-changes.md` does not record".
func TestABreakingChangeIsRecordedOnlyWhenTheUnreleasedSectionNamesIt(t *testing.T) {
	rec, err := schemachange.Parse([]byte(record))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		change    schemachange.Change
		recorded  bool
		elsewhere string
	}{
		{"a breaking change named by its path is recorded", breaking("Charity.ein"), true, ""},
		{"a later row's path is recorded too", breaking("CharityInput.ein"), true, ""},
		{"a change inside a type the section names is recorded", breaking("TopAccount.id"), true, ""},
		{"an argument's change is recorded by its field", breaking("Query.node.id"), true, ""},
		{"a breaking change the section does not name is not recorded", breaking("CharityPatch.ein"), false, ""},
		{"a field is not recorded by a sibling's name", breaking("Charity.legalName"), false, ""},
		{"a name in a subsection's words must be in a code span", breaking("Relay"), false, ""},
		{"a change named only in a released section is not recorded", breaking("Document.state"), false, "1.0.0"},
		{"the rule's examples above the Unreleased section record nothing", breaking("Query.topAccounts.page"), false, ""},
		{"a fenced code block records nothing", breaking("Fenced.field"), false, ""},
		{"a dangerous change needs no record", schemachange.Change{Type: "FIELD_ARGUMENT_ADDED", Path: "Query.x.y", Level: schemachange.Dangerous}, true, ""},
		{"a non-breaking change needs no record", schemachange.Change{Type: "FIELD_ADDED", Path: "Query.x", Level: schemachange.NonBreaking}, true, ""},
		{"a change without a path is not recorded unless its kind is named", schemachange.Change{Type: "SCHEMA_QUERY_TYPE_CHANGED", Level: schemachange.Breaking}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := rec.Check([]schemachange.Change{tc.change})
			if tc.recorded {
				if len(got) != 0 {
					t.Fatalf("Check = %v, want it recorded", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("Check = %v, want it unrecorded", got)
			}
			if got[0].Elsewhere != tc.elsewhere {
				t.Errorf("Elsewhere = %q, want %q", got[0].Elsewhere, tc.elsewhere)
			}
			msg := got[0].String()
			if !strings.Contains(msg, "`"+tc.change.Key()+"`") || !strings.Contains(msg, `"## Unreleased"`) {
				t.Errorf("the message %q does not say what to record where", msg)
			}
			if tc.elsewhere != "" && !strings.Contains(msg, `"## `+tc.elsewhere+`"`) {
				t.Errorf("the message %q does not name the section that names the change", msg)
			}
		})
	}
}

func TestCheckReportsEveryUnrecordedBreakingChangeInOrder(t *testing.T) {
	rec, err := schemachange.Parse([]byte(record))
	if err != nil {
		t.Fatal(err)
	}
	got := rec.Check([]schemachange.Change{breaking("B.b"), breaking("Charity.ein"), breaking("A.a")})
	var keys []string
	for _, u := range got {
		keys = append(keys, u.Change.Key())
	}
	if want := []string{"B.b", "A.a"}; !slices.Equal(keys, want) {
		t.Errorf("unrecorded = %v, want %v", keys, want)
	}
}

// There must be exactly one place where the changes since the last release are recorded.
func TestARecordWithoutOneUnreleasedSectionIsRefused(t *testing.T) {
	for name, md := range map[string]string{
		"none":              "# Schema changes\n\n## 1.0.0\n\n`A.b`\n",
		"two":               "## Unreleased\n\n`A.b`\n\n## Unreleased\n\n`C.d`\n",
		"only a subsection": "# Schema changes\n\n### Unreleased\n\n`A.b`\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := schemachange.Parse([]byte(md)); err == nil || !strings.Contains(err.Error(), `"## Unreleased"`) {
				t.Errorf("Parse = %v, want an error naming \"## Unreleased\"", err)
			}
		})
	}
}

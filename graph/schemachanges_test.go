package graph_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/internal/schemachange"
	"github.com/advisorhq/gateway/internal/testnpm"
)

// published is the last published schema: what clients were generated from. A release copies
// testdata/schema.graphql over it (docs/schema-changes.md says how).
const published = "testdata/published.graphql"

// inspector is the directory of graphql-inspector and the script that runs it.
const inspector = "testdata/inspector"

// The issue asks that schema changes be deliberate: CI "compares the served schema with the
// committed snapshot of the last published one (`@graphql-inspector/cli` 7.0.0 or equivalent)
// and fails on a breaking change that `docs/schema-changes.md` does not record".
//
// The served schema is taken from the executable schema the gateway serves, printed as
// TestSchemaMatchesItsGoldenFile prints it (so the same text as testdata/schema.graphql when
// that test passes), rather than fetched from a running gateway: /graphql/schema.graphql is that
// schema printed without comments, which TestTheGatewayServesTheSchemaIntrospectionDescribes
// holds to introspection, and a release copies the golden file, so snapshot and served schema
// are printed alike.
func TestEveryBreakingChangeSinceThePublishedSchemaIsRecorded(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}}).Schema()
	var served bytes.Buffer
	formatter.NewFormatter(&served, formatter.WithComments()).FormatSchema(schema)
	changes := inspectorDiff(t, readFile(t, published), served.Bytes())
	for _, c := range changes {
		// A criticality spelled otherwise would count as not breaking and pass unseen.
		if c.Level != schemachange.Breaking && c.Level != schemachange.Dangerous && c.Level != schemachange.NonBreaking {
			t.Fatalf("graphql-inspector rated %s %q, which the check does not know", c.Key(), c.Level)
		}
	}

	md := readFile(t, "../docs/schema-changes.md")
	rec, err := schemachange.Parse(md)
	if err != nil {
		t.Fatalf("docs/schema-changes.md: %v", err)
	}
	for _, u := range rec.Check(changes) {
		t.Errorf("docs/schema-changes.md: %s", u)
	}
	if t.Failed() {
		t.Log("a breaking change breaks generated clients: if it is meant, record it in docs/schema-changes.md (docs/development.md says how); if not, undo it")
	}
}

// The CLI's default rule would hide this change (it drops a change at a path where it sees an
// addition), so the check runs graphql-inspector without it; this makes sure it still reports
// an input field whose type changed as it gained a description, as CharityInput.ein did.
func TestTheInspectorReportsABreakingChangeWhereADescriptionWasAdded(t *testing.T) {
	old := []byte("type Query { a(x: Int): Int }\ninput In { ein: Int }\n")
	now := []byte("type Query { a(x: Int): Int }\ninput In {\n  \"Employer identification number.\"\n  ein: String\n}\n")
	changes := inspectorDiff(t, old, now)
	for _, c := range changes {
		if c.Path == "In.ein" && c.Type == "INPUT_FIELD_TYPE_CHANGED" && c.Level == schemachange.Breaking {
			return
		}
	}
	t.Errorf("graphql-inspector reported %+v, want In.ein's type change as BREAKING", changes)
}

// inspectorDiff runs graphql-inspector from the schema old to the schema now.
func inspectorDiff(t *testing.T, old, now []byte) []schemachange.Change {
	t.Helper()
	// Long enough to wait for another test process's install and then, rarely, to run one.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	if err := testnpm.Install(ctx, inspector, "@graphql-inspector/core"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	oldFile, nowFile := filepath.Join(dir, "old.graphql"), filepath.Join(dir, "now.graphql")
	for f, b := range map[string][]byte{oldFile: old, nowFile: now} {
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var changes []schemachange.Change
	testnpm.RunJSON(t, exec.CommandContext(ctx, "node", filepath.Join(inspector, "diff.mjs"), oldFile, nowFile), &changes)
	return changes
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

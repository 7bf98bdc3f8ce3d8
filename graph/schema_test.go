package graph_test

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/internal/family"
	"github.com/advisorhq/gateway/internal/vault"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The schema is a contract other teams code against: the golden file makes every change to it
// visible in review. Run `go test ./graph -update` after changing it on purpose.
func TestSchemaMatchesItsGoldenFile(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}}).Schema()
	var b bytes.Buffer
	formatter.NewFormatter(&b, formatter.WithComments()).FormatSchema(schema)
	const golden = "testdata/schema.graphql"
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read %s (create it with -update): %v", golden, err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("the schema differs from %s; if the change is meant, run go test ./graph -update and review the diff", golden)
	}
}

// Every enum value the schema lists must map to a value of the specification and back, or a
// value would fail at run time instead of here.
func TestSchemaEnumsMatchTheSpecificationsValues(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}}).Schema()
	tables := family.EnumTables()
	for name, values := range vault.EnumTables() {
		tables[name] = values
	}
	for name, want := range tables {
		def := schema.Types[name]
		if def == nil {
			t.Errorf("the schema has no enum %s", name)
			continue
		}
		var got []string
		for _, v := range def.EnumValues {
			got = append(got, v.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("enum %s:\n schema %v\n tables %v", name, got, want)
		}
	}
}

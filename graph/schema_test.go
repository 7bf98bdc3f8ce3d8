package graph_test

import (
	"bytes"
	"flag"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
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

// Input fields are named as the output fields that read the same thing back (the scheme the
// schema's description states): each input of an object is held to the object's fields.
func TestInputFieldsAreNamedAsTheirOutputs(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}}).Schema()
	outputOf := map[string]string{
		"CreateTopAccountInput": "TopAccount", "UpdateTopAccountInput": "TopAccount",
		"CreateDocumentInput": "Document", "UpdateDocumentInput": "Document",
		"IndividualPatch": "Individual", "TrustPatch": "Trust", "EntityPatch": "Entity",
		"CharityPatch": "Charity", "WillPatch": "Will", "ClassPatch": "Class",
		"ClientInput": "ClientDetails",
	}
	checked := 0
	for name, def := range schema.Types {
		if def.Kind != ast.InputObject || def.Directives.ForName("oneOf") != nil || name == "EventFilter" {
			continue
		}
		out, ok := outputOf[name]
		if !ok {
			out = strings.TrimSuffix(name, "Input")
		}
		obj := schema.Types[out]
		if obj == nil || obj.Kind != ast.Object {
			t.Errorf("input %s has no output type %s to be named after", name, out)
			continue
		}
		for _, f := range def.Fields {
			// A deprecated output is on its way out: an input must not be named after it.
			if of := obj.Fields.ForName(f.Name); of == nil || of.Directives.ForName("deprecated") != nil {
				t.Errorf("input field %s.%s has no current output field %s.%s", name, f.Name, out, f.Name)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no input field was checked")
	}
}

// The one translation table from the specification's field names to the schema's names every
// message uses: each name it gives must be an input field of the schema, and each field the
// specification lets a contact card of a type have must be named for that type's inputs.
func TestTheSpecificationsFieldNamesTranslateToInputFields(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}}).Schema()
	inputFields := map[string]bool{}
	for _, def := range schema.Types {
		if def.Kind == ast.InputObject {
			for _, f := range def.Fields {
				inputFields[f.Name] = true
			}
		}
	}
	for _, def := range schema.Types {
		for _, f := range def.Fields {
			for _, a := range f.Arguments {
				inputFields[a.Name] = true
			}
		}
	}
	// Names of the service's that only its responses carry, or only its prose uses.
	notInput := map[string]bool{"creationDate": true, "modificationDate": true, "fileStatus": true,
		"downloadUri": true, "uploadUri": true, "externalIds": true}
	for spec, name := range advisor.SchemaFields() {
		if !inputFields[name] && !notInput[name] {
			t.Errorf("the table maps %s to %s, which is no input field or argument of the schema", spec, name)
		}
	}
	for _, scope := range []advisorspec.Scope{advisorspec.TopAccountScope, advisorspec.ClientScope} {
		for _, typ := range advisorspec.ContactTypes {
			for _, input := range []string{string(typ) + "Input", string(typ) + "Patch"} {
				def := schema.Types[input]
				for _, field := range advisorspec.ContactFields(typ, scope) {
					name, known := advisor.SpecField(field)
					if !known || def.Fields.ForName(name) == nil {
						t.Errorf("%s's %s translates to %s (known %v), which %s lacks", typ, field, name, known, input)
					}
				}
			}
		}
	}
	for spec, input := range map[string]string{
		"ownership[0].percentage": "OwnershipInput.percentage", "ownership[0].owner_id": "OwnershipInput.owners",
		"ownership[0].subowners": "OwnershipInput.owners", "current_parties.is_distributed_evenly": "ClassPartiesInput.isDistributedEvenly",
		"current_parties.parties[0].contact_id": "ClassPartyInput.party", "current_parties.parties[0].fraction.denominator": "FractionInput.denominator",
		"sub_category": "CreateDocumentInput.subCategory", "external_id": "CreateTopAccountInput.externalId",
	} {
		typ, field, _ := strings.Cut(input, ".")
		path, known := advisor.SpecField(spec)
		last := path[strings.LastIndex(path, ".")+1:]
		if !known || last != field || schema.Types[typ].Fields.ForName(field) == nil {
			t.Errorf("%s translates to %s (known %v), want a path ending in %s", spec, path, known, input)
		}
	}
}

// A form offers only valid choices when it can say what each one is: every value of the
// document enums is described, and a sub-category's or type's description names the category
// or sub-category the taxonomy puts it under.
func TestDocumentEnumValuesAreDescribed(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}}).Schema()
	for _, name := range []string{"DocumentCategory", "DocumentSubCategory", "DocumentType", "FileStatus"} {
		for _, v := range schema.Types[name].EnumValues {
			if strings.TrimSpace(v.Description) == "" {
				t.Errorf("%s.%s has no description", name, v.Name)
			}
		}
	}
	gqlName := func(m interface{ MarshalGQL(io.Writer) }) string {
		var b strings.Builder
		m.MarshalGQL(&b)
		return strings.Trim(b.String(), `"`)
	}
	for _, c := range vault.Taxonomy() {
		for _, sc := range c.SubCategories {
			v := schema.Types["DocumentSubCategory"].EnumValues.ForName(gqlName(sc.SubCategory))
			if want := "in " + gqlName(c.Category) + "."; v == nil || !strings.HasSuffix(v.Description, want) {
				t.Errorf("DocumentSubCategory %s: description %q, want it to end %q", gqlName(sc.SubCategory), v.Description, want)
			}
			for _, typ := range sc.Types {
				v := schema.Types["DocumentType"].EnumValues.ForName(gqlName(typ))
				if want := "for " + gqlName(sc.SubCategory) + "."; v == nil || !strings.HasSuffix(v.Description, want) {
					t.Errorf("DocumentType %s: description %q, want it to end %q", gqlName(typ), v.Description, want)
				}
			}
		}
	}
}

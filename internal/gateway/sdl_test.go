package gateway_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// schemaIntrospection asks for what the comparison below reads of every type and directive.
const schemaIntrospection = `{ __schema {
  queryType { name } mutationType { name } subscriptionType { name }
  types {
    kind name
    fields(includeDeprecated: true) { name type { ...T } args(includeDeprecated: true) { name type { ...T } } }
    inputFields(includeDeprecated: true) { name type { ...T } }
    interfaces { name } possibleTypes { name } enumValues(includeDeprecated: true) { name }
  }
  directives { name locations args { name type { ...T } } }
} }
fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }`

// Tools that read a schema from a file (graphql-codegen, editors, registries) get the one
// introspection gives, at /graphql/schema.graphql; with introspection off, neither is served.
func TestTheGatewayServesTheSchemaIntrospectionDescribes(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	resp, err := http.Get(gw.url + "/graphql/schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	sdl, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("GET /graphql/schema.graphql = %d %s, want 200 text/plain; charset=utf-8", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: string(sdl)})
	if err != nil {
		t.Fatalf("the served SDL does not load: %v", err)
	}
	var got introspected
	gw.post(t, schemaIntrospection, nil).ok(t, &got)
	want, have := got.lines(), sdlLines(schema)
	for _, l := range want {
		if !slices.Contains(have, l) {
			t.Errorf("introspection has %s; the SDL lacks it", l)
		}
	}
	for _, l := range have {
		if !slices.Contains(want, l) {
			t.Errorf("the SDL has %s; introspection lacks it", l)
		}
	}
	// A reader knows the specification's directives; any other that introspection lists must
	// be defined in the SDL itself (the comparison above cannot tell, since gqlparser knows
	// gqlgen's @defer without a definition).
	spec := map[string]bool{"skip": true, "include": true, "deprecated": true, "specifiedBy": true, "oneOf": true}
	for _, d := range got.Schema.Directives {
		if !spec[d.Name] && !strings.Contains(string(sdl), "\ndirective @"+d.Name) {
			t.Errorf("introspection lists @%s; the SDL does not define it", d.Name)
		}
	}

	off := newGateway(t, up, map[string]string{"GRAPHQL_INTROSPECTION": "false"})
	resp, err = http.Get(off.url + "/graphql/schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GRAPHQL_INTROSPECTION=false: GET /graphql/schema.graphql = %d, want 404", resp.StatusCode)
	}
}

type typeRef struct {
	Kind, Name string
	OfType     *typeRef
}

func (r *typeRef) String() string {
	switch r.Kind {
	case "NON_NULL":
		return r.OfType.String() + "!"
	case "LIST":
		return "[" + r.OfType.String() + "]"
	}
	return r.Name
}

type named struct{ Name string }

type introspected struct {
	Schema struct {
		QueryType, MutationType, SubscriptionType *named
		Types                                     []struct {
			Kind, Name string
			Fields     []struct {
				Name string
				Type typeRef
				Args []struct {
					Name string
					Type typeRef
				}
			}
			InputFields []struct {
				Name string
				Type typeRef
			}
			Interfaces, PossibleTypes, EnumValues []named
		}
		Directives []struct {
			Name      string
			Locations []string
			Args      []struct {
				Name string
				Type typeRef
			}
		}
	} `json:"__schema"`
}

// lines describes the introspected schema one fact a line, sorted, in the words sdlLines uses.
func (s introspected) lines() []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	for _, root := range []struct {
		op string
		t  *named
	}{{"query", s.Schema.QueryType}, {"mutation", s.Schema.MutationType}, {"subscription", s.Schema.SubscriptionType}} {
		if root.t != nil {
			add("schema %s: %s", root.op, root.t.Name)
		}
	}
	for _, t := range s.Schema.Types {
		add("type %s %s", t.Name, t.Kind)
		for _, f := range t.Fields {
			add("field %s.%s: %s", t.Name, f.Name, &f.Type)
			for _, a := range f.Args {
				add("arg %s.%s(%s): %s", t.Name, f.Name, a.Name, &a.Type)
			}
		}
		for _, f := range t.InputFields {
			add("field %s.%s: %s", t.Name, f.Name, &f.Type)
		}
		for _, i := range t.Interfaces {
			add("implements %s %s", t.Name, i.Name)
		}
		for _, p := range t.PossibleTypes {
			add("possible %s %s", t.Name, p.Name)
		}
		for _, v := range t.EnumValues {
			add("value %s.%s", t.Name, v.Name)
		}
	}
	for _, d := range s.Schema.Directives {
		add("directive @%s on %s", d.Name, strings.Join(d.Locations, " | "))
		for _, a := range d.Args {
			add("arg @%s(%s): %s", d.Name, a.Name, &a.Type)
		}
	}
	slices.Sort(out)
	return out
}

// sdlLines describes a loaded schema as lines does an introspected one: what introspection
// shows, so not the introspection types themselves.
func sdlLines(s *ast.Schema) []string {
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	for op, t := range map[string]*ast.Definition{"query": s.Query, "mutation": s.Mutation, "subscription": s.Subscription} {
		if t != nil {
			add("schema %s: %s", op, t.Name)
		}
	}
	for _, t := range s.Types {
		add("type %s %s", t.Name, t.Kind)
		for _, f := range t.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			add("field %s.%s: %s", t.Name, f.Name, f.Type)
			for _, a := range f.Arguments {
				add("arg %s.%s(%s): %s", t.Name, f.Name, a.Name, a.Type)
			}
		}
		for _, i := range t.Interfaces {
			add("implements %s %s", t.Name, i)
		}
		if t.IsAbstractType() {
			for _, p := range s.GetPossibleTypes(t) {
				add("possible %s %s", t.Name, p.Name)
			}
		}
		for _, v := range t.EnumValues {
			add("value %s.%s", t.Name, v.Name)
		}
	}
	for _, d := range s.Directives {
		var locations []string
		for _, l := range d.Locations {
			locations = append(locations, string(l))
		}
		add("directive @%s on %s", d.Name, strings.Join(locations, " | "))
		for _, a := range d.Arguments {
			add("arg @%s(%s): %s", d.Name, a.Name, a.Type)
		}
	}
	slices.Sort(out)
	return out
}

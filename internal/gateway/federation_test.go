package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/advisorhq/gateway/internal/nodeid"
)

// The issue: "A subgraph of a federated graph (Federation v2). The gateway can serve as a
// subgraph: `_service { sdl }`, `_entities` with `@key` on top accounts (`wid` and `id`), cards,
// documents and clients ... `_entities` resolves through the same loaders: 100 card
// representations of one family cost at most two upstream calls."

// federated is the setting that serves the gateway as a subgraph.
var federated = map[string]string{"GRAPHQL_FEDERATION": "true"}

const entitiesQuery = `query($r: [_Any!]!) { _entities(representations: $r) { __typename
  ... on TopAccount { id wid }
  ... on ContactCard { id contactId }
  ... on Document { id vaultId }
  ... on Client { id ref }
} }`

// "`_service { sdl }` ... with `@key` on top accounts (`wid` and `id`), cards, documents and
// clients": the SDL a composer reads has each key and the @link that imports @key, and leaves
// out what the federation specification defines, which a composer adds itself.
func TestServiceSDLHasTheKeysOfTopAccountsCardsDocumentsAndClients(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), federated)
	var got struct {
		Service struct{ SDL string } `json:"_service"`
	}
	gw.post(t, `{ _service { sdl } }`, nil).ok(t, &got)
	sdl := got.Service.SDL
	doc, err := parser.ParseSchema(&ast.Source{Name: "sdl", Input: sdl})
	if err != nil {
		t.Fatalf("the SDL does not parse: %v", err)
	}
	keys := map[string][]string{}
	for _, d := range append(doc.Definitions, doc.Extensions...) {
		for _, k := range d.Directives.ForNames("key") {
			keys[d.Name] = append(keys[d.Name], k.Arguments.ForName("fields").Value.Raw)
		}
	}
	want := map[string][]string{"TopAccount": {"id", "wid"}, "Document": {"id"}, "Client": {"id"}}
	for _, card := range []string{"Individual", "Trust", "Entity", "Charity", "Will", "Class"} {
		want[card] = []string{"id"}
	}
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Errorf("the SDL's keys are %v, want %v", keys, want)
	}
	if !strings.Contains(sdl, `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])`) {
		t.Errorf("the SDL does not link federation v2.3 importing @key:\n%.300s", sdl)
	}
	for _, own := range []string{"_entities", "_service", "scalar _Any", "union _Entity", "type _Service", "directive @key", "directive @link", "federation__FieldSet", "link__Import"} {
		if strings.Contains(sdl, own) {
			t.Errorf("the SDL has %q, which the federation specification defines", own)
		}
	}
	if !strings.Contains(sdl, "type TopAccount implements Node") || !strings.Contains(sdl, "nodes(ids: [ID!]!): [Node]!") {
		t.Errorf("the SDL lacks the gateway's own schema:\n%.300s", sdl)
	}
}

// "`_entities` with `@key` on top accounts (`wid` and `id`), cards, documents and clients":
// every entity type is read back by its id, a top account by its wid too, in the order asked;
// the docs' query among them.
func TestEntitiesReadsEveryTypeBackByItsKey(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, federated)
	wid := demoFamilyWID(t, up)
	known := knownNodes(t, gw, wid)
	var reps []map[string]any
	for _, n := range known {
		reps = append(reps, map[string]any{"__typename": n.Typename, "id": n.ID})
	}
	reps = append(reps, map[string]any{"__typename": "TopAccount", "wid": wid})
	var got struct {
		Entities []*aNode `json:"_entities"`
	}
	gw.post(t, entitiesQuery, map[string]any{"r": reps}).ok(t, &got)
	if len(got.Entities) != len(reps) {
		t.Fatalf("_entities answered %d entities for %d representations", len(got.Entities), len(reps))
	}
	for i, n := range known {
		e := got.Entities[i]
		if e == nil || e.Typename != n.Typename || e.ID != n.ID || e.ContactID != n.ContactID || e.VaultID != n.VaultID || e.Ref != n.Ref {
			t.Errorf("_entities[%d] = %+v, want %+v", i, e, n)
		}
	}
	if last := got.Entities[len(reps)-1]; last == nil || last.Wid != wid || last.ID != known[0].ID {
		t.Errorf("the top account by its wid = %+v, want %s with id %s", last, wid, known[0].ID)
	}

	var body struct{ Query string }
	for _, b := range mdBlocks(mdPages(t)) {
		if strings.HasPrefix(b.comment, "read entities:") {
			if err := json.Unmarshal([]byte(b.text), &body); err != nil {
				t.Fatalf("%s is not a JSON body: %v", b, err)
			}
		}
	}
	if body.Query == "" {
		t.Fatal(`docs/graphql.md has no JSON body marked "read entities"`)
	}
	query := body.Query
	card := firstOf(known, "Individual")
	var docs struct {
		Entities []struct{ Wid, ContactID string } `json:"_entities"`
	}
	gw.post(t, query, map[string]any{"representations": []map[string]any{
		{"__typename": "TopAccount", "wid": wid}, {"__typename": "Individual", "id": card.ID},
	}}).ok(t, &docs)
	if len(docs.Entities) != 2 || docs.Entities[0].Wid != wid || docs.Entities[1].ContactID != card.ContactID {
		t.Errorf("the docs' query answered %+v", docs.Entities)
	}
}

// "`_entities` resolves through the same loaders: 100 card representations of one family cost
// at most two upstream calls": one list of the family's cards, relationships and all.
func TestEntitiesOfAHundredCardsOfOneFamilyCostOneList(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, federated)
	wid := up.family(t, "ENTITIES-100", 100)
	var got struct {
		TopAccount struct{ Contacts []aNode }
	}
	gw.post(t, `query($w: ID!) { topAccount(wid: $w) { contacts { __typename ... on ContactCard { id } } } }`,
		map[string]any{"w": wid}).ok(t, &got)
	var reps []map[string]any
	for _, c := range got.TopAccount.Contacts {
		reps = append(reps, map[string]any{"__typename": c.Typename, "id": c.ID})
	}
	if len(reps) != 100 {
		t.Fatalf("the family has %d cards, want 100", len(reps))
	}
	up.ResetRequests()
	var answer struct {
		Entities []*aNode `json:"_entities"`
	}
	gw.post(t, `query($r: [_Any!]!) { _entities(representations: $r) { ... on ContactCard { id displayName relationships { role } } } }`,
		map[string]any{"r": reps}).ok(t, &answer)
	if reqs, want := up.Requests(), []string{"GET /v2/top-accounts/" + wid + "/contacts/"}; !slices.Equal(reqs, want) {
		t.Errorf("upstream requests %v, want %v", reqs, want)
	}
	for i, e := range answer.Entities {
		if e == nil || e.ID != reps[i]["id"] {
			t.Errorf("_entities[%d] = %+v, want %s", i, e, reps[i]["id"])
		}
	}
}

// "Forged/foreign representations": a representation that names nothing the caller may read
// is null with NOT_FOUND at its index, never an upstream error or a panic; one that is not a
// representation is null with BAD_USER_INPUT naming it.
func TestEntitiesOfBadRepresentationsAreNullWithTheirReason(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, federated)
	wid := demoFamilyWID(t, up)
	known := knownNodes(t, gw, wid)
	card, doc, client := firstOf(known, "Individual"), firstOf(known, "Document"), firstOf(known, "Client")
	other := up.family(t, "FOREIGN-ENTITIES", 2)
	const notFound = "No object the caller may read has the id given in representations[0]"
	for _, tc := range []struct {
		name    string
		rep     any
		code    string
		message string
	}{
		{"a forged id", map[string]any{"__typename": "Individual", "id": "%%% not an id %%%"}, "NOT_FOUND", notFound},
		{"a card's id as another card type", map[string]any{"__typename": "Trust", "id": card.ID}, "NOT_FOUND", notFound},
		{"a document's id as a client", map[string]any{"__typename": "Client", "id": doc.ID}, "NOT_FOUND", notFound},
		{"a client's id as a top account", map[string]any{"__typename": "TopAccount", "id": client.ID}, "NOT_FOUND", notFound},
		{"the card under another top account", map[string]any{"__typename": "Individual", "id": nodeid.Encode("Individual", "t", other, card.ContactID)}, "NOT_FOUND", notFound},
		{"an unknown wid", map[string]any{"__typename": "TopAccount", "wid": "00000000-0000-4000-8000-000000000000"}, "NOT_FOUND", notFound},
		{"a wid that climbs the path", map[string]any{"__typename": "TopAccount", "wid": "../" + wid}, "NOT_FOUND", notFound},
		{"the card's service id", map[string]any{"__typename": "Individual", "id": card.ContactID}, "NOT_FOUND", notFound},
		{"no __typename", map[string]any{"id": card.ID}, "BAD_USER_INPUT",
			"representations[0] has no __typename of an entity (got <nil>): one of TopAccount, Individual, Trust, Entity, Charity, Will, Class, Document or Client"},
		{"a bulk load, which is no entity", map[string]any{"__typename": "BulkUpload", "id": card.ID}, "BAD_USER_INPUT",
			"representations[0] has no __typename of an entity (got BulkUpload): one of TopAccount, Individual, Trust, Entity, Charity, Will, Class, Document or Client"},
		{"no key", map[string]any{"__typename": "Document", "vaultId": doc.VaultID}, "BAD_USER_INPUT", "representations[0] has no id, the key of Document"},
		{"a wid on a card", map[string]any{"__typename": "Individual", "wid": wid}, "BAD_USER_INPUT", "representations[0] has no id, the key of Individual"},
		{"a top account without a key", map[string]any{"__typename": "TopAccount", "name": "x"}, "BAD_USER_INPUT", "representations[0] has neither of TopAccount's keys, id or wid"},
		{"an id that is a number", map[string]any{"__typename": "Individual", "id": 7}, "BAD_USER_INPUT", "representations[0] has an id that is not a non-empty string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gw.post(t, entitiesQuery, map[string]any{"r": []any{tc.rep}})
			if string(r.Data) != `{"_entities":[null]}` {
				t.Errorf("data %s, want one null entity", r.Data)
			}
			e := r.wantError(t, tc.code, tc.message)
			if fmt.Sprint(e.Path) != "[_entities 0]" || e.Extensions["upstream"] != nil {
				t.Errorf("error at %v with extensions %v, want at [_entities 0] and no upstream's words", e.Path, e.Extensions)
			}
		})
	}
	t.Run("more than 100", func(t *testing.T) {
		reps := make([]map[string]any, 101)
		for i := range reps {
			reps[i] = map[string]any{"__typename": "Individual", "id": card.ID}
		}
		r := gw.post(t, entitiesQuery, map[string]any{"r": reps})
		r.wantError(t, "BAD_USER_INPUT", "representations can hold at most 100 representations, got 101")
	})
}

// "Tenancy as node()": another firm's objects, and another advisor's client, are NOT_FOUND as
// entities, as they are through node.
func TestEntitiesReachOnlyTheCallersFirmAndAdvisor(t *testing.T) {
	t.Parallel()
	tf := newTwoFirms(t, federated)
	gw := tf.gw
	var a struct {
		TopAccount struct {
			ID       string
			Contacts []aNode
		}
		Client aNode
	}
	gw.postVars(t, tf.callerA, `query($w: ID!) { topAccount(wid: $w) { id contacts { __typename ... on ContactCard { id } } }
  client(ref: "CL-1001") { __typename id } }`, map[string]any{"w": tf.hartwell}).ok(t, &a)
	reps := []map[string]any{
		{"__typename": "TopAccount", "id": a.TopAccount.ID},
		{"__typename": "TopAccount", "wid": tf.hartwell},
		{"__typename": a.TopAccount.Contacts[0].Typename, "id": a.TopAccount.Contacts[0].ID},
		{"__typename": "Client", "id": a.Client.ID},
	}
	var own struct {
		Entities []*aNode `json:"_entities"`
	}
	gw.postVars(t, tf.callerA, entitiesQuery, map[string]any{"r": reps}).ok(t, &own)
	if len(own.Entities) != 4 || slices.Contains(own.Entities, nil) {
		t.Fatalf("firm A reads its own entities as %+v", own.Entities)
	}
	r := gw.postVars(t, tf.callerB, entitiesQuery, map[string]any{"r": reps})
	if string(r.Data) != `{"_entities":[null,null,null,null]}` || len(r.Errors) != 4 {
		t.Fatalf("firm B reads A's entities as %s %+v, want four nulls", r.Data, r.Errors)
	}
	// Cards are read after the rest, by owner, so the errors come in no set order.
	var paths []string
	for _, e := range r.Errors {
		paths = append(paths, fmt.Sprint(e.Path))
		if e.Extensions["code"] != "NOT_FOUND" {
			t.Errorf("error at %v is %v, want NOT_FOUND", e.Path, e.Extensions["code"])
		}
	}
	if slices.Sort(paths); fmt.Sprint(paths) != "[[_entities 0] [_entities 1] [_entities 2] [_entities 3]]" {
		t.Errorf("errors at %v, want one at each index", paths)
	}
}

// Off by default: `_service.sdl` is the whole schema, and client code generators that map every
// scalar would meet `_Any`. Without GRAPHQL_FEDERATION the schema has none of the federation's
// definitions: its fields are unknown, and introspection and the SDL show none of it.
func TestWithoutFederationTheSchemaHasNoneOfIt(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, false), nil)
	for _, tc := range []struct{ field, query string }{
		{"_service", `{ _service { sdl } }`},
		{"_entities", `{ _entities(representations: []) { __typename } }`},
	} {
		r := gw.post(t, tc.query, nil)
		r.wantError(t, "GRAPHQL_VALIDATION_FAILED", `Cannot query field "`+tc.field+`" on type "Query".`)
	}
	var types struct {
		Schema struct{ Types []struct{ Name string } } `json:"__schema"`
	}
	gw.post(t, `{ __schema { types { name } } }`, nil).ok(t, &types)
	for _, ty := range types.Schema.Types {
		if strings.HasPrefix(ty.Name, "_") && !strings.HasPrefix(ty.Name, "__") || strings.Contains(ty.Name, "__") && !strings.HasPrefix(ty.Name, "__") {
			t.Errorf("introspection lists %s", ty.Name)
		}
	}
	resp, err := http.Get(gw.url + "/graphql/schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	sdl, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, federation := range []string{"@key", "@link", "_Any", "_entities", "_service"} {
		if strings.Contains(string(sdl), federation) {
			t.Errorf("the SDL has %s", federation)
		}
	}
}

package gateway_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/nodeid"
	"github.com/advisorhq/gateway/internal/sandbox"
)

// Global object identification, as the Relay server specification describes it and the issue
// asks: "`interface Node { id: ID! }`, `node(id: ID!): Node` and `nodes(ids: [ID!]!): [Node]!`.
// Every object a client can refetch implements it: top accounts, each contact card type,
// documents, clients, bulk loads."

const nodeQuery = `query($id: ID!) { node(id: $id) { __typename id
  ... on TopAccount { wid }
  ... on ContactCard { contactId displayName }
  ... on Document { wid vaultId }
  ... on Client { ref }
} }`

const nodesQuery = `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on ContactCard { contactId } } }`

// aNode is what nodeQuery reads of an object.
type aNode struct {
	Typename                    string `json:"__typename"`
	ID, Wid, ContactID, VaultID string
	Ref, DisplayName            string
}

// firstOf is the first of nodes of type typename, or the zero aNode.
func firstOf(nodes []aNode, typename string) aNode {
	for _, n := range nodes {
		if n.Typename == typename {
			return n
		}
	}
	return aNode{}
}

// knownNodes reads the global ids of a demo family, its cards (every type), a document and a
// client, with the service's ids they are made of.
func knownNodes(t *testing.T, gw *testGateway, wid string) []aNode {
	t.Helper()
	var got struct {
		TopAccount struct {
			ID, Wid   string
			Contacts  []aNode
			Documents struct{ Nodes []aNode }
		}
		Client aNode
	}
	gw.post(t, `query($wid: ID!) {
  topAccount(wid: $wid) { id wid
    contacts { __typename ... on ContactCard { id contactId displayName } }
    documents(first: 1) { nodes { __typename id wid vaultId } } }
  client(ref: "CL-1001") { __typename id ref }
}`, map[string]any{"wid": wid}).ok(t, &got)
	ta := got.TopAccount
	out := []aNode{{Typename: "TopAccount", ID: ta.ID, Wid: ta.Wid}, got.Client}
	seen := map[string]bool{}
	for _, c := range ta.Contacts {
		if !seen[c.Typename] {
			seen[c.Typename] = true
			out = append(out, c)
		}
	}
	out = append(out, ta.Documents.Nodes...)
	if len(seen) != 6 || len(ta.Documents.Nodes) != 1 || got.Client.ID == "" {
		t.Fatalf("the demo family has card types %v, %d documents and client %+v: want all six, one and CL-1001", seen, len(ta.Documents.Nodes), got.Client)
	}
	return out
}

func demoFamilyWID(t *testing.T, up *upstream) string {
	t.Helper()
	f, _ := up.Sandbox.Tenant(sandbox.DemoFirmID)
	wid, _ := f.TopAccountWID(sandbox.DemoFamilyExternalID)
	if wid == "" {
		t.Fatal("the sandbox's demo family is missing")
	}
	return wid
}

// "Ids are opaque, stable and globally unique": every object read back by its id is the same
// object, with the same id, and no two objects share one.
func TestNodeReadsEveryTypeBackByItsID(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	known := knownNodes(t, gw, demoFamilyWID(t, up))
	ids := make([]string, len(known))
	for i, n := range known {
		ids[i] = n.ID
		t.Run(n.Typename, func(t *testing.T) {
			var got struct{ Node aNode }
			gw.post(t, nodeQuery, map[string]any{"id": n.ID}).ok(t, &got)
			want := n
			if got.Node.Typename != want.Typename || got.Node.ID != want.ID || got.Node.Wid != want.Wid && want.Wid != "" ||
				got.Node.ContactID != want.ContactID || got.Node.VaultID != want.VaultID || got.Node.Ref != want.Ref {
				t.Errorf("node(id: %s) = %+v, want %+v", n.ID, got.Node, want)
			}
			if strings.Contains(n.ID, n.Wid+n.ContactID+n.VaultID) && n.Wid+n.ContactID+n.VaultID != "" {
				t.Errorf("id %s shows the service's ids as they are: it is not opaque", n.ID)
			}
		})
	}
	if distinct := len(slices.Compact(slices.Sorted(slices.Values(ids)))); distinct != len(ids) {
		t.Errorf("%d objects have %d distinct ids: %v", len(ids), distinct, ids)
	}
	// Again, and in one list: nodes answers in the order asked, repeats included.
	ask := append(slices.Clone(ids), ids[0])
	var list struct{ Nodes []aNode }
	gw.post(t, nodesQuery, map[string]any{"ids": ask}).ok(t, &list)
	for i, n := range list.Nodes {
		if n.ID != ask[i] {
			t.Errorf("nodes[%d] is %s, want %s", i, n.ID, ask[i])
		}
	}
	if len(list.Nodes) != len(ask) {
		t.Errorf("nodes answered %d objects for %d ids", len(list.Nodes), len(ask))
	}
}

// "A card's id carries what the upstream needs to fetch it (its top account), so `node(id:)`
// costs one upstream call, and `nodes(ids:)` for 100 cards of one family costs at most two."
func TestNodeOfACardCostsOneUpstreamCallAndNodesOfAHundredCardsOneList(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := up.family(t, "NODES-100", 100)
	other := up.family(t, "NODES-OTHER", 4)
	var got struct {
		A struct{ Contacts []aNode }
		B struct{ Contacts []aNode }
	}
	gw.post(t, `query($a: ID!, $b: ID!) {
  a: topAccount(wid: $a) { contacts { ... on ContactCard { id contactId } } }
  b: topAccount(wid: $b) { contacts { ... on ContactCard { id contactId } } } }`,
		map[string]any{"a": wid, "b": other}).ok(t, &got)
	ids := make([]string, len(got.A.Contacts))
	for i, c := range got.A.Contacts {
		ids[i] = c.ID
	}
	list := "GET /v2/top-accounts/" + wid + "/contacts/"
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		requests    []string
	}{
		{"one card", `query($id: ID!) { node(id: $id) { ... on ContactCard { displayName } } }`,
			map[string]any{"id": ids[7]}, []string{list + got.A.Contacts[7].ContactID}},
		{"one card and its relationships", `query($id: ID!) { node(id: $id) { ... on ContactCard { displayName relationships { role } } } }`,
			map[string]any{"id": ids[7]}, []string{list + got.A.Contacts[7].ContactID, list}},
		{"100 cards of one family, with their relationships", `query($ids: [ID!]!) { nodes(ids: $ids) { ... on ContactCard { displayName relationships { role target { contact { ... on ContactCard { id } } } } } } }`,
			map[string]any{"ids": ids}, []string{list}},
		{"cards of two families", `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`,
			map[string]any{"ids": []string{ids[0], got.B.Contacts[0].ID, ids[1], got.B.Contacts[1].ID}},
			[]string{list, "GET /v2/top-accounts/" + other + "/contacts/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.ResetRequests()
			var answer struct{ Nodes []*aNode }
			gw.post(t, tc.query, tc.vars).ok(t, &answer)
			if reqs := up.Requests(); !slices.Equal(reqs, tc.requests) {
				t.Errorf("upstream requests %v, want %v", reqs, tc.requests)
			}
			for i, n := range answer.Nodes {
				if n == nil {
					t.Errorf("nodes[%d] is null", i)
				}
			}
		})
	}
}

// "A forged or foreign id is `NOT_FOUND`, never an upstream error or a panic": whatever the id
// holds, node answers null with one NOT_FOUND error at its path, and nodes null at its index.
func TestForgedTamperedOversizedAndUnknownIdsAreNotFound(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := demoFamilyWID(t, up)
	known := knownNodes(t, gw, wid)
	card, doc := firstOf(known, "Individual"), firstOf(known, "Document")
	other := up.family(t, "FOREIGN-DOCS", 2)
	unknown := "00000000-0000-4000-8000-000000000000"
	raw, _ := base64.RawURLEncoding.DecodeString(card.ID)
	tampered := slices.Clone(raw)
	tampered[len(tampered)-1] ^= 1 // another card id of the same family: none has it
	b64 := base64.RawURLEncoding.EncodeToString
	for _, tc := range []struct{ name, id string }{
		{"not base64url", "%%% not an id %%%"},
		{"empty", ""},
		{"the card's service id", card.ContactID},
		{"the top account's wid", wid},
		{"oversized", strings.Repeat("A", 4096)},
		{"oversized by one byte", strings.Repeat("A", nodeid.MaxLen+1)},
		{"another version", b64(append([]byte{9}, raw[1:]...))},
		{"an unknown type", b64(append([]byte{1, 99}, raw[2:]...))},
		{"bytes past the key", b64(append(slices.Clone(raw), 0))},
		{"the card's last byte changed", b64(tampered)},
		{"the card's id with another type", nodeid.Encode("Trust", "t", wid, card.ContactID)},
		{"the card under another top account", nodeid.Encode("Individual", "t", other, card.ContactID)},
		{"a card of an unknown top account", nodeid.Encode("Individual", "t", unknown, card.ContactID)},
		{"a card with a part missing", nodeid.Encode("Individual", "t", wid)},
		{"a card of an unknown owner kind", nodeid.Encode("Individual", "x", wid, card.ContactID)},
		{"an unknown top account", nodeid.Encode("TopAccount", unknown)},
		{"a top account with an empty wid", nodeid.Encode("TopAccount", "")},
		{"a wid that climbs the path", nodeid.Encode("TopAccount", "..")},
		{"a wid with a slash", nodeid.Encode("TopAccount", wid+"/contacts")},
		{"a wid with a control character", nodeid.Encode("TopAccount", "w\x00id")},
		{"a document of another top account", nodeid.Encode("Document", other, doc.VaultID)},
		{"a document with an escaping vault id", nodeid.Encode("Document", wid, "../../"+wid)},
		{"an unknown client", nodeid.Encode("Client", "CL-NONE", "", "")},
		{"an unknown bulk load", nodeid.Encode("BulkUpload", "no-such-load")},
		{"a type with extra parts", nodeid.Encode("TopAccount", wid, "extra")},
		{"a relationship its source does not hold", nodeid.Encode("Relationship", "t", wid, card.ContactID, "OWNER", "no-such-card", "0")},
		{"a relationship of an unknown role", nodeid.Encode("Relationship", "t", wid, card.ContactID, "FRIEND", "no-such-card", "0")},
		{"a relationship of another top account", nodeid.Encode("Relationship", "t", other, card.ContactID, "OWNER", "no-such-card", "0")},
		{"a relationship counted twice over", nodeid.Encode("Relationship", "t", wid, card.ContactID, "OWNER", "no-such-card", "00")},
		{"a reference to an external id nothing has or names", nodeid.Encode("ContactRef", "t", wid, "no-such-card", "")},
		{"a reference with both an external id and a card", nodeid.Encode("ContactRef", "t", wid, "no-such-card", card.ContactID)},
		{"a reference by the id of a card that has an external id", nodeid.Encode("ContactRef", "t", wid, "", card.ContactID)},
		{"a reference of another top account", nodeid.Encode("ContactRef", "t", other, "no-such-card", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gw.post(t, nodeQuery, map[string]any{"id": tc.id})
			if string(r.Data) != `{"node":null}` {
				t.Errorf("data %s, want node null", r.Data)
			}
			e := r.wantError(t, "NOT_FOUND", "No object the caller may read has the id given in id")
			if fmt.Sprint(e.Path) != "[node]" || e.Extensions["upstream"] != nil {
				t.Errorf("error at %v with extensions %v, want at [node] and no upstream's words", e.Path, e.Extensions)
			}
			// The same id among good ones: null at its index, the others read.
			r = gw.post(t, nodesQuery, map[string]any{"ids": []string{card.ID, tc.id, doc.ID}})
			var got struct{ Nodes []*aNode }
			if err := json.Unmarshal(r.Data, &got); err != nil || len(got.Nodes) != 3 || got.Nodes[0] == nil || got.Nodes[1] != nil || got.Nodes[2] == nil {
				t.Fatalf("nodes answered %s, want the card, null and the document", r.Data)
			}
			e = r.wantError(t, "NOT_FOUND", "No object the caller may read has the id given in ids[1]")
			if fmt.Sprint(e.Path) != "[nodes 1]" {
				t.Errorf("error at %v, want [nodes 1]", e.Path)
			}
		})
	}
}

// nodes is bounded as the gateway's other lists are (docs/limits.md): beyond 100 ids it is the
// caller's mistake, named, before anything reaches the upstream.
func TestNodesRefusesMoreThanAHundredIds(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := up.family(t, "NODES-CAP", 2)
	id := nodeid.Encode("TopAccount", wid)
	for _, tc := range []struct {
		n    int
		code string
	}{{100, ""}, {101, "BAD_USER_INPUT"}, {5000, "BAD_USER_INPUT"}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			ids := slices.Repeat([]string{id}, tc.n)
			up.ResetRequests()
			r := gw.post(t, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": ids})
			if tc.code == "" {
				r.ok(t, nil)
				return
			}
			e := r.wantError(t, tc.code, fmt.Sprintf("ids can hold at most 100 ids, got %d", tc.n))
			if e.Extensions["field"] != "ids" {
				t.Errorf("extensions %v, want field ids", e.Extensions)
			}
			if reqs := up.Requests(); len(reqs) != 0 {
				t.Errorf("upstream requests %v, want none", reqs)
			}
		})
	}
}

// "Existing id fields keep their meaning, or move": a card's service id moved to contactId, and
// the arguments that took it take it still, or the card's global id; another object's global
// id is refused, naming the argument.
func TestCardArgumentsTakeTheServiceIDOrTheGlobalID(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := demoFamilyWID(t, up)
	known := knownNodes(t, gw, wid)
	card, doc := firstOf(known, "Individual"), firstOf(known, "Document")
	const read = `query($wid: ID!, $id: ID!) { contact(wid: $wid, id: $id) { ... on ContactCard { id contactId } }
  topAccount(wid: $wid) { contact(id: $id) { ... on ContactCard { id } } } }`
	const update = `mutation($wid: ID!, $id: ID!) { updateContact(wid: $wid, id: $id, input: {individual: {middleName: "Q"}}) { ... on Individual { id middleName } } }`
	for _, id := range []string{card.ContactID, card.ID} {
		var got struct {
			Contact    struct{ ID, ContactID string }
			TopAccount struct{ Contact struct{ ID string } }
		}
		gw.post(t, read, map[string]any{"wid": wid, "id": id}).ok(t, &got)
		if got.Contact.ID != card.ID || got.Contact.ContactID != card.ContactID || got.TopAccount.Contact.ID != card.ID {
			t.Errorf("contact(id: %s) = %+v, want the card %s", id, got, card.ID)
		}
		var upd struct {
			UpdateContact struct{ ID, MiddleName string }
		}
		gw.post(t, update, map[string]any{"wid": wid, "id": id}).ok(t, &upd)
		if upd.UpdateContact.ID != card.ID {
			t.Errorf("updateContact(id: %s) changed %s, want %s", id, upd.UpdateContact.ID, card.ID)
		}
	}
	e := gw.post(t, update, map[string]any{"wid": wid, "id": doc.ID}).wantError(t, "BAD_USER_INPUT", "id is the global id of another object than a contact card")
	if e.Extensions["field"] != "id" {
		t.Errorf("extensions %v, want field id", e.Extensions)
	}
	r := gw.post(t, read, map[string]any{"wid": wid, "id": doc.ID})
	if len(r.Errors) != 2 || r.Errors[0].Extensions["code"] != "BAD_USER_INPUT" || r.Errors[1].Extensions["code"] != "BAD_USER_INPUT" {
		t.Errorf("reading a document's id as a card's: errors %+v, want BAD_USER_INPUT for both fields", r.Errors)
	}
}

// The refetch docs/graphql.md shows reads a card and a top account back by their ids.
func TestTheDocsRefetchReadsACardAndATopAccountBack(t *testing.T) {
	t.Parallel()
	var query string
	for _, b := range mdBlocks(mdPages(t)) {
		if strings.HasPrefix(b.comment, "refetch a node:") {
			query = b.text
		}
	}
	if query == "" {
		t.Fatal(`docs/graphql.md has no block marked "refetch a node"`)
	}
	up := newUpstream(t, false)
	gw := newGateway(t, up, nil)
	wid := up.family(t, "REFETCH", 2)
	var got struct {
		TopAccount struct {
			ID       string
			Contacts []struct{ ID string }
		}
	}
	gw.post(t, `query($wid: ID!) { topAccount(wid: $wid) { id contacts { ... on ContactCard { id } } } }`, map[string]any{"wid": wid}).ok(t, &got)
	for _, id := range []string{got.TopAccount.ID, got.TopAccount.Contacts[0].ID} {
		var back struct {
			Node struct{ ID, ContactID, Wid, DisplayName, Name string }
		}
		gw.post(t, query, map[string]any{"id": id}).ok(t, &back)
		if back.Node.ID != id || back.Node.ContactID == "" && back.Node.Wid != wid {
			t.Errorf("the docs' refetch of %s answered %+v", id, back.Node)
		}
	}
}

// Issue 27: a relationship of the family graph and a reference between cards are Nodes, so
// that normalized caches key them without configuration: each is read back by its id, the
// same relationship and the same reference have the same id wherever they are shown (the whole
// graph, a card's relationships, a trust's creators), and no two relationships share one.
func TestRelationshipsAndReferencesAreReadBackByTheirIDs(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	type ref struct {
		ID, ExternalID string
		Contact        *struct{ ID string }
	}
	type relationship struct {
		ID, Role       string
		Source, Target ref
	}
	var got struct {
		TopAccount struct {
			Relationships []relationship
			Contacts      []struct {
				Typename      string `json:"__typename"`
				Relationships []relationship
				TrustCreators []ref
			}
		}
	}
	const rel = `{ id role source { id externalId contact { ... on ContactCard { id } } } target { id externalId contact { ... on ContactCard { id } } } }`
	gw.post(t, `query Graph($wid: ID!) { topAccount(wid: $wid) {
  relationships `+rel+`
  contacts { __typename ... on ContactCard { relationships `+rel+` } ... on Trust { trustCreators { id externalId contact { ... on ContactCard { id } } } } }
} }`, map[string]any{"wid": demoFamilyWID(t, up)}).ok(t, &got)
	graph := got.TopAccount.Relationships
	if len(graph) < 3 {
		t.Fatalf("the demo family's graph has %d relationships, want several", len(graph))
	}

	byID := map[string]relationship{}
	refs := map[string]ref{} // by id: every reference to one external id is one object
	sameRef := func(r ref) {
		if r.ID == "" {
			t.Fatalf("a reference without an id: %+v", r)
		}
		if seen, ok := refs[r.ID]; ok && (seen.ExternalID != r.ExternalID || (seen.Contact == nil) != (r.Contact == nil) ||
			seen.Contact != nil && seen.Contact.ID != r.Contact.ID) {
			t.Errorf("two references share the id %s: %+v and %+v", r.ID, seen, r)
		}
		refs[r.ID] = r
	}
	for _, r := range graph {
		if _, dup := byID[r.ID]; dup || r.ID == "" {
			t.Errorf("relationship %+v has the id of another, or none", r)
		}
		byID[r.ID] = r
		sameRef(r.Source)
		sameRef(r.Target)
	}
	creators := 0
	for _, c := range got.TopAccount.Contacts {
		for _, r := range c.Relationships {
			if want, ok := byID[r.ID]; !ok || want.Role != r.Role || want.Source.ID != r.Source.ID || want.Target.ID != r.Target.ID {
				t.Errorf("a %s card's relationship %+v is not the graph's %+v with that id", c.Typename, r, want)
			}
		}
		for _, r := range c.TrustCreators {
			creators++
			sameRef(r)
		}
	}
	if creators == 0 {
		t.Fatal("the demo family's trusts have no creators")
	}

	var ids []string
	for id := range byID {
		ids = append(ids, id)
	}
	for id := range refs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var read struct {
		Nodes []*struct {
			Typename   string `json:"__typename"`
			ID         string
			Role       string
			ExternalID string
		}
	}
	gw.post(t, `query Read($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on Relationship { role } ... on ContactRef { externalId } } }`,
		map[string]any{"ids": ids}).ok(t, &read)
	for i, n := range read.Nodes {
		switch {
		case n == nil || n.ID != ids[i]:
			t.Errorf("nodes[%d] read %+v, want the object with id %s", i, n, ids[i])
		case n.Typename == "Relationship" && n.Role != byID[n.ID].Role:
			t.Errorf("node %s is a %s relationship, want %s", n.ID, n.Role, byID[n.ID].Role)
		case n.Typename == "ContactRef" && n.ExternalID != refs[n.ID].ExternalID:
			t.Errorf("node %s is a reference to %q, want %q", n.ID, n.ExternalID, refs[n.ID].ExternalID)
		}
	}
}

// Issue 27: a client has one global id however it is reached: added (addClient), read by the
// external id it was added with (client(ref:)), its cards through either, read back by its id
// (node, nodes, and a federation's _entities), and deleted (deleteClient's deletedId). With
// the advisor and team named, and left to the default, where the gateway authenticates no
// callers: addClient named the client by the advisor and team the service answered, and so
// gave it another id than client(ref:) does when they were left out.
func TestAClientHasOneIDHoweverItIsReached(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, federated)
	for _, tc := range []struct {
		name string
		ref  string
		args map[string]any // advisorId and teamId, as every operation is given them
	}{
		{"the advisor and team left to the default", "C-ID-1", map[string]any{}},
		{"the advisor and team named", "C-ID-2", map[string]any{"advisorId": "adv-001", "teamId": "team-west"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := func(more map[string]any) map[string]any {
				out := map[string]any{"advisorId": nil, "teamId": nil}
				for k, v := range tc.args {
					out[k] = v
				}
				for k, v := range more {
					out[k] = v
				}
				return out
			}
			type client struct {
				ID       string
				Contacts []struct{ ID, ExternalID string }
			}
			var added struct{ AddClient client }
			gw.post(t, `mutation Add($input: ClientInput!, $advisorId: String, $teamId: String) {
  addClient(input: $input, advisorId: $advisorId, teamId: $teamId) { id contacts { ... on ContactCard { id externalId } } } }`,
				vars(map[string]any{"input": map[string]any{"id": tc.ref, "primaryId": tc.ref + "-P", "firstName": "Ida", "lastName": "Moss"}})).ok(t, &added)
			var read struct{ Client client }
			gw.post(t, `query Read($ref: ID!, $advisorId: String, $teamId: String) {
  client(ref: $ref, advisorId: $advisorId, teamId: $teamId) { id contacts { ... on ContactCard { id externalId } } } }`,
				vars(map[string]any{"ref": tc.ref})).ok(t, &read)
			a, r := added.AddClient, read.Client
			if a.ID == "" || a.ID != r.ID {
				t.Errorf("addClient answered the client's id %q, client(ref:) %q: want one id", a.ID, r.ID)
			}
			if len(a.Contacts) != 1 || len(r.Contacts) != 1 || a.Contacts[0] != r.Contacts[0] {
				t.Errorf("addClient answered the client's cards %+v, client(ref:) %+v: want the same ids", a.Contacts, r.Contacts)
			}

			var back struct {
				Node     struct{ ID string }
				Nodes    []struct{ ID string }
				Entities []struct{ ID string } `json:"_entities"`
			}
			gw.post(t, `query Back($id: ID!, $reps: [_Any!]!) {
  node(id: $id) { id } nodes(ids: [$id]) { id } _entities(representations: $reps) { ... on Client { id } } }`,
				map[string]any{"id": r.ID, "reps": []any{map[string]any{"__typename": "Client", "id": r.ID}}}).ok(t, &back)
			if back.Node.ID != r.ID || len(back.Nodes) != 1 || back.Nodes[0].ID != r.ID || len(back.Entities) != 1 || back.Entities[0].ID != r.ID {
				t.Errorf("node, nodes and _entities read the client back as %+v, want id %s", back, r.ID)
			}

			var deleted struct{ DeleteClient struct{ DeletedID string } }
			gw.post(t, `mutation Delete($ref: ID!, $advisorId: String, $teamId: String) {
  deleteClient(externalId: $ref, advisorId: $advisorId, teamId: $teamId) { deletedId } }`,
				vars(map[string]any{"ref": tc.ref})).ok(t, &deleted)
			if deleted.DeleteClient.DeletedID != r.ID {
				t.Errorf("deleteClient answered deletedId %q, want the client's id %q", deleted.DeleteClient.DeletedID, r.ID)
			}
			gw.post(t, `query Gone($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": r.ID}).
				wantError(t, "NOT_FOUND", "No object the caller may read has the id given in id")
		})
	}
}

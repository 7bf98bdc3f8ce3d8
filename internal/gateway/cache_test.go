package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/testnpm"
)

const urqlDir = "testdata/urql"

// cacheRun is what apollo/cache.mjs and urql/cache.mjs print.
type cacheRun struct {
	Target struct {
		ID, ContactID, Wid, AccountID string
	}
	Before, After struct {
		Family  map[string]any
		Card    map[string]any
		Account map[string]any
	}
	Mutations struct {
		RenameFamily struct {
			UpdateTopAccount struct{ ID, Name string }
		}
		RenameCard struct {
			UpdateContact struct{ ID, FirstName, DisplayName string }
		}
	}
	Requests []struct {
		Phase, Method, URL string
		OperationName      *string
	}
	Logged []string
}

// Issue 27: "Normalized caches work untouched. With Apollo Client 4's default `InMemoryCache`
// (plus the generated `possibleTypes`) and no type policies, a mutation that changes a card or
// a top account updates every query showing it without a refetch; likewise with urql's
// Graphcache. Tests show both." Each client is set up as docs/graphql.md says (its client
// module as written, in a project where the docs' codegen.yml has run), watches the docs'
// FamilyCards and Card queries, and sends the docs' RenameFamily and RenameCard: the family's
// name, the card among the contacts and at both ends of its relationships, and the card and
// the top account read with node(id:) all show the new values, while only the two mutations
// reach the gateway, and neither client warns (Graphcache of an object it cannot key, in
// development: every object the operations select has an id or is named as a connection).
func TestNormalizedCachesShowAMutatedCardOrTopAccountInEveryQueryWithoutARefetch(t *testing.T) {
	t.Parallel()
	ops := cacheOperations(t)
	for _, c := range []struct {
		name        string
		packagesDir string
		probe       string // a package the client needs, to install
		clientBlock string // the docs' marker of the client module
	}{
		{"Apollo Client 4 InMemoryCache with the generated possibleTypes", apolloDir, "@apollo/client", "possibleTypes client"},
		{"urql Graphcache given the generated schema", urqlDir, "@urql/exchange-graphcache", "urql client"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			npmInstall(t, c.packagesDir, c.probe)
			gw := newGateway(t, newUpstream(t, true), nil)
			clientFile := docsClientAfterCodegen(t, gw.url, markedBlock(t, c.clientBlock, "js"), c.packagesDir)

			const newName, newFirstName = "Hartwell-Renamed Family", "Renamed"
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var got cacheRun
			testnpm.RunJSON(t, exec.CommandContext(ctx, "node", filepath.Join(c.packagesDir, "cache.mjs"),
				clientFile, ops, newName, newFirstName), &got)
			checkCacheRun(t, got, newName, newFirstName)
		})
	}
}

// checkCacheRun checks that every watched query shows the mutations' values, and that the
// mutations alone went to the gateway after the queries' first answers.
func checkCacheRun(t *testing.T, got cacheRun, newName, newFirstName string) {
	t.Helper()
	sent := map[string][]string{}
	for _, r := range got.Requests {
		name := "(none)"
		if r.OperationName != nil {
			name = *r.OperationName
		}
		sent[r.Phase] = append(sent[r.Phase], name)
	}
	if want := []string{"FamilyCards", "Card", "Card"}; !slices.Equal(sent["queries"], want) {
		t.Errorf("the watched queries sent %v, want %v", sent["queries"], want)
	}
	for _, r := range got.Requests {
		if r.URL != "/graphql" {
			t.Errorf("a request went to %s, want /graphql", r.URL)
		}
	}
	if want := []string{"RenameFamily", "RenameCard"}; !slices.Equal(sent["mutations"], want) {
		t.Errorf("after the queries, the gateway got %v, want the mutations alone: %v", sent["mutations"], want)
	}
	for _, l := range got.Logged {
		t.Errorf("the client warned or logged an error: %q", l)
	}

	account, card := got.Mutations.RenameFamily.UpdateTopAccount, got.Mutations.RenameCard.UpdateContact
	if account.ID != got.Target.AccountID || account.Name != newName {
		t.Fatalf("updateTopAccount answered %+v, want id %s and name %q", account, got.Target.AccountID, newName)
	}
	if card.ID != got.Target.ID || card.FirstName != newFirstName || card.DisplayName == "" {
		t.Fatalf("updateContact answered %+v, want id %s, firstName %q and a displayName", card, got.Target.ID, newFirstName)
	}

	// Before: the old values everywhere, so that the after is the mutations' doing.
	before := familyViews(t, got.Before.Family, got.Target.ID)
	if before.name == newName || slices.Contains(before.displayNames, any(card.DisplayName)) {
		t.Fatalf("before the mutations FamilyCards already showed %+v", before)
	}

	after := familyViews(t, got.After.Family, got.Target.ID)
	if after.name != newName {
		t.Errorf("after RenameFamily, FamilyCards shows the top account's name %q, want %q", after.name, newName)
	}
	if after.firstName != newFirstName {
		t.Errorf("after RenameCard, FamilyCards shows the card's firstName %q, want %q", after.firstName, newFirstName)
	}
	if after.relationshipEnds == 0 {
		t.Errorf("FamilyCards shows the card at no relationship's end: %v", got.After.Family)
	}
	for i, d := range after.displayNames {
		if d != card.DisplayName {
			t.Errorf("after RenameCard, FamilyCards shows the card (view %d of %d) as %q, want %q", i, len(after.displayNames), d, card.DisplayName)
		}
	}
	if n := dig(got.After.Card, "node"); dig(n, "id") != got.Target.ID || dig(n, "firstName") != newFirstName || dig(n, "displayName") != card.DisplayName {
		t.Errorf("after RenameCard, Card with the card's id shows %v, want firstName %q and displayName %q", n, newFirstName, card.DisplayName)
	}
	if n := dig(got.After.Account, "node"); dig(n, "id") != got.Target.AccountID || dig(n, "name") != newName {
		t.Errorf("after RenameFamily, Card with the top account's id shows %v, want name %q", n, newName)
	}
}

// familyView is what FamilyCards shows of the top account and of one card.
type familyView struct {
	name             string
	firstName        any
	displayNames     []any // the card's, among the contacts and at each relationship end
	relationshipEnds int
}

func familyViews(t *testing.T, data map[string]any, cardID string) familyView {
	t.Helper()
	nodes, _ := dig(data, "topAccounts", "nodes").([]any)
	if len(nodes) != 1 {
		t.Fatalf("FamilyCards showed %v, want one top account", data)
	}
	family := nodes[0].(map[string]any)
	v := familyView{name: family["name"].(string)}
	for _, c := range family["contacts"].([]any) {
		if dig(c, "id") == cardID {
			v.firstName = dig(c, "firstName")
			v.displayNames = append(v.displayNames, dig(c, "displayName"))
		}
	}
	if len(v.displayNames) != 1 {
		t.Fatalf("FamilyCards shows card %s %d times among the contacts, want once", cardID, len(v.displayNames))
	}
	for _, r := range family["relationships"].([]any) {
		for _, end := range []string{"source", "target"} {
			if dig(r, end, "contact", "id") == cardID {
				v.relationshipEnds++
				v.displayNames = append(v.displayNames, dig(r, end, "contact", "displayName"))
			}
		}
	}
	return v
}

// cacheOperations writes the docs' normalized-cache operations to a JSON file, by the names
// the scripts know them by, and returns its path.
func cacheOperations(t *testing.T) string {
	t.Helper()
	block := markedBlock(t, "normalized cache operations", "graphql")
	starts := regexp.MustCompile(`(?m)^(?:query|mutation) (\w+)`).FindAllStringSubmatchIndex(block, -1)
	key := map[string]string{"FamilyCards": "family", "Card": "card", "RenameFamily": "renameFamily", "RenameCard": "renameCard"}
	ops := map[string]string{}
	for i, m := range starts {
		end := len(block)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		name := block[m[2]:m[3]]
		if key[name] == "" {
			t.Fatalf("the docs' normalized-cache operations hold %s, which the scripts do not know", name)
		}
		ops[key[name]] = block[m[0]:end]
	}
	if len(ops) != len(key) {
		t.Fatalf("the docs' normalized-cache operations are %v, want %v", ops, key)
	}
	data, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "operations.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// docsClientAfterCodegen runs the docs' codegen.yml against gatewayURL, then puts the docs'
// client module block, as written but for the address, in a front end's project with the
// packages of packagesDir, beside the JSON files it imports that codegen wrote. It returns the
// module's path.
func docsClientAfterCodegen(t *testing.T, gatewayURL, block, packagesDir string) string {
	t.Helper()
	codegen := newCodegenProject(t, gatewayURL, "")
	codegen.generate(t)
	name := regexp.MustCompile(`^// (\S+\.m?js)\n`).FindStringSubmatch(block)
	if name == nil {
		t.Fatalf("the docs' JavaScript block does not open with the file it is (// src/client.js): %q", block)
	}
	dir := t.TempDir()
	nodeProjectOf(t, dir, packagesDir)
	files := map[string]string{}
	for _, m := range regexp.MustCompile(`from '(\./[^']+\.json)'`).FindAllStringSubmatch(block, -1) {
		rel := path.Join(path.Dir(name[1]), m[1])
		data, err := os.ReadFile(filepath.Join(codegen.dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatalf("the docs' %s imports %s, which the docs' codegen.yml did not write: %v", name[1], m[1], err)
		}
		files[rel] = string(data)
	}
	writeFiles(t, dir, files)
	return writeDocsModule(t, dir, block, gatewayURL)
}

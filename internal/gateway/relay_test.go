package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const relayDir = "testdata/relay"

// The labels of docs/graphql.md's Relay section: its relay.config.json, and the source files
// of its app.
const (
	relayConfigLabel = "relay config"
	relayAppLabel    = "relay app"
)

var (
	// relayParams is the request an operation's artifact holds: its name, kind and the text
	// the compiler wrote for the server.
	relayParams = regexp.MustCompile(`"name": ("[^"]*"),\s*"operationKind": "(\w+)",\s*"text": ("(?:[^"\\]|\\.)*")`)
	// ansiColour is how relay-compiler colours its log's levels on a terminal and off one.
	ansiColour = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	// docsFileName is the first line of a docs block that is a file of a project.
	docsFileName = regexp.MustCompile(`^// (\S+\.m?js)\n`)
)

// relayOperation is one operation the compiler wrote an artifact for.
type relayOperation struct {
	kind, text string
}

// Issue 27: "Relay compiles against us. `relay-compiler` 21.0.1 compiles a small documented
// app's operations against the served schema in a test: a `@refetchable` fragment on a card, a
// `@connection` over `topAccounts` and over documents, and a subscription." The app is
// docs/graphql.md's Relay section, its relay.config.json and source files as written; the
// schema is what the gateway serves at /graphql/schema.graphql. The compiler must succeed
// without a warning, and the operations it wrote must run against the gateway as compiled.
func TestRelayCompilerCompilesTheDocsAppAgainstTheServedSchema(t *testing.T) {
	t.Parallel()
	npmInstall(t, relayDir, "relay-compiler")
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	ops := compileRelayApp(t, gw.url)
	for name, kind := range map[string]string{
		"CardRefetchQuery":           "query",
		"TopAccountsQuery":           "query",
		"TopAccountsPaginationQuery": "query",
		"DocumentsPaginationQuery":   "query",
		"EventsSubscription":         "subscription",
		"DeleteDocumentMutation":     "mutation",
	} {
		if ops[name].kind != kind {
			t.Errorf("the compiler wrote %s as %q, want a %s (it wrote %d operations)", name, ops[name].kind, kind, len(ops))
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	t.Run("a @refetchable fragment on a card is read back through node(id:)", func(t *testing.T) {
		card := firstOf(knownNodes(t, gw, demoFamilyWID(t, up)), "Individual")
		var got struct {
			Node struct {
				Typename, ContactID, DisplayName, FirstName string
				IsContactCard                               string `json:"__isContactCard"`
				ID                                          string
			}
		}
		gw.post(t, ops["CardRefetchQuery"].text, map[string]any{"id": card.ID}).ok(t, &got)
		n := got.Node
		if n.ID != card.ID || n.ContactID != card.ContactID || n.IsContactCard != "Individual" || n.FirstName == "" {
			t.Errorf("CardRefetchQuery read %+v, want the Individual card %+v with its first name", n, card)
		}
	})

	t.Run("@connection pages topAccounts, and a top account's documents through node(id:)", func(t *testing.T) {
		type documents struct {
			Edges []struct {
				Cursor string
				Node   struct{ ID, VaultID string }
			}
			PageInfo struct {
				EndCursor   *string
				HasNextPage bool
			}
		}
		var first struct {
			TopAccounts struct {
				Edges []struct {
					Cursor string
					Node   struct {
						ID, Name  string
						Documents documents
					}
				}
				PageInfo struct {
					EndCursor   *string
					HasNextPage bool
				}
			}
		}
		gw.post(t, ops["TopAccountsQuery"].text, map[string]any{"count": 1}).ok(t, &first)
		page := first.TopAccounts
		if len(page.Edges) != 1 || page.Edges[0].Cursor == "" || page.PageInfo.EndCursor == nil || !page.PageInfo.HasNextPage {
			t.Fatalf("TopAccountsQuery(count: 1) answered %+v, want one edge with its cursor, and a next page (the demo data has more top accounts)", page)
		}
		var next struct {
			TopAccounts struct {
				Edges []struct{ Node struct{ ID string } }
			}
		}
		gw.post(t, ops["TopAccountsPaginationQuery"].text, map[string]any{"count": 1, "cursor": *page.PageInfo.EndCursor}).ok(t, &next)
		if len(next.TopAccounts.Edges) != 1 || next.TopAccounts.Edges[0].Node.ID == page.Edges[0].Node.ID {
			t.Errorf("TopAccountsPaginationQuery after the first page's endCursor answered %+v, want the second top account", next.TopAccounts.Edges)
		}

		family := page.Edges[0].Node
		docs := family.Documents
		if len(docs.Edges) == 0 || docs.PageInfo.EndCursor == nil || !docs.PageInfo.HasNextPage {
			t.Fatalf("the first top account's first documents are %+v, want a page with more after it (the demo data has more than 5)", docs)
		}
		var more struct{ Node struct{ Documents documents } }
		gw.post(t, ops["DocumentsPaginationQuery"].text, map[string]any{
			"id": family.ID, "count": 2, "cursor": *docs.PageInfo.EndCursor,
		}).ok(t, &more)
		got := more.Node.Documents
		if len(got.Edges) == 0 {
			t.Fatalf("DocumentsPaginationQuery after the first page's endCursor answered no documents")
		}
		for _, e := range got.Edges {
			for _, before := range docs.Edges {
				if e.Node.ID == before.Node.ID {
					t.Errorf("DocumentsPaginationQuery answered document %s of the first page again", e.Node.VaultID)
				}
			}
		}
	})

	t.Run("the subscription streams an event as it arrives", func(t *testing.T) {
		s := openSSE(t, gw, ops["EventsSubscription"].text, nil)
		waitSubscribers(t, gw, 1)
		id := gw.mustDeliver(t, progress("w-relay", 40))
		ev := s.next()
		if ev.name != "next" || !strings.Contains(ev.data, `"id":"`+id+`"`) || !strings.Contains(ev.data, `"eventType":"CLIENT_PROGRESS_CHANGED"`) {
			t.Errorf("EventsSubscription sent %+v, want next with event %s", ev, id)
		}
	})

	// Issue 27: a delete answers the deleted object's global id, for @deleteRecord to drop
	// the record Relay's store keeps under it: the id the document was read with.
	t.Run("a @deleteRecord mutation answers the deleted document's id", func(t *testing.T) {
		wid := demoFamilyWID(t, up)
		var read struct {
			TopAccount struct {
				Documents struct {
					Nodes []struct{ ID, VaultID string }
				}
			}
		}
		gw.post(t, `query FirstDocument($wid: ID!) { topAccount(wid: $wid) { documents(first: 1) { nodes { id vaultId } } } }`,
			map[string]any{"wid": wid}).ok(t, &read)
		if len(read.TopAccount.Documents.Nodes) != 1 {
			t.Fatalf("the demo family has no document: %+v", read)
		}
		doc := read.TopAccount.Documents.Nodes[0]
		var got struct {
			DeleteDocument struct{ DeletedID string }
		}
		gw.post(t, ops["DeleteDocumentMutation"].text, map[string]any{"wid": wid, "vaultId": doc.VaultID}).ok(t, &got)
		if got.DeleteDocument.DeletedID != doc.ID {
			t.Errorf("DeleteDocumentMutation answered deletedId %q, want the document's id %q", got.DeleteDocument.DeletedID, doc.ID)
		}
		gw.post(t, `query Gone($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": doc.ID}).
			wantError(t, "NOT_FOUND", "No object the caller may read has the id given in id")
	})
}

// compileRelayApp writes docs/graphql.md's Relay app (its relay.config.json and each file
// labelled relayAppLabel) and the schema the gateway at gatewayURL serves into a new project,
// runs relay-compiler there, and returns the operations it compiled, by name. The test fails
// on an error or warning of the compiler's.
func compileRelayApp(t *testing.T, gatewayURL string) map[string]relayOperation {
	t.Helper()
	dir := t.TempDir()
	config := markedBlock(t, relayConfigLabel, "json")
	var paths struct{ Src, Schema string }
	if err := json.Unmarshal([]byte(config), &paths); err != nil || paths.Src == "" || paths.Schema == "" {
		t.Fatalf("the docs' relay.config.json %q names no src and schema: %v", config, err)
	}
	files := map[string]string{"relay.config.json": config, paths.Schema: servedSDL(t, gatewayURL)}
	for _, b := range mdBlocks(mdPages(t)) {
		if m := ranBy.FindStringSubmatch(b.comment); m == nil || m[1] != relayAppLabel {
			continue
		}
		name := docsFileName.FindStringSubmatch(b.text)
		if name == nil {
			t.Fatalf("%s does not open with the file it is (// src/Card.js)", b)
		}
		files[name[1]] = b.text
	}
	if len(files) < 6 {
		t.Fatalf("found %d files of the Relay app in the docs, want its four source files", len(files)-2)
	}
	writeFiles(t, dir, files)

	compiler, err := filepath.Abs(filepath.Join(relayDir, "node_modules", "relay-compiler", "cli.js"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", compiler)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	log := ansiColour.ReplaceAllString(string(out), "")
	if err != nil {
		t.Fatalf("relay-compiler: %v\n%s", err, log)
	}
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if !strings.HasPrefix(line, "[INFO]") {
			t.Errorf("relay-compiler printed more than progress:\n%s", log)
			break
		}
	}

	artifacts, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(paths.Src), "__generated__", "*.graphql.js"))
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]relayOperation{}
	for _, a := range artifacts {
		src, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		m := relayParams.FindSubmatch(src)
		if m == nil {
			continue // a fragment's artifact: no request of its own
		}
		var name, text string
		if json.Unmarshal(m[1], &name) != nil || json.Unmarshal(m[3], &text) != nil {
			t.Fatalf("%s: the operation's name or text is not a JSON string", filepath.Base(a))
		}
		ops[name] = relayOperation{kind: string(m[2]), text: text}
	}
	return ops
}

// servedSDL is the schema the gateway at gatewayURL serves as SDL.
func servedSDL(t *testing.T, gatewayURL string) string {
	t.Helper()
	resp, err := http.Get(gatewayURL + "/graphql/schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sdl, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /graphql/schema.graphql: %d %v", resp.StatusCode, err)
	}
	return string(sdl)
}

package gateway_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	versionQuery = "query Version { version }"
	pageQuery    = "query Page($limit: Int) { topAccounts(limit: $limit) { __typename } }"
)

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// apq is the persistedQuery extension naming doc by its hash.
func apq(doc string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": sha256Hex(doc)}}
}

// postBody sends body, whatever its shape, as a JSON POST.
func (g *testGateway) postBody(t testing.TB, body any, header http.Header) *result {
	t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, g.url+"/graphql", bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	return g.do(t, req)
}

// get sends a GraphQL GET with these parameters.
func (g *testGateway) get(t testing.TB, params map[string]any) *result {
	t.Helper()
	q := url.Values{}
	for k, v := range params {
		if s, ok := v.(string); ok {
			q.Set(k, s)
			continue
		}
		data, _ := json.Marshal(v)
		q.Set(k, string(data))
	}
	req, _ := http.NewRequest(http.MethodGet, g.url+"/graphql?"+q.Encode(), nil)
	return g.do(t, req)
}

// Apollo's automatic persisted queries, with two replicas on one Redis: a hash the gateway
// does not know is answered PersistedQueryNotFound (the message Apollo's mobile clients look
// for), the document sent with its hash runs and is registered, and then the hash alone runs
// on the other replica too, over POST and over GET, where the answer may be cached.
func TestAutomaticPersistedQueriesRegisterOnOneReplicaAndRunOnAnother(t *testing.T) {
	t.Parallel()
	env := redisEnv(t, "")
	up := newUpstream(t, true)
	a, b := newGateway(t, up, env), newGateway(t, up, env)
	vars := map[string]any{"limit": 2}

	r := a.postBody(t, map[string]any{"variables": vars, "extensions": apq(pageQuery)}, nil)
	r.wantError(t, "PERSISTED_QUERY_NOT_FOUND", "PersistedQueryNotFound")
	if r.status != http.StatusOK || r.Data != nil {
		t.Errorf("not found: status %d, data %s; want 200 and no data, as Apollo's clients expect", r.status, r.Data)
	}
	// Over GET, where answers by id are cached, the miss is not: RFC 9111, "a cache MUST NOT
	// store any part of either the immediate request or the response" marked no-store.
	miss := a.get(t, map[string]any{"operationName": "Page", "variables": vars, "extensions": apq(pageQuery)})
	miss.wantError(t, "PERSISTED_QUERY_NOT_FOUND", "PersistedQueryNotFound")
	if cc := miss.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("GET by an unknown hash: Cache-Control %q, want no-store", cc)
	}

	a.postBody(t, map[string]any{"query": pageQuery, "variables": vars, "extensions": apq(pageQuery)}, nil).ok(t, nil)

	var page struct{ TopAccounts struct{ Typename string } }
	b.postBody(t, map[string]any{"variables": vars, "extensions": apq(pageQuery)}, nil).ok(t, &page)

	got := b.get(t, map[string]any{"operationName": "Page", "variables": vars, "extensions": apq(pageQuery)})
	got.ok(t, nil)
	if cc := got.header.Get("Cache-Control"); cc != "private, max-age=60" {
		t.Errorf("GET by hash: Cache-Control %q, want private, max-age=60", cc)
	}
	if vary := got.header.Values("Vary"); !strings.Contains(strings.Join(vary, ","), "Authorization") {
		t.Errorf("GET by hash: Vary %v, want Authorization among them: the answer is the caller's", vary)
	}
	if cc := b.get(t, map[string]any{"query": pageQuery, "variables": vars}).header.Get("Cache-Control"); cc != "" {
		t.Errorf("GET with the document: Cache-Control %q, want none: only a document named by id is the same URL each time", cc)
	}

	for g, want := range map[*testGateway][]string{
		a: {`graphql_persisted_operations_total{outcome="miss"} 2`, `graphql_persisted_operations_total{outcome="registered"} 1`},
		b: {`graphql_persisted_operations_total{outcome="hit"} 2`},
	} {
		resp, err := http.Get(g.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		text, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range want {
			if !strings.Contains(string(text), line) {
				t.Errorf("%s/metrics has no %s", g.url, line)
			}
		}
	}
}

// What the protocol refuses, and what is never registered: a document whose hash is not the
// one sent, and one that does not validate, which would otherwise let anyone fill the store.
func TestPersistedQueriesRefuseWrongHashesAndRegisterOnlyValidDocuments(t *testing.T) {
	t.Parallel()
	g := newGateway(t, newUpstream(t, false), nil)
	invalid := "query Broken { noSuchField }"
	// Valid, and 70 KB of it a comment: it runs, but is too large to keep for every caller.
	huge := "query Huge { version }\n#" + strings.Repeat("x", 70<<10)
	g.postBody(t, map[string]any{"query": huge, "extensions": apq(huge)}, nil).ok(t, nil)
	cases := []struct {
		name    string
		body    map[string]any
		code    string
		message string
	}{
		{"a hash that is not the document's", map[string]any{"query": versionQuery, "extensions": apq(pageQuery)},
			"BAD_USER_INPUT", "extensions.persistedQuery.sha256Hash is not the SHA-256 of the query: hash the query exactly as it is sent"},
		{"a version other than 1", map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 2, "sha256Hash": sha256Hex(versionQuery)}}},
			"BAD_USER_INPUT", "extensions.persistedQuery.version is 2: the gateway serves version 1"},
		{"a hash that is not hex", map[string]any{"query": versionQuery, "extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": "abc"}}},
			"BAD_USER_INPUT", "extensions.persistedQuery.sha256Hash must be the SHA-256 of the query in lower-case hex, 64 characters"},
		{"both a query and a documentId", map[string]any{"query": versionQuery, "documentId": sha256Hex(versionQuery)},
			"BAD_USER_INPUT", "the request has both a query and a documentId: send one of them"},
		{"neither a query nor an id", map[string]any{"variables": map[string]any{}},
			"BAD_USER_INPUT", "the request has no query"},
		{"an invalid document with its hash", map[string]any{"query": invalid, "extensions": apq(invalid)},
			"GRAPHQL_VALIDATION_FAILED", ""},
		{"the invalid document's hash afterwards", map[string]any{"extensions": apq(invalid)},
			"PERSISTED_QUERY_NOT_FOUND", "PersistedQueryNotFound"},
		{"the hash of a document too large to register, sent with it before", map[string]any{"extensions": apq(huge)},
			"PERSISTED_QUERY_NOT_FOUND", "PersistedQueryNotFound"},
		{"an id longer than any hash", map[string]any{"documentId": strings.Repeat("a", 129)},
			"BAD_USER_INPUT", "extensions.persistedQuery.sha256Hash must be the document's id: its SHA-256 in hex, at most 128 characters"},
		{"an id that is not a string", map[string]any{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": 7}}},
			"BAD_USER_INPUT", "extensions.persistedQuery.sha256Hash must be the document's id: its SHA-256 in hex, at most 128 characters"},
		{"a persistedQuery that is not an object", map[string]any{"extensions": map[string]any{"persistedQuery": "abc"}},
			"BAD_USER_INPUT", "extensions.persistedQuery must be an object with version 1 and a sha256Hash"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g.postBody(t, c.body, nil).wantError(t, c.code, c.message)
		})
	}
}

// Queries named by id may be cached; a mutation's answer never is, and GET runs no mutation
// whatever names it, nor registers one sent with its hash.
func TestAMutationsAnswerIsNeverCached(t *testing.T) {
	t.Parallel()
	g := newGateway(t, newUpstream(t, false), nil)
	mutation := `mutation { deleteClient(externalId: "nope") { __typename } }`
	r := g.postBody(t, map[string]any{"query": mutation}, nil)
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("POST mutation: Cache-Control %q, want no-store", cc)
	}
	g.postBody(t, map[string]any{"query": versionQuery, "extensions": apq(versionQuery)}, nil).ok(t, nil)
	r = g.get(t, map[string]any{"query": mutation, "extensions": apq(mutation)})
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Cache-Control") != "" {
		t.Errorf("GET of a mutation with its hash: %d, Cache-Control %q; want 405 and nothing cacheable", r.status, r.header.Get("Cache-Control"))
	}
	// Neither the refused GET nor a POST that failed (no such client) registered it.
	g.postBody(t, map[string]any{"query": mutation, "extensions": apq(mutation)}, nil)
	g.postBody(t, map[string]any{"extensions": apq(mutation)}, nil).wantError(t, "PERSISTED_QUERY_NOT_FOUND", "PersistedQueryNotFound")
}

// trustedManifest writes the trusted documents in Apollo's manifest format.
func trustedManifest(t *testing.T, docs map[string]string) string {
	t.Helper()
	var ops []map[string]string
	for id, body := range docs {
		ops = append(ops, map[string]string{"id": id, "body": body, "name": "x", "type": "query"})
	}
	data, _ := json.Marshal(map[string]any{"format": "apollo-persisted-query-manifest", "version": 1, "operations": ops})
	path := filepath.Join(t.TempDir(), "manifest.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// PERSISTED_OPERATIONS_ONLY: the trusted documents run, by their ids in either protocol or sent
// in full; nothing else does, not even registered as an automatic persisted query, and
// introspection still runs for the IDE and codegen while it is served. The IDE's header is
// heeded only against the embedded sandbox; this gateway runs against a real upstream.
func TestTrustedDocumentsOnlyRunsTheManifestsOperations(t *testing.T) {
	t.Parallel()
	manifest := trustedManifest(t, map[string]string{"version-1": versionQuery, sha256Hex(pageQuery): pageQuery})
	g := newGateway(t, newUpstream(t, false), map[string]string{
		"PERSISTED_OPERATIONS_FILE": manifest, "PERSISTED_OPERATIONS_ONLY": "true",
	})
	other := "query Other { version }"
	ok := []struct {
		name string
		body map[string]any
	}{
		{"by documentId", map[string]any{"documentId": "version-1"}},
		{"by extensions.persistedQuery", map[string]any{"extensions": apq(pageQuery), "variables": map[string]any{"limit": 1}}},
		{"by GraphQL over HTTP's prefixed id", map[string]any{"documentId": "sha256:" + sha256Hex(pageQuery)}},
		{"sent in full", map[string]any{"query": versionQuery}},
		{"introspection", map[string]any{"query": "{ __schema { queryType { name } } }"}},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) { g.postBody(t, c.body, nil).ok(t, nil) })
	}
	refused := []struct {
		name    string
		body    map[string]any
		header  http.Header
		code    string
		message string
	}{
		{"an unknown id", map[string]any{"documentId": "nope"}, nil, "PERSISTED_QUERY_NOT_IN_LIST",
			"No trusted document has the id nope: the gateway runs only the documents of PERSISTED_OPERATIONS_FILE"},
		{"another document", map[string]any{"query": other}, nil, "OPERATION_NOT_IN_LIST",
			"The operation is not a trusted document: the gateway runs only the documents of PERSISTED_OPERATIONS_FILE, sent by their ids"},
		{"another document registered by hash", map[string]any{"query": other, "extensions": apq(other)}, nil, "OPERATION_NOT_IN_LIST", ""},
		{"its hash afterwards", map[string]any{"extensions": apq(other)}, nil, "PERSISTED_QUERY_NOT_IN_LIST", ""},
		{"another document from the IDE", map[string]any{"query": other}, http.Header{"X-Gateway-Ide": {"1"}}, "OPERATION_NOT_IN_LIST", ""},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) { g.postBody(t, c.body, c.header).wantError(t, c.code, c.message) })
	}
}

// In development, against the embedded sandbox, the IDE runs anything while the gateway runs
// the trusted documents only for everyone else, so the settings deployed can be tried.
func TestTrustedDocumentsOnlyLetsTheIDEThroughAgainstTheSandbox(t *testing.T) {
	t.Parallel()
	manifest := trustedManifest(t, map[string]string{"version-1": versionQuery})
	g := &testGateway{url: started(t, nil, map[string]string{
		"ADDR": "127.0.0.1:0", "PERSISTED_OPERATIONS_FILE": manifest, "PERSISTED_OPERATIONS_ONLY": "true",
	}, "gateway serving")}
	g.postBody(t, map[string]any{"query": "query Other { version }"}, nil).wantError(t, "OPERATION_NOT_IN_LIST", "")
	g.postBody(t, map[string]any{"query": "query Other { version }"}, http.Header{"X-Gateway-Ide": {"1"}}).ok(t, nil)
}

// Batches: off unless GRAPHQL_BATCH_LIMIT allows them; each operation of one runs as if it came
// alone, within every limit, and one that fails has its errors in its place.
func TestBatchedOperationsRunEachWithinTheLimits(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, false)
	off := newGateway(t, up, nil)
	batch := []map[string]any{{"query": versionQuery}, {"query": versionQuery}}
	off.postBody(t, batch, nil).wantError(t, "BAD_USER_INPUT",
		"Batched requests are off: send one operation per request, or set GRAPHQL_BATCH_LIMIT")

	on := newGateway(t, up, map[string]string{"GRAPHQL_BATCH_LIMIT": "4", "GRAPHQL_MAX_DEPTH": "2"})
	deep := "{ topAccounts { nodes { contacts { __typename } } } }"
	data, _ := json.Marshal([]any{map[string]any{"query": versionQuery}, map[string]any{"query": deep}, map[string]any{"documentId": "nope"}, 7})
	req, _ := http.NewRequest(http.MethodPost, on.url+"/graphql", bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []result
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("batch: %d, %v", resp.StatusCode, err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d responses, want 4", len(got))
	}
	got[0].ok(t, nil)
	got[1].wantError(t, "OPERATION_LIMIT_EXCEEDED", "")
	got[2].wantError(t, "PERSISTED_QUERY_NOT_FOUND", "PersistedQueryNotFound")
	got[3].wantError(t, "BAD_USER_INPUT", "each operation of a batch must be a JSON object whose query, operationName and documentId are strings and whose variables and extensions are objects")

	five := []map[string]any{batch[0], batch[0], batch[0], batch[0], batch[0]}
	on.postBody(t, five, nil).wantError(t, "BAD_USER_INPUT", "the batch holds more than 4 operations; at most 4 are allowed (GRAPHQL_BATCH_LIMIT)")
	on.postBody(t, []any{}, nil).wantError(t, "BAD_USER_INPUT", "the batch is empty: send at least one operation")
	req, _ = http.NewRequest(http.MethodPost, on.url+"/graphql", strings.NewReader(`[{"query": "{ version }"}`))
	req.Header.Set("Content-Type", "application/json")
	on.do(t, req).wantError(t, "BAD_USER_INPUT", "the request body must be a JSON object, or an array of them for a batch")
}

// Over a WebSocket, an operation may be named by id too.
func TestAWebSocketOperationMayBeNamedByItsHash(t *testing.T) {
	t.Parallel()
	g := newGateway(t, newUpstream(t, false), nil)
	g.postBody(t, map[string]any{"query": versionQuery, "extensions": apq(versionQuery)}, nil).ok(t, nil)
	c := dialWS(t, g, "graphql-transport-ws", nil)
	c.init()
	c.send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"extensions": apq(versionQuery)}})
	if data := c.nextData("1"); data["version"] == nil {
		t.Errorf("got %v, want the version", data)
	}
	if m := c.read(); m["type"] != "complete" {
		t.Errorf("got %v, want complete", m)
	}
	c.send(map[string]any{"id": "2", "type": "subscribe", "payload": map[string]any{"extensions": apq(pageQuery)}})
	if m := c.read(); m["type"] != "error" || !strings.Contains(toJSON(m["payload"]), "PERSISTED_QUERY_NOT_FOUND") {
		t.Errorf("an unknown hash: got %v, want an error with PERSISTED_QUERY_NOT_FOUND", m)
	}
}

func toJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// readmeOperations are the GraphQL operations the README and docs/ show.
func readmeOperations(t *testing.T) []string {
	t.Helper()
	var ops []string
	for _, b := range mdBlocks(mdPages(t)) {
		if b.lang == "graphql" {
			ops = append(ops, b.text)
		}
	}
	if len(ops) < 3 {
		t.Fatalf("README.md and docs/ show %d GraphQL operations, want its query, mutations and subscription", len(ops))
	}
	return ops
}

// The trusted-documents test: graphql-codegen's client preset, as a front end's build
// runs it over the operations of the README and docs/, writes the manifest; a gateway that
// runs those documents only answers each by its id, in either protocol, as it answers the
// document sent in full, and refuses anything else.
func TestTrustedDocumentsFromGraphQLCodegensClientPreset(t *testing.T) {
	t.Parallel()
	npmInstall(t, apolloDir, "@graphql-codegen/client-preset")
	up := newUpstream(t, true)
	open := newGateway(t, up, nil)

	project := t.TempDir()
	modules, err := filepath.Abs(filepath.Join(apolloDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	ops := readmeOperations(t)
	codegen := "schema: " + open.url + "/graphql\ndocuments: operations/*.graphql\ngenerates:\n  gql/:\n    preset: client\n" +
		"    presetConfig:\n      persistedDocuments:\n        hashAlgorithm: sha256\n"
	files := map[string]string{"codegen.yml": codegen}
	for i, op := range ops {
		files[filepath.Join("operations", strconv.Itoa(i)+".graphql")] = op
	}
	if err := os.Symlink(modules, filepath.Join(project, "node_modules")); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		path := filepath.Join(project, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(project, "node_modules", ".bin", "graphql-codegen"))
	cmd.Dir = project
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("graphql-codegen: %v\n%s", err, out)
	}
	manifestPath := filepath.Join(project, "gql", "persisted-documents.json")
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var manifest map[string]string
	if err := json.Unmarshal(data, &manifest); err != nil {
		t.Fatal(err)
	}
	// The preset persists named operations only: a build names what it sends by id.
	// A block may hold several operations (a client's set, say).
	named := 0
	for _, op := range ops {
		named += len(regexp.MustCompile(`(?m)^(query|mutation|subscription) \w`).FindAllString(op, -1))
	}
	if len(manifest) != named || named < 2 {
		t.Fatalf("the client preset wrote %d documents, want the docs' %d named operations", len(manifest), named)
	}

	trusted := newGateway(t, up, map[string]string{"PERSISTED_OPERATIONS_FILE": manifestPath, "PERSISTED_OPERATIONS_ONLY": "true"})
	var familyID string
	for id, doc := range manifest {
		if strings.Contains(doc, "query Family") {
			familyID = id
		}
	}
	if familyID == "" {
		t.Fatal("the manifest has no Family query")
	}
	want := open.post(t, manifest[familyID], nil)
	want.ok(t, nil)
	for _, body := range []map[string]any{
		{"documentId": familyID},
		{"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": familyID}}},
	} {
		got := trusted.postBody(t, body, nil)
		got.ok(t, nil)
		if !bytes.Equal(got.Data, want.Data) {
			t.Errorf("%v answers\n%s\nwant what the document in full gets\n%s", body, got.Data, want.Data)
		}
	}
	trusted.post(t, "query Mine { version }", nil).wantError(t, "OPERATION_NOT_IN_LIST", "")
}

// apqExchange is one request Apollo Client's persisted-query link made, and its answer.
type apqExchange struct {
	Method, Accept, ContentType, CacheControl string
	SentQuery, SentHash                       bool
	Status                                    int
	Codes                                     []*string
}

// apqRun is one query through the link: what went over the wire, and what the client answered.
type apqRun struct {
	Data      map[string]any
	Error     *string
	Exchanges []apqExchange
}

// Issue 26: "test Apollo Client's persisted-query link recovering under each" media type.
// GraphQL over HTTP: under application/graphql-response+json, "if the GraphQL response does not
// contain the data entry then the server MUST reply with a 4xx or 5xx status code"; under
// application/json, "the server SHOULD use the 200 status code for every response to a
// well-formed GraphQL-over-HTTP request". A PersistedQueryNotFound answer has no data, so it is
// 400 under the first and 200 under the second, and the docs' client (docs/limits.md, run as
// written) recovers from either: it sends the document with its hash, answers its caller
// without an error, and names the operation by hash alone from then on. RFC 9111: "The no-store
// response directive indicates that a cache MUST NOT store any part of either the immediate
// request or the response": the miss is not kept, since registering the document changes it.
func TestApolloPersistedQueryLinkRecoversUnderEitherMediaType(t *testing.T) {
	t.Parallel()
	npmInstall(t, apolloDir, "@apollo/client")
	gw := newGateway(t, newUpstream(t, true), nil)
	project := t.TempDir()
	clientFile := writeDocsModule(t, project, markedBlock(t, "persisted query link", "js"), gw.url)

	// A query of the docs for each case, each unknown to the gateway when its case begins.
	queries := map[string]string{
		"graphql-response": readmeExampleQuery(t),
		"json":             "query TopAccountNames { topAccounts { nodes { name } } }",
	}
	args := []string{filepath.Join(apolloDir, "apq.mjs"), clientFile}
	for name, q := range queries {
		file := filepath.Join(project, name+".graphql")
		if err := os.WriteFile(file, []byte(q), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, name+"="+file)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", args...).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("apq.mjs: %v\n%s", err, stderr)
	}
	var got map[string][]apqRun
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("apq.mjs printed %q: %v", out, err)
	}

	for _, tc := range []struct {
		name, accept, contentType string
		missStatus                int
	}{
		{"graphql-response", "application/graphql-response+json,application/json;q=0.9", "application/graphql-response+json; charset=utf-8", http.StatusBadRequest},
		{"json", "application/json", "application/json; charset=utf-8", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runs := got[tc.name]
			if len(runs) != 2 {
				t.Fatalf("got %d runs, want 2", len(runs))
			}
			first, second := runs[0], runs[1]
			if first.Error != nil || first.Data == nil {
				t.Fatalf("first run: error %v, data %v; want the link to recover with the data", deref(first.Error), first.Data)
			}
			if len(first.Exchanges) != 2 {
				t.Fatalf("first run: %d requests %+v, want the hash alone, then the document with it", len(first.Exchanges), first.Exchanges)
			}
			miss, full := first.Exchanges[0], first.Exchanges[1]
			if miss.Accept != tc.accept || miss.SentQuery || !miss.SentHash {
				t.Errorf("first request: %+v, want the hash alone with Accept %s", miss, tc.accept)
			}
			if miss.Status != tc.missStatus || miss.ContentType != tc.contentType || len(miss.Codes) != 1 || deref(miss.Codes[0]) != "PERSISTED_QUERY_NOT_FOUND" {
				t.Errorf("the miss: %d %s %v, want %d %s with PERSISTED_QUERY_NOT_FOUND", miss.Status, miss.ContentType, derefs(miss.Codes), tc.missStatus, tc.contentType)
			}
			if miss.CacheControl != "no-store" {
				t.Errorf("the miss: Cache-Control %q, want no-store", miss.CacheControl)
			}
			if !full.SentQuery || !full.SentHash || full.Status != http.StatusOK || len(full.Codes) != 0 {
				t.Errorf("second request: %+v, want the document with its hash, answered 200 without errors", full)
			}
			if second.Error != nil || !reflect.DeepEqual(second.Data, first.Data) {
				t.Errorf("second run: error %v, data %v; want the first run's data", deref(second.Error), second.Data)
			}
			if len(second.Exchanges) != 1 || second.Exchanges[0].SentQuery || second.Exchanges[0].Status != http.StatusOK {
				t.Errorf("second run: %+v, want one request, by hash alone, answered 200", second.Exchanges)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func derefs(ss []*string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = deref(s)
	}
	return out
}

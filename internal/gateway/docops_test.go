package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// docOperation is one GraphQL operation the README or docs/ show a reader: a graphql block, the
// "query" of a command's JSON body, or one written out in the prose.
type docOperation struct {
	where string // the page and line it is on
	text  string
}

var (
	// shellSplice is where a command leaves its single-quoted JSON to splice in a variable
	// ('"$ID"'); the operation reads the value there.
	shellSplice = regexp.MustCompile(`'"\$(\w+)"'`)
	// jsonQuery is the "query" member of a JSON body, as a JSON string.
	jsonQuery = regexp.MustCompile(`"query":\s*("(?:[^"\\]|\\.)*")`)
	// codeSpan is an inline code span of the prose, which may wrap onto the next line.
	codeSpan = regexp.MustCompile("`([^`]+)`")
	// proseOperation is a code span that is a whole operation: a keyword or a selection set
	// that opens with a space ({events} is a Redis hash tag, not a query), through to the
	// selection set's end.
	proseOperation = regexp.MustCompile(`(?s)^(?:(?:query|mutation|subscription)\b|\{\s+[_A-Za-z]).*\}$`)
)

// documentedOperations returns every GraphQL operation of README.md and docs/, in the order a
// reader meets them, each once.
func documentedOperations(t *testing.T) []docOperation {
	t.Helper()
	var ops []docOperation
	seen := map[string]bool{}
	add := func(where, text string) {
		key := strings.Join(strings.Fields(text), " ")
		if !seen[key] {
			seen[key] = true
			ops = append(ops, docOperation{where: where, text: text})
		}
	}
	pages := mdPages(t)
	for _, b := range mdBlocks(pages) {
		switch {
		case b.lang == "graphql":
			add(b.String(), b.text)
		case shellLanguage[b.lang]:
			text := shellSplice.ReplaceAllString(b.text, "$1")
			for _, m := range jsonQuery.FindAllStringSubmatchIndex(text, -1) {
				var q string
				if err := json.Unmarshal([]byte(text[m[2]:m[3]]), &q); err != nil {
					t.Fatalf("%s: the query of a JSON body is not a JSON string: %v", b, err)
				}
				add(fmt.Sprintf("%s line %d", b.page, b.line+strings.Count(text[:m[0]], "\n")), q)
			}
		}
	}
	for _, p := range pages {
		blank := func(b []byte) []byte { return bytes.Repeat([]byte("\n"), bytes.Count(b, []byte("\n"))) }
		prose := fencedBlock.ReplaceAllFunc(p.text, blank)
		for _, m := range codeSpan.FindAllSubmatchIndex(prose, -1) {
			if span := string(prose[m[2]:m[3]]); proseOperation.MatchString(span) {
				add(fmt.Sprintf("%s line %d", p.name, bytes.Count(prose[:m[0]], []byte("\n"))+1), span)
			}
		}
	}
	return ops
}

// graphql-codegen's client preset, which the docs tell front ends to use, says "the following
// anonymous operation is skipped" of an operation without a name, and gives it no type: every
// operation the docs show (and the IDE's default query, made from the README's) is named, so
// that a front end can copy any of them.
func TestEveryDocumentedOperationHasAName(t *testing.T) {
	t.Parallel()
	ops := documentedOperations(t)
	ide, err := os.ReadFile(filepath.Join(repoRoot, "internal", "httpserver", "ide", "family.graphql"))
	if err != nil {
		t.Fatal(err)
	}
	ops = append(ops, docOperation{where: "internal/httpserver/ide/family.graphql", text: string(ide)})
	kinds := map[ast.Operation]int{}
	for _, op := range ops {
		doc, err := parser.ParseQuery(&ast.Source{Name: op.where, Input: op.text})
		if err != nil {
			t.Errorf("%s: %q does not parse as GraphQL: %v", op.where, op.text, err)
			continue
		}
		for _, o := range doc.Operations {
			kinds[o.Operation]++
			if o.Name == "" {
				t.Errorf("%s: an anonymous %s, which the client preset skips: %q", op.where, o.Operation, op.text)
			}
		}
	}
	// The extraction finds what the docs hold: the README's query, mutation and subscription at
	// least, and the commands' bodies.
	if kinds[ast.Query] < 5 || kinds[ast.Mutation] < 3 || kinds[ast.Subscription] < 1 {
		t.Errorf("found %v operations in README.md and docs/, want the README's and the commands' at least", kinds)
	}
}

// codegenProject is a front end's project set up as docs/graphql.md says: its codegen.yml,
// an ES module package, the packages of testdata/apollo, every documented operation as a
// .graphql file under src/, and a client module of the docs where its first line says it is.
type codegenProject struct {
	dir         string
	config      string // codegen.yml as the docs write it, with the gateway's address
	clientFile  string // where the docs' client module is
	output      string // the JSON file codegen.yml has fragment-matcher write, from dir
	presetDir   string // the directory codegen.yml has the client preset write, from dir
	ops         []docOperation
	codegenLogs string // what graphql-codegen printed, once generated
}

// newCodegenProject sets up the docs' project against gatewayURL, with the docs' client module
// client if it is not empty.
func newCodegenProject(t *testing.T, gatewayURL, client string) *codegenProject {
	t.Helper()
	npmInstall(t, apolloDir, "@graphql-codegen/client-preset")
	config := markedBlock(t, "codegen example", "yaml")
	p := &codegenProject{dir: t.TempDir(), ops: documentedOperations(t)}
	p.config = strings.ReplaceAll(config, "http://localhost:8080", gatewayURL)
	if m := regexp.MustCompile(`(?m)^  (\S+\.json):\s*$`).FindStringSubmatch(config); m != nil {
		p.output = m[1]
	} else {
		t.Fatal("the docs' codegen.yml generates no JSON file")
	}
	if m := regexp.MustCompile(`(?m)^  (\S+)/:\n    preset: client$`).FindStringSubmatch(config); m != nil {
		p.presetDir = m[1]
	} else {
		t.Fatal("the docs' codegen.yml has no output with preset: client")
	}
	nodeProject(t, p.dir)
	if client != "" {
		p.clientFile = writeDocsModule(t, p.dir, client, gatewayURL)
	}
	files := map[string]string{"codegen.yml": p.config}
	for i, op := range p.ops {
		files[fmt.Sprintf("src/operations/%02d.graphql", i)] = "# " + op.where + "\n" + op.text
	}
	writeFiles(t, p.dir, files)
	return p
}

// writeDocsModule puts a JavaScript block of the docs, as written but for the gateway's
// address, where its first line says it goes (// src/client.js), in dir, a nodeProject. It
// returns the module's path.
func writeDocsModule(t *testing.T, dir, block, gatewayURL string) string {
	t.Helper()
	name := regexp.MustCompile(`^// (\S+\.m?js)\n`).FindStringSubmatch(block)
	if name == nil {
		t.Fatalf("the docs' JavaScript block does not open with the file it is (// src/client.js): %q", block)
	}
	nodeProject(t, dir)
	writeFiles(t, dir, map[string]string{name[1]: strings.ReplaceAll(block, "http://localhost:8080", gatewayURL)})
	return filepath.Join(dir, filepath.FromSlash(name[1]))
}

// nodeProject makes dir a front end's ES module package (the docs say "type": "module") with
// testdata/apollo's packages, unless it is one already.
func nodeProject(t *testing.T, dir string) {
	t.Helper()
	nodeProjectOf(t, dir, apolloDir)
}

// nodeProjectOf makes dir a front end's ES module package with the packages installed in
// packagesDir (a testdata directory), unless it is one already.
func nodeProjectOf(t *testing.T, dir, packagesDir string) {
	t.Helper()
	if _, err := os.Lstat(filepath.Join(dir, "node_modules")); err == nil {
		return
	}
	modules, err := filepath.Abs(filepath.Join(packagesDir, "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"package.json": `{"name": "front-end", "private": true, "type": "module"}` + "\n"})
}

// writeFiles writes files (by slash-separated path) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// codegenWarning is a line of graphql-codegen's output that is not its progress: a warning
// (the client preset's "anonymous operation is skipped"), an error, or a deprecation.
var codegenWarning = regexp.MustCompile(`(?im)^.*(warn|skipp|deprecat|error|✖|⚠).*$`)

// generate runs graphql-codegen in the project, as `npx graphql-codegen` does, and fails the
// test when it fails or says anything but its progress.
func (p *codegenProject) generate(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(p.dir, "node_modules", ".bin", "graphql-codegen"))
	cmd.Dir = p.dir
	// Node's own notices (a deprecated built-in a dependency loads) are the Node version's,
	// not codegen's about the operations.
	cmd.Env = append(os.Environ(), "NODE_NO_WARNINGS=1")
	out, err := cmd.CombinedOutput()
	p.codegenLogs = string(out)
	if err != nil {
		t.Fatalf("graphql-codegen with the docs' codegen.yml: %v\n%s", err, out)
	}
	if w := codegenWarning.FindAllString(p.codegenLogs, -1); w != nil {
		t.Errorf("graphql-codegen with the docs' codegen.yml said %q\n%s", w, out)
	}
}

// Issue 26's "done when": "codegen's client preset emits no warning on the documented
// operations". The docs' codegen.yml, run over every operation of README.md and docs/, types
// each of them, and types the custom scalars as the docs say instead of as `unknown`.
func TestCodegensClientPresetTypesEveryDocumentedOperationWithoutAWarning(t *testing.T) {
	t.Parallel()
	gw := newGateway(t, newUpstream(t, true), nil)
	p := newCodegenProject(t, gw.url, "")
	p.generate(t)
	types, err := os.ReadFile(filepath.Join(p.dir, filepath.FromSlash(p.presetDir), "graphql.ts"))
	if err != nil {
		t.Fatal(err)
	}
	generated := string(types)
	for _, op := range p.ops {
		doc, err := parser.ParseQuery(&ast.Source{Input: op.text})
		if err != nil {
			t.Fatalf("%s: %v", op.where, err)
		}
		for _, o := range doc.Operations {
			kind := strings.ToUpper(string(o.Operation[:1])) + string(o.Operation[1:])
			if name := o.Name + kind; !strings.Contains(generated, "export type "+name+" = ") {
				t.Errorf("%s: the client preset wrote no type %s", op.where, name)
			}
		}
	}
	// Where a custom scalar is selected or sent, its type is the one the docs give it.
	for _, want := range []string{
		"timestamp: string",            // DateTime, in the README's subscription
		"numerator: number | string",   // BigInt, in the README's family query
		"c?: File | null",              // Upload, in the README's bulk upload
		"file?: File | null",           // Upload, in docs/graphql.md's document upload
		"expiresAt: string",            // DateTime, in docs/callers.md's assistant session
		"denominator: number | string", // BigInt
	} {
		if !strings.Contains(generated, want) {
			t.Errorf("the client preset's types hold no %q", want)
		}
	}
	// An unmapped scalar would be `timestamp: unknown`; the documents' casts (`as unknown as
	// DocumentNode<...>`) and the Exact helper's index signature are the preset's own.
	typedUnknown := regexp.MustCompile(`[:|]\s*unknown\b`)
	for i, line := range strings.Split(generated, "\n") {
		if typedUnknown.MatchString(line) && !strings.Contains(line, "type Exact<") {
			t.Errorf("graphql.ts line %d types something unknown: %.200s", i+1, line)
		}
	}
}

// markedBlock is the block of language lang in README.md or docs/ that follows the comment
// starting with marker (<!-- marker ... -->), as written.
func markedBlock(t *testing.T, marker, lang string) string {
	t.Helper()
	re := regexp.MustCompile("(?s)<!-- " + regexp.QuoteMeta(marker) + ".*?```" + regexp.QuoteMeta(lang) + "\n(.*?)```")
	for _, p := range mdPages(t) {
		if block := re.FindSubmatch(p.text); block != nil {
			return string(block[1])
		}
	}
	t.Fatalf("neither README.md nor docs/ has a %s block after <!-- %s", lang, marker)
	return ""
}

// clientLanguage names the fenced blocks that are code a client runs: JavaScript or
// TypeScript, and HTML, a page of the reader's own.
var clientLanguage = map[string]bool{
	"js": true, "javascript": true, "mjs": true, "jsx": true,
	"ts": true, "typescript": true, "tsx": true,
	"html": true, "htm": true,
}

// Issue 26: "Every client snippet runs as written in a test". Each JavaScript, TypeScript or
// HTML block of README.md and docs/ says, in the comment before its fence, which test runs it
// (<!-- label: internal/gateway/x_test.go runs it ... -->), and that test's file names the
// label; a new snippet without one fails here rather than going unrun.
func TestEveryJavaScriptOrHTMLBlockOfTheDocsNamesTheTestThatRunsIt(t *testing.T) {
	t.Parallel()
	found := map[string]int{}
	for _, b := range mdBlocks(mdPages(t)) {
		if !clientLanguage[b.lang] {
			continue
		}
		found[b.lang]++
		m := ranBy.FindStringSubmatch(b.comment)
		if m == nil {
			t.Errorf("%s: no test says it runs this %s block; run it in a test and say which in a comment before its fence", b, b.lang)
			continue
		}
		src, err := os.ReadFile(filepath.Join(repoRoot, m[2]))
		if err != nil {
			t.Errorf("%s says %s runs it: %v", b, m[2], err)
		} else if !bytes.Contains(src, []byte(strconv.Quote(m[1]))) {
			t.Errorf("%s says %s runs it, but that file does not name %q", b, m[2], m[1])
		}
	}
	if found["js"] < 2 || found["html"] < 1 {
		t.Errorf("found blocks %v, want docs/graphql.md's and docs/limits.md's JavaScript and docs/callers.md's HTML at least", found)
	}
}

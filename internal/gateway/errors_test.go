package gateway_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/errcode"
)

// wantUpstream checks that an error that came from the upstream carries the upstream's own
// status and words in extensions.upstream.
func wantUpstream(t testing.TB, e gqlError, status int, message string) {
	t.Helper()
	u, ok := e.Extensions["upstream"].(map[string]any)
	if !ok {
		t.Errorf("extensions.upstream = %v, want {status: %d, message: %q}", e.Extensions["upstream"], status, message)
		return
	}
	if u["status"] != float64(status) || u["message"] != message {
		t.Errorf("extensions.upstream = %v, want {status: %d, message: %q}", u, status, message)
	}
}

// docErrorCodes returns the codes docs/errors.md lists: the codes in backquotes that open each
// item of its list.
func docErrorCodes(t *testing.T) []string {
	t.Helper()
	section, err := os.ReadFile(filepath.Join(repoRoot, "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	item := regexp.MustCompile("(?m)^- ((?:`[A-Z][A-Z_]+`(?:, )?)+):")
	code := regexp.MustCompile("`([A-Z][A-Z_]+)`")
	var codes []string
	for _, m := range item.FindAllStringSubmatch(string(section), -1) {
		for _, c := range code.FindAllStringSubmatch(m[1], -1) {
			codes = append(codes, c[1])
		}
	}
	if len(codes) == 0 {
		t.Fatal("docs/errors.md lists no codes")
	}
	return codes
}

// gqlgenCodes are the codes of gqlgen's that the gateway's handler can answer with, by the
// identifier that sets them. gqlgen's executor sets ParseFailed and ValidationFailed itself;
// the others come with extensions the handler may install.
var gqlgenCodes = map[string]string{
	"errcode.ValidationFailed":          errcode.ValidationFailed,
	"errcode.ParseFailed":               errcode.ParseFailed,
	"extension.AutomaticPersistedQuery": "PERSISTED_QUERY_NOT_FOUND",
	"extension.FixedComplexityLimit":    "COMPLEXITY_LIMIT_EXCEEDED",
	"extension.ComplexityLimit":         "COMPLEXITY_LIMIT_EXCEEDED",
}

// Every code the gateway's code can put in extensions.code is in docs/errors.md's list: the
// constants of apperr.Code, the codes of gqlgen's that the handler uses, and any code written
// out as a string.
func TestEveryErrorCodeTheCodeCanEmitIsListedInTheDocs(t *testing.T) {
	t.Parallel()
	listed := docErrorCodes(t)
	emitted := map[string]string{ // code -> where it comes from
		errcode.ValidationFailed: "gqlgen's executor",
		errcode.ParseFailed:      "gqlgen's executor",
	}

	// apperr's codes: every constant of type Code.
	file, err := parser.ParseFile(token.NewFileSet(), filepath.Join(repoRoot, "internal", "apperr", "apperr.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, decl := range file.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for i, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					code, _ := strconv.Unquote(lit.Value)
					emitted[code] = "apperr." + vs.Names[i].Name
				}
			}
		}
	}
	if len(emitted) < 5 {
		t.Fatalf("found only %v in apperr.go", emitted)
	}

	// gqlgen's codes in use, and codes written out, in the gateway's own source.
	written := regexp.MustCompile(`"code"\s*:\s*"([A-Z][A-Z_]+)"`)
	err = filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || d.Name() == ".git" ||
			path == filepath.Join(repoRoot, "internal", "sandbox")) { // the sandbox answers REST, not GraphQL
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for use, code := range gqlgenCodes {
			if strings.Contains(string(src), use) {
				emitted[code] = path + " (" + use + ")"
			}
		}
		for _, m := range written.FindAllStringSubmatch(string(src), -1) {
			emitted[m[1]] = path
		}
		if strings.Contains(string(src), "errcode.") {
			for _, m := range regexp.MustCompile(`errcode\.([A-Z]\w+)`).FindAllStringSubmatch(string(src), -1) {
				notACode := map[string]bool{"Set": true, "GetErrorKind": true, "RegisterErrorType": true, "ErrorKind": true, "KindProtocol": true, "KindUser": true}
				if _, known := gqlgenCodes["errcode."+m[1]]; !known && !notACode[m[1]] {
					t.Errorf("%s uses errcode.%s: add its code to gqlgenCodes", path, m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for code, from := range emitted {
		if !slices.Contains(listed, code) {
			t.Errorf("%s (from %s) is not in docs/errors.md's list of codes %v", code, from, listed)
		}
	}
}

// Representative failing requests, each over the transport a client would use: every code a
// response carries is in docs/errors.md's list, and each case gets the code it should.
func TestFailingRequestsCarryOnlyListedCodes(t *testing.T) {
	t.Parallel()
	listed := docErrorCodes(t)
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	wid := ctWIDOf(t, gw, "HARTWELL-001")
	closed := newUpstream(t, false)
	closed.Close()
	gateways := map[string]*testGateway{
		"demo":      gw,
		"limited":   newGateway(t, up, map[string]string{"GRAPHQL_MAX_ROOT_FIELDS": "1"}),
		"refused":   newGateway(t, up, map[string]string{"ADVISOR_ACCESS_TOKEN": "not-the-token"}),
		"no-answer": newGateway(t, closed, nil),
	}
	const createDoc = `mutation($wid: ID!, $in: CreateDocumentInput!) { createDocument(wid: $wid, input: $in) { uploadUri } }`
	doc := map[string]any{"name": "n", "extension": "pdf", "category": "TAXES", "subCategory": "W2"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range doc {
			m[key] = val
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return map[string]any{"wid": wid, "in": m}
	}
	seen := map[string]bool{}
	for _, tc := range []struct {
		name, gateway, query string
		vars                 map[string]any
		code                 string
	}{
		{"not GraphQL", "demo", `{ topAccounts(`, nil, "GRAPHQL_PARSE_FAILED"},
		{"an unknown field", "demo", `{ nope }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		{"an enum value that is none", "demo", createDoc, with("category", "NOPE"), "GRAPHQL_VALIDATION_FAILED"},
		{"a required field left out", "demo", createDoc, with("name", nil), "GRAPHQL_VALIDATION_FAILED"},
		{"a @oneOf variable with two members", "demo", `mutation($wid: ID!, $in: ContactInput!) { createContact(wid: $wid, input: $in) { __typename } }`,
			map[string]any{"wid": wid, "in": map[string]any{"individual": map[string]any{"externalId": "x"}, "trust": map[string]any{"externalId": "y", "legalName": "Y"}}},
			"GRAPHQL_VALIDATION_FAILED"},
		{"an enum value in the wrong case", "demo", createDoc, with("category", "taxes"), "BAD_USER_INPUT"},
		{"a rule the gateway checks", "demo", createDoc, with("name", " "), "BAD_USER_INPUT"},
		{"a rule only the upstream knows", "demo", createDoc, with("tags", []string{"no-such-tag"}), "BAD_USER_INPUT"},
		{"a write to nothing", "demo", `mutation { updateTopAccount(wid: "no-such-wid", input: {name: "N"}) { wid } }`, nil, "NOT_FOUND"},
		{"a taken external id", "demo", `mutation { createTopAccount(input: {externalId: "HARTWELL-001", name: "N"}) { wid } }`, nil, "CONFLICT"},
		{"too many root fields", "limited", `{ a: version b: version }`, nil, "OPERATION_LIMIT_EXCEEDED"},
		{"credentials the upstream refuses", "refused", `{ topAccounts { nodes { wid } } }`, nil, "FORBIDDEN"},
		{"an upstream that does not answer", "no-answer", `{ topAccounts { nodes { wid } } }`, nil, "UPSTREAM_UNAVAILABLE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gateways[tc.gateway].post(t, tc.query, tc.vars)
			if len(r.Errors) == 0 {
				t.Fatalf("no error, want %s", tc.code)
			}
			for _, e := range r.Errors {
				code, _ := e.Extensions["code"].(string)
				seen[code] = true
				if !slices.Contains(listed, code) {
					t.Errorf("%q carries code %q, which docs/errors.md does not list", e.Message, code)
				}
			}
			if got := r.Errors[0].Extensions["code"]; got != tc.code {
				t.Errorf("got %v %q, want %s", got, r.Errors[0].Message, tc.code)
			}
		})
	}
	t.Logf("codes seen: %v", seen)
}

// GraphQL's own errors name what is wrong and what would do, for a literal and a variable alike.
func TestValidationErrorsNameTheFieldAndTheValidValues(t *testing.T) {
	t.Parallel()
	up := newUpstream(t, true)
	gw := newGateway(t, up, nil)
	quiet := newGateway(t, up, map[string]string{"GRAPHQL_INTROSPECTION": "false"})
	const categories = "Valid values: PERSONAL_INFORMATION, FAMILY, ESTATE_PLANNING, ASSETS, TAXES, BUSINESS, MISCELLANEOUS."
	const createDoc = `mutation($in: CreateDocumentInput!) { createDocument(wid: "w", input: $in) { uploadUri } }`
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		code, want  string
		wantQuiet   string // with introspection off: what the schema holds is not listed
	}{
		{"an enum value in a literal", `mutation { createDocument(wid: "w", input: {name: "n", extension: "pdf", category: NOPE, subCategory: W2}) { uploadUri } }`, nil,
			"GRAPHQL_VALIDATION_FAILED", `Value "NOPE" does not exist in "DocumentCategory!" enum. ` + categories,
			`Value "NOPE" does not exist in "DocumentCategory!" enum.`},
		{"an enum value in a variable", createDoc, map[string]any{"in": map[string]any{"name": "n", "extension": "pdf", "category": "NOPE", "subCategory": "W2"}},
			"GRAPHQL_VALIDATION_FAILED", `Variable "$in" got an invalid value at "in.category"; Value "NOPE" does not exist in "DocumentCategory" enum. ` + categories,
			`Variable "$in" got an invalid value at "in.category"; Value "NOPE" does not exist in "DocumentCategory" enum.`},
		{"an enum value in the wrong case", createDoc, map[string]any{"in": map[string]any{"name": "n", "extension": "pdf", "category": "taxes", "subCategory": "W2"}},
			"BAD_USER_INPUT", `Argument "input" got an invalid value at "input.category"; Value "taxes" does not exist in "DocumentCategory" enum. Did you mean the enum value "TAXES"?`,
			`Argument "input" got an invalid value at "input.category"; Value "taxes" does not exist in "DocumentCategory" enum.`}, // off means no suggestion of any kind
		{"a required field left out of a literal", `mutation { createDocument(wid: "w", input: {extension: "pdf", category: TAXES, subCategory: W2}) { uploadUri } }`, nil,
			"GRAPHQL_VALIDATION_FAILED", `Field "CreateDocumentInput.name" of required type "String!" was not provided.`,
			`Field "CreateDocumentInput.name" of required type "String!" was not provided.`},
		{"a required field left out of a variable", createDoc, map[string]any{"in": map[string]any{"extension": "pdf", "category": "TAXES", "subCategory": "W2"}},
			"GRAPHQL_VALIDATION_FAILED", `Variable "$in" got an invalid value at "in.name"; Field "CreateDocumentInput.name" of required type "String!" was not provided.`,
			`Variable "$in" got an invalid value at "in.name"; Field "CreateDocumentInput.name" of required type "String!" was not provided.`},
		{"a nested required field left out of a variable", `mutation($in: ContactInput!) { createContact(wid: "w", input: $in) { __typename } }`,
			map[string]any{"in": map[string]any{"entity": map[string]any{"externalId": "e", "legalName": "E", "ownership": []any{map[string]any{"percentage": 10}}}}},
			"GRAPHQL_VALIDATION_FAILED", `Variable "$in" got an invalid value at "in.entity.ownership[0].owners"; Field "OwnershipInput.owners" of required type "[String!]!" was not provided.`,
			`Variable "$in" got an invalid value at "in.entity.ownership[0].owners"; Field "owners" is required but was not provided.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, g := range []struct {
				gw   *testGateway
				want string
			}{{gw, tc.want}, {quiet, tc.wantQuiet}} {
				g.gw.post(t, tc.query, tc.vars).wantError(t, tc.code, g.want)
			}
		})
	}
}

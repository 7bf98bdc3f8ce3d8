package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every environment variable the repository's code reads is declared in settings(): the
// gateway's own, which Load reads through their declarations, and the others (tracing's, the
// sandbox's, the commands' and the test helpers'), each naming the package that reads it. So
// a setting cannot be read without appearing in docs/configuration.md.
func TestEveryVariableTheRepositoryReadsIsDeclared(t *testing.T) {
	declared := map[string]setting{}
	for _, sec := range settings(new(Gateway)) {
		for _, s := range sec.settings {
			if s.readBy == "" {
				s.readBy = sec.readBy
			}
			declared[s.name] = s
		}
	}
	reads := envReads(t, moduleRoot(t))
	for _, name := range slices.Sorted(maps.Keys(reads)) {
		if _, ok := declared[name]; !ok {
			t.Errorf("%s is read by %s but not declared in settings() (internal/config/settings.go): declare it, with readBy if Load does not read it",
				name, strings.Join(reads[name], ", "))
		}
	}
	for name, s := range declared {
		// A setting declared as another package's must still be read there, or the reference
		// documents a setting nothing reads.
		if strings.HasPrefix(s.readBy, "internal/") && !slices.Contains(reads[name], s.readBy) {
			t.Errorf("%s is declared as read by %s, which does not read it (read by %v)", name, s.readBy, reads[name])
		}
	}
}

// The scan must see what it is meant to: a variable read by a literal, by a constant of its
// package, by a constant of another, and by a name taken from a list.
func TestEnvReadsFindsEachWayOfNamingAVariable(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a/a.go": `package a
const Token = "A_TOKEN"
var names = []string{"A_LISTED"}
func f(getenv func(string) string) {
	getenv("A_LITERAL")
	getenv(Token)
	for _, n := range names { getenv(n) }
	for _, s := range []struct{ name string }{{"A_INLINE"}} { getenv(s.name) }
}`,
		"b/b.go": `package b
import ("os"; "example/a")
func g() { os.Getenv(a.Token); os.LookupEnv("B_LOOKUP"); _ = "NOT_READ" }`,
		"b/b_test.go": `package b
import "os"
func h() { os.Getenv("ONLY_A_TEST") }`,
	}
	for name, src := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := envReads(t, dir)
	want := map[string][]string{
		"A_LITERAL": {"a"}, "A_TOKEN": {"a", "b"}, "A_LISTED": {"a"}, "A_INLINE": {"a"}, "B_LOOKUP": {"b"},
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for name, dirs := range want {
		if !slices.Equal(got[name], dirs) {
			t.Errorf("%s: read by %v, want %v", name, got[name], dirs)
		}
	}
}

// Load asks getenv for the declared settings only, whichever way the others are set.
func TestLoadReadsOnlyDeclaredSettings(t *testing.T) {
	declared := map[string]bool{}
	for _, sec := range settings(new(Gateway)) {
		for _, s := range sec.settings {
			declared[s.name] = true
		}
	}
	for _, env := range []map[string]string{
		nil,
		{"ADVISOR_BASE_URL": "https://advisor.example", "ADVISOR_FIRM": "f", "ADVISOR_ACCESS_TOKEN": "t", "WEBHOOK_API_KEY": "0123456789abcdef", "AUTH_DISABLED": "true"},
		{"ADVISOR_BASE_URL": "https://advisor.example", "FIRMS_FILE": "/nonexistent", "BULK_SFTP_ADDR": "s:22", "ASSISTANT_CLIENT_CERT": "/c"},
	} {
		_, _ = Load(func(name string) string {
			if !declared[name] {
				t.Errorf("Load read %s, which settings() does not declare", name)
			}
			return env[name]
		})
	}
}

// envShaped is how an environment variable's name looks.
var envShaped = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)

// envReads returns the environment variables the Go code under root reads, tests aside, each
// with the directories (relative to root) of the packages that read it. A read is a call of a
// function or method named getenv, Getenv or LookupEnv. Its name is a string literal, or a
// constant of its package or of another; otherwise (a name taken from a list) every
// env-shaped string in the calling function, and in the package-level values it mentions,
// counts as read.
func envReads(t *testing.T, root string) map[string][]string {
	t.Helper()
	type pkg struct {
		files  []*ast.File
		consts map[string]string   // constant name → its string value
		lists  map[string][]string // package-level var or const name → the env-shaped strings in it
	}
	pkgs := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "vendor":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &pkg{consts: map[string]string{}, lists: map[string][]string{}}
			pkgs[rel] = p
		}
		p.files = append(p.files, f)
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if s, ok := stringLit(vs.Values[i]); ok && gd.Tok == token.CONST {
						p.consts[name.Name] = s
					}
					p.lists[name.Name] = envStrings(vs.Values[i])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read the Go files under %s: %v", root, err)
	}
	constsNamed := func(name string) []string {
		var out []string
		for _, p := range pkgs {
			if v, ok := p.consts[name]; ok {
				out = append(out, v)
			}
		}
		return out
	}

	reads := map[string][]string{}
	add := func(dir string, names ...string) {
		for _, n := range names {
			if !slices.Contains(reads[n], dir) {
				reads[n] = append(reads[n], dir)
			}
		}
	}
	for dir, p := range pkgs {
		for _, f := range p.files {
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok || len(call.Args) == 0 || !isEnvLookup(call.Fun) {
						return true
					}
					switch arg := call.Args[0].(type) {
					case *ast.BasicLit:
						if s, ok := stringLit(arg); ok {
							add(dir, s)
							return true
						}
					case *ast.Ident:
						if s, ok := p.consts[arg.Name]; ok {
							add(dir, s)
							return true
						}
					case *ast.SelectorExpr:
						if vs := constsNamed(arg.Sel.Name); len(vs) > 0 {
							add(dir, vs...)
							return true
						}
					}
					// A name from a list: whatever names the function holds or mentions.
					add(dir, envStrings(fn.Body)...)
					ast.Inspect(fn.Body, func(n ast.Node) bool {
						if id, ok := n.(*ast.Ident); ok {
							add(dir, p.lists[id.Name]...)
						}
						return true
					})
					return true
				})
			}
		}
	}
	for _, dirs := range reads {
		slices.Sort(dirs)
	}
	return reads
}

// isEnvLookup reports whether fun, the function a call calls, reads the environment.
func isEnvLookup(fun ast.Expr) bool {
	var name string
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	}
	return name == "getenv" || name == "Getenv" || name == "LookupEnv"
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// envStrings returns the env-shaped string literals within n.
func envStrings(n ast.Node) []string {
	var out []string
	ast.Inspect(n, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok {
			if s, ok := stringLit(e); ok && envShaped.MatchString(s) {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}

// moduleRoot is the directory of the go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

package transport

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The transport's packages read top-down: within each, a file calls (or reads the variables and
// constants of) the files below it, and none calls back into a file that calls it. A reader can
// then take a file with what it stands on. Types, and their fields, are the vocabulary a
// package's files share, and are left out.
func TestFilesReadTopDown(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the packages from source")
	}
	dirs := []string{".", "fanout", "socket", "wsconn"}
	exports := exportData(t, dirs)
	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			uses := fileUses(t, dir, exports)
			for _, f := range slices.Sorted(maps.Keys(uses)) {
				t.Logf("%s uses %s", f, strings.Join(slices.Sorted(slices.Values(uses[f])), ", "))
			}
			for _, cycle := range fileCycles(uses) {
				t.Errorf("files use each other in a circle: %s", strings.Join(cycle, " -> "))
			}
		})
	}
}

// exportData maps the import path of every package dirs depend on to its export data, as the
// go command built it.
func exportData(t *testing.T, dirs []string) map[string]string {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}, dirs...)
	for i, d := range dirs {
		args[5+i] = "./" + d
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), " "); ok && file != "" {
			exports[path] = file
		}
	}
	return exports
}

// fileUses type-checks the package in dir, its tests left out, and returns, for each file, the
// other files that declare what it uses.
func fileUses(t *testing.T, dir string, exports map[string]string) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if match, err := build.Default.MatchFile(dir, filepath.Base(name)); err != nil || !match || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) }),
		Error:    func(err error) { t.Error(err) },
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, _ := conf.Check(dir, fset, files, info)
	uses := map[string][]string{}
	use := func(at token.Pos, obj types.Object) {
		switch obj.(type) {
		case *types.Func, *types.Var, *types.Const:
		default:
			return
		}
		if v, ok := obj.(*types.Var); ok && v.IsField() {
			return
		}
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		from, to := filepath.Base(fset.File(at).Name()), filepath.Base(fset.File(obj.Pos()).Name())
		if from != to && !slices.Contains(uses[from], to) {
			uses[from] = append(uses[from], to)
		}
	}
	for id, obj := range info.Uses {
		// What a function declares inside itself is its own file's.
		if obj.Parent() == nil || obj.Parent() == pkg.Scope() {
			use(id.Pos(), obj)
		}
	}
	for sel, s := range info.Selections {
		use(sel.Sel.Pos(), s.Obj())
	}
	return uses
}

// fileCycles returns the circles among files, each once, as the files in it with the first
// repeated at the end.
func fileCycles(uses map[string][]string) [][]string {
	var cycles [][]string
	seen := map[string]bool{}
	var path []string
	var visit func(f string)
	onPath := map[string]bool{}
	visit = func(f string) {
		if onPath[f] {
			i := slices.Index(path, f)
			cycles = append(cycles, append(slices.Clone(path[i:]), f))
			return
		}
		if seen[f] {
			return
		}
		seen[f], onPath[f] = true, true
		path = append(path, f)
		for _, g := range uses[f] {
			visit(g)
		}
		path = path[:len(path)-1]
		onPath[f] = false
	}
	froms := make([]string, 0, len(uses))
	for f := range uses {
		froms = append(froms, f)
	}
	slices.Sort(froms)
	for _, f := range froms {
		visit(f)
	}
	return cycles
}

// Command execgen is `gqlgen generate` with the executor rendered from this directory's
// templates instead of gqlgen's own.
//
// The templates are gqlgen's, at the version go.mod names (templates/LICENSE), changed where
// they say "execgen:" so that fields answered from memory cost what reading a struct field
// costs: no goroutine, no context, no closure, no middleware. gqlgen's executor treats every
// field as if it might do I/O; at the family query's 7,700 fields that was 150,000 allocations
// and most of its CPU. Fields that do I/O (resolvers, methods that take a context) keep
// gqlgen's path unchanged, middleware and all.
//
// Everything else is gqlgen's: configuration (gqlgen.yml), models, resolvers and the data the
// templates render. TestTemplatesFollowGqlgen fails when a gqlgen upgrade changes a template,
// so the changes are carried over by hand, never silently lost. docs/executor.md lists each
// change, what it buys in the family benchmark, and how to measure it again.
package main

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/99designs/gqlgen/codegen/templates"

	"github.com/advisorhq/gateway/internal/execgen/fedshim"
)

//go:embed templates/*.gotpl
var templateFS embed.FS

func main() {
	if err := generate(); err != nil {
		fmt.Fprintln(os.Stderr, "execgen:", err)
		os.Exit(1)
	}
}

func generate() error {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		return fmt.Errorf("load gqlgen config: %w", err)
	}
	if cfg.Exec.Layout != config.ExecLayoutSingleFile {
		return errors.New("gqlgen.yml: exec.layout must be single-file: execgen renders one executor file")
	}
	if err := fedshim.Write(cfg.Exec.Filename, cfg.Exec.Package); err != nil {
		return err
	}
	keep := &dataKeeper{}
	if err := api.Generate(cfg, api.AddPlugin(keep)); err != nil {
		return fmt.Errorf("gqlgen generate: %w", err)
	}
	if keep.data == nil {
		return errors.New("gqlgen did not hand its data to plugins")
	}
	return render(keep.data)
}

// render writes the executor gqlgen just wrote, from our templates and gqlgen's data, as
// gqlgen's single-file layout does.
func render(data *codegen.Data) error {
	tfs, err := fs.Sub(templateFS, "templates")
	if err != nil {
		return err
	}
	err = templates.Render(templates.Options{
		PackageName:     data.Config.Exec.Package,
		Filename:        data.Config.Exec.Filename,
		Data:            data,
		RegionTags:      true,
		GeneratedHeader: true,
		Packages:        data.Config.Packages,
		TemplateFS:      tfs,
		PruneOptions:    data.Config.GetPruneOptions(),
		Funcs:           funcs(),
	})
	if err != nil {
		return fmt.Errorf("render the executor: %w", err)
	}
	return nil
}

// dataKeeper is a gqlgen plugin that keeps the data gqlgen renders its executor from. gqlgen
// calls plugins' GenerateCode before it writes the executor, so render runs after Generate.
type dataKeeper struct{ data *codegen.Data }

func (*dataKeeper) Name() string { return "execgen" }

func (k *dataKeeper) GenerateCode(data *codegen.Data) error {
	k.data = data
	return nil
}

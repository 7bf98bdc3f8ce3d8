//go:build ignore

// Readmequery copies the README's example family query into ide/family.graphql, the query the
// IDE opens on: the README is where the query is written and reviewed, and the binary cannot
// embed a file outside its package. `go generate ./internal/httpserver` runs it; .ci/run fails
// when the copy is stale, and so does TestTheIDEOpensOnTheREADMEQuery.
package main

import (
	"fmt"
	"os"
	"regexp"
)

func main() {
	if err := run("../../README.md", "ide/family.graphql"); err != nil {
		fmt.Fprintln(os.Stderr, "readmequery:", err)
		os.Exit(1)
	}
}

func run(readme, out string) error {
	text, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	// The same block readme_test.go runs.
	block := regexp.MustCompile("(?s)<!-- README example query.*?```graphql\n(.*?)```").FindSubmatch(text)
	if block == nil {
		return fmt.Errorf("%s has no block after <!-- README example query", readme)
	}
	return os.WriteFile(out, block[1], 0o644)
}

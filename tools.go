//go:build tools

// This file pins the code generator's version in go.mod; `go generate ./...` runs it.
package main

import _ "github.com/99designs/gqlgen"

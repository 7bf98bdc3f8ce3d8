package main

import "text/template"

// funcs are the template functions our changes to gqlgen's templates use.
func funcs() template.FuncMap {
	return template.FuncMap{}
}

// Package webhooktest holds the webhook bodies that tests of the specification's vocabulary and
// of the gateway's event pipeline share: one valid body of every event type, with every field
// the specification gives it, kept once in testdata/<EventType>.json. It imports nothing of the
// gateway, so the sandbox's tests may use it too.
package webhooktest

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Wid is the sample client's wid, which most bodies carry.
const Wid = "c-7f3a9b2e-41d0-4c1e-9a55-0b6d2f8e1c34"

//go:embed testdata/*.json
var files embed.FS

// Bodies returns one full webhook body of every event type, keyed by its EventType in the
// caller's own type (advisorspec.EventType, event.EventType). The map is the caller's own.
func Bodies[T ~string]() map[T]string {
	names, err := fs.Glob(files, "testdata/*.json")
	if err != nil {
		panic(err) // the pattern is a constant
	}
	bodies := make(map[T]string, len(names))
	for _, name := range names {
		data, err := files.ReadFile(name)
		if err != nil {
			panic(err) // embedded, so it is there
		}
		bodies[T(strings.TrimSuffix(path.Base(name), ".json"))] = string(data)
	}
	return bodies
}

// Absent, as With's value, removes the field.
var Absent = &struct{ absent bool }{}

// With returns body with the field at path set to value (marshalled; a json.RawMessage is
// taken as is), or removed when value is Absent. Path segments are separated by dots; a number
// indexes an array. It panics when body is not JSON or path does not fit it: a test's mistake.
func With(body, path string, value any) string {
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		panic(fmt.Sprintf("with: the base body is not JSON: %v", err))
	}
	segs := strings.Split(path, ".")
	cur := root
	for _, seg := range segs[:len(segs)-1] {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil {
				panic("with: " + path + ": not an index: " + seg)
			}
			cur = c[i]
		default:
			panic("with: " + path + ": cannot descend into " + seg)
		}
	}
	last := segs[len(segs)-1]
	switch c := cur.(type) {
	case map[string]any:
		if value == Absent {
			delete(c, last)
		} else {
			c[last] = value
		}
	case []any:
		i, err := strconv.Atoi(last)
		if err != nil || value == Absent {
			panic("with: " + path + ": cannot set or remove an array item that way")
		}
		c[i] = value
	default:
		panic("with: " + path + ": cannot set a field of a non-object")
	}
	b, err := json.Marshal(root)
	if err != nil {
		panic(err)
	}
	return string(b)
}

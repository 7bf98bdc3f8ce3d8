// Package schemachange holds the schema's breaking changes to the record of them: each change
// graphql-inspector calls breaking, between the last published schema and the one served, must
// be named in docs/schema-changes.md under its "## Unreleased" heading, so that no client is
// broken by a change nobody meant to make.
package schemachange

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// Unreleased is the heading, below "## ", of the section that records the changes made since
// the last published schema.
const Unreleased = "Unreleased"

// The criticalities graphql-inspector gives a change; only a breaking one needs a record.
const (
	Breaking    = "BREAKING"
	Dangerous   = "DANGEROUS"
	NonBreaking = "NON_BREAKING"
)

// Change is one change graphql-inspector reports (graph/testdata/inspector/diff.mjs prints them).
type Change struct {
	// Type is graphql-inspector's kind of change: FIELD_TYPE_CHANGED, FIELD_REMOVED, ...
	Type string `json:"type"`
	// Path is where the change is: a type (`Charity`), a field or input field (`Charity.ein`),
	// an argument (`Query.topAccounts.page`), an enum value, a directive (`@defer`). A few
	// changes of the schema as a whole have none.
	Path    string `json:"path"`
	Message string `json:"message"`
	// Level is BREAKING, DANGEROUS or NON_BREAKING.
	Level  string `json:"level"`
	Reason string `json:"reason"`
}

// Key is what records the change: its path, or its kind when it has no path.
func (c Change) Key() string {
	if c.Path != "" {
		return c.Path
	}
	return c.Type
}

// Record is docs/schema-changes.md read as its sections, from "## Unreleased" down: for each
// "## " heading, the code spans written under it.
type Record struct {
	sections []section
}

type section struct {
	heading string
	names   map[string]bool
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// Parse reads the record: the "## Unreleased" section, then one section for each release, newest
// first, each holding the code spans written under its heading outside fenced code blocks. What
// is above "## Unreleased" records nothing. It fails when there is no "## Unreleased" section,
// or two, since then there is nowhere unambiguous to record a change.
func Parse(md []byte) (*Record, error) {
	var r Record
	var text strings.Builder
	flush := func() {
		if len(r.sections) == 0 {
			text.Reset()
			return
		}
		s := &r.sections[len(r.sections)-1]
		for _, m := range codeSpan.FindAllStringSubmatch(text.String(), -1) {
			s.names[strings.TrimSpace(m[1])] = true
		}
		text.Reset()
	}
	fenced := false
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(nil, len(md)+1)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if h, ok := strings.CutPrefix(line, "## "); ok {
			flush()
			r.sections = append(r.sections, section{heading: strings.TrimSpace(h), names: map[string]bool{}})
			continue
		}
		text.WriteString(line)
		text.WriteByte('\n')
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the record of schema changes: %w", err)
	}
	first, n := -1, 0
	for i, s := range r.sections {
		if s.heading == Unreleased {
			first = i
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("the record of schema changes has %d \"## %s\" sections, want exactly one: the changes since the last published schema are recorded there", n, Unreleased)
	}
	// What is above it introduces the page and states the rule; its examples record nothing.
	r.sections = r.sections[first:]
	return &r, nil
}

// Unrecorded is a breaking change the record does not name under "## Unreleased".
type Unrecorded struct {
	Change Change
	// Elsewhere is the heading of another section that names it, if one does.
	Elsewhere string
}

func (u Unrecorded) String() string {
	s := fmt.Sprintf("breaking change %s (%s) is not recorded: name `%s` under \"## %s\" and say what a client does about it",
		u.Change.Key(), u.Change.Message, u.Change.Key(), Unreleased)
	if u.Elsewhere != "" {
		s += fmt.Sprintf("; it is named under \"## %s\", which records an earlier release's changes, not this one (if %s is the release just made, the published snapshot was not updated with it)",
			u.Elsewhere, u.Elsewhere)
	}
	return s
}

// Check returns each breaking change of changes that the record does not name under "## Unreleased",
// in the order given. A change is named by its key (Change.Key) in a code span, or by the key
// of what holds it: `Charity` names every change inside the type Charity, `Query.topAccounts`
// every change to that field's arguments.
func (r *Record) Check(changes []Change) []Unrecorded {
	var out []Unrecorded
	for _, c := range changes {
		if c.Level != Breaking || r.section(Unreleased).has(c.Key()) {
			continue
		}
		u := Unrecorded{Change: c}
		for _, s := range r.sections {
			if s.heading != Unreleased && s.has(c.Key()) {
				u.Elsewhere = s.heading
				break
			}
		}
		out = append(out, u)
	}
	return out
}

// section is the one under heading (Parse made sure Unreleased has one).
func (r *Record) section(heading string) section {
	for _, s := range r.sections {
		if s.heading == heading {
			return s
		}
	}
	return section{}
}

// has reports whether the section names key, or what encloses it: for Query.topAccounts.page,
// Query.topAccounts or Query.
func (s section) has(key string) bool {
	for {
		if s.names[key] {
			return true
		}
		i := strings.LastIndexByte(key, '.')
		if i <= 0 {
			return false
		}
		key = key[:i]
	}
}

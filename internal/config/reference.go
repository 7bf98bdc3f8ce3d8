package config

import (
	"fmt"
	"io"
	"strings"
)

// Reference writes the configuration reference as Markdown: a section per group of settings,
// each a table of setting, default and meaning. It is printed from the declarations Load reads
// the settings with (settings), so it lists every setting Load reads and the defaults Load
// uses; docs/configuration.md is its output, and a test fails when the two differ.
func Reference(w io.Writer) error {
	var b strings.Builder
	for i, sec := range settings(new(Gateway)) {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "## %s\n\n", sec.title)
		intro := sec.intro
		if sec.readBy != "" {
			intro = strings.TrimSpace(intro + " Read by " + codeIfPackage(sec.readBy) + ", not by `config.Load`.")
		}
		if intro != "" {
			fmt.Fprintf(&b, "%s\n\n", intro)
		}
		b.WriteString("| setting | default | meaning |\n|---|---|---|\n")
		for _, s := range sec.settings {
			meaning := s.meaning
			if s.readBy != "" {
				meaning += " (read by " + codeIfPackage(s.readBy) + ")"
			}
			row := []string{"`" + s.name + "`", s.shownDefault(), meaning}
			for _, cell := range row {
				// A "|" or a line break would end the cell, or the table, early.
				if strings.ContainsAny(cell, "|\n") {
					return fmt.Errorf("the reference of %s: %q holds a | or a line break", s.name, cell)
				}
			}
			fmt.Fprintf(&b, "| %s |\n", strings.ReplaceAll(strings.Join(row, " | "), "|  |", "| |"))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shownDefault is the default column: the value Load starts from, and what leaving the
// setting out means.
func (s setting) shownDefault() string {
	switch {
	case s.value != "" && s.unset != "":
		return "`" + s.value + "` " + s.unset
	case s.value != "":
		return "`" + s.value + "`"
	}
	return s.unset
}

func codeIfPackage(readBy string) string {
	if strings.HasPrefix(readBy, "internal/") {
		return "`" + readBy + "`"
	}
	return readBy
}

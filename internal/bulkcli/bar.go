package bulkcli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// bar is the command's progress on stderr: one line redrawn in place on a terminal, a line
// every few seconds otherwise (a CI log), never more often than the eye can follow. What the
// throttle skips is kept, and drawn when the step ends, so a step always ends at where it got
// to (100% once everything is sent), not at the last state that happened to be drawn.
type bar struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	last     time.Time
	drawn    bool   // a terminal line is open
	pending  string // the latest state, not drawn yet
	shown    string // the state last drawn
}

func newBar(w io.Writer) *bar {
	b := &bar{w: w}
	if f, ok := w.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			b.terminal = true
		}
	}
	return b
}

// show draws label with done of total units (total 0: unknown).
func (b *bar) show(label string, done, total float64, unit string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	line := label
	switch {
	case total > 0:
		const width = 30
		filled := int(min(done/total, 1) * width)
		line = fmt.Sprintf("%-36s [%s%s] %3.0f%% %s", label, strings.Repeat("#", filled), strings.Repeat(" ", width-filled), 100*min(done/total, 1), amount(done, unit))
	case unit != "":
		line = fmt.Sprintf("%-36s %s", label, amount(done, unit))
	}
	b.pending = line
	every := 2 * time.Second
	if b.terminal {
		every = 100 * time.Millisecond
	}
	if now := time.Now(); now.Sub(b.last) >= every {
		b.last = now
		b.draw()
	}
}

// draw writes the pending state, if it is not already what shows.
func (b *bar) draw() {
	if b.pending == "" || b.pending == b.shown {
		return
	}
	if b.terminal {
		fmt.Fprintf(b.w, "\r\033[K%s", b.pending)
		b.drawn = true
	} else {
		fmt.Fprintln(b.w, b.pending)
	}
	b.shown = b.pending
}

// done ends a step: its last state is drawn, and the line a terminal was redrawn on ends.
func (b *bar) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draw()
	if b.drawn {
		fmt.Fprintln(b.w)
		b.drawn = false
	}
	b.last, b.pending, b.shown = time.Time{}, "", ""
}

func amount(n float64, unit string) string {
	if unit != "bytes" {
		return fmt.Sprintf("%.0f %s", n, unit)
	}
	for _, u := range []string{"B", "KiB", "MiB", "GiB"} {
		if n < 1024 || u == "GiB" {
			return fmt.Sprintf("%.1f %s", n, u)
		}
		n /= 1024
	}
	return ""
}

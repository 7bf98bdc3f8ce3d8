package bulkcli

import (
	"bytes"
	"strings"
	"testing"
)

// Updates come faster than the bar draws; the last one must still be drawn when a step ends,
// or a finished upload is left showing 42%.
func TestTheBarEndsAStepAtItsLastState(t *testing.T) {
	var out bytes.Buffer
	b := newBar(&out)
	for _, sent := range []float64{0, 420, 1000} {
		b.show("sending", sent, 1000, "bytes")
	}
	b.done()
	b.show("the service is processing the files", 0, 0, "")
	b.done()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "  0%") || !strings.Contains(lines[1], "100% 1000.0 B") ||
		!strings.HasPrefix(lines[2], "the service is processing") {
		t.Errorf("got\n%s\nwant 0%%, then 100%% when the step ends, then the next step", out.String())
	}
}

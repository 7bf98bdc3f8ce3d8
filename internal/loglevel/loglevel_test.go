package loglevel

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestDemoteMovesRoutineLinesToDebugAndKeepsFailures(t *testing.T) {
	tests := []struct {
		name    string
		level   slog.Level // the handler's
		logged  slog.Level // the line's
		want    bool
		wantLvl string
	}{
		{"an info line is hidden at info", slog.LevelInfo, slog.LevelInfo, false, ""},
		{"an info line shows at debug, as debug", slog.LevelDebug, slog.LevelInfo, true, "level=DEBUG"},
		{"a debug line stays debug", slog.LevelDebug, slog.LevelDebug, true, "level=DEBUG"},
		{"a warning shows at info, as a warning", slog.LevelInfo, slog.LevelWarn, true, "level=WARN"},
		{"an error shows at info, as an error", slog.LevelInfo, slog.LevelError, true, "level=ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			inner := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level})
			log := slog.New(Demote(inner)).With("component", "sandbox").WithGroup("g")
			log.Log(t.Context(), tt.logged, "sandbox request", "path", "/v2/x")
			out := buf.String()
			if got := out != ""; got != tt.want {
				t.Fatalf("got line %q, want one written: %v", out, tt.want)
			}
			if tt.want && (!strings.Contains(out, tt.wantLvl) || !strings.Contains(out, "component=sandbox") || !strings.Contains(out, "g.path=/v2/x")) {
				t.Errorf("got %q, want %s with the logger's attributes and group", out, tt.wantLvl)
			}
		})
	}
}

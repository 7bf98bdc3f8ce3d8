// Package loglevel moves another component's routine log lines to debug level, so that a
// process that runs that component beside its own work (the gateway and its embedded sandbox)
// does not bury its own lines under the component's.
package loglevel

import (
	"context"
	"log/slog"
)

// Demote returns a handler that passes h every record below slog.LevelWarn at
// slog.LevelDebug, and warnings and errors as they are: a component's failures still show at
// the process's usual level, its routine lines only when debug lines are wanted.
func Demote(h slog.Handler) slog.Handler { return demoted{h} }

type demoted struct{ h slog.Handler }

func lower(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

func (d demoted) Enabled(ctx context.Context, l slog.Level) bool {
	return d.h.Enabled(ctx, lower(l))
}

func (d demoted) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lower(r.Level)
	return d.h.Handle(ctx, r)
}

func (d demoted) WithAttrs(attrs []slog.Attr) slog.Handler { return demoted{d.h.WithAttrs(attrs)} }
func (d demoted) WithGroup(name string) slog.Handler       { return demoted{d.h.WithGroup(name)} }

package streamend_test

import (
	"context"
	"errors"
	"testing"

	"github.com/advisorhq/gateway/internal/streamend"
)

// The position after each response is the event that response was made of, however far the
// feeder runs ahead of the responses.
func TestThePositionFollowsTheResponsesNotTheFeeder(t *testing.T) {
	for _, tc := range []struct {
		name string
		// steps: "s:<id>" sends an event, "a" advances (one response), "=<id>" checks the position.
		steps []string
	}{
		{"start only", []string{"=100-0"}},
		{"one at a time", []string{"s:101-0", "a", "=101-0", "s:102-0", "a", "=102-0"}},
		{"feeder ahead", []string{"s:101-0", "s:102-0", "s:103-0", "=100-0", "a", "=101-0", "a", "=102-0", "s:104-0", "a", "=103-0", "a", "=104-0"}},
		{"a response with nothing sent keeps the position", []string{"a", "=100-0", "s:101-0", "a", "a", "=101-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slot := streamend.From(streamend.With(context.Background()))
			slot.Start("100-0")
			for _, step := range tc.steps {
				switch {
				case step == "a":
					slot.Advance()
				case step[0] == '=':
					if got := slot.Position(); got != step[1:] {
						t.Fatalf("after %v: position %q, want %q", tc.steps, got, step[1:])
					}
				default:
					slot.Sent(step[2:])
				}
			}
		})
	}
}

// The reason a stream ended is taken once; a context without a slot takes and tracks nothing.
func TestTheReasonIsTakenOnceAndASlotlessContextIgnoresEverything(t *testing.T) {
	ctx := streamend.With(context.Background())
	why := errors.New("fell behind")
	streamend.Reporter(ctx)(why)
	streamend.Reporter(ctx)(errors.New("later reasons are ignored"))
	if got := streamend.Take(ctx); got != why {
		t.Fatalf("first take: %v, want %v", got, why)
	}
	if got := streamend.Take(ctx); got != nil {
		t.Fatalf("second take: %v, want nil", got)
	}

	bare := context.Background()
	streamend.Reporter(bare)(why)
	slot := streamend.From(bare)
	slot.Start("1-0")
	slot.Sent("2-0")
	if slot.Advance() != "" || slot.Position() != "" || streamend.Take(bare) != nil {
		t.Fatal("a context without a slot tracked something")
	}
}

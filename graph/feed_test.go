package graph

import (
	"context"
	"errors"
	"testing"
)

// The position after each response is the event that response was made of, however far the
// feeder runs ahead of the responses.
func TestAFeedsPositionFollowsTheResponsesNotTheFeeder(t *testing.T) {
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
			_, feed := Track(context.Background())
			feed.Start("100-0")
			for _, step := range tc.steps {
				switch {
				case step == "a":
					feed.Advance()
				case step[0] == '=':
					if got := feed.Position(); got != step[1:] {
						t.Fatalf("after %v: position %q, want %q", tc.steps, got, step[1:])
					}
				default:
					feed.Sent(step[2:])
				}
			}
		})
	}
}

// A resolver finds the feed the transport tracks in its context; the first reason it gives is
// the stream's. A context without a feed tracks nothing.
func TestAResolverFillsTheFeedOfItsContextAndTheFirstReasonHolds(t *testing.T) {
	ctx, feed := Track(context.Background())
	why := errors.New("fell behind")
	feedOf(ctx).End(why)
	feedOf(ctx).End(errors.New("later reasons are ignored"))
	if got := feed.Err(); got != why {
		t.Fatalf("reason: %v, want %v", got, why)
	}

	bare := feedOf(context.Background())
	bare.End(why)
	bare.Start("1-0")
	bare.Sent("2-0")
	if bare.Advance() != "" || bare.Position() != "" || bare.Err() != nil {
		t.Fatal("a context without a feed tracked something")
	}
}

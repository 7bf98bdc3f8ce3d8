package gqlrun

import (
	"context"
	"testing"
)

// A transport lends the first response its buffer and takes it back once written; anything
// else asked within the same context (a deferred part) gets a buffer of its own, and a
// response asked for without a lender too.
func TestAResponseBufferIsLentOnceAndTakenBackOnRelease(t *testing.T) {
	ctx, release := WithResponseBuffer(context.Background())
	first := ResponseBuffer(ctx, 100)
	if first.Cap() < 100 {
		t.Errorf("the lent buffer holds %d bytes, want room for 100", first.Cap())
	}
	first.WriteString("answer")
	if second := ResponseBuffer(ctx, 10); second == first {
		t.Error("a second response within the context got the lent buffer")
	}
	if own := ResponseBuffer(context.Background(), 10); own == first || own.Cap() < 10 {
		t.Errorf("a response with no lender got %p (cap %d), want a buffer of its own", own, own.Cap())
	}
	release()
	if first.Len() != 0 {
		t.Errorf("a released buffer still holds %q", first.String())
	}
	release() // a second release gives nothing back twice
}

// A buffer grown beyond maxPooled is left to the collector rather than kept by the pool.
func TestAHugeResponseBufferIsNotKept(t *testing.T) {
	ctx, release := WithResponseBuffer(context.Background())
	b := ResponseBuffer(ctx, maxPooled+1)
	b.WriteString("x")
	release()
	if b.Len() != 1 {
		t.Error("a buffer beyond maxPooled was reset for the pool")
	}
}

package socket

import (
	"fmt"
	"slices"
	"testing"
)

// An outbox wakes its writer once per busy spell, gives each batch in order, stops a producer
// at its quota without stopping the others, frees the quota as results are written, and once
// closed refuses messages and drops results.
func TestAnOutboxQueuesInOrderWithinEachQuota(t *testing.T) {
	var o Outbox[string]
	kicks := 0
	o.SetKick(func() { kicks++ })
	var fast, slow Quota
	steps := []struct {
		name string
		push func() bool
		want bool
	}{
		{"a message", func() bool { return o.Push(Item[string]{Msg: []byte("hello")}) }, true},
		{"the slow producer's first", func() bool { return o.PushResult(&slow, "s1", 2) }, true},
		{"the slow producer's second", func() bool { return o.PushResult(&slow, "s2", 2) }, true},
		{"the slow producer past its quota", func() bool { return o.PushResult(&slow, "s3", 2) }, false},
		{"the fast producer beside it", func() bool { return o.PushResult(&fast, "f1", 2) }, true},
	}
	for _, s := range steps {
		if got := s.push(); got != s.want {
			t.Fatalf("%s: got %v, want %v", s.name, got, s.want)
		}
	}
	if kicks != 1 {
		t.Fatalf("got %d kicks, want 1 for the busy spell", kicks)
	}
	batch := o.Take()
	var got []string
	for _, it := range batch {
		if it.IsResult() {
			got = append(got, it.Res)
		} else {
			got = append(got, string(it.Msg))
		}
	}
	if want := []string{"hello", "s1", "s2", "f1"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	o.Written(batch)
	if !o.PushResult(&slow, "s3", 2) {
		t.Fatal("the slow producer is still past its quota once its results were written")
	}
	if o.Take() == nil || o.Take() != nil {
		t.Fatal("want the one result, then nothing: the writer stops")
	}
	if !o.PushResult(&slow, "s4", 2) || kicks != 2 {
		t.Fatalf("got %d kicks, want a second once the writer stopped", kicks)
	}
	o.Close()
	if o.Push(Item[string]{Msg: []byte("late")}) || !o.PushResult(&fast, "f2", 2) || o.Take() != nil {
		t.Fatal("a closed outbox must refuse messages, drop results and give nothing to write")
	}
}

// WrittenTake returns a written batch and takes the next under one lock: the batch's results no
// longer count against their quota, and what was queued meanwhile comes next, or nothing, when
// the writer stops.
func TestWrittenTakeFreesTheQuotaAndTakesWhatCameMeanwhile(t *testing.T) {
	var o Outbox[string]
	o.SetKick(func() {})
	var q Quota
	o.PushResult(&q, "r1", 1)
	first := o.Take()
	if o.PushResult(&q, "r2", 1) {
		t.Fatal("a second result went past a quota of one before the first was written")
	}
	o.Push(Item[string]{Msg: []byte("meanwhile")})
	next := o.WrittenTake(first)
	if len(next) != 1 || string(next[0].Msg) != "meanwhile" {
		t.Fatalf("got %v, want the message queued meanwhile", next)
	}
	if !o.PushResult(&q, "r2", 1) {
		t.Fatal("the quota is still full once its result was written")
	}
	if last := o.WrittenTake(next); len(last) != 1 || last[0].Res != "r2" {
		t.Fatalf("got %v, want r2", last)
	}
}

// Outboxes that share their queues' arrays each give only what was queued on them: an array
// goes back once its connection is idle, cleared, and another connection's next delivery may
// take it.
func TestOutboxesSharingArraysGiveOnlyTheirOwnItems(t *testing.T) {
	var free ItemArrays[string]
	var a, b Outbox[string]
	for _, o := range []*Outbox[string]{&a, &b} {
		o.SetKick(func() {})
		o.ShareArrays(&free)
	}
	var qa, qb Quota
	for round := range 50 {
		o, q, name := &a, &qa, "a"
		if round%2 == 1 {
			o, q, name = &b, &qb, "b"
		}
		want := []string{fmt.Sprint(name, round), fmt.Sprint(name, round, "'")}
		for _, r := range want {
			o.PushResult(q, r, 10)
		}
		batch := o.Take()
		var got []string
		for _, it := range batch {
			got = append(got, it.Res)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: got %v, want %v", round, got, want)
		}
		if o.WrittenTake(batch) != nil {
			t.Fatalf("round %d: want nothing more: the connection is idle", round)
		}
	}
}

// HadResults tells a keep-alive whether results kept the connection busy since it last asked:
// messages of the connection's own (a keep-alive among them) do not count, nor does a result
// refused past its quota.
func TestHadResultsCountsOnlyResultsQueuedSinceItLastAsked(t *testing.T) {
	var o Outbox[string]
	o.SetKick(func() {})
	var q Quota
	steps := []struct {
		name string
		do   func()
		want bool
	}{
		{"nothing queued yet", func() {}, false},
		{"a message of the connection's own", func() { o.Push(Item[string]{Msg: []byte("ka")}) }, false},
		{"a result", func() { o.PushResult(&q, "r1", 1) }, true},
		{"nothing since it was asked", func() {}, false},
		{"a result refused past its quota", func() { o.PushResult(&q, "r2", 1) }, false},
		{"a result once the quota is free", func() { o.Written(o.Take()); o.PushResult(&q, "r3", 1) }, true},
	}
	for _, s := range steps {
		s.do()
		if got := o.HadResults(); got != s.want {
			t.Fatalf("%s: HadResults is %v, want %v", s.name, got, s.want)
		}
	}
}

// A result queued framed carries its frame to the writer, counts against its quota as any
// result does, and is still a result.
func TestPushFramedQueuesTheFrameWithTheResult(t *testing.T) {
	tests := []struct {
		name  string
		frame []byte
	}{
		{"framed", []byte("\x81\x03abc")},
		{"for the writer to frame", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o Outbox[string]
			o.SetKick(func() {})
			var q Quota
			if !o.PushFramed(&q, "r1", tt.frame, 1) {
				t.Fatal("refused the first result")
			}
			if o.PushFramed(&q, "r2", tt.frame, 1) {
				t.Fatal("a second result went past a quota of one")
			}
			batch := o.Take()
			if len(batch) != 1 || !batch[0].IsResult() || batch[0].Res != "r1" || string(batch[0].Frame) != string(tt.frame) {
				t.Fatalf("got %+v, want r1 as a result with frame %q", batch, tt.frame)
			}
		})
	}
}

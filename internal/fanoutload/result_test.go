package fanoutload

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestCompute checks how what subscriptions received is counted against what was stored.
func TestCompute(t *testing.T) {
	t0 := time.Unix(1000, 0)
	posts := []sent{{at: t0, id: "1-0"}, {at: t0.Add(time.Second), id: "2-0"}, {at: t0.Add(2 * time.Second), id: ""}, {at: t0.Add(3 * time.Second), id: "4-0"}}
	ms := func(d int) int64 { return t0.Add(time.Duration(d) * time.Millisecond).UnixNano() }
	tests := []struct {
		name                                                 string
		subs                                                 []subResult
		delivered, lost, dup, order, withLoss, ended, silent int
		p50, firstP50, firstMax                              float64
	}{
		{name: "all, in order", subs: []subResult{{Seq: []int32{0, 1, 3}, At: []int64{ms(10), ms(1010), ms(3010)}}}, delivered: 3, p50: 10, firstP50: 10, firstMax: 10},
		{name: "lost while open", subs: []subResult{{Seq: []int32{0, 3}, At: []int64{ms(10), ms(3010)}}}, delivered: 2, lost: 1, withLoss: 1, silent: 1, p50: 10, firstP50: 10, firstMax: 10},
		{name: "a duplicate and an event the gateway refused", subs: []subResult{{Seq: []int32{0, 0, 2, 1, 3}, At: []int64{ms(5), ms(6), ms(7), ms(1005), ms(3005)}}}, delivered: 3, dup: 1, p50: 5, firstP50: 5, firstMax: 5},
		{name: "lost and out of order", subs: []subResult{{Seq: []int32{3, 1}, At: []int64{ms(3020), ms(3030)}, Ended: "socket: EOF"}}, delivered: 2, lost: 1, order: 1, withLoss: 1, ended: 1, p50: 2030, firstP50: 2030, firstMax: 2030},
		{name: "not opened is not expected", subs: []subResult{{Seq: []int32{0, 1, 3}, At: []int64{ms(1), ms(1001), ms(3001)}}, {Ended: "not opened: refused"}}, delivered: 3, p50: 1, firstP50: 1, firstMax: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Stored: 3, Open: 1}
			r.compute(posts, tc.subs)
			got := []int{r.Delivered, r.Lost, r.Duplicated, r.OutOfOrder, r.SubsWithLoss, r.SubsEnded, r.LostSilently}
			want := []int{tc.delivered, tc.lost, tc.dup, tc.order, tc.withLoss, tc.ended, tc.silent}
			if !slices.Equal(got, want) {
				t.Errorf("got delivered, lost, duplicated, out of order, with loss, ended, lost silently %v, want %v", got, want)
			}
			if r.LatencyMS.P50 != tc.p50 {
				t.Errorf("got p50 %v ms, want %v", r.LatencyMS.P50, tc.p50)
			}
			if r.FirstFrameMS.P50 != tc.firstP50 || r.FirstFrameMS.Max != tc.firstMax {
				t.Errorf("got the first frames' p50 %v ms and max %v, want %v and %v", r.FirstFrameMS.P50, r.FirstFrameMS.Max, tc.firstP50, tc.firstMax)
			}
		})
	}
}

// TestFirstFrameIsEachEventsEarliest checks that an event's first frame is the earliest of
// any subscription's, whichever subscription it was.
func TestFirstFrameIsEachEventsEarliest(t *testing.T) {
	t0 := time.Unix(1000, 0)
	posts := []sent{{at: t0, id: "1-0"}, {at: t0.Add(time.Second), id: "2-0"}, {at: t0.Add(2 * time.Second), id: "3-0"}}
	ms := func(d int) int64 { return t0.Add(time.Duration(d) * time.Millisecond).UnixNano() }
	r := &Result{Stored: 3, Open: 2}
	r.compute(posts, []subResult{
		{Seq: []int32{0, 1, 2}, At: []int64{ms(10), ms(1030), ms(2040)}},
		{Seq: []int32{0, 1, 2}, At: []int64{ms(20), ms(1005), ms(2050)}},
	})
	if got := r.FirstFrameMS; got.P50 != 10 || got.Max != 40 {
		t.Errorf("got first frames %+v, want p50 10 (of 5, 10, 40), max 40", got)
	}
	if got := r.LatencyMS; got.P50 != 30 || got.Max != 50 {
		t.Errorf("got latencies %+v, want p50 30, max 50", got)
	}
}

// TestFailureKindCountsClosesByCode checks that sockets failing to open are counted by the
// close code the gateway sent, as in issue 28: "541 of them, about 3%, closed `4408 Connection
// initialisation timeout`", and other failures without what differs from socket to socket.
func TestFailureKindCountsClosesByCode(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"an init timeout", &initClosed{fmt.Errorf("connection_init: %w", &closeError{4408, "Connection initialisation timeout"}), nil}, "closed 4408"},
		{"a close without a code", fmt.Errorf("connection_init: %w", &closeError{1005, ""}), "closed 1005"},
		{"a dial error", errors.New(`dial: dial tcp 127.0.0.1:41234: connect: connection refused`), "dial: dial tcp ADDR: connect: connection refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := failureKind(tc.err); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

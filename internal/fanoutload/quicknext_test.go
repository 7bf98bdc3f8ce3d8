package fanoutload

import "testing"

// The quick reading of a frame takes exactly the next messages of this run's events, and leaves
// everything else (errors, other types, other runs' events, odd shapes) to the full decoding.
func TestQuickNextReadsOnlyThisRunsPlainNextFrames(t *testing.T) {
	const prefix = "fanout-run-"
	for _, tc := range []struct {
		frame string
		sub   int
		seq   int32
		ok    bool
	}{
		{`{"id":"7","type":"next","payload":{"data":{"events":{"id":"1-0","wid":"fanout-run-42","eventType":"CLIENT_PROGRESS_CHANGED"}}}}`, 7, 42, true},
		{`{"id":"7","type":"next","payload":{"data":null,"errors":[{"message":"x"}]}}`, 0, 0, false},
		{`{"id":"7","type":"error","payload":[{"message":"x","extensions":{"code":"SLOW_CONSUMER"}}]}`, 0, 0, false},
		{`{"id":"7","type":"next","payload":{"data":{"events":{"wid":"another-run-42"}}}}`, 0, 0, false},
		{`{"type":"ping"}`, 0, 0, false},
		{`{"id":"x","type":"next","payload":{"data":{"events":{"wid":"fanout-run-1"}}}}`, 0, 0, false},
		{`{"id":"7","type":"complete"}`, 0, 0, false},
	} {
		sub, seq, ok := quickNext([]byte(tc.frame), prefix)
		if sub != tc.sub || seq != tc.seq || ok != tc.ok {
			t.Errorf("quickNext(%s) = %d, %d, %v; want %d, %d, %v", tc.frame, sub, seq, ok, tc.sub, tc.seq, tc.ok)
		}
	}
}

package fanout

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
)

// feed executes every operation as the responses sent on its channel, until it closes.
type feed struct {
	graphql.GraphExecutor
	responses chan *graphql.Response
	running   atomic.Int64
}

// DispatchError presents nothing: the errors are the response's as they are.
func (f *feed) DispatchError(_ context.Context, list gqlerror.List) *graphql.Response {
	return &graphql.Response{Errors: list}
}

func (f *feed) DispatchOperation(ctx context.Context, _ *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	f.running.Add(1)
	return func(ctx context.Context) *graphql.Response {
		select {
		case r, ok := <-f.responses:
			if ok {
				return r
			}
		case <-ctx.Done():
		}
		f.running.Add(-1)
		return nil
	}, ctx
}

// sink records what its member gets; a full sink refuses every result.
type sink struct {
	full bool

	mu      sync.Mutex
	results []*Result
	final   *Result
	outcome Outcome
	ended   chan struct{}
}

func newSink(full bool) *sink { return &sink{full: full, ended: make(chan struct{})} }

func (s *sink) Deliver(_ *Member, r *Result) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full {
		return false
	}
	s.results = append(s.results, r)
	return true
}

func (s *sink) End(_ *Member, final *Result, outcome Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.final, s.outcome = final, outcome
	close(s.ended)
}

func (s *sink) got() []*Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.results
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s", what)
		}
	}
}

func shareAll(context.Context, *graphql.OperationContext) (string, bool) { return "", true }

// newFanout is a fanout with a buffer of 4 over a feed, whose goroutines the test waits for
// when it ends.
func newFanout(t *testing.T, share Share) (*Fanout, *Counts, *feed) {
	return newTrackedFanout(t, share, nil)
}

// newTrackedFanout is newFanout giving each execution the Feed track makes.
func newTrackedFanout(t *testing.T, share Share, track Track) (*Fanout, *Counts, *feed) {
	var counts Counts
	var running sync.WaitGroup
	t.Cleanup(running.Wait)
	exec := &feed{responses: make(chan *graphql.Response)}
	return New(share, track, 4, &counts, &running), &counts, exec
}

// events is a Feed whose stream starts after event 100-0 and moves on one event a response,
// until end gives the reason it stopped.
type events struct {
	mu  sync.Mutex
	n   int
	err error
}

func (e *events) Position() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return fmt.Sprintf("%d-0", 100+e.n)
}
func (e *events) Err() error    { e.mu.Lock(); defer e.mu.Unlock(); return e.err }
func (e *events) end(err error) { e.mu.Lock(); defer e.mu.Unlock(); e.err = err }

func (e *events) Advance() string {
	e.mu.Lock()
	e.n++
	e.mu.Unlock()
	return e.Position()
}

// subscribe starts n members of the same subscription on f and waits until they count.
func subscribe(t *testing.T, f *Fanout, counts *Counts, exec graphql.GraphExecutor, sinks ...*sink) []*Member {
	t.Helper()
	opCtx := &graphql.OperationContext{RawQuery: "subscription { s }", Variables: map[string]any{"v": 1}}
	var members []*Member
	for _, s := range sinks {
		members = append(members, f.Subscribe(context.Background(), exec, opCtx, s))
	}
	eventually(t, "the members to count", func() bool { return counts.Subscriptions() == len(sinks) })
	return members
}

// Subscribers that Share lets share run as one execution and get the very same encoded
// results; without Share each runs its own.
func TestSubscribersShareAnExecutionWhenShareAllows(t *testing.T) {
	for _, tt := range []struct {
		name       string
		share      Share
		executions int
	}{
		{"shared", shareAll, 1},
		{"not shared", nil, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, counts, exec := newFanout(t, tt.share)
			a, b := newSink(false), newSink(false)
			subscribe(t, f, counts, exec, a, b)
			if counts.Executions() != tt.executions {
				t.Fatalf("got %d executions, want %d", counts.Executions(), tt.executions)
			}
			for range tt.executions {
				exec.responses <- &graphql.Response{Data: json.RawMessage(`{"s":1}`)}
			}
			eventually(t, "both to get the result", func() bool { return len(a.got()) == 1 && len(b.got()) == 1 })
			if same := a.got()[0] == b.got()[0]; same != (tt.executions == 1) || string(a.got()[0].JSON) != `{"data":{"s":1}}` {
				t.Fatalf("got %s (the same result for both: %v), want {\"data\":{\"s\":1}} shared only when executed once", a.got()[0].JSON, same)
			}
			close(exec.responses)
			for _, s := range []*sink{a, b} {
				<-s.ended
				if s.final != nil || s.outcome != Done {
					t.Fatalf("got the end %v with %v, want Done without a last word", s.outcome, s.final)
				}
			}
			eventually(t, "the counts to fall to zero", func() bool { return counts.Subscriptions() == 0 && counts.Executions() == 0 })
		})
	}
}

// A member that cannot take a result is ended alone as a slow consumer, told where to resume;
// the others go on. The execution stops when its last member leaves.
func TestASlowMemberIsEndedAloneAndTheLastToLeaveStopsTheExecution(t *testing.T) {
	f, counts, exec := newFanout(t, shareAll)
	slow, fast := newSink(true), newSink(false)
	members := subscribe(t, f, counts, exec, slow, fast)
	exec.responses <- &graphql.Response{Data: json.RawMessage(`{"s":1}`)}
	<-slow.ended
	if slow.outcome != Failed || slow.final == nil || !strings.Contains(string(slow.final.Errors), string(apperr.SlowConsumer)) {
		t.Fatalf("the slow member ended %v with %v, want Failed with SLOW_CONSUMER", slow.outcome, slow.final)
	}
	eventually(t, "the other member's result", func() bool { return len(fast.got()) == 1 })
	members[1].Leave()
	eventually(t, "the execution to stop", func() bool { return exec.running.Load() == 0 && counts.Executions() == 0 })
	if !members[1].Gone() || counts.Subscriptions() != 0 {
		t.Fatalf("got Gone %v and %d subscriptions, want the member gone and none", members[1].Gone(), counts.Subscriptions())
	}
}

// A response of errors and no data is the stream's last word for every member: Unavailable
// when it says the event store is down, Failed otherwise.
func TestALastWordEndsEveryMember(t *testing.T) {
	for _, tt := range []struct {
		code apperr.Code
		want Outcome
	}{
		{apperr.EventsUnavailable, Unavailable},
		{apperr.Internal, Failed},
	} {
		t.Run(string(tt.code), func(t *testing.T) {
			f, counts, exec := newFanout(t, shareAll)
			a, b := newSink(false), newSink(false)
			subscribe(t, f, counts, exec, a, b)
			exec.responses <- &graphql.Response{Errors: gqlerror.List{{Message: "no", Extensions: map[string]any{"code": tt.code}}}}
			for _, s := range []*sink{a, b} {
				<-s.ended
				if s.outcome != tt.want || s.final == nil || !strings.Contains(string(s.final.Errors), string(tt.code)) {
					t.Fatalf("got %v with %v, want %v with the errors", s.outcome, s.final, tt.want)
				}
			}
		})
	}
}

// The feed the execution is given says where each result leaves the stream, where a member
// ended as slow resumes, and why the stream ended: its reason is every remaining member's last
// word, Unavailable when it says the event store is down.
func TestTheFeedGivesPositionsAndTheReasonTheStreamEnded(t *testing.T) {
	for _, tt := range []struct {
		name   string
		reason error
		final  string // what the last word holds; "" for none
		want   Outcome
	}{
		{"no reason", nil, "", Done},
		{"store down", &gqlerror.Error{Message: "store down", Extensions: map[string]any{"code": apperr.EventsUnavailable}}, "store down", Unavailable},
		{"expired", apperr.New(apperr.EventsExpired, "too old"), "too old", Failed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fed := &events{}
			f, counts, exec := newTrackedFanout(t, shareAll, func(ctx context.Context) (context.Context, Feed) { return ctx, fed })
			slow, fast := newSink(false), newSink(false)
			subscribe(t, f, counts, exec, slow, fast)
			exec.responses <- &graphql.Response{Data: json.RawMessage(`{"s":1}`)}
			eventually(t, "both to get the first result", func() bool { return len(slow.got()) == 1 && len(fast.got()) == 1 })
			slow.mu.Lock()
			slow.full = true
			slow.mu.Unlock()
			exec.responses <- &graphql.Response{Data: json.RawMessage(`{"s":2}`)}
			<-slow.ended
			if want := `after: \"101-0\"`; slow.outcome != Failed || !strings.Contains(string(slow.final.Errors), want) {
				t.Fatalf("the slow member ended %v with %s, want Failed naming %s", slow.outcome, slow.final.Errors, want)
			}
			eventually(t, "the second result", func() bool { return len(fast.got()) == 2 })
			if got := []string{fast.got()[0].Pos, fast.got()[1].Pos}; got[0] != "101-0" || got[1] != "102-0" {
				t.Fatalf("got positions %q, want 101-0 and 102-0", got)
			}
			fed.end(tt.reason)
			close(exec.responses)
			<-fast.ended
			switch {
			case fast.outcome != tt.want:
				t.Fatalf("got the end %v, want %v", fast.outcome, tt.want)
			case tt.final == "" && fast.final != nil:
				t.Fatalf("got the last word %s, want none", fast.final.JSON)
			case tt.final != "" && (fast.final == nil || !strings.Contains(string(fast.final.Errors), tt.final) || fast.final.Pos != "102-0"):
				t.Fatalf("got the last word %+v, want one saying %q at 102-0", fast.final, tt.final)
			}
		})
	}
}

func TestFramingsFrameOncePerKeyAndKeepAFew(t *testing.T) {
	type ask struct {
		key  string
		want string // "" for nil: too many keys, the caller frames
		made bool   // frame was called
	}
	tests := []struct {
		name string
		asks []ask
	}{
		{"one key, many members", []ask{{"1", "f1", true}, {"1", "f1", false}, {"1", "f1", false}}},
		{"a few keys", []ask{{"1", "f1", true}, {"2", "f2", true}, {"1", "f1", false}, {"2", "f2", false}}},
		{"more keys than kept", []ask{
			{"1", "f1", true}, {"2", "f2", true}, {"3", "f3", true}, {"4", "f4", true},
			{"5", "", false}, {"1", "f1", false}, {"6", "", false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Framings
			for i, a := range tt.asks {
				made := false
				got := f.For([]byte(a.key), func() []byte { made = true; return []byte("f" + a.key) })
				if string(got) != a.want || (got == nil) != (a.want == "") || made != a.made {
					t.Errorf("ask %d (%q): got %q, made %v; want %q, made %v", i, a.key, got, made, a.want, a.made)
				}
			}
		})
	}
}

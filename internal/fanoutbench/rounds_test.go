package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/fanoutload"
)

// TestRunRefusesBadRounds checks that -rounds is validated before anything is built, started
// or measured.
func TestRunRefusesBadRounds(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "zero rounds", args: []string{"-start", "-with-floor", "-rounds", "0"}, want: "-rounds 0: at least one round"},
		{name: "negative rounds", args: []string{"-gateway", "http://127.0.0.1:1", "-with-floor", "-rounds", "-2"}, want: "-rounds -2: at least one round"},
		{name: "rounds without the floor", args: []string{"-start", "-rounds", "3"}, want: "-rounds alternates the floor and the gateway: give -with-floor"},
		{name: "not a number", args: []string{"-start", "-with-floor", "-rounds", "many"}, want: "invalid value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			if stdout.Len() > 0 {
				t.Errorf("printed %q before refusing", stdout.String())
			}
		})
	}
}

// fakes measures nothing: each measurement's figures are its place in the run, and it notes
// the order it was called in and whether another was running meanwhile.
type fakes struct {
	calls   []string
	running bool
	overlap bool
	failOn  int // fail the measurement with this number (from 1); 0 for none
}

func (f *fakes) enter() func() {
	if f.running {
		f.overlap = true
	}
	f.running = true
	return func() { f.running = false }
}

func (f *fakes) floor(context.Context) (*floorResult, error) {
	defer f.enter()()
	f.calls = append(f.calls, "F")
	if len(f.calls) == f.failOn {
		return nil, errors.New("reader died")
	}
	n := float64(len(f.calls))
	return &floorResult{WriterUSPerFrame: 10, Reader: floorReaderFigs{LatencyMS: fanoutload.Latency{P50: 10 * n, P99: 100 * n}}}, nil
}

func (f *fakes) gateway(context.Context) (*fanoutload.Result, error) {
	defer f.enter()()
	f.calls = append(f.calls, "G")
	if len(f.calls) == f.failOn {
		return nil, errors.New("gateway did not serve")
	}
	n := float64(len(f.calls))
	return &fanoutload.Result{CPUMsPer1000Dlvr: n, Delivered: 1, LatencyMS: fanoutload.Latency{P50: 10, P99: 100}}, nil
}

// TestRunRoundsAlternates checks the ABBA order, that no two measurements overlap, that each
// round is handed on as it completes, and that an error names its round and keeps the rounds
// before it.
func TestRunRoundsAlternates(t *testing.T) {
	tests := []struct {
		name      string
		rounds    int
		failOn    int
		wantCalls string
		wantDone  int
		wantErr   string
	}{
		{name: "one round is floor then gateway", rounds: 1, wantCalls: "FG", wantDone: 1},
		{name: "five rounds in ABBA order", rounds: 5, wantCalls: "FGGFFGGFFG", wantDone: 5},
		{name: "a single run's error as before", rounds: 1, failOn: 1, wantCalls: "F", wantErr: "the floor: reader died"},
		{name: "a failure stops the run", rounds: 3, failOn: 4, wantCalls: "FGGF", wantDone: 1, wantErr: "the floor, round 2 of 3: reader died"},
		{name: "a gateway's failure names its round", rounds: 3, failOn: 6, wantCalls: "FGGFFG", wantDone: 2, wantErr: "the gateway, round 3 of 3: gateway did not serve"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakes{failOn: tc.failOn}
			var done []int
			got, err := runRounds(context.Background(), tc.rounds, f.floor, f.gateway, func(r round) { done = append(done, r.N) })
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr) {
				t.Fatalf("got error %v, want %q", err, tc.wantErr)
			}
			if calls := strings.Join(f.calls, ""); calls != tc.wantCalls {
				t.Errorf("measured %s, want %s", calls, tc.wantCalls)
			}
			if f.overlap {
				t.Error("two measurements overlapped")
			}
			if len(got) != tc.wantDone || !slices.Equal(done, []int{1, 2, 3, 4, 5}[:tc.wantDone]) {
				t.Errorf("got %d rounds, handed on %v; want %d", len(got), done, tc.wantDone)
			}
			for i, r := range got {
				if r.N != i+1 || r.FloorFirst != (i%2 == 0) || r.Ratios == nil || r.Ratios.P50 <= 0 {
					t.Errorf("round %d: %+v", i+1, r)
				}
			}
		})
	}
}

// aRound is a round with the figures that matter to the summary.
func aRound(n int, gwCPU, floorCPU, gwP99, floorP99, kb float64, lost int) round {
	f := &floorResult{WriterUSPerFrame: floorCPU, Reader: floorReaderFigs{LatencyMS: fanoutload.Latency{P50: floorP99 / 2, P99: floorP99}, CPUUSPerFrame: 8, FirstFrameMS: fanoutload.Latency{P50: 0.1}}}
	g := &fanoutload.Result{CPUMsPer1000Dlvr: gwCPU, LatencyMS: fanoutload.Latency{P50: gwP99 / 2, P99: gwP99}, KBPerSubscriber: kb,
		FirstFrameMS: fanoutload.Latency{P50: float64(n)},
		Delivered:    100, Lost: lost, WorkersCPUMsPer1000Dlvr: 10}
	return round{N: n, FloorFirst: n%2 == 1, Floor: f, Gateway: g, Ratios: compare(f, g)}
}

// TestSummarize checks the medians (of the ratios, not ratios of the medians), the counts
// within each target and the rounds that were not correct.
func TestSummarize(t *testing.T) {
	odd := []round{
		aRound(1, 11, 10, 130, 100, 5.5, 0), // CPU 1.10×, p99 1.30×
		aRound(2, 12, 10, 100, 200, 5.0, 0), // 1.20×, 0.50×
		aRound(3, 9, 10, 150, 150, 9.0, 3),  // 0.90×, 1.00×
	}
	s := summarize(odd)
	approx := func(name string, got, want float64) {
		t.Helper()
		if got < want-1e-9 || got > want+1e-9 {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	approx("CPU ratio", s.CPURatio, 1.10)
	approx("p99 ratio", s.P99Ratio, 1.00)
	approx("p50 ratio", s.P50Ratio, 1.00)
	approx("gateway CPU", s.GatewayUSPerDelivery, 11)
	approx("floor CPU", s.FloorUSPerFrame, 10)
	approx("gateway p99", s.GatewayP99MS, 130)
	approx("floor p99", s.FloorP99MS, 150)
	approx("floor p50", s.FloorP50MS, 75)
	approx("KB per subscriber", s.KBPerSubscriber, 5.5)
	approx("clients", s.ClientsUSPerFrame, 10)
	approx("reader", s.ReaderUSPerFrame, 8)
	approx("gateway's first frame", s.GatewayFirstP50MS, 2)
	approx("floor's first frame", s.FloorFirstP50MS, 0.1)
	if s.Rounds != 3 || s.CPUWithin != 2 || s.P99Within != 2 || s.RSSWithin != 2 || !slices.Equal(s.Incorrect, []int{3}) {
		t.Errorf("got %d rounds, %d/%d/%d within CPU/p99/RSS, incorrect %v; want 3, 2/2/2, [3]", s.Rounds, s.CPUWithin, s.P99Within, s.RSSWithin, s.Incorrect)
	}

	even := append(odd, aRound(4, 10, 10, 120, 100, 6.0, 0)) // 1.00×, 1.20×
	s = summarize(even)
	approx("CPU ratio of four, the mean of the middle two", s.CPURatio, (1.00+1.10)/2)
	approx("p99 ratio of four", s.P99Ratio, (1.00+1.20)/2)
	approx("gateway p99 of four", s.GatewayP99MS, (120+130)/2.0)

	var out bytes.Buffer
	printSummary(&out, even, s)
	for _, want := range []string{"=== 4 rounds", "median gateway / floor: CPU per delivery 1.05× (target ≤ 1.15×; 3 of 4 rounds within)", "p99 1.10× (target ≤ 1.25×; 3 of 4 rounds within)",
		"median RSS per subscriber 5.8 KB (target ≤ 8 KB; 3 of 4 rounds within)", "NOT CORRECT in round(s) 3"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}
	if rows := strings.Count(out.String(), "\n"); rows != 12 {
		t.Errorf("the summary has %d lines, want 12 (a blank, a heading, a header, 4 rounds, the medians, 4 lines of findings)\n%s", rows, out.String())
	}

	if s := summarize(odd[:2]); len(s.Incorrect) != 0 {
		t.Errorf("rounds without losses: incorrect %v", s.Incorrect)
	} else {
		out.Reset()
		printSummary(&out, odd[:2], s)
		if !strings.Contains(out.String(), "every round: every frame delivered once, in order") {
			t.Errorf("the summary of correct rounds does not say so:\n%s", out.String())
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1}, 2},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		t.Run(fmt.Sprint(tc.xs), func(t *testing.T) {
			in := slices.Clone(tc.xs)
			if got := median(tc.xs); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if !slices.Equal(in, tc.xs) {
				t.Errorf("median reordered its argument: %v", tc.xs)
			}
		})
	}
}

// The rounds' figures are printed, as tables or JSON, whatever they say; a round whose
// deliveries were not correct then fails the run, so a script learns of it.
func TestAReportOfIncorrectRoundsIsPrintedAndFails(t *testing.T) {
	good := []round{aRound(1, 10, 10, 100, 100, 5, 0), aRound(2, 10, 10, 100, 100, 5, 0)}
	bad := append(slices.Clone(good), aRound(3, 10, 10, 100, 100, 5, 2))
	for _, tc := range []struct {
		name    string
		rounds  []round
		asJSON  bool
		wantErr bool
		want    string
	}{
		{"correct, as tables", good, false, false, "every round: every frame delivered once"},
		{"correct, as JSON", good, true, false, `"incorrectRounds": []`},
		{"incorrect, as tables", bad, false, true, "NOT CORRECT in round(s) 3"},
		{"incorrect, as JSON", bad, true, true, `"incorrectRounds": [`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := report(&out, tc.rounds, tc.asJSON)
			if (err != nil) != tc.wantErr || tc.wantErr && !strings.Contains(err.Error(), "round(s) [3]") {
				t.Errorf("error %v, want one naming round 3: %t", err, tc.wantErr)
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("the report lacks %q:\n%s", tc.want, out.String())
			}
		})
	}
}

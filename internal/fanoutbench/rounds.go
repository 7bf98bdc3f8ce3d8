package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/advisorhq/gateway/internal/fanoutload"
)

// The targets the gateway is held to against the floor (issue 28).
const (
	cpuRatioTarget = 1.15 // gateway CPU per delivery over the floor writer's per frame
	p99RatioTarget = 1.25 // gateway p99 over the floor's
	rssTargetKB    = 8.0  // gateway RSS growth per subscriber
)

// round is one measurement of the floor and one of the gateway, taken one right after the
// other, and their ratios.
type round struct {
	N          int                `json:"round"`
	FloorFirst bool               `json:"floorFirst"`
	Floor      *floorResult       `json:"floor"`
	Gateway    *fanoutload.Result `json:"gateway"`
	Ratios     *comparison        `json:"ratios"`
}

// floorFirst says whether round i (from 0) measures the floor before the gateway: ABBA order
// (floor, gateway; gateway, floor; floor, gateway; ...), so that a drift of the machine over
// the run (another job's load, the page cache, the clock) lifts the second measurement of
// half the rounds and the first of the other half, and leaves the median ratio alone; floor
// always first would move every ratio the same way. The first round is as a single run is.
func floorFirst(i int) bool { return i%2 == 0 }

// measurer takes one measurement; the gateway's starts a gateway of its own, if the run
// starts one, and stops it before returning, so that no two measurements overlap.
type (
	floorMeasurer   func(ctx context.Context) (*floorResult, error)
	gatewayMeasurer func(ctx context.Context) (*fanoutload.Result, error)
)

// runRounds takes n rounds one after the other, each measurement alone on the machine, and
// hands each round to done as soon as it is complete.
func runRounds(ctx context.Context, n int, floor floorMeasurer, gateway gatewayMeasurer, done func(round)) ([]round, error) {
	var out []round
	for i := range n {
		r := round{N: i + 1, FloorFirst: floorFirst(i)}
		steps := []func() error{
			func() (err error) { r.Floor, err = floor(ctx); return wrap(err, "the floor", r.N, n) },
			func() (err error) { r.Gateway, err = gateway(ctx); return wrap(err, "the gateway", r.N, n) },
		}
		if !r.FloorFirst {
			slices.Reverse(steps)
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return out, err
			}
		}
		r.Ratios = compare(r.Floor, r.Gateway)
		out = append(out, r)
		if done != nil {
			done(r)
		}
	}
	return out, nil
}

func wrap(err error, what string, i, n int) error {
	if err == nil {
		return nil
	}
	if n == 1 {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s, round %d of %d: %w", what, i, n, err)
}

func (r *round) order() string {
	if r.FloorFirst {
		return "floor, gateway"
	}
	return "gateway, floor"
}

// print writes the round's figures as a single run prints them, under a heading.
func (r *round) print(w io.Writer, n int) {
	fmt.Fprintf(w, "\n=== round %d of %d (%s)\n", r.N, n, r.order())
	r.Gateway.Print(w)
	r.Floor.print(w)
	r.Ratios.print(w)
}

// correct reports whether the gateway delivered every expected frame once, in order, to
// subscriptions that stayed open.
func (r *round) correct() bool {
	g := r.Gateway
	return g.Lost == 0 && g.Duplicated == 0 && g.OutOfOrder == 0 && g.SubsEnded == 0 && g.Delivered > 0
}

// summary is what the rounds say together: the median of each ratio, the median of each raw
// figure it is made of, and how many rounds met each target.
type summary struct {
	Rounds int `json:"rounds"`
	// Medians of the rounds' ratios.
	CPURatio float64 `json:"medianCpuRatio"`
	P50Ratio float64 `json:"medianP50Ratio"`
	P99Ratio float64 `json:"medianP99Ratio"`
	// Medians of the raw figures.
	GatewayUSPerDelivery float64 `json:"medianGatewayCpuMicrosecondsPerDelivery"`
	FloorUSPerFrame      float64 `json:"medianFloorWriterCpuMicrosecondsPerFrame"`
	GatewayP50MS         float64 `json:"medianGatewayP50Ms"`
	FloorP50MS           float64 `json:"medianFloorP50Ms"`
	GatewayP99MS         float64 `json:"medianGatewayP99Ms"`
	FloorP99MS           float64 `json:"medianFloorP99Ms"`
	KBPerSubscriber      float64 `json:"medianKbPerSubscriber"`
	// The medians of the first frames' p50: the part of the latency before any write.
	GatewayFirstP50MS float64 `json:"medianGatewayFirstFrameP50Ms"`
	FloorFirstP50MS   float64 `json:"medianFloorFirstFrameP50Ms"`
	ClientsUSPerFrame float64 `json:"medianClientsCpuMicrosecondsPerFrame"`
	ReaderUSPerFrame  float64 `json:"medianReaderCpuMicrosecondsPerFrame"`
	// Rounds within each target.
	CPUWithin int `json:"roundsWithinCpuTarget"`
	P99Within int `json:"roundsWithinP99Target"`
	RSSWithin int `json:"roundsWithinRssTarget"`
	// Incorrect lists the rounds (from 1) whose gateway lost, duplicated or reordered frames,
	// or ended subscriptions.
	Incorrect []int `json:"incorrectRounds"`
}

func summarize(rounds []round) *summary {
	s := &summary{Rounds: len(rounds), Incorrect: []int{}}
	of := func(f func(r round) float64) float64 {
		xs := make([]float64, len(rounds))
		for i, r := range rounds {
			xs[i] = f(r)
		}
		return median(xs)
	}
	s.CPURatio = of(func(r round) float64 { return r.Ratios.CPU })
	s.P50Ratio = of(func(r round) float64 { return r.Ratios.P50 })
	s.P99Ratio = of(func(r round) float64 { return r.Ratios.P99 })
	s.GatewayUSPerDelivery = of(func(r round) float64 { return r.Gateway.CPUMsPer1000Dlvr }) // ms per 1,000 is µs per one
	s.FloorUSPerFrame = of(func(r round) float64 { return r.Floor.WriterUSPerFrame })
	s.GatewayP50MS = of(func(r round) float64 { return r.Gateway.LatencyMS.P50 })
	s.FloorP50MS = of(func(r round) float64 { return r.Floor.Reader.LatencyMS.P50 })
	s.GatewayP99MS = of(func(r round) float64 { return r.Gateway.LatencyMS.P99 })
	s.FloorP99MS = of(func(r round) float64 { return r.Floor.Reader.LatencyMS.P99 })
	s.KBPerSubscriber = of(func(r round) float64 { return r.Gateway.KBPerSubscriber })
	s.GatewayFirstP50MS = of(func(r round) float64 { return r.Gateway.FirstFrameMS.P50 })
	s.FloorFirstP50MS = of(func(r round) float64 { return r.Floor.Reader.FirstFrameMS.P50 })
	s.ClientsUSPerFrame = of(func(r round) float64 { return r.Ratios.ClientsUSPerFrame })
	s.ReaderUSPerFrame = of(func(r round) float64 { return r.Ratios.ReaderUSPerFrame })
	for _, r := range rounds {
		if r.Ratios.CPU > 0 && r.Ratios.CPU <= cpuRatioTarget {
			s.CPUWithin++
		}
		if r.Ratios.P99 > 0 && r.Ratios.P99 <= p99RatioTarget {
			s.P99Within++
		}
		if r.Gateway.KBPerSubscriber > 0 && r.Gateway.KBPerSubscriber <= rssTargetKB {
			s.RSSWithin++
		}
		if !r.correct() {
			s.Incorrect = append(s.Incorrect, r.N)
		}
	}
	return s
}

// median is the middle value of xs, or the mean of the two middle ones; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// printSummary writes a row per round and the medians, then the targets and correctness.
func printSummary(w io.Writer, rounds []round, s *summary) {
	fmt.Fprintf(w, "\n=== %d rounds (F: the floor measured first, G: the gateway first)\n", len(rounds))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\torder\tCPU µs gateway\tfloor\tratio\tp50 ms gateway\tfloor\tratio\tp99 ms gateway\tfloor\tratio\tRSS KB/sub\tclients / reader µs\tlost/dup/order\t")
	for _, r := range rounds {
		order := "G"
		if r.FloorFirst {
			order = "F"
		}
		g, f, c := r.Gateway, r.Floor, r.Ratios
		fmt.Fprintf(tw, "%d\t%s\t%.1f\t%.1f\t%.2f×\t%.1f\t%.1f\t%.2f×\t%.1f\t%.1f\t%.2f×\t%.1f\t%.1f / %.1f\t%d/%d/%d\t\n", r.N, order,
			g.CPUMsPer1000Dlvr, f.WriterUSPerFrame, c.CPU, g.LatencyMS.P50, f.Reader.LatencyMS.P50, c.P50,
			g.LatencyMS.P99, f.Reader.LatencyMS.P99, c.P99, g.KBPerSubscriber, c.ClientsUSPerFrame, c.ReaderUSPerFrame,
			g.Lost, g.Duplicated, g.OutOfOrder)
	}
	fmt.Fprintf(tw, "median\t\t%.1f\t%.1f\t%.2f×\t%.1f\t%.1f\t%.2f×\t%.1f\t%.1f\t%.2f×\t%.1f\t%.1f / %.1f\t\t\n",
		s.GatewayUSPerDelivery, s.FloorUSPerFrame, s.CPURatio, s.GatewayP50MS, s.FloorP50MS, s.P50Ratio,
		s.GatewayP99MS, s.FloorP99MS, s.P99Ratio, s.KBPerSubscriber, s.ClientsUSPerFrame, s.ReaderUSPerFrame)
	tw.Flush()
	fmt.Fprintf(w, "median gateway / floor: CPU per delivery %.2f× (target ≤ %.2f×; %d of %d rounds within), p50 %.2f×, p99 %.2f× (target ≤ %.2f×; %d of %d rounds within)\n",
		s.CPURatio, cpuRatioTarget, s.CPUWithin, s.Rounds, s.P50Ratio, s.P99Ratio, p99RatioTarget, s.P99Within, s.Rounds)
	fmt.Fprintf(w, "median p50 of each event's first frame: gateway %.1f ms (from the webhook's POST), floor %.1f ms (from the first write)\n", s.GatewayFirstP50MS, s.FloorFirstP50MS)
	fmt.Fprintf(w, "median RSS per subscriber %.1f KB (target ≤ %.0f KB; %d of %d rounds within)\n", s.KBPerSubscriber, rssTargetKB, s.RSSWithin, s.Rounds)
	if len(s.Incorrect) == 0 {
		fmt.Fprintf(w, "every round: every frame delivered once, in order, no subscription ended\n")
		return
	}
	ns := make([]string, len(s.Incorrect))
	for i, n := range s.Incorrect {
		ns[i] = strconv.Itoa(n)
	}
	fmt.Fprintf(w, "NOT CORRECT in round(s) %s: frames lost, duplicated or out of order, or subscriptions ended (see the rounds above)\n", strings.Join(ns, ", "))
}

package fanoutload

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/advisorhq/gateway/internal/eventlog"
)

// Result is one measurement's figures.
type Result struct {
	Mode          string `json:"mode"`
	Workers       int    `json:"workers"`
	Sockets       int    `json:"sockets"`
	PerSocket     int    `json:"perSocket"`
	Subscriptions int    `json:"subscriptions"`
	Open          int    `json:"open"`
	OpenFailed    int    `json:"openFailed"`
	OpenError     string `json:"openError,omitempty"`
	// OpenFailures counts the sockets that failed to open by why: "closed 4408" is a client
	// the gateway timed out before it read its connection_init.
	OpenFailures map[string]int `json:"openFailures,omitempty"`
	// Closed4408 places the connection_init of each socket closed 4408.
	Closed4408   *InitTimings `json:"closed4408,omitempty"`
	SetupSeconds float64      `json:"setupSeconds"`
	Rate         float64      `json:"rate"`
	Duration     string       `json:"duration"`
	Burst        int          `json:"burst,omitempty"`

	Sent   int `json:"sent"`   // webhooks posted
	Stored int `json:"stored"` // of which the gateway answered 200
	// Refused counts the others by status or error.
	Refused map[string]int `json:"refused,omitempty"`
	// PostSeconds is from the first webhook sent to the last: over 1 s in a burst means the
	// gateway's answers held the posters back.
	PostSeconds float64 `json:"postSeconds"`

	Expected     int     `json:"expected"`     // stored × open subscriptions
	Delivered    int     `json:"delivered"`    // distinct (subscription, event) frames
	Lost         int     `json:"lost"`         // expected but never received
	LostSilently int     `json:"lostSilently"` // of those, missed by subscriptions that were not ended
	Duplicated   int     `json:"duplicated"`   // frames of an event a subscription had already
	OutOfOrder   int     `json:"outOfOrder"`   // frames older, in the log, than one received before
	SubsWithLoss int     `json:"subsWithLoss"` // subscriptions that missed at least one event
	SubsEnded    int     `json:"subsEnded"`    // opened subscriptions that ended before the end
	EndReason    string  `json:"endReason,omitempty"`
	LatencyMS    Latency `json:"latencyMs"` // webhook POST sent to frame received
	// FirstFrameMS is, over the events, the latency of each one's first frame to arrive at any
	// subscription: the part of the latency spent before the fan-out's writes (the webhook's
	// handling, the event store, the hub, the execution), which a floor does not have.
	FirstFrameMS    Latency `json:"firstFrameMs"`
	DeliveriesPerS  float64 `json:"deliveriesPerSecond"`
	DeliverySeconds float64 `json:"deliverySeconds"` // first webhook sent to last frame received

	RSSBeforeKB      int64   `json:"rssBeforeKB"`     // gateway, before the subscribers
	RSSSubscribedKB  int64   `json:"rssSubscribedKB"` // with every subscriber open, before the events
	RSSAfterKB       int64   `json:"rssAfterKB"`      // after the events
	KBPerSubscriber  float64 `json:"kbPerSubscription"`
	KBPerSocket      float64 `json:"kbPerSocket"`
	CPUSeconds       float64 `json:"cpuSeconds"` // gateway's user+system time from the first webhook to the last frame
	CPUMsPer1000Dlvr float64 `json:"cpuMsPer1000Deliveries"`
	// WorkersCPUSeconds is what the clients took meanwhile (from their subscriptions being
	// open to their results), on the same machine when they run beside the gateway.
	WorkersCPUSeconds       float64 `json:"workersCpuSeconds"`
	WorkersCPUMsPer1000Dlvr float64 `json:"workersCpuMsPer1000Deliveries"`
}

func unknownInits(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d not looked at", n)
}

// Latency is a distribution in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

func (r *Result) compute(posts []sent, subs []subResult) {
	var lat []int64
	firstFrame := make([]int64, len(posts)) // by event: its earliest frame's latency; 0 for none yet
	var first time.Time
	var last int64
	for _, p := range posts {
		if !p.at.IsZero() && (first.IsZero() || p.at.Before(first)) {
			first = p.at
		}
	}
	for _, s := range subs {
		if strings.HasPrefix(s.Ended, "not opened") {
			continue
		}
		if s.Ended != "" {
			r.SubsEnded++
			if r.EndReason == "" {
				r.EndReason = s.Ended
			}
		}
		seen := make(map[int32]bool, len(s.Seq))
		prev := ""
		for i, seq := range s.Seq {
			if int(seq) >= len(posts) || posts[seq].id == "" {
				continue // not one this run stored
			}
			if seen[seq] {
				r.Duplicated++
				continue
			}
			seen[seq] = true
			id := posts[seq].id
			if prev != "" && eventlog.Less(id, prev) {
				r.OutOfOrder++
			}
			prev = id
			d := s.At[i] - posts[seq].at.UnixNano()
			lat = append(lat, d)
			if firstFrame[seq] == 0 || d < firstFrame[seq] {
				firstFrame[seq] = max(d, 1) // 1 ns, not 0: 0 is "none"
			}
			last = max(last, s.At[i])
		}
		r.Delivered += len(seen)
		if len(seen) < r.Stored {
			r.SubsWithLoss++
			if s.Ended == "" {
				r.LostSilently += r.Stored - len(seen)
			}
		}
	}
	r.Expected = r.Stored * r.Open
	r.Lost = r.Expected - r.Delivered
	if len(lat) > 0 {
		r.LatencyMS = distribution(lat)
		r.FirstFrameMS = distribution(slices.DeleteFunc(firstFrame, func(d int64) bool { return d == 0 }))
		r.DeliverySeconds = float64(last-first.UnixNano()) / 1e9
		if r.DeliverySeconds > 0 {
			r.DeliveriesPerS = float64(r.Delivered) / r.DeliverySeconds
		}
	}
	if r.Open > 0 && r.RSSBeforeKB > 0 {
		r.KBPerSubscriber = float64(r.RSSSubscribedKB-r.RSSBeforeKB) / float64(r.Open)
		r.KBPerSocket = r.KBPerSubscriber * float64(r.PerSocket)
	}
	if r.Delivered > 0 {
		r.CPUMsPer1000Dlvr = r.CPUSeconds * 1000 / float64(r.Delivered) * 1000
		r.WorkersCPUMsPer1000Dlvr = r.WorkersCPUSeconds * 1000 / float64(r.Delivered) * 1000
	}
}

// distribution is the quantiles of lat (nanoseconds, at least one), in milliseconds; it
// sorts lat.
func distribution(lat []int64) Latency {
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))]) / 1e6
	}
	return Latency{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: float64(lat[len(lat)-1]) / 1e6}
}

// Print writes the figures as a table.
func (r *Result) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	load := fmt.Sprintf("%g events/s for %s", r.Rate, r.Duration)
	if r.Burst > 0 {
		load = fmt.Sprintf("burst of %d events in 1 s", r.Burst)
	}
	row("transport", "%s", r.Mode)
	row("subscriptions", "%d open of %d (%d sockets × %d, %d workers, %.1f s to open)", r.Open, r.Subscriptions, r.Sockets, r.PerSocket, r.Workers, r.SetupSeconds)
	if r.OpenFailed > 0 {
		row("  failed to open", "%d: %s", r.OpenFailed, r.OpenError)
		row("  by why", "%v", r.OpenFailures)
		if t := r.Closed4408; t != nil {
			row("  closed 4408, by where connection_init was", "%d not written yet, %d written as the close arrived, %d written before it (%d of them ≥ 1 ms, %d ≥ 10 ms before; the target is none)%s%s",
				t.NotSent, t.Crossed, len(t.SentMS), t.sentAtLeast(1), t.sentAtLeast(10), t.leads(), unknownInits(t.Unknown))
		}
	}
	row("load", "%s: %d sent in %.2f s, %d stored", load, r.Sent, r.PostSeconds, r.Stored)
	if len(r.Refused) > 0 {
		row("  refused", "%v", r.Refused)
	}
	row("deliveries", "%d of %d expected", r.Delivered, r.Expected)
	row("lost / duplicated / out of order", "%d / %d / %d (%d subscriptions missed events; %d events missed by subscriptions still open)",
		r.Lost, r.Duplicated, r.OutOfOrder, r.SubsWithLoss, r.LostSilently)
	if r.SubsEnded > 0 {
		row("subscriptions ended early", "%d: %s", r.SubsEnded, r.EndReason)
	}
	row("latency webhook→frame (ms)", "p50 %.1f  p90 %.1f  p99 %.1f  max %.1f", r.LatencyMS.P50, r.LatencyMS.P90, r.LatencyMS.P99, r.LatencyMS.Max)
	row("  first frame of each event", "p50 %.1f  p90 %.1f  p99 %.1f  max %.1f (webhook→the event's first frame anywhere: before the fan-out)", r.FirstFrameMS.P50, r.FirstFrameMS.P90, r.FirstFrameMS.P99, r.FirstFrameMS.Max)
	row("deliveries/s", "%.0f (over %.1f s, first webhook to last frame)", r.DeliveriesPerS, r.DeliverySeconds)
	if r.RSSBeforeKB > 0 {
		row("gateway RSS (MB)", "%.1f before, %.1f subscribed, %.1f after", mb(r.RSSBeforeKB), mb(r.RSSSubscribedKB), mb(r.RSSAfterKB))
		row("RSS growth", "%.1f KB per subscription, %.1f KB per socket", r.KBPerSubscriber, r.KBPerSocket)
		row("gateway CPU", "%.1f s; %.1f ms per 1,000 deliveries", r.CPUSeconds, r.CPUMsPer1000Dlvr)
	} else {
		row("gateway RSS, CPU", "not measured (no -start or -gateway-pid)")
	}
	row("clients' CPU", "%.1f s; %.1f ms per 1,000 deliveries (the workers, from open to results)", r.WorkersCPUSeconds, r.WorkersCPUMsPer1000Dlvr)
	tw.Flush()
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

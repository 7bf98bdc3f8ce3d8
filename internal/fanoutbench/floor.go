package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/advisorhq/gateway/internal/fanoutload"
)

// The floor: what this machine allows any server at all. One process writes a frame the size
// of the gateway's to each of n loopback TCP sockets, a goroutine per write (Go's cheapest way
// to use every core), and another process reads them with the plainest Go reader; the latency
// from the write's start to the read is what no gateway on this machine can beat with its
// clients beside it.
const floorFlag = "-floor-client"

// floorFrameSize is about the gateway's frame for the benchmark's subscription.
const floorFrameSize = 160

func runFloor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fanoutbench -floor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("subscribers", 10000, "sockets")
	events := fs.Int("events", 30, "frames to each socket")
	every := fs.Duration("every", 500*time.Millisecond, "time between frames (2/s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	res, err := measureFloor(ctx, *n, *events, *every, stderr)
	if err != nil {
		return err
	}
	res.print(stdout)
	return nil
}

// floorResult is one measurement of the floor.
type floorResult struct {
	Sockets int     `json:"sockets"`
	Events  int     `json:"events"`
	Every   string  `json:"every"`
	Writer  float64 `json:"writerCpuSeconds"`
	// WriterUSPerFrame is the writing process's CPU per frame: what a gateway's CPU per
	// delivery compares with.
	WriterUSPerFrame float64         `json:"writerCpuMicrosecondsPerFrame"`
	Reader           floorReaderFigs `json:"reader"`
}

// floorReaderFigs is what the reading process reports.
type floorReaderFigs struct {
	Frames    int                `json:"frames"`
	LatencyMS fanoutload.Latency `json:"latencyMs"`
	// FirstFrameMS is, over the frames' rounds, the latency of each one's first frame read
	// on any socket, as the gateway's result has it.
	FirstFrameMS   fanoutload.Latency `json:"firstFrameMs"`
	CPUSeconds     float64            `json:"cpuSeconds"`
	CPUUSPerFrame  float64            `json:"cpuMicrosecondsPerFrame"`
	ExpectedFrames int                `json:"expectedFrames"`
}

func (r *floorResult) print(w io.Writer) {
	fmt.Fprintf(w, "floor: %d sockets, %d frames of %d bytes each, %s apart\n", r.Sockets, r.Events, floorFrameSize, r.Every)
	fmt.Fprintf(w, "  writer: %.1f s CPU, %.1f µs per frame\n", r.Writer, r.WriterUSPerFrame)
	l := r.Reader.LatencyMS
	fmt.Fprintf(w, "  reader: %d frames; latency (ms) p50 %.1f  p90 %.1f  p99 %.1f  max %.1f; %.1f s CPU, %.1f µs per frame\n",
		r.Reader.Frames, l.P50, l.P90, l.P99, l.Max, r.Reader.CPUSeconds, r.Reader.CPUUSPerFrame)
	f := r.Reader.FirstFrameMS
	fmt.Fprintf(w, "  first frame of each round of writes (ms): p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", f.P50, f.P90, f.P99, f.Max)
}

// measureFloor writes events frames, every apart, to each of n loopback sockets that a reading
// process (this program, run with floorFlag) reads.
func measureFloor(ctx context.Context, n, events int, every time.Duration, stderr io.Writer) (*floorResult, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, floorFlag, ln.Addr().String(), strconv.Itoa(n), strconv.Itoa(events))
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the client: %w", err)
	}
	defer func() { _ = cmd.Wait() }()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for len(conns) < n {
		_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(time.Minute))
		c, err := ln.Accept()
		if err != nil {
			return nil, fmt.Errorf("accept the client's sockets: %w", err)
		}
		conns = append(conns, c)
	}
	time.Sleep(time.Second)
	cpu0 := fanoutload.OwnCPU()
	frame := make([]byte, floorFrameSize)
	for range events {
		var wg sync.WaitGroup
		binary.LittleEndian.PutUint64(frame, uint64(time.Now().UnixNano()))
		for _, c := range conns {
			wg.Go(func() { _, _ = c.Write(frame) })
		}
		wg.Wait()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(every):
		}
	}
	serverCPU := fanoutload.OwnCPU() - cpu0
	res := &floorResult{Sockets: n, Events: events, Every: every.String(), Writer: serverCPU,
		WriterUSPerFrame: serverCPU * 1e6 / float64(n*events)}
	if err := json.NewDecoder(out).Decode(&res.Reader); err != nil {
		return nil, fmt.Errorf("read the floor client's figures: %w", err)
	}
	return res, nil
}

// quantiles is the distribution of lat (at least one), in milliseconds; it sorts lat.
func quantiles(lat []time.Duration) fanoutload.Latency {
	slices.Sort(lat)
	at := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / 1e6 }
	return fanoutload.Latency{P50: at(.5), P90: at(.9), P99: at(.99), Max: at(1)}
}

// runFloorClient is the floor's reading process: it opens n sockets to addr, reads events
// frames on each, and prints the latency distribution and its CPU per frame.
func runFloorClient(args []string, stdout io.Writer) error {
	if len(args) != 3 {
		return errors.New("usage: " + floorFlag + " ADDR SOCKETS EVENTS")
	}
	n, _ := strconv.Atoi(args[1])
	events, _ := strconv.Atoi(args[2])
	fanoutload.RaiseFileLimit()
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n*events)
	first := make([]time.Duration, events) // by frame number: the earliest read's latency; 0 for none yet
	var wg sync.WaitGroup
	for range n {
		c, err := net.Dial("tcp", args[0])
		if err != nil {
			return err
		}
		defer c.Close()
		wg.Go(func() {
			r := bufio.NewReader(c)
			buf := make([]byte, floorFrameSize)
			for k := range events {
				if _, err := io.ReadFull(r, buf); err != nil {
					return
				}
				d := time.Since(time.Unix(0, int64(binary.LittleEndian.Uint64(buf))))
				mu.Lock()
				lat = append(lat, d)
				if first[k] == 0 || d < first[k] {
					first[k] = max(d, 1) // 1 ns, not 0: 0 is "none"
				}
				mu.Unlock()
			}
		})
	}
	cpu0 := fanoutload.OwnCPU()
	wg.Wait()
	cpu := fanoutload.OwnCPU() - cpu0
	if len(lat) == 0 {
		return errors.New("no frame arrived")
	}
	return json.NewEncoder(stdout).Encode(floorReaderFigs{
		Frames:         len(lat),
		LatencyMS:      quantiles(lat),
		FirstFrameMS:   quantiles(slices.DeleteFunc(first, func(d time.Duration) bool { return d == 0 })),
		CPUSeconds:     cpu,
		CPUUSPerFrame:  cpu * 1e6 / float64(len(lat)),
		ExpectedFrames: n * events,
	})
}

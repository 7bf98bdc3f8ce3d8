package bulkfile_test

import (
	"bufio"
	"context"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulkfile"
)

// peopleGen streams a realistic People file without holding it: groups of four rows for a
// client (two people, their trust, and an entity they and the trust own), in which every tenth
// trust names as trustee the entity further down (a forward reference), and every hundredth
// entity has an owner that exists already rather than in the file.
type peopleGen struct {
	rows, next int
	buf        []byte
	off        int
}

func newPeopleGen(rows int) *peopleGen { return &peopleGen{rows: rows} }

func (g *peopleGen) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if g.off == len(g.buf) {
			if g.next >= g.rows {
				break
			}
			g.buf = g.appendRow(g.buf[:0], g.next)
			g.off = 0
			g.next++
		}
		c := copy(p[n:], g.buf[g.off:])
		g.off += c
		n += c
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (g *peopleGen) appendRow(b []byte, i int) []byte {
	group := i / 4
	id := func(b []byte, prefix string) []byte {
		b = append(b, prefix...)
		return strconv.AppendInt(b, int64(group), 10)
	}
	client := func(b []byte) []byte {
		b = append(b, `,"client_id":"client-`...)
		return append(strconv.AppendInt(b, int64(group/2), 10), '"')
	}
	switch i % 4 {
	case 0:
		b = append(b, `{"id":"`...)
		b = id(b, "person-a-")
		b = append(b, `"`...)
		b = client(b)
		b = append(b, `,"type":"Individual","first_name":"Margaret","last_name":"Hamilton-`...)
		b = strconv.AppendInt(b, int64(group), 10)
		b = append(b, `"}`...)
	case 1:
		b = append(b, `{"id":"`...)
		b = id(b, "person-b-")
		b = append(b, `"`...)
		b = client(b)
		b = append(b, `,"type":"Individual","first_name":"James","middle_name":"Edward","last_name":"Hamilton-`...)
		b = strconv.AppendInt(b, int64(group), 10)
		b = append(b, `"}`...)
	case 2:
		b = append(b, `{"id":"`...)
		b = id(b, "trust-")
		b = append(b, `"`...)
		b = client(b)
		b = append(b, `,"type":"Trust","legal_name":"The Hamilton Family Revocable Trust","trust_type":"JointRevocableTrust","trust_creator":["`...)
		b = id(b, "person-a-")
		b = append(b, `","`...)
		b = id(b, "person-b-")
		b = append(b, `"],"initial_trustee":"`...)
		if group%10 == 0 {
			b = id(b, "entity-")
		} else {
			b = id(b, "person-a-")
		}
		b = append(b, `","governing_state":"CA","creation_date":"2019-06-14"}`...)
	case 3:
		b = append(b, `{"id":"`...)
		b = id(b, "entity-")
		b = append(b, `"`...)
		b = client(b)
		b = append(b, `,"type":"Entity","legal_name":"Hamilton Holdings LLC","incorporation_state":"DE","incorporation_form":"LimitedLiabilityCompany","ownership":[{"percentage":60,"owner_id":["`...)
		b = id(b, "person-a-")
		b = append(b, `","`...)
		b = id(b, "person-b-")
		b = append(b, `"]},{"percentage":40,"owner_id":"`...)
		if group%100 == 0 {
			b = id(b, "existing-")
		} else {
			b = id(b, "trust-")
		}
		b = append(b, `"}]}`...)
	}
	return append(b, '\n')
}

// existing stands in for the service's clients: every client exists.
func existing(kind advisorspec.RefKind, id string) bool {
	return kind == advisorspec.RefClient && strings.HasPrefix(id, "client-")
}

// existingCard stands in for the service's cards: every client has the people named
// "existing-…".
func existingCard(owner advisorspec.RowRef, id string) (advisorspec.ContactType, bool) {
	if existing(owner.Kind, owner.ID) && strings.HasPrefix(id, "existing-") {
		return advisorspec.Individual, true
	}
	return "", false
}

// BenchmarkValidatePeopleMillionRows validates a generated 1,000,000-row People file end to end
// and reports rows per second and the heap the validation adds: its peak (sampled at every
// progress report, as a progress bar would be fed) and what is live at the end.
func BenchmarkValidatePeopleMillionRows(b *testing.B) {
	const rows = 1_000_000
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		peak := before.HeapAlloc
		sample := func(bulkfile.Progress) {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
		rssBefore, rssOK := resetPeakRSS()
		u := bulkfile.NewUpload(bulkfile.Options{Exists: existing, Card: existingCard, Progress: sample, ProgressEvery: 10_000})
		gen := newPeopleGen(rows)
		start := time.Now()
		rep, err := u.Validate(context.Background(), gen, bulkfile.People(advisorspec.ClientModel), io.Discard)
		elapsed := time.Since(start)
		if err != nil || rep.ValidRows != rows || rep.ErrorCount != 0 {
			b.Fatalf("got %v, %d valid rows, errors %v; want %d valid rows", err, rep.ValidRows, rep.Errors, rows)
		}
		sample(bulkfile.Progress{})
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(u)
		b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
		b.ReportMetric(float64(rep.Bytes)/elapsed.Seconds()/1e6, "MB/s")
		b.ReportMetric(float64(peak-before.HeapAlloc)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "live-heap-MiB")
		if peakRSS, ok := readStatusKiB("VmHWM"); ok && rssOK {
			b.ReportMetric(float64(peakRSS-rssBefore)/1024, "peak-RSS-growth-MiB")
		}
	}
}

// resetPeakRSS resets the process's peak resident set size (Linux: writing 5 to clear_refs) and
// returns the resident size now, so that the peak read after a run is that run's. Unlike heap
// samples taken between rows, it cannot miss a peak; it also counts what the runtime has not
// returned to the system yet, so it is the stricter figure.
func resetPeakRSS() (int64, bool) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, false
	}
	return readStatusKiB("VmRSS")
}

func readStatusKiB(key string) (int64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if ok && name == key {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

package diskbudget_test

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/advisorhq/gateway/internal/diskbudget"
)

func TestABudgetIsRefusedWhenNotPositive(t *testing.T) {
	for _, limit := range []int64{0, -1} {
		if _, err := diskbudget.New(limit); err == nil {
			t.Errorf("New(%d) made a budget", limit)
		}
	}
}

func TestReservationsStayWithinTheLimitUnderContention(t *testing.T) {
	b, _ := diskbudget.New(1000)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 100 {
		wg.Go(func() {
			if b.Reserve(30) {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if granted != 33 || b.Used() != 990 {
		t.Fatalf("granted %d reservations of 30 (%d bytes used) within 1000, want 33 (990)", granted, b.Used())
	}
	if b.Reserve(-5) {
		t.Error("a negative reservation was granted")
	}
	b.Release(990)
	if b.Used() != 0 {
		t.Errorf("%d bytes used after releasing everything", b.Used())
	}
}

// A Writer writes nothing that the budget does not allow, and says which setting bounds it.
func TestAWriterStopsAtTheBudget(t *testing.T) {
	b, _ := diskbudget.New(10)
	var out bytes.Buffer
	w := b.NewWriter(&out)
	for _, tc := range []struct {
		write string
		ok    bool
	}{{"12345", true}, {"678901", false}, {"67890", true}, {"x", false}} {
		_, err := w.Write([]byte(tc.write))
		if (err == nil) != tc.ok {
			t.Fatalf("writing %q: %v, want ok=%v", tc.write, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, diskbudget.ErrSpent) || !strings.Contains(err.Error(), "UPLOAD_DISK_BUDGET")) {
			t.Fatalf("writing %q: %v, want ErrSpent naming UPLOAD_DISK_BUDGET", tc.write, err)
		}
	}
	if out.String() != "1234567890" || w.Held() != 10 || b.Used() != 10 {
		t.Fatalf("wrote %q, held %d, used %d; want 1234567890, 10, 10", out.String(), w.Held(), b.Used())
	}
}

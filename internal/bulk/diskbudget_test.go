package bulk_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/bulk"
	"github.com/advisorhq/gateway/internal/bulkprogress"
	"github.com/advisorhq/gateway/internal/diskbudget"
)

// clientRows is a clients file of n valid rows, about 60 bytes each.
func clientRows(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id":"C-%04d","first_name":"Ann","last_name":"Bell"}`+"\n", i)
	}
	return b.String()
}

// A load's copies of its files draw from the disk budget the uploads share: one that would go
// past it is refused, saying which setting bounds it, and leaves nothing on the disk or in the
// budget.
func TestALoadPastTheDiskBudgetIsRefusedAndLeavesNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		preheld   int64 // what uploads in flight already hold
		clients   string
		refused   bool
		validOnly bool
		// failed is what the load's error says when it starts and then fails.
		failed string
	}{
		{"a file larger than the budget", 0, clientRows(100), true, false, ""},
		{"a file that fits alone but not beside the uploads in flight", 3 << 10, clientRows(40), true, false, ""},
		{"a file that fits", 0, clientRows(40), false, false, ""},
		{"a file that fits with its valid rows", 0, clientRows(30), false, true, ""},
		{"a file whose valid rows do not fit beside it", 0, clientRows(40), false, true, "UPLOAD_DISK_BUDGET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget, err := diskbudget.New(4 << 10)
			if err != nil {
				t.Fatal(err)
			}
			if !budget.Reserve(tc.preheld) {
				t.Fatal("the budget refused the test's own reservation")
			}
			up := &fakeUploader{}
			l, store, spool := newLoads(t, up, bulk.LoadsConfig{DiskBudget: budget})
			id, err := l.Start(asFirm, bulk.Load{Clients: strings.NewReader(tc.clients), ValidRowsOnly: tc.validOnly})
			if tc.refused {
				var coded *apperr.Error
				if !errors.Is(err, diskbudget.ErrSpent) || !errors.As(err, &coded) || coded.Code != apperr.OperationLimitExceeded ||
					!strings.Contains(coded.Message, "UPLOAD_DISK_BUDGET") || !strings.Contains(coded.Message, "4 KiB") {
					t.Fatalf("got %v, want a refusal coded %s naming UPLOAD_DISK_BUDGET and 4 KiB", err, apperr.OperationLimitExceeded)
				}
				if entries, _ := os.ReadDir(spool); len(entries) != 0 {
					t.Errorf("a refused load left %d files behind", len(entries))
				}
				// A refused load gives back its running slot, too.
				if _, err := l.Start(asFirm, bulk.Load{Clients: strings.NewReader(clientRows(1))}); err != nil {
					t.Errorf("a small load after the refusal: %v", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				_, last := watch(t, store, id)
				switch {
				case tc.failed == "" && last.Phase != bulkprogress.Done:
					t.Fatalf("the load ended %s: %q", last.Phase, last.Error)
				case tc.failed != "" && (last.Phase != bulkprogress.Failed || !strings.Contains(last.Error, tc.failed)):
					t.Fatalf("the load ended %s: %q, want FAILED saying %q", last.Phase, last.Error, tc.failed)
				}
			}
			waitEmpty(t, spool)
			if !eventuallyTrue(func() bool { return budget.Used() == tc.preheld }) {
				t.Fatalf("the budget holds %d bytes once the load's files are gone, want %d", budget.Used(), tc.preheld)
			}
		})
	}
}

// While a load runs its files hold their share of the budget: uploads and other loads get what
// is left.
func TestARunningLoadHoldsItsShareOfTheDiskBudget(t *testing.T) {
	t.Parallel()
	budget, _ := diskbudget.New(8 << 10)
	up := &fakeUploader{blocking: make(chan struct{})}
	l, store, spool := newLoads(t, up, bulk.LoadsConfig{DiskBudget: budget, MaxRunning: 2})
	clients := clientRows(60) // over 3 KiB
	id, err := l.Start(asFirm, bulk.Load{Clients: strings.NewReader(clients), ValidRowsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	// The copy and, once validated, its valid rows: twice the file.
	if !eventuallyTrue(func() bool { return budget.Used() == int64(2*len(clients)) }) {
		t.Fatalf("a running load holds %d bytes of the budget, want %d (its copy and its valid rows)", budget.Used(), 2*len(clients))
	}
	if budget.Reserve(2 << 10) {
		t.Fatal("an upload was given more than the running load left of the budget")
	}
	close(up.blocking)
	if _, last := watch(t, store, id); last.Phase != bulkprogress.Done {
		t.Fatalf("the load ended %s: %q", last.Phase, last.Error)
	}
	waitEmpty(t, spool)
	if !eventuallyTrue(func() bool { return budget.Used() == 0 }) {
		t.Fatalf("the budget holds %d bytes after the load, want 0", budget.Used())
	}
}

func eventuallyTrue(cond func() bool) bool {
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

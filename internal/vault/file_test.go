package vault_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/vault"
)

// slowAPI lists docs documents and answers Get Document after a pause, counting the calls and
// the most in flight.
type slowAPI struct {
	vault.API
	docs                  int
	calls, inFlight, peak atomic.Int32
}

func (s *slowAPI) Documents(_ context.Context, wid string, _ advisorspec.DocumentQuery) (advisorspec.DocumentList, error) {
	out := advisorspec.DocumentList{}
	for i := range s.docs {
		out.Documents = append(out.Documents, advisorspec.Document{WID: wid, VaultID: fmt.Sprint("v", i),
			Name: "n", Category: "family", SubCategory: "family_other"})
	}
	return out, nil
}

func (s *slowAPI) Document(_ context.Context, wid, vaultID string) (advisorspec.Document, error) {
	s.calls.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	time.Sleep(2 * time.Millisecond)
	return advisorspec.Document{WID: wid, VaultID: vaultID, FileStatus: advisorspec.FileStatusUploaded,
		Name: "n", Category: "family", SubCategory: "family_other"}, nil
}

// Listed documents' file status is asked once per document and request, at most the service's
// bound at once; FileStatus and DownloadURI of one document share the call.
func TestListedDocumentsFileStatusIsAskedOncePerDocument(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		docs        int
		concurrency int
	}{
		{"fewer documents than the bound", 3, 8},
		{"more documents than the bound", 40, 4},
		{"one at a time", 5, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := &slowAPI{docs: tc.docs}
			svc := vault.NewService(api, tc.concurrency)
			ctx := advisor.WithCache(context.Background())
			page, err := svc.List(ctx, "firm", "w", advisorspec.MaxDocLimit, nil, nil)
			if err != nil || len(page.Nodes) != tc.docs {
				t.Fatalf("List: got %v, %v; want %d documents", page, err, tc.docs)
			}
			var wg sync.WaitGroup
			for _, d := range page.Nodes {
				wg.Go(func() {
					if st, err := svc.FileStatus(ctx, d); err != nil || st != advisorspec.FileStatusUploaded {
						t.Errorf("FileStatus: got %q, %v; want %q", st, err, advisorspec.FileStatusUploaded)
					}
				})
				wg.Go(func() {
					if _, err := svc.DownloadURI(ctx, d); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			if got := api.calls.Load(); got != int32(tc.docs) {
				t.Errorf("got %d Get Document calls, want %d", got, tc.docs)
			}
			if got := api.peak.Load(); got > int32(tc.concurrency) {
				t.Errorf("got %d calls in flight at once, want at most %d", got, tc.concurrency)
			}
		})
	}
}

func TestFileStatusWithoutTheRequestsCacheFails(t *testing.T) {
	t.Parallel()
	api := &slowAPI{docs: 1}
	svc := vault.NewService(api, 1)
	page, err := svc.List(context.Background(), "firm", "w", 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.FileStatus(context.Background(), page.Nodes[0])
	if apperr.CodeOf(err) != apperr.Internal || !errors.Is(err, advisor.ErrNoCache) {
		t.Errorf("got %v, want INTERNAL because of advisor.ErrNoCache", err)
	}
	if got := api.calls.Load(); got != 0 {
		t.Errorf("got %d calls, want none", got)
	}
}

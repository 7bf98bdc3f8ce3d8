package bulk_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bulk"
	"github.com/advisorhq/gateway/internal/sftpupload"
	"github.com/advisorhq/gateway/internal/tenant"
)

// asFirm is a request's context once its caller was admitted into its firm.
var asFirm = tenant.WithFirm(context.Background(), &tenant.Firm{ID: "firm-test"})

// loginOf is an Uploader that records which firm's login it is.
type loginOf string

func (l loginOf) Upload(context.Context, ...sftpupload.File) ([]sftpupload.Uploaded, error) {
	return nil, errors.New(string(l))
}

func (l loginOf) ReadResult(context.Context, sftpupload.Uploaded) (advisorspec.BulkResult, bool, error) {
	return advisorspec.BulkResult{}, false, errors.New(string(l))
}

func TestFilesGoUpWithTheLoginOfTheLoadsFirmOnly(t *testing.T) {
	up := bulk.PerFirm{"firm-a": loginOf("login of firm-a"), "firm-b": loginOf("login of firm-b")}
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"firm a", tenant.WithFirm(context.Background(), &tenant.Firm{ID: "firm-a"}), "login of firm-a"},
		{"firm b", tenant.WithFirm(context.Background(), &tenant.Firm{ID: "firm-b"}), "login of firm-b"},
		{"a firm without a login", tenant.WithFirm(context.Background(), &tenant.Firm{ID: "firm-c"}), "has no bulk-file login"},
		{"no firm", context.Background(), "no firm"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := up.Upload(tc.ctx)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Upload: %v, want %q", err, tc.want)
			}
			_, _, err = up.ReadResult(tc.ctx, sftpupload.Uploaded{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadResult: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestALoadOutsideAnyFirmIsRefused(t *testing.T) {
	l := bulk.NewLoads(bulk.LoadsConfig{Uploader: loginOf("x")})
	defer l.Close()
	if _, err := l.Start(context.Background(), bulk.Load{Clients: strings.NewReader(`{"id":"C-1"}`)}); !errors.Is(err, tenant.ErrNoFirm) {
		t.Fatalf("Start without a firm: %v, want ErrNoFirm", err)
	}
}

package bulk

import (
	"context"
	"fmt"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sftpupload"
	"github.com/advisorhq/gateway/internal/tenant"
)

// PerFirm is an Uploader that sends a load's files with the login of the firm the load's
// context acts for, so that the service files them under that firm; a load outside any firm, or
// of a firm without a login, is refused rather than sent with another firm's.
type PerFirm map[string]Uploader

func (p PerFirm) pick(ctx context.Context) (Uploader, error) {
	f, ok := tenant.FromContext(ctx)
	if !ok {
		return nil, fmt.Errorf("send bulk files: %w", tenant.ErrNoFirm)
	}
	up, ok := p[f.ID]
	if !ok {
		return nil, fmt.Errorf("send bulk files of %s: it has no bulk-file login", f)
	}
	return up, nil
}

// Upload sends the files with the context's firm's login.
func (p PerFirm) Upload(ctx context.Context, files ...sftpupload.File) ([]sftpupload.Uploaded, error) {
	up, err := p.pick(ctx)
	if err != nil {
		return nil, err
	}
	return up.Upload(ctx, files...)
}

// ReadResult reads what the service made of a file, with the context's firm's login.
func (p PerFirm) ReadResult(ctx context.Context, f sftpupload.Uploaded) (advisorspec.BulkResult, bool, error) {
	up, err := p.pick(ctx)
	if err != nil {
		return advisorspec.BulkResult{}, false, err
	}
	return up.ReadResult(ctx, f)
}

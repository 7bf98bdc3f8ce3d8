package graph

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/graph/model"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/bulk"
	"github.com/advisorhq/gateway/internal/bulkfile"
	"github.com/advisorhq/gateway/internal/bulkprogress"
	"github.com/advisorhq/gateway/internal/nodeid"
)

// Bulk is what the bulk fields need: Loads is nil when the gateway has no SFTP server to send
// bulk files to.
type Bulk struct {
	Loads    *bulk.Loads
	Progress bulkprogress.Store
	// Existing makes what one validation's references are checked against, its clients looked
	// up as the scope's advisor and team.
	Existing func(bulk.Scope) bulk.Existing
}

// errBulkOff answers bulk loads on a gateway without a server to send them to.
var errBulkOff = apperr.New(apperr.BadUserInput, "Bulk loads are not configured on this gateway: set BULK_SFTP_ADDR and the other BULK_SFTP_* settings")

// bulkModel is the spec's model for a GraphQL one.
func bulkModel(m *model.BulkModel) advisorspec.BulkModel {
	if m != nil && *m == model.BulkModelTopAccounts {
		return advisorspec.TopAccountModel
	}
	return advisorspec.ClientModel
}

// bulkFile is an uploaded file's contents, or nil for a file not given.
func bulkFile(u *graphql.Upload) io.Reader {
	if u == nil {
		return nil
	}
	return u.File
}

// bulkNoFile refuses a bulk call without a file.
var bulkNoFile = apperr.New(apperr.BadUserInput, "Give a clients file, a people file or both (or, with model: TOP_ACCOUNTS, a topAccounts file)")

// bulkTopAccountsInClientModel refuses the Top Accounts file outside the model it belongs to.
var bulkTopAccountsInClientModel = apperr.New(apperr.BadUserInput,
	"topAccounts is the Add/Update Top Accounts file of the deprecated top-account model: give model: TOP_ACCOUNTS with it, or leave it out")

// bulkInput maps a bulk call's arguments: its files, and the advisor and team its clients are
// looked up as (the caller's own unless it names others, which needs the firm-admin role, as
// for every v1 operation).
func (r *Resolver) bulkInput(ctx context.Context, topAccounts, clients, people *graphql.Upload, m *model.BulkModel, advisorID, teamID *string) (bulk.Input, bulk.Scope, error) {
	in := bulk.Input{TopAccounts: bulkFile(topAccounts), Clients: bulkFile(clients), People: bulkFile(people), Model: bulkModel(m)}
	switch {
	case in.TopAccounts == nil && in.Clients == nil && in.People == nil:
		return in, bulk.Scope{}, bulkNoFile
	case in.TopAccounts != nil && in.Model != advisorspec.TopAccountModel:
		return in, bulk.Scope{}, bulkTopAccountsInClientModel
	}
	a, t, err := r.Access.ActingFor(ctx, deref(advisorID), deref(teamID))
	if err != nil {
		return in, bulk.Scope{}, err
	}
	return in, bulk.Scope{AdvisorID: a, TeamID: t}, nil
}

func toBulkReport(r *bulk.Report) *model.BulkReport {
	if r == nil {
		return nil
	}
	return &model.BulkReport{
		Valid: r.Valid(), TopAccounts: toBulkFileReport(r.TopAccounts), Clients: toBulkFileReport(r.Clients), People: toBulkFileReport(r.People),
	}
}

func toBulkFileReport(f *bulk.FileReport) *model.BulkFileReport {
	if f == nil {
		return nil
	}
	return &model.BulkFileReport{
		Rows: f.Rows, ValidRows: f.ValidRows, InvalidRows: f.InvalidRows, Bytes: float64(f.Bytes),
		Errors: toBulkLineErrors(f.Errors), ErrorCount: f.ErrorCount, FileError: optional(f.FileError),
	}
}

func toBulkLineErrors(errs []bulkfile.LineError) []*model.BulkLineError {
	out := make([]*model.BulkLineError, len(errs))
	for i, e := range errs {
		out[i] = &model.BulkLineError{Line: e.Line, ID: optional(e.ID), Field: optional(e.Field), Message: e.Message}
	}
	return out
}

// toBulkUpload is a load's progress as GraphQL shows it. The reports it keeps are JSON the
// gateway wrote; one it cannot read is left out rather than failing the load's answer.
func toBulkUpload(p bulkprogress.Progress) *model.BulkUpload {
	out := &model.BulkUpload{
		LoadID: p.ID, Phase: model.BulkPhase(p.Phase), Rows: int(p.Rows), Bytes: float64(p.Bytes),
		Error: optional(p.Error), UpdatedAt: p.UpdatedAt,
	}
	if p.RowsTotal > 0 {
		n := int(p.RowsTotal)
		out.RowsTotal = &n
	}
	if p.BytesTotal > 0 {
		n := float64(p.BytesTotal)
		out.BytesTotal = &n
	}
	if len(p.Validation) > 0 {
		var r bulk.Report
		if json.Unmarshal(p.Validation, &r) == nil {
			out.Validation = toBulkReport(&r)
		}
	}
	if len(p.Result) > 0 {
		var results []advisorspec.BulkResult
		if json.Unmarshal(p.Result, &results) == nil {
			for _, r := range results {
				res := &model.BulkResult{
					File: r.File, Kind: r.Kind, Rows: r.Rows, Applied: r.Applied, Invalid: r.Invalid,
					Errors: toBulkLineErrors(r.Errors), ErrorCount: r.ErrorCount, FileError: optional(r.FileError),
				}
				if !r.ProcessedAt.IsZero() {
					at := r.ProcessedAt
					res.ProcessedAt = &at
				}
				out.Results = append(out.Results, res)
			}
		}
	}
	return out
}

// bulkUpload is a load's progress; nil for an unknown or expired load.
func (r *Resolver) bulkUpload(ctx context.Context, id string) (*model.BulkUpload, error) {
	id, err := loadIDOf(id)
	if err != nil {
		return nil, err
	}
	p, ok, err := r.Bulk.Progress.Get(ctx, id)
	if err != nil {
		return nil, apperr.Wrap(apperr.EventsUnavailable, "The progress of bulk loads cannot be read now; try again", err)
	}
	if !ok || !ours(ctx, p) {
		return nil, nil
	}
	return toBulkUpload(p), nil
}

// loadIDOf reads the id argument of bulkUpload and bulkUploadProgress: a load's global id or
// its loadId (what `id` was before loads had global ids), so that clients keep working with
// either. Another object's global id is refused, naming the argument.
func loadIDOf(id string) (string, error) {
	k, err := nodeid.Decode(id)
	if err != nil {
		return id, nil // a load id: they are never a key's spelling
	}
	if k.Type != model.NodeBulkUpload || len(k.Parts) != 1 {
		return "", apperr.Input("id", "id is the global id of another object than a bulk load")
	}
	return k.Parts[0], nil
}

// ours reports whether a load is the firm's the request acts for: another firm's is answered as
// if it did not exist.
func ours(ctx context.Context, p bulkprogress.Progress) bool {
	return p.Firm != "" && p.Firm == firmOf(ctx)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// watch streams a load's progress until it ends; the channel closes then.
func (b Bulk) watch(ctx context.Context, id string, report func(error)) (<-chan *model.BulkUpload, error) {
	id, err := loadIDOf(id)
	if err != nil {
		return nil, err
	}
	if p, ok, err := b.Progress.Get(ctx, id); err != nil {
		return nil, apperr.Wrap(apperr.EventsUnavailable, "The progress of bulk loads cannot be read now; try again", err)
	} else if !ok || !ours(ctx, p) {
		return nil, apperr.New(apperr.NotFound, "No bulk load has that id, or it is older than 48 hours")
	}
	out := make(chan *model.BulkUpload, 1)
	go func() {
		defer close(out)
		err := b.Progress.Watch(ctx, id, func(p bulkprogress.Progress) {
			if !ours(ctx, p) {
				return
			}
			select {
			case out <- toBulkUpload(p):
			case <-ctx.Done():
			}
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			report(apperr.Wrap(apperr.EventsUnavailable, "The progress of this bulk load can no longer be followed; subscribe again", err))
		}
	}()
	return out, nil
}

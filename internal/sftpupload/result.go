package sftpupload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/advisorhq/gateway/internal/advisorspec"
)

// MaxResultBytes bounds the result file ReadResult reads: a result lists at most
// advisorspec.MaxBulkResultErrors errors, each a few hundred bytes at most.
const MaxResultBytes = 4 << 20

// ReadResult reads the result the service wrote beside an uploaded file once it processed it
// (advisorspec.BulkResultName). ok is false while there is none yet: the caller asks again
// later. It takes its turn with uploads, on a connection of its own.
func (u *Uploader) ReadResult(ctx context.Context, f Uploaded) (result advisorspec.BulkResult, ok bool, err error) {
	select {
	case u.turn <- struct{}{}:
		defer func() { <-u.turn }()
	case <-ctx.Done():
		return result, false, &Error{Step: "wait for another upload to finish", Reason: ReasonCancelled, Msg: "reading the result was cancelled", Err: context.Cause(ctx)}
	}
	s, err := u.connect(ctx)
	if err != nil {
		return result, false, err
	}
	defer s.close()
	name := advisorspec.BulkResultName(f.Path)
	var data []byte
	err = s.do(func() error {
		file, err := s.sftp.Open(name)
		if err != nil {
			return err
		}
		defer file.Close()
		data, err = io.ReadAll(io.LimitReader(file, MaxResultBytes+1))
		return err
	})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return result, false, nil
	case err != nil:
		return result, false, s.opError(ctx, "read "+name, err)
	case len(data) > MaxResultBytes:
		return result, false, &Error{Step: "read " + name, Reason: ReasonRemote, Msg: fmt.Sprintf("the result is over %d bytes", MaxResultBytes)}
	}
	if err := json.Unmarshal(data, &result); err != nil {
		return result, false, &Error{Step: "read " + name, Reason: ReasonRemote, Msg: "the result is not the JSON the service writes", Err: err}
	}
	return result, true, nil
}

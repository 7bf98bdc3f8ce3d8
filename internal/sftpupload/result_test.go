package sftpupload_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/sftpupload"
)

// The result the service writes beside an uploaded file is read back: not there yet, there,
// and not what the service writes.
func TestReadResultReadsWhatTheServiceWroteBesideTheFile(t *testing.T) {
	s := newTestServer(t)
	noLeaks(t)
	u := newUploader(t, passwordConfig(s))
	ctx := context.Background()
	up, err := u.Upload(ctx, sftpupload.File{Kind: sftpupload.People, Body: bytes.NewReader(body("p", 100))})
	if err != nil {
		t.Fatal(err)
	}
	resultName := advisorspec.BulkResultName(up[0].Name)
	written := false
	for _, tc := range []struct {
		name    string
		written []byte // nil: none yet
		ok      bool
		rows    int
		wantErr bool
	}{
		{"none yet", nil, false, 0, false},
		{"written", []byte(`{"file":"` + up[0].Name + `","kind":"people","rows":3,"applied":2,"invalid":1,"errors":[{"line":2,"id":"p2","field":"last_name","message":"last_name is required"}],"error_count":1}`), true, 3, false},
		{"not JSON", []byte(`{"file":`), false, 0, true},
		{"too large", bytes.Repeat([]byte(" "), sftpupload.MaxResultBytes+1), false, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.written != nil {
				if written { // the test server's put writes over, without truncating
					s.remove(resultName)
				}
				s.put(resultName, tc.written)
				written = true
			}
			got, ok, err := u.ReadResult(ctx, up[0])
			if (err != nil) != tc.wantErr || ok != tc.ok || got.Rows != tc.rows {
				t.Fatalf("got %+v, ok %v, err %v", got, ok, err)
			}
			if tc.ok && (len(got.Errors) != 1 || got.Errors[0].Line != 2 || got.Errors[0].Field != "last_name") {
				t.Fatalf("the result's errors %+v", got.Errors)
			}
		})
	}
}

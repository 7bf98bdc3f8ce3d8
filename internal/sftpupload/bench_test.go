package sftpupload_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/advisorhq/gateway/internal/sftpupload"
)

// BenchmarkUpload measures the throughput of one 32 MiB file over loopback to a server that
// drops what it is sent, so that what is measured is the uploader: the SSH cipher (both ends
// run in this process) and the SFTP round trips.
func BenchmarkUpload(b *testing.B) {
	s := newTestServer(b)
	s.discard.Store(true)
	cfg := passwordConfig(s)
	u, err := sftpupload.New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	data := body("c", 32<<20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		got, err := u.Upload(context.Background(), sftpupload.File{Kind: sftpupload.Clients, Body: bytes.NewReader(data)})
		if err != nil {
			b.Fatal(err)
		}
		s.remove(got[0].Name) // the server keeps files in memory
	}
}

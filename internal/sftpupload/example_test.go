package sftpupload_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/advisorhq/gateway/internal/sftpupload"
)

// The caller maps its settings to a Config; New stops start-up with an error naming the
// setting to fix. Upload puts the Clients file in place before the People file.
func ExampleUploader_Upload() {
	cfg := sftpupload.Config{
		Addr:               os.Getenv("BULK_SFTP_ADDR"),
		User:               os.Getenv("BULK_SFTP_USER"),
		Password:           os.Getenv("BULK_SFTP_PASSWORD"),
		KeyFile:            os.Getenv("BULK_SFTP_KEY_FILE"),
		Dir:                os.Getenv("BULK_SFTP_DIR"),
		KnownHostsFile:     os.Getenv("BULK_SFTP_KNOWN_HOSTS"),
		HostKeyFingerprint: os.Getenv("BULK_SFTP_HOST_KEY_FINGERPRINT"),
	}
	u, err := sftpupload.New(cfg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	uploaded, err := u.Upload(context.Background(),
		sftpupload.File{Kind: sftpupload.Clients, Body: strings.NewReader(`{"id":"c1"}` + "\n")},
		sftpupload.File{Kind: sftpupload.People, Body: strings.NewReader(`{"id":"p1","client_id":"c1"}` + "\n"),
			Progress: func(n int64) { fmt.Println("people bytes written:", n) }},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range uploaded {
		fmt.Println(f.Path, f.Bytes)
	}
}

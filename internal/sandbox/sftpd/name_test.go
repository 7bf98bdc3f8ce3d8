package sftpd_test

import (
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
)

func TestParseNameAcceptsOnlyTheTimestampedBulkNames(t *testing.T) {
	at := time.Date(2026, 11, 23, 20, 45, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		kind sftpd.Kind // "" when the name is not a bulk file's
	}{
		{"clients-20261123T204500Z.jsonl", sftpd.Clients},
		{"people-20261123T204500Z.jsonl", sftpd.People},
		// The deprecated model's "Add/Update Top Accounts file".
		{"top-accounts-20261123T204500Z.jsonl", sftpd.TopAccounts},
		{"top_accounts-20261123T204500Z.jsonl", ""},
		{"top-accounts-20261123T204500Z.jsonl.part", ""},
		{"clients-20261123T204500Z.jsonl.part", ""},
		{"people-20261123T204500Z.part", ""},
		{"clients.jsonl", ""},
		{"clients-.jsonl", ""},
		{"trusts-20261123T204500Z.jsonl", ""},
		{"Clients-20261123T204500Z.jsonl", ""},
		{"clients-20261123T204500Z.JSONL", ""},
		{"clients-20261123t204500z.jsonl", ""},
		{"clients-20261123T204500.jsonl", ""},              // no zone
		{"clients-20261123T204500+0100.jsonl", ""},         // not UTC
		{"clients-2026-11-23T20:45:00Z.jsonl", ""},         // extended format
		{"clients-20261123T204500.123Z.jsonl", ""},         // fractions
		{"clients-20261323T204500Z.jsonl", ""},             // month 13
		{"clients-20260230T204500Z.jsonl", ""},             // 30 February
		{"clients-20261123T204500Z-2.jsonl", ""},           // a suffix
		{"clients-20261123T204500Z.jsonl.result.json", ""}, // the ingester's report
		{"x-clients-20261123T204500Z.jsonl", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kind, ts, ok := sftpd.ParseName(tc.name)
			if ok != (tc.kind != "") || kind != tc.kind {
				t.Fatalf("got %q, %v, want %q, %v", kind, ok, tc.kind, tc.kind != "")
			}
			if ok && !ts.Equal(at) {
				t.Errorf("got time %v, want %v", ts, at)
			}
		})
	}
}

func TestNameIsWhatParseNameReads(t *testing.T) {
	at := time.Date(2026, 11, 23, 21, 45, 7, 999, time.FixedZone("CET", 3600))
	name := sftpd.Name(sftpd.People, at)
	if want := "people-20261123T204507Z.jsonl"; name != want {
		t.Fatalf("got %q, want %q (UTC, to the second)", name, want)
	}
	if kind, ts, ok := sftpd.ParseName(name); !ok || kind != sftpd.People || !ts.Equal(at.Truncate(time.Second)) {
		t.Errorf("got %q, %v, %v, want people, %v, true", kind, ts, ok, at.Truncate(time.Second))
	}
}

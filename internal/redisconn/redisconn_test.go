package redisconn_test

import (
	"testing"

	"github.com/advisorhq/gateway/internal/redisconn"
)

// A URL names one server unless REDIS_CLUSTER says it is a cluster's endpoint or it names more
// than one address; what go-redis cannot read is refused either way.
func TestAURLNamesAClusterWhenToldOrWhenItHasMoreThanOneAddress(t *testing.T) {
	for _, tc := range []struct {
		url     string
		cluster bool
		want    string // "single", "cluster" or "error"
	}{
		{"redis://127.0.0.1:6379/0", false, "single"},
		{"rediss://user:secret@redis.example:6380", false, "single"},
		{"redis://127.0.0.1:7000", true, "cluster"},
		{"redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002", false, "cluster"},
		{"redis://user:secret@127.0.0.1:7000?addr=127.0.0.1:7001&read_timeout=2s", true, "cluster"},
		{"http://127.0.0.1:6379", false, "error"},
		{"redis://127.0.0.1:6379?bogus=1", false, "error"},
		{"redis://127.0.0.1:7000?addr=127.0.0.1:7001&bogus=1", false, "error"},
		{"://nonsense", true, "error"},
		{"redis://127.0.0.1:7000/3?addr=127.0.0.1:7001", false, "error"},
		{"redis://127.0.0.1:7000/0", true, "cluster"},
	} {
		got := "error"
		if target, err := redisconn.Parse(tc.url, tc.cluster); err == nil {
			got = map[bool]string{false: "single", true: "cluster"}[target.Cluster()]
		}
		if got != tc.want {
			t.Errorf("Parse(%q, cluster %v): %s, want %s", tc.url, tc.cluster, got, tc.want)
		}
	}
}

package testnpm

import (
	"os"
	"testing"
)

// Chromium finds Debian's Chromium for a browser test: $CHROMIUM, or /usr/bin/chromium. It
// skips the test when there is none, unless REQUIRE_BROWSER is set (as CI sets it, having
// installed Chromium), in which case the test fails.
func Chromium(t testing.TB) string {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("REQUIRE_BROWSER") != "" {
			t.Fatalf("Chromium is not at %s (apt-get install chromium, or set CHROMIUM)", path)
		}
		t.Skipf("no Chromium at %s: apt-get install chromium to run the browser checks (CI always runs them)", path)
	}
	return path
}

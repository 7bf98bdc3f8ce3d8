package familypage_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/advisorhq/gateway/internal/familypage"
)

// The page may be framed by the gateway's own IDE (its Family tab) and by no other page.
func TestThePageIsFramedOnlyByItsOwnOrigin(t *testing.T) {
	rec := httptest.NewRecorder()
	familypage.New("/graphql", "/").ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/family/w1", nil))
	h := rec.Header()
	if rec.Code != http.StatusOK || h.Get("X-Frame-Options") != "SAMEORIGIN" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'self'") ||
		h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET /family/w1 = %d with %v, want SAMEORIGIN framing, no referrer and nosniff", rec.Code, h)
	}
}

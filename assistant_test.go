package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/testnpm"
)

const assistantDir = "internal/assistantpage/testdata"

// Under `go run .` the pop-out page at /assistant loads the embedded sandbox's SDK, and the
// sandbox's allow-list holds the gateway's own origin, so the chat says ready. (Its token
// comes from createAssistantSession, tested with the page in internal/assistantpage.)
func TestTheZeroConfigGatewayServesAReadyAssistant(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	npmInstall(t, assistantDir, "playwright-core")
	gw, _ := sandboxed(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(assistantDir, "popout.mjs"), "watch", gw.url)
	cmd.Env = append(os.Environ(), "CHROMIUM="+browser, "WATCH_MS=3000")
	var got struct {
		Events     []string `json:"events"`
		PageErrors []string `json:"pageErrors"`
	}
	testnpm.RunJSON(t, cmd, &got)
	if !slices.Contains(got.Events, "ready") {
		t.Errorf("the pop-out heard %v, want ready: the embedded sandbox must allow the gateway's origin", got.Events)
	}
	if len(got.PageErrors) > 0 {
		t.Errorf("exceptions in the page: %v", got.PageErrors)
	}
}

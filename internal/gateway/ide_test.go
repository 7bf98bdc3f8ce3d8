package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/testnpm"
)

const ideDir = "testdata/ide"

// chromium finds Debian's Chromium (testnpm.Chromium). CI installs it and sets
// REQUIRE_BROWSER=1, so there the test fails rather than skips when it is missing.
func chromium(t *testing.T) string { return testnpm.Chromium(t) }

// The "done when": the README's example family query, pasted into the IDE at /, shows
// the demo family with its relationships. The IDE's files come from the gateway itself, so no
// request of the page may fail on a closed network.
func TestTheIDERunsTheREADMEQueryOffline(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	npmInstall(t, ideDir, "playwright-core")
	query := readmeExampleQuery(t)
	gw := newGateway(t, newUpstream(t, true), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(ideDir, "ide.mjs"), gw.url, query, "Hartwell Family")
	cmd.Env = append(os.Environ(), "CHROMIUM="+browser)
	got := driveIDE(t, cmd)
	for _, want := range []string{"Hartwell Family", "Hartwell Family Joint Revocable Trust", "TRUST_CREATOR", "JOINT_OWNER", "CLASS_PARTY", "Eleanor Rose Hartwell"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("the IDE's response pane lacks %q", want)
		}
	}
}

// Issue 10: a first visit to the IDE (no query in the address) opens on the README's family
// query, runs it, and shows the product's title and icon.
func TestTheIDEOpensOnTheREADMEQuery(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	npmInstall(t, ideDir, "playwright-core")
	gw := newGateway(t, newUpstream(t, true), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(ideDir, "ide.mjs"), gw.url, "", "Hartwell Family")
	cmd.Env = append(os.Environ(), "CHROMIUM="+browser)
	got := driveIDE(t, cmd)
	if want := readmeExampleQuery(t); got.Query != want {
		t.Errorf("the IDE opens on\n%s\nwant the README's example query\n%s", got.Query, want)
	}
	for _, want := range []string{"Hartwell Family Joint Revocable Trust", "TRUST_CREATOR", "Eleanor Rose Hartwell"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("the IDE's response pane lacks %q", want)
		}
	}
	if got.Title != "Advisor GraphQL gateway" {
		t.Errorf("the IDE is titled %q, want Advisor GraphQL gateway", got.Title)
	}
	if !strings.HasPrefix(got.Icon, gw.url+"/") {
		t.Fatalf("the IDE's icon is %q, want one the gateway serves", got.Icon)
	}
	resp, err := http.Get(got.Icon)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("the IDE's icon: %d %s, want 200 image/svg+xml", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// readmeExampleQuery is the README's example family query, the one the IDE opens on.
func readmeExampleQuery(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	query := regexp.MustCompile("(?s)<!-- README example query.*?```graphql\n(.*?)```").FindSubmatch(readme)
	if query == nil {
		t.Fatal("README.md has no example query block")
	}
	return string(query[1])
}

// The "done when" for live events: a subscription opened in the IDE shows events as
// they arrive, over the IDE's own WebSocket client.
func TestTheIDEShowsSubscriptionEventsLive(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	npmInstall(t, ideDir, "playwright-core")
	gw := newGateway(t, newUpstream(t, false), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	query := `subscription { events { id eventType ... on ClientProgressChanged { estateStatus completionPercentage } } }`
	cmd := exec.CommandContext(ctx, "node", filepath.Join(ideDir, "ide.mjs"), gw.url, query, "CLIENT_PROGRESS_CHANGED")
	body := `{"EventType":"ClientProgressChanged","Wid":"ide","Timestamp":"2026-11-22T10:00:00Z","EstateStatus":"InProgress","CompletionPercentage":$N}`
	cmd.Env = append(os.Environ(), "CHROMIUM="+browser, "DELIVER_BODY="+body, "DELIVER_KEY="+webhookKey)
	got := driveIDE(t, cmd)
	if !strings.Contains(got.Text, "IN_PROGRESS") {
		t.Errorf("the IDE's response pane shows %s, want a live CLIENT_PROGRESS_CHANGED event", got.Text)
	}
}

// ideResult is what ide.mjs reports: the IDE's response pane, the query its editor opened
// on, the page's title and icon, and the page's failed loads.
type ideResult struct {
	Text, Query, Title, Icon string
	Failed                   []string
}

// driveIDE runs ide.mjs and returns what it saw.
func driveIDE(t *testing.T, cmd *exec.Cmd) ideResult {
	t.Helper()
	var got ideResult
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("drive the IDE: %v\n%s", err, stderr)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("IDE output %q: %v", out, err)
	}
	if len(got.Failed) > 0 {
		t.Errorf("the IDE page could not load: %v", got.Failed)
	}
	return got
}

package main

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The README's example query is what a newcomer pastes into the IDE first: it must run as
// written and show the demo family with its relationships.
func TestTheREADMEExampleQueryShowsTheDemoFamily(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- README example query.*?```graphql\n(.*?)```").FindSubmatch(readme)
	if block == nil {
		t.Fatal("README.md has no example query block")
	}
	gw := newGateway(t, newUpstream(t, true), nil)
	var got struct {
		TopAccounts struct {
			Nodes []struct {
				Name          string
				Contacts      []struct{ DisplayName string }
				Relationships []struct {
					Role   string
					Target struct{ Contact *struct{ DisplayName string } }
				}
				Documents struct{ TotalCount int }
			}
		}
	}
	gw.post(t, string(block[1]), nil).ok(t, &got)
	if len(got.TopAccounts.Nodes) != 1 {
		t.Fatalf("got %d top accounts, want the demo family", len(got.TopAccounts.Nodes))
	}
	fam := got.TopAccounts.Nodes[0]
	roles := map[string]bool{}
	for _, r := range fam.Relationships {
		if r.Target.Contact == nil {
			t.Errorf("a %s relationship's target did not resolve", r.Role)
		}
		roles[r.Role] = true
	}
	if fam.Name != "Hartwell Family" || len(fam.Contacts) < 10 || len(roles) != 7 || fam.Documents.TotalCount != 8 {
		t.Errorf("got %s with %d cards, relationship roles %v and %d documents; want the Hartwell family with every role",
			fam.Name, len(fam.Contacts), roles, fam.Documents.TotalCount)
	}
}

// The README's live-events walk-through: its subscription, then its curl line to the sandbox,
// run as written, show the scenario's events arriving. Only the first two are awaited: the
// scenario spaces them a second apart.
func TestTheREADMESubscriptionShowsTheSandboxScenarioLive(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	sub := regexp.MustCompile("(?s)<!-- README subscription.*?```graphql\n(.*?)```").FindSubmatch(readme)
	curl := regexp.MustCompile(`(?m)^curl (.*)/sandbox/events$`).FindSubmatch(readme)
	if sub == nil || curl == nil {
		t.Fatal("README.md has no subscription block or no curl line for /sandbox/events")
	}
	req := curlRequest(t, "curl "+string(curl[1])+"/sandbox/events")

	gw, sb := sandboxed(t)
	c := dialWS(t, gw, "graphql-transport-ws", nil)
	c.init()
	c.subscribe("live", string(sub[1]), nil)
	waitSubscribers(t, gw, 1)
	req.URL.Host = strings.TrimPrefix(sb, "http://") // the embedded sandbox's port may differ
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the README's curl line got %d", resp.StatusCode)
	}
	for _, want := range []string{"CLIENT_ACCEPTED_INVITATION", "USER_SUBSCRIPTION_CREATED"} {
		ev := c.nextData("live")["events"].(map[string]any)
		if ev["eventType"] != want || ev["id"] == "" {
			t.Fatalf("got %v, want %s", ev, want)
		}
	}
}

// curlRequest reads a one-line curl command of the form curl -H 'h: v' ... -d 'body' URL.
func curlRequest(t *testing.T, line string) *http.Request {
	t.Helper()
	args := regexp.MustCompile(`"[^"]*"|'[^']*'|\S+`).FindAllString(line, -1)
	unquote := func(s string) string { return strings.Trim(s, `'"`) }
	header := http.Header{}
	var body, url string
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-H":
			i++
			k, v, _ := strings.Cut(unquote(args[i]), ":")
			header.Add(k, strings.TrimSpace(v))
		case "-d":
			i++
			body = unquote(args[i])
		default:
			url = unquote(args[i])
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatalf("the README's curl line: %v", err)
	}
	req.Header = header
	return req
}

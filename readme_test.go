package main

import (
	"os"
	"regexp"
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

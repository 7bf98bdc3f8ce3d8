package sandbox_test

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/advisorhq/gateway/internal/sandbox"
)

// demoTopAccounts lists the demo top accounts by external_id.
func demoTopAccounts(t *testing.T, f *fixture) map[string]string {
	t.Helper()
	var page struct {
		TopAccounts []struct {
			WID        string `json:"wid"`
			ExternalID string `json:"external_id"`
		} `json:"top_accounts"`
	}
	f.v2("GET", "/v2/top-accounts/", nil).wantOK(t).decode(t, &page)
	wids := map[string]string{}
	for _, ta := range page.TopAccounts {
		wids[ta.ExternalID] = ta.WID
	}
	return wids
}

type demoContact struct {
	Type           string           `json:"type"`
	ExternalID     string           `json:"external_id"`
	TrustType      string           `json:"trust_type"`
	TrustCreator   []string         `json:"trust_creator"`
	InitialTrustee []string         `json:"initial_trustee"`
	Ownership      []map[string]any `json:"ownership"`
	Testator       []string         `json:"testator"`
	Executor       []string         `json:"executor"`
	Dob            string           `json:"dob"`
	CurrentParties *struct {
		Parties []map[string]any `json:"parties"`
	} `json:"current_parties"`
}

func TestDemoDataHasEverythingToExplore(t *testing.T) {
	t.Parallel()
	f := newSandbox(t, sandbox.Options{}, true)
	wids := demoTopAccounts(t, f)
	if len(wids) < 2 {
		t.Fatalf("got %d demo top accounts, want at least 2", len(wids))
	}
	family := wids["HARTWELL-001"]
	var list struct{ Contacts []demoContact }
	f.v2("GET", "/v2/top-accounts/"+family+"/contacts/", nil).wantOK(t).decode(t, &list)

	count := func(match func(c demoContact) bool) int {
		n := 0
		for _, c := range list.Contacts {
			if match(c) {
				n++
			}
		}
		return n
	}
	ownershipShapes := func(c demoContact, key string) bool {
		return slices.ContainsFunc(c.Ownership, func(e map[string]any) bool { return e[key] != nil })
	}
	partyShapes := func(c demoContact, key string) bool {
		return c.CurrentParties != nil && slices.ContainsFunc(c.CurrentParties.Parties, func(p map[string]any) bool { return p[key] != nil })
	}
	for _, want := range []struct {
		what  string
		match func(c demoContact) bool
		least int
	}{
		{"individuals", func(c demoContact) bool { return c.Type == "Individual" }, 2},
		{"a joint revocable trust with creators and trustees", func(c demoContact) bool {
			return c.TrustType == "JointRevocableTrust" && len(c.TrustCreator) > 0 && len(c.InitialTrustee) > 0
		}, 1},
		{"an entity with single and joint ownership entries", func(c demoContact) bool {
			return c.Type == "Entity" && ownershipShapes(c, "owner_id") && ownershipShapes(c, "subowners")
		}, 1},
		{"a charity", func(c demoContact) bool { return c.Type == "Charity" }, 1},
		{"wills with testators and executors", func(c demoContact) bool {
			return c.Type == "Will" && len(c.Testator) > 0 && len(c.Executor) > 0
		}, 2},
		{"a class with parties using percentages and fractions", func(c demoContact) bool {
			return c.Type == "Class" && partyShapes(c, "distribution_percentage") && partyShapes(c, "fraction")
		}, 1},
	} {
		if got := count(want.match); got < want.least {
			t.Errorf("demo family has %d %s, want at least %d", got, want.what, want.least)
		}
	}

	var clientContacts struct{ Contacts []demoContact }
	f.v1("GET", "/v1/clients/CL-1001/contacts", nil).wantOK(t).decode(t, &clientContacts)
	if !slices.ContainsFunc(clientContacts.Contacts, func(c demoContact) bool { return c.Dob != "" }) {
		t.Errorf("demo client CL-1001 has no contact with a dob: %+v", clientContacts.Contacts)
	}

	var docs struct {
		Documents []struct {
			VaultID  string   `json:"vault_id"`
			Category string   `json:"category"`
			Tags     []string `json:"tags"`
		} `json:"documents"`
	}
	f.v2("GET", "/v2/top-accounts/"+family+"/documents/", nil).wantOK(t).decode(t, &docs)
	categories, tagged, statuses := map[string]bool{}, 0, map[string]int{}
	for _, d := range docs.Documents {
		categories[d.Category] = true
		if len(d.Tags) > 0 {
			tagged++
		}
		got := f.v2("GET", "/v2/top-accounts/"+family+"/documents/"+d.VaultID, nil).wantOK(t).object(t)
		statuses[str(t, got, "file_status")]++
	}
	if len(categories) < 3 || tagged < 2 || statuses["Uploaded"] == 0 || statuses["NoFileUploaded"] == 0 {
		t.Errorf("demo documents span %d categories, %d tagged, file statuses %v; want several categories with tags, some uploaded and some not",
			len(categories), tagged, statuses)
	}
}

func TestDemoRelationshipsNameContactsOfTheirOwnTopAccount(t *testing.T) {
	t.Parallel()
	f := newSandbox(t, sandbox.Options{}, true)
	for externalID, wid := range demoTopAccounts(t, f) {
		var list struct{ Contacts []demoContact }
		f.v2("GET", "/v2/top-accounts/"+wid+"/contacts/", nil).wantOK(t).decode(t, &list)
		known := map[string]bool{}
		for _, c := range list.Contacts {
			known[c.ExternalID] = true
		}
		for _, c := range list.Contacts {
			refs := slices.Concat(c.TrustCreator, c.InitialTrustee, c.Testator, c.Executor)
			for _, e := range c.Ownership {
				if id, ok := e["owner_id"].(string); ok {
					refs = append(refs, id)
				}
			}
			for _, ref := range refs {
				if !known[ref] {
					t.Errorf("%s of %s refers to %q, which is not a contact of the top account", c.ExternalID, externalID, ref)
				}
			}
		}
	}
}

func TestDemoFilesDownload(t *testing.T) {
	t.Parallel()
	f := newSandbox(t, sandbox.Options{}, true)
	family := demoTopAccounts(t, f)["HARTWELL-001"]
	var docs struct {
		Documents []struct {
			VaultID   string `json:"vault_id"`
			Extension string `json:"extension"`
		} `json:"documents"`
	}
	f.v2("GET", "/v2/top-accounts/"+family+"/documents/", nil).wantOK(t).decode(t, &docs)
	magic := map[string][]byte{"pdf": []byte("%PDF-"), "png": []byte("\x89PNG")}
	for _, d := range docs.Documents {
		got := f.v2("GET", "/v2/top-accounts/"+family+"/documents/"+d.VaultID, nil).wantOK(t).object(t)
		uri, ok := got["download_uri"].(string)
		if !ok {
			continue
		}
		file := f.do(f.request("GET", uri, nil)).wantOK(t)
		if prefix, known := magic[d.Extension]; known && !bytes.HasPrefix(file.body, prefix) {
			t.Errorf("demo %s file %s starts %q, want a real %s", d.Extension, d.VaultID, file.body[:min(8, len(file.body))], d.Extension)
		}
	}
}

func TestSeedMakesIDsTheSameOnEveryRun(t *testing.T) {
	t.Parallel()
	snapshot := func(seed uint64) string {
		f := newSandbox(t, sandbox.Options{Seed: seed}, true)
		wid := f.addTopAccount("SEEDED", "Seeded")
		id := f.addContact(wid, person("p1"))
		doc := f.addDocument(wid, pdfDocument("a"))
		return fmt.Sprintf("%v %s %s %s", demoTopAccounts(t, f), wid, id, doc["vault_id"])
	}
	first, second := snapshot(42), snapshot(42)
	if first != second {
		t.Errorf("seed 42 gave different ids on two runs:\n%s\n%s", first, second)
	}
	if other := snapshot(43); other == first {
		t.Errorf("seeds 42 and 43 gave the same ids: %s", first)
	}
	if unseeded := snapshot(0); unseeded == snapshot(0) {
		t.Errorf("two unseeded sandboxes gave the same ids: %s", unseeded)
	}
}

// TestConcurrentWritesKeepEveryRule hammers one top account from many goroutines; under -race
// it also proves the store's locking.
func TestConcurrentWritesKeepEveryRule(t *testing.T) {
	t.Parallel()
	f := emptySandbox(t)
	wid := f.addTopAccount("BUSY", "Busy family")
	const writers, each = 8, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				// Every writer tries the same external_ids: exactly one of each may win.
				r := f.v2("POST", "/v2/top-accounts/"+wid+"/contacts/", person(fmt.Sprintf("p%d", i)))
				doc := f.v2("POST", "/v2/top-accounts/"+wid+"/documents/", pdfDocument(fmt.Sprintf("w%d-%d", w, i)))
				list := f.v2("GET", "/v2/top-accounts/"+wid+"/contacts/", nil)
				mu.Lock()
				statuses[r.status]++
				statuses[doc.status]++
				statuses[list.status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if want := map[int]int{http.StatusOK: each + 2*writers*each, http.StatusConflict: (writers - 1) * each}; fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
	var list struct{ Contacts []demoContact }
	f.v2("GET", "/v2/top-accounts/"+wid+"/contacts/", nil).wantOK(t).decode(t, &list)
	if len(list.Contacts) != each {
		t.Errorf("got %d contacts, want %d", len(list.Contacts), each)
	}
	var docs struct {
		Pagination struct {
			TotalCount int `json:"total_count"`
		} `json:"pagination"`
	}
	f.v2("GET", "/v2/top-accounts/"+wid+"/documents/", nil).wantOK(t).decode(t, &docs)
	if docs.Pagination.TotalCount != writers*each {
		t.Errorf("got %d documents, want %d", docs.Pagination.TotalCount, writers*each)
	}
}

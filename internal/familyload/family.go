// Package familyload is issue 28's load test of the family query: it seeds a family in a
// sandbox and sends the family query from a closed loop of keep-alive connections, checking
// every answer, and reports queries/s, latency and the gateway's CPU per query. The command
// internal/familybench runs it against built gateways; the gateway's benchmarks seed their
// families and send their query with it too, so the figures of both are of the same work.
package familyload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Query selects a top account, all its cards with every relationship field, and the whole
// family graph. Every field it selects was in the schema of 33e3fdb, the commit issue 28's
// figures compare with, so both that gateway and this one accept it.
const Query = `query Family($wid: ID!) {
  topAccount(wid: $wid) {
    wid name externalId
    contacts {
      ... on ContactCard {
        id externalId type displayName
        relationships { role percentage source { externalId contact { ... on ContactCard { id } } } target { externalId contact { ... on ContactCard { id } } } }
      }
      ... on Individual { firstName lastName }
      ... on Trust { trustCreators { contact { ... on ContactCard { displayName } } } initialTrustees { contact { ... on ContactCard { displayName } } } }
      ... on Entity { ownership { percentage joint owners { contact { ... on ContactCard { displayName } } } } }
      ... on Will { testators { contact { ... on ContactCard { displayName } } } executors { contact { ... on ContactCard { displayName } } } }
      ... on Charity { legalName ein city state }
      ... on Class { currentParties { parties { party { contact { ... on ContactCard { displayName } } } distributionPercentage fraction { numerator denominator } } } }
    }
    relationships { role percentage source { externalId } target { externalId contact { ... on ContactCard { displayName } } } }
  }
}`

// Seed makes, in the sandbox at baseURL (its v2 paths, with the bearer token), a top account
// named name with n cards: individuals and, over them, trusts, entities, wills and classes
// whose references cover every relationship field, and charities, so every card type is
// there. It returns the top account's wid.
func Seed(ctx context.Context, client *http.Client, baseURL, token, name string, n int) (string, error) {
	var account struct{ WID string }
	if err := postREST(ctx, client, baseURL+"/v2/top-accounts/", token, map[string]any{"external_id": name, "name": name}, &account); err != nil {
		return "", fmt.Errorf("seed the top account %s: %w", name, err)
	}
	contacts := baseURL + "/v2/top-accounts/" + account.WID + "/contacts/"
	for i, body := range Cards(n) {
		if err := postREST(ctx, client, contacts, token, body, nil); err != nil {
			return "", fmt.Errorf("seed card %d of %s: %w", i, name, err)
		}
	}
	return account.WID, nil
}

// Cards are the bodies of a family of n cards, as Seed posts them.
func Cards(n int) []map[string]any {
	people := max(2, n/2)
	cards := make([]map[string]any, 0, max(n, people))
	for i := range people {
		cards = append(cards, map[string]any{"type": "Individual", "external_id": fmt.Sprintf("p%d", i), "first_name": fmt.Sprintf("Person %d", i)})
	}
	for i := range n - people {
		a, b := fmt.Sprintf("p%d", i%people), fmt.Sprintf("p%d", (i+1)%people)
		id := fmt.Sprintf("c%d", i)
		switch i % 5 {
		case 0:
			cards = append(cards, map[string]any{"type": "Trust", "external_id": id, "legal_name": "Trust " + id, "trust_creator": []string{a}, "initial_trustee": []string{a, b}})
		case 1:
			cards = append(cards, map[string]any{"type": "Entity", "external_id": id, "legal_name": "Entity " + id, "ownership": []map[string]any{
				{"percentage": 50, "owner_id": a}, {"percentage": 50, "subowners": []string{a, b}}}})
		case 2:
			cards = append(cards, map[string]any{"type": "Will", "external_id": id, "legal_name": "Will " + id, "will_type": "LastWillAndTestament", "testator": []string{a}, "executor": []string{b}})
		case 3:
			cards = append(cards, map[string]any{"type": "Class", "external_id": id, "legal_name": "Class " + id, "current_parties": map[string]any{
				"parties": []map[string]any{{"contact_id": a, "distribution_percentage": 50}, {"contact_id": b, "fraction": map[string]any{"numerator": 1, "denominator": 2}}}}})
		default:
			cards = append(cards, map[string]any{"type": "Charity", "external_id": id, "legal_name": "Charity " + id, "city": "Boston", "state": "MA", "ein": 100000 + i})
		}
	}
	return cards
}

// postREST posts body as JSON with the bearer token and decodes the answer, which must be 200,
// into out unless it is nil.
func postREST(ctx context.Context, client *http.Client, url, token string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, answer)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(answer, out)
}

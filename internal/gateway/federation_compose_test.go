package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/advisorhq/gateway/internal/testnpm"
)

const federationDir = "testdata/federation"

// hiveAnswer is one operation's answer through Hive Gateway.
type hiveAnswer struct {
	Status int
	Body   struct {
		Data   map[string]any
		Errors []gqlError
	}
}

// The issue: "A test composes a supergraph ... with `@theguild/federation-composition` 0.27.0,
// runs `@graphql-hive/gateway` 2.15.1 in front of both, and checks a query that crosses the two
// subgraphs, an entity batch, our error codes passing through, caller authentication forwarded,
// and a subscription served through the federation gateway." The second subgraph is built with
// @apollo/subgraph and adds `riskScore` to TopAccount (testdata/federation/federation.mjs).
func TestTheGatewayComposesAsASubgraphServedByHiveGateway(t *testing.T) {
	t.Parallel()
	npmInstall(t, federationDir, "@graphql-hive/gateway")
	tf := newTwoFirms(t, federated)
	var fam struct {
		TopAccount struct {
			Name     string
			Contacts []aNode
		}
	}
	tf.gw.postVars(t, tf.callerA, `query($w: ID!) { topAccount(wid: $w) { name contacts { __typename ... on ContactCard { id contactId displayName } } } }`,
		map[string]any{"w": tf.hartwell}).ok(t, &fam)
	var cards []aNode
	for _, c := range fam.TopAccount.Contacts {
		if c.Typename == "Individual" {
			cards = append(cards, c)
		}
	}
	if len(cards) < 2 {
		t.Fatalf("the demo family has %d individuals, want two or more", len(cards))
	}
	ids := make([]string, len(cards))
	for i, c := range cards {
		ids[i] = c.ID
	}
	idsJSON, _ := json.Marshal(ids)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var got struct {
		SDLErrors         []gqlError
		CompositionErrors []string
		Cross, Batch      hiveAnswer
		NotFound          hiveAnswer
		OtherFirm         hiveAnswer
		Anonymous         hiveAnswer
		Subscription      struct {
			Status      int
			ContentType string
			Error       string
			First       json.RawMessage
		}
	}
	testnpm.RunJSON(t, exec.CommandContext(ctx, "node", filepath.Join(federationDir, "federation.mjs"),
		tf.gw.url, tf.callerA, tf.callerB, keyA, tf.hartwell, string(idsJSON)), &got)
	if got.SDLErrors != nil || len(got.CompositionErrors) > 0 {
		t.Fatalf("_service: %+v; composition: %v", got.SDLErrors, got.CompositionErrors)
	}

	t.Run("a query that crosses the two subgraphs", func(t *testing.T) {
		ta, _ := got.Cross.Body.Data["topAccount"].(map[string]any)
		if got.Cross.Body.Errors != nil || ta["name"] != fam.TopAccount.Name || ta["riskScore"] != float64(len(tf.hartwell)) {
			t.Errorf("got %d %+v, want %s with riskScore %d", got.Cross.Status, got.Cross.Body, fam.TopAccount.Name, len(tf.hartwell))
		}
	})
	t.Run("an entity batch of families and cards", func(t *testing.T) {
		b := got.Batch.Body
		families, _ := b.Data["watchedFamilies"].([]any)
		watched, _ := b.Data["watchedCards"].([]any)
		if b.Errors != nil || len(families) != 1 || len(watched) != len(cards) {
			t.Fatalf("got %+v, want one family and %d cards", b, len(cards))
		}
		if f := families[0].(map[string]any); f["name"] != fam.TopAccount.Name {
			t.Errorf("watchedFamilies[0] = %v, want %s", f, fam.TopAccount.Name)
		}
		for i, w := range watched {
			if c := w.(map[string]any); c["contactId"] != cards[i].ContactID || c["displayName"] != cards[i].DisplayName {
				t.Errorf("watchedCards[%d] = %v, want %+v", i, c, cards[i])
			}
		}
	})
	t.Run("our error codes pass through", func(t *testing.T) {
		if codes := errorCodes(got.NotFound.Body.Errors); codes != "NOT_FOUND" {
			t.Errorf("node(id: forged) through Hive Gateway: errors %+v, want NOT_FOUND", got.NotFound.Body.Errors)
		}
	})
	t.Run("caller authentication forwarded", func(t *testing.T) {
		// Firm B's caller reaches none of firm A's cards: each is NOT_FOUND, as it is direct.
		if codes := errorCodes(got.OtherFirm.Body.Errors); codes == "" || strings.Trim(strings.ReplaceAll(codes, "NOT_FOUND", ""), ",") != "" {
			t.Errorf("firm B's caller through Hive Gateway: %+v, want NOT_FOUND for A's cards", got.OtherFirm.Body)
		}
		if codes := errorCodes(got.Anonymous.Body.Errors); !strings.Contains(codes, "UNAUTHENTICATED") {
			t.Errorf("no credentials through Hive Gateway: %d %+v, want UNAUTHENTICATED", got.Anonymous.Status, got.Anonymous.Body)
		}
	})
	t.Run("a subscription served through the federation gateway", func(t *testing.T) {
		s := got.Subscription
		var first struct {
			Data struct {
				Events struct{ Wid, EventType string }
			}
		}
		_ = json.Unmarshal(s.First, &first)
		if s.Error != "" || first.Data.Events.Wid != tf.hartwell || first.Data.Events.EventType != "CLIENT_PROGRESS_CHANGED" {
			t.Errorf("subscription through Hive Gateway: %d %s %s %s, want firm A's CLIENT_PROGRESS_CHANGED of %s", s.Status, s.ContentType, s.Error, s.First, tf.hartwell)
		}
	})
}

// errorCodes lists the errors' extensions.code, comma-separated, in order.
func errorCodes(errs []gqlError) string {
	var codes []string
	for _, e := range errs {
		codes = append(codes, fmt.Sprint(e.Extensions["code"]))
	}
	return strings.Join(codes, ",")
}

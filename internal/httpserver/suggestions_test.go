package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/metrics"
)

// gateway is the handler over the real schema, with no resolvers: enough for what validation
// and the coercion of variables answer.
func gateway(t *testing.T, introspection bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(Deps{
		Log:     slog.New(slog.DiscardHandler),
		Schema:  generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{}}),
		Metrics: metrics.New(),
		Config:  Config{Transport: testTransport(), Introspection: introspection},
	}))
	t.Cleanup(srv.Close)
	return srv
}

// errorMessages posts an operation and returns its errors' messages.
func errorMessages(t *testing.T, url, query string, variables map[string]any) []string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": variables})
	resp, err := http.Post(url+"/graphql", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Errors []struct{ Message string } }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	msgs := make([]string, len(out.Errors))
	for i, e := range out.Errors {
		msgs[i] = e.Message
	}
	return msgs
}

// Each query is wrong in a way GraphQL validation answers with a suggestion; with
// introspection off, no message may suggest anything or name a schema member (hidden) that
// the query did not write.
func TestNoSuggestionsWithIntrospectionOff(t *testing.T) {
	t.Parallel()
	on, off := gateway(t, true), gateway(t, false)
	for _, tc := range []struct {
		name      string
		query     string
		variables map[string]any
		hidden    []string // members a suggestion would name
		suggests  bool     // with introspection on, GraphQL suggests them
	}{
		{name: "a misspelt field", query: `{ topAcounts { nodes { wid } } }`,
			hidden: []string{"topAccounts", "topAccount"}, suggests: true},
		{name: "a misspelt argument", query: `{ topAccounts(limt: 1) { nodes { wid } } }`,
			hidden: []string{"limit"}, suggests: true},
		{name: "a misspelt argument of a nested field", query: `{ topAccount(wid: "w") { documents(frist: 1) { __typename } } }`,
			hidden: []string{"first"}, suggests: true},
		{name: "a misspelt input field", query: `mutation { updateTopAccount(wid: "w", input: {nme: "x"}) { wid } }`,
			hidden: []string{"name"}, suggests: true},
		{name: "a misspelt enum value", query: `{ topAccount(wid: "w") { contacts(types: [INDIVIDUL]) { __typename } } }`,
			hidden: []string{"INDIVIDUAL"}, suggests: true},
		{name: "an enum value as a string", query: `{ topAccount(wid: "w") { contacts(types: ["TRUSTS"]) { __typename } } }`,
			hidden: []string{"TRUST"}, suggests: true},
		{name: "a misspelt type in a fragment", query: `{ topAccount(wid: "w") { ...F } } fragment F on TopAcount { wid }`,
			hidden: []string{"TopAccount"}, suggests: true},
		{name: "a misspelt type of a variable", query: `query($i: UpdateTopAccountInpt!) { topAccounts { nodes { wid } } }`,
			hidden: []string{"UpdateTopAccountInput"}},
		{name: "a misspelt directive argument", query: `{ topAccounts @include(iff: true) { nodes { wid } } }`,
			hidden: []string{`"if"`}, suggests: true},
		{name: "an object without a selection", query: `{ topAccounts }`, suggests: true},
		{name: "a @oneOf member given null", query: `mutation { createContact(wid: "w", input: {trust: null}) { __typename } }`,
			hidden: []string{"individual", "entity", "charity", "will"}},
		{name: "a @oneOf input given two members", query: `mutation { createContact(wid: "w", input: {trust: {externalId: "t"}, will: {externalId: "w"}}) { __typename } }`,
			hidden: []string{"individual", "entity", "charity"}},
		{name: "a misspelt field of a variable's input", query: `mutation($i: UpdateTopAccountInput!) { updateTopAccount(wid: "w", input: $i) { wid } }`,
			variables: map[string]any{"i": map[string]any{"nme": "x"}}, hidden: []string{"name"}},
		{name: "a misspelt enum value in a variable", query: `query($t: [ContactType!]) { topAccount(wid: "w") { contacts(types: $t) { __typename } } }`,
			variables: map[string]any{"t": []string{"INDIVIDUL"}}, hidden: []string{"INDIVIDUAL", "TRUST"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.suggests {
				if msgs := errorMessages(t, on.URL, tc.query, tc.variables); !strings.Contains(strings.Join(msgs, "\n"), "Did you mean") {
					t.Fatalf("with introspection on, got %q, want a suggestion (the case tests nothing)", msgs)
				}
			}
			msgs := errorMessages(t, off.URL, tc.query, tc.variables)
			if len(msgs) == 0 {
				t.Fatal("the operation was accepted, want it refused")
			}
			for _, msg := range msgs {
				if strings.Contains(msg, "Did you mean") {
					t.Errorf("got %q, want no suggestion", msg)
				}
				for _, name := range tc.hidden {
					if regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(msg) {
						t.Errorf("got %q, which names %s", msg, name)
					}
				}
			}
		})
	}
}

// gqlparser's @oneOf message named the input's first member whichever the query gave null.
func TestOneOfNamesTheMemberGivenNull(t *testing.T) {
	t.Parallel()
	for _, introspection := range []bool{true, false} {
		msgs := errorMessages(t, gateway(t, introspection).URL, `mutation { createContact(wid: "w", input: {will: null}) { __typename } }`, nil)
		if len(msgs) != 1 || !strings.HasPrefix(msgs[0], `Field "ContactInput.will" must be non-null.`) {
			t.Errorf("introspection %v: got %q, want the will member named", introspection, msgs)
		}
	}
}

func validationError(msg string) error {
	err := gqlerror.Errorf("%s", msg)
	errcode.Set(err, errcode.ValidationFailed)
	return err
}

// Suggestions made after validation, such as an enum value's right case, go too.
func TestWithoutSuggestionsTakesThemFromEveryError(t *testing.T) {
	present := withoutSuggestions(apperr.Presenter(slog.New(slog.DiscardHandler)))
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"an enum value's case", apperr.BadEnumValue("ContactType", "individual", []string{"INDIVIDUAL", "TRUST"}),
			`Value "individual" does not exist in "ContactType" enum.`},
		{"gqlparser's inline fragment", validationError(`Cannot query field "x" on type "Contact". Did you mean to use an inline fragment on "Trust" or "Will"?`),
			`Cannot query field "x" on type "Contact".`},
		{"a message without one", apperr.New(apperr.BadUserInput, "first must be from 1 to 1000"), "first must be from 1 to 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := present(context.Background(), tc.err); got.Message != tc.want {
				t.Errorf("got %q, want %q", got.Message, tc.want)
			}
		})
	}
}

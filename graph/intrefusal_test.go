package graph_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"
	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/family"
)

// wideCounts is a service whose top-account list counts beyond 32 bits, which the
// specification's "pagination {page, limit, total_count, total_pages} (integers)" allows.
type wideCounts struct{ family.API }

func (wideCounts) TopAccounts(context.Context, int, int) (advisorspec.TopAccountPage, error) {
	return advisorspec.TopAccountPage{Pagination: advisorspec.Pagination{Page: 1, Limit: 20, TotalCount: 3_000_000_000, TotalPages: 20}}, nil
}

// GraphQL's Int is "a signed 32-bit integer": the gateway's executor answers an Int beyond it
// with an error on the field, and, the field being non-null, null in its parent's place as
// GraphQL's null propagation requires, never the number nor a null where the schema forbids one.
// Written in place (a struct field) or marshalled, the same.
func TestAnIntAnswerBeyondThirtyTwoBitsIsAFieldErrorWhoseNullPropagates(t *testing.T) {
	es := generated.NewExecutableSchema(generated.Config{Resolvers: &graph.Resolver{Family: family.NewService(wideCounts{})}})
	exec := executor.New(es)
	for _, tc := range []struct {
		query, data string
	}{
		{`{ topAccounts { pageInfo { totalPages totalCount } } }`, `null`},
		{`{ topAccounts { pageInfo { totalPages } } }`, `{"topAccounts":{"pageInfo":{"totalPages":20}}}`},
	} {
		ctx := graphql.StartOperationTrace(context.Background())
		op, errs := exec.CreateOperationContext(ctx, &graphql.RawParams{Query: tc.query})
		if errs != nil {
			t.Fatal(errs)
		}
		handler, ctx := exec.DispatchOperation(ctx, op)
		resp := handler(ctx)
		if string(resp.Data) != tc.data {
			t.Errorf("%s: data %s, want %s", tc.query, resp.Data, tc.data)
		}
		if tc.data != "null" {
			if len(resp.Errors) != 0 {
				t.Errorf("%s: errors %v, want none", tc.query, resp.Errors)
			}
			continue
		}
		got, _ := json.Marshal(resp.Errors)
		if len(resp.Errors) != 1 || resp.Errors[0].Path.String() != "topAccounts.pageInfo.totalCount" ||
			!strings.Contains(resp.Errors[0].Message, "Int cannot represent non 32-bit signed integer value: 3000000000") {
			t.Errorf("%s: errors %s, want one on topAccounts.pageInfo.totalCount in graphql-js's words", tc.query, got)
		}
	}
}

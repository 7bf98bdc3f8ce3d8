package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/family"
	"github.com/advisorhq/gateway/internal/nodeid"
	"github.com/advisorhq/gateway/internal/vault"
)

// isEntityType reports whether typ is one of schema/federation.graphqls' _Entity: every type
// with a global id but bulk loads, which are the caller's own and no other subgraph's to extend.
func isEntityType(typ string) bool {
	return typ == family.NodeTopAccount || typ == family.NodeClient || typ == vault.NodeDocument || family.IsCardType(typ)
}

// Entities answers the federation's _entities: the objects the representations name, aligned
// with them, read as nodes reads them (in the caller's firm, as the caller may act, the cards of
// one owner with one list call). A representation is its __typename and the fields of one key:
// `id`, the global id, for every entity, or a top account's `wid`. One that names nothing the
// caller may read is null with NOT_FOUND at its index, one that is not a representation is null
// with BAD_USER_INPUT; an outage fails them all. Errors are the answer's: gqlgen calls this for
// _entities without an error to return.
func (r *Resolver) Entities(ctx context.Context, representations []map[string]any) []nodeid.Node {
	out := make([]nodeid.Node, len(representations))
	if len(representations) > MaxNodes {
		graphql.AddError(ctx, apperr.Input("representations",
			fmt.Sprintf("representations can hold at most %d representations, got %d", MaxNodes, len(representations))))
		return out
	}
	var ids []string
	var at []int
	for i, rep := range representations {
		arg := fmt.Sprintf("representations[%d]", i)
		typ, id, wid, err := representation(arg, rep)
		if err != nil {
			addErrorAt(ctx, i, err)
			continue
		}
		if id == "" { // a top account by its wid
			t, err := r.Family.TopAccount(ctx, wid)
			n, err := found(arg, t == nil, t, err)
			if err != nil && !apperr.IsNotFound(err) {
				graphql.AddError(ctx, err)
				return make([]nodeid.Node, len(representations))
			}
			if err != nil {
				addErrorAt(ctx, i, err)
			}
			out[i] = n
			continue
		}
		if k, err := nodeid.Decode(id); err == nil && k.Type != typ {
			addErrorAt(ctx, i, errNoNode(arg)) // the id of another type's object
			continue
		}
		ids, at = append(ids, id), append(at, i)
	}
	if err := r.readNodes(ctx, "representations", ids, at, out); err != nil {
		graphql.AddError(ctx, err)
		return make([]nodeid.Node, len(representations))
	}
	return out
}

// representation reads an entity's representation: its type and its key, `id` or (for a top
// account only) `wid`.
func representation(arg string, rep map[string]any) (typ, id, wid string, err error) {
	typ, _ = rep["__typename"].(string)
	if !isEntityType(typ) {
		return "", "", "", apperr.Input(arg, fmt.Sprintf("%s has no __typename of an entity (got %v): one of TopAccount, Individual, Trust, Entity, Charity, Will, Class, Document or Client", arg, rep["__typename"]))
	}
	if v, ok := rep["id"]; ok {
		if id, _ = v.(string); id == "" {
			return "", "", "", apperr.Input(arg, arg+" has an id that is not a non-empty string")
		}
		return typ, id, "", nil
	}
	if v, ok := rep["wid"]; ok && typ == family.NodeTopAccount {
		if wid, _ = v.(string); wid == "" {
			return "", "", "", apperr.Input(arg, arg+" has a wid that is not a non-empty string")
		}
		return typ, "", wid, nil
	}
	if typ == family.NodeTopAccount {
		return "", "", "", apperr.Input(arg, arg+" has neither of TopAccount's keys, id or wid")
	}
	return "", "", "", apperr.Input(arg, arg+" has no id, the key of "+typ)
}

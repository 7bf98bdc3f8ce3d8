package graph

import (
	"context"
	"fmt"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/graph/model"
	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/family"
	"github.com/advisorhq/gateway/internal/nodeid"
	"github.com/advisorhq/gateway/internal/vault"
)

// MaxNodes bounds nodes(ids:), as the gateway's other lists are bounded (docs/limits.md).
const MaxNodes = 100

// errNoNode answers an id that names nothing the caller may read: one the gateway did not make,
// one of an object that is gone, or one of another firm's or another advisor's object. The
// three read alike, so that an id tells a caller nothing about what it cannot read.
func errNoNode(arg string) error {
	return apperr.New(apperr.NotFound, "No object the caller may read has the id given in "+arg)
}

// node reads the object a global id names, in the caller's firm and as the caller may act.
// graph is as for family.Service.ContactByID.
func (r *Resolver) node(ctx context.Context, arg, id string, graph bool) (nodeid.Node, error) {
	k, err := nodeid.Decode(id)
	if err != nil {
		return nil, errNoNode(arg)
	}
	if o, ok := family.OwnerOf(k); ok && !r.mayActFor(ctx, o) {
		return nil, errNoNode(arg)
	}
	if c, ok := family.ParseCardKey(k); ok {
		card, err := r.Family.CardNode(ctx, c, graph)
		return found(arg, card == nil, card, err)
	}
	if e, ok := family.ParseRelationshipKey(k); ok {
		rel, err := r.Family.RelationshipNode(ctx, e)
		return found(arg, rel == nil, rel, err)
	}
	if c, ok := family.ParseContactRefKey(k); ok {
		ref, err := r.Family.ContactRefNode(ctx, c)
		return found(arg, ref == nil, ref, err)
	}
	switch p := k.Parts; {
	case k.Type == family.NodeTopAccount && len(p) == 1 && p[0] != "":
		t, err := r.Family.TopAccount(ctx, p[0])
		return found(arg, t == nil, t, err)
	case k.Type == vault.NodeDocument && len(p) == 2 && p[0] != "" && p[1] != "":
		d, err := r.Vault.Get(ctx, p[0], p[1])
		return found(arg, d == nil, d, err)
	case k.Type == family.NodeClient && len(p) == 3 && p[0] != "":
		ref := advisor.ClientRef{Ref: p[0], AdvisorID: p[1], TeamID: p[2]}
		if !r.mayActFor(ctx, family.OfClient(ref)) {
			return nil, errNoNode(arg)
		}
		c, err := r.Family.Client(ctx, ref)
		return found(arg, c == nil, c, err)
	case k.Type == model.NodeBulkUpload && len(p) == 1 && p[0] != "":
		b, err := r.bulkUpload(ctx, p[0])
		return found(arg, b == nil, b, err)
	}
	return nil, errNoNode(arg)
}

// found answers what a read of a node gave: a refusal of the id's parts (the upstream's or the
// client's checks) or a missing object is NOT_FOUND; an outage stays what it is.
// missing says the read found nothing: n is a typed nil then, which as a nodeid.Node is not nil.
func found(arg string, missing bool, n nodeid.Node, err error) (nodeid.Node, error) {
	if e, ok := apperr.As(err); ok && slices.Contains([]apperr.Code{apperr.NotFound, apperr.BadUserInput, apperr.Forbidden}, e.Code) {
		return nil, errNoNode(arg)
	}
	if err != nil {
		return nil, err
	}
	if missing {
		return nil, errNoNode(arg)
	}
	return n, nil
}

// mayActFor reports whether the caller may read an owner's cards: a client's are read as the
// advisor and team its id names, which must be those the caller acts as (tenant.Policy), so
// that an id made for another advisor reaches nothing.
func (r *Resolver) mayActFor(ctx context.Context, o family.Owner) bool {
	if o.Client.Ref == "" {
		return true // a top account of another firm is not found upstream
	}
	a, t, err := r.Access.ActingFor(ctx, o.Client.AdvisorID, o.Client.TeamID)
	return err == nil && a == o.Client.AdvisorID && t == o.Client.TeamID
}

// nodes reads the objects of ids, aligned with them: each that cannot be read is nil, with a
// NOT_FOUND error at its index. Cards are read per owner from its roster, so 100 cards of one
// family cost one list call.
func (r *Resolver) nodes(ctx context.Context, ids []string) ([]nodeid.Node, error) {
	if len(ids) > MaxNodes {
		return nil, apperr.Input("ids", fmt.Sprintf("ids can hold at most %d ids, got %d", MaxNodes, len(ids)))
	}
	out := make([]nodeid.Node, len(ids))
	at := make([]int, len(ids))
	for i := range at {
		at[i] = i
	}
	return out, r.readNodes(ctx, "ids", ids, at, out)
}

// readNodes reads the object of each id into out at its index in at, as nodes does; errors are
// reported at that index of the field's list and name it as an element of arg.
func (r *Resolver) readNodes(ctx context.Context, arg string, ids []string, at []int, out []nodeid.Node) error {
	type batch struct {
		at   []int
		keys []family.CardKey
	}
	var owners []family.Owner // in the order ids first name them, so errors come in order
	cards := map[family.Owner]*batch{}
	for j, id := range ids {
		i := at[j]
		if k, err := nodeid.Decode(id); err == nil {
			if c, ok := family.ParseCardKey(k); ok && r.mayActFor(ctx, c.Owner) {
				b := cards[c.Owner]
				if b == nil {
					b = &batch{}
					cards[c.Owner] = b
					owners = append(owners, c.Owner)
				}
				b.at, b.keys = append(b.at, i), append(b.keys, c)
				continue
			}
		}
		n, err := r.node(ctx, fmt.Sprintf("%s[%d]", arg, i), id, false)
		if err != nil {
			if !apperr.IsNotFound(err) {
				return err
			}
			addErrorAt(ctx, i, err)
		}
		out[i] = n
	}
	for _, o := range owners {
		b := cards[o]
		found, err := r.Family.CardNodes(ctx, o, b.keys)
		if e, ok := apperr.As(err); ok && (e.Code == apperr.BadUserInput || e.Code == apperr.Forbidden) {
			found, err = make([]family.Contact, len(b.keys)), nil // the ids' parts were refused
		}
		if err != nil {
			return err
		}
		for j, c := range found {
			if c == nil {
				addErrorAt(ctx, b.at[j], errNoNode(fmt.Sprintf("%s[%d]", arg, b.at[j])))
				continue
			}
			out[b.at[j]] = c
		}
	}
	return nil
}

// addErrorAt reports err at index i of the list the field being resolved returns.
func addErrorAt(ctx context.Context, i int, err error) {
	path := append(slices.Clone(graphql.GetPath(ctx)), ast.PathIndex(i))
	graphql.AddError(ctx, &gqlerror.Error{Err: err, Message: err.Error(), Path: path})
}

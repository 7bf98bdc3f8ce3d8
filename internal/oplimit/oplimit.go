// Package oplimit bounds what one GraphQL operation may ask of the gateway: its size, shape and
// cost, refused before it is validated or run, and its response, ended once it grows past a
// budget or once its client goes away.
//
// The static limits are checked on the operation as the client wrote it, before gqlgen
// validates it: validation compares every pair of selections that share a response name, so
// 5,000 tokens of one repeated field cost seconds of CPU there.
package oplimit

import (
	"context"
	"fmt"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
)

// Limits bound one operation. A limit of zero (or less) is switched off.
type Limits struct {
	// Tokens bounds the operation's document in lexical tokens, comments included, as gqlgen's
	// parser counts them (GRAPHQL_MAX_TOKENS).
	Tokens int
	// Depth bounds how deeply fields nest; `ofType`, introspection's unwrapping of list and
	// non-null types, adds no level (GRAPHQL_MAX_DEPTH).
	Depth int
	// Aliases bounds the fields the operation renames, each time a fragment is used
	// (GRAPHQL_MAX_ALIASES). `name: name` is no alias.
	Aliases int
	// RootFields bounds the distinct response names of the operation's top level
	// (GRAPHQL_MAX_ROOT_FIELDS).
	RootFields int
	// Cost bounds the operation's estimated cost (GRAPHQL_MAX_COST). Each field costs 1, and a
	// list multiplies the cost of its selection by its size: its first, limit or last argument
	// (counted as at most 1,000, the largest page a field serves), which for a connection such
	// as documents(first:) sizes the nodes beneath it, the length of its ids argument for a list
	// of objects by id (nodes), or else the size ListSizes assumes. Each pair of selections that share a response name in one selection
	// set, and each pair of distinct fragments spread into one, adds 1: validation compares
	// them. Fragments count each time they are spread, every type condition counts, and
	// introspection costs like any other field.
	Cost int
	// ResponseBytes bounds the estimated size of a response; a subscription's budget is per
	// event (MAX_RESPONSE_BYTES).
	ResponseBytes int64
	// ListSizes are the sizes the cost assumes for lists without a size argument, keyed by
	// "Type.field", then by "field"; the key "" is the size of every other list. Nil assumes
	// Defaults().ListSizes.
	ListSizes map[string]int
}

// Defaults returns the gateway's limits. The cost limit passes the README's family query (cost
// 7,083), the IDE's introspection query (8,879) and the family query of the end-to-end tests
// (13,506); recursion through the family graph costs 1,502 for two levels of relationships,
// 15,502 for three and 155,502 for four, the most the depth limit lets through.
func Defaults() Limits {
	return Limits{
		Tokens:        5000,
		Depth:         12,
		Aliases:       30,
		RootFields:    20,
		Cost:          20000,
		ResponseBytes: 16 << 20,
		ListSizes: map[string]int{
			// A family's cards and the whole family graph: large families have dozens of
			// cards and a hundred edges.
			"contacts": 50,
			// contactsConnection without first or last: every card, as contacts.
			"ContactConnection.edges":  50,
			"ContactConnection.nodes":  50,
			"TopAccount.relationships": 100,
			// One card's edges, in both directions.
			"relationships": 10,
			// Everything else: references, ownership shares, class parties, tags, an event's
			// generated documents, and introspection's lists.
			"": 5,
		},
	}
}

// Server is what Install configures: gqlgen's handler.Server, or its executor.Executor.
type Server interface {
	Use(graphql.HandlerExtension)
	SetParserTokenLimit(int)
}

// Install bounds every operation srv executes by l.
func Install(srv Server, l Limits) {
	srv.Use(New(l))
	if l.Tokens > 0 {
		// A backstop: the extension counts the tokens before gqlgen parses, and refuses with a
		// message that names the setting.
		srv.SetParserTokenLimit(l.Tokens)
	}
}

// Extension is the gqlgen handler extension that enforces Limits.
type Extension struct {
	limits Limits
	schema *ast.Schema
	// docs keeps the documents of the operations measured lately, by their text: clients send
	// the same few again and again, and parsing one costs more than measuring it.
	docs *lru.LRU[*document]
}

// document is a parsed document and the measures of its operations that no variable sized:
// those are measured once, not on every request.
type document struct {
	doc      *ast.QueryDocument
	mu       sync.Mutex
	measured map[string]*measures // by operation name
}

// measure is measure's answer for the operation of d named operation.
func (d *document) measure(schema *ast.Schema, l Limits, operation string, vars map[string]any) *measures {
	d.mu.Lock()
	m, ok := d.measured[operation]
	d.mu.Unlock()
	if ok {
		return m
	}
	m, always := measureOnce(schema, l, d.doc, operation, vars)
	if always {
		d.mu.Lock()
		if d.measured == nil {
			d.measured = map[string]*measures{}
		}
		d.measured[operation] = m
		d.mu.Unlock()
	}
	return m
}

// cachedDocuments is how many documents Extension keeps parsed, as many as gqlgen's own
// query cache in the gateway.
const cachedDocuments = 1000

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.ResponseInterceptor
	graphql.FieldInterceptor
} = (*Extension)(nil)

// New returns the extension enforcing l.
func New(l Limits) *Extension {
	if l.ListSizes == nil {
		l.ListSizes = Defaults().ListSizes
	}
	return &Extension{limits: l, docs: lru.New[*document](cachedDocuments)}
}

// ExtensionName names the extension in gqlgen's stats.
func (*Extension) ExtensionName() string { return "OperationLimits" }

// Validate keeps the schema, whose field types tell lists from objects.
func (e *Extension) Validate(es graphql.ExecutableSchema) error {
	e.schema = es.Schema()
	return nil
}

// MutateOperationParameters refuses an operation over a static limit. It runs before gqlgen
// parses and validates the document, so a refusal costs one pass of the lexer and one of the
// parser, and a document seen lately neither. A document that does not parse, or names no
// operation, is left to gqlgen to refuse.
func (e *Extension) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if p.Query == "" {
		return nil
	}
	d, ok := e.docs.Get(ctx, p.Query)
	if !ok {
		doc, err := parse(e.limits, p.Query)
		if err != nil || doc == nil {
			return err
		}
		d = &document{doc: doc}
		e.docs.Add(ctx, p.Query, d)
	}
	m := d.measure(e.schema, e.limits, p.OperationName, p.Variables)
	if m == nil {
		return nil
	}
	if !m.unfinished && graphql.HasOperationContext(ctx) {
		graphql.GetOperationContext(ctx).Stats.SetExtension(measuredKey, measured{
			cost: m.cost, rootFields: m.rootFields, aliases: m.aliases, limits: &e.limits})
	}
	l := e.limits
	switch {
	case l.Depth > 0 && m.depth > l.Depth:
		return refusal("The operation is %d levels deep; at most %d are allowed (GRAPHQL_MAX_DEPTH)", m.depth, l.Depth)
	case l.Aliases > 0 && m.aliases > l.Aliases:
		return refusal("The operation has %d aliases; at most %d are allowed (GRAPHQL_MAX_ALIASES)", m.aliases, l.Aliases)
	case l.RootFields > 0 && m.rootFields > l.RootFields:
		return refusal("The operation selects %d root fields; at most %d are allowed (GRAPHQL_MAX_ROOT_FIELDS)", m.rootFields, l.RootFields)
	case l.Cost > 0 && m.unfinished && m.work > l.Cost:
		return refusal("The operation costs more than %d; at most %d is allowed (GRAPHQL_MAX_COST)", l.Cost, l.Cost)
	case l.Cost > 0 && m.unfinished:
		// A limit set beyond what the gateway measures: the operation is at least that large.
		return refusal("The operation costs more than %d, more than the gateway measures; at most %d is allowed (GRAPHQL_MAX_COST)", m.work, l.Cost)
	case l.Cost > 0 && m.cost > int64(l.Cost):
		return refusal("The operation costs %d; at most %d is allowed (GRAPHQL_MAX_COST)", m.cost, l.Cost)
	}
	return nil
}

// measuredKey keeps in an operation's stats what the limits measured of it, for Cost and
// Batch.
const measuredKey = "OperationLimits.measured"

// measured is what the limits measured of an operation they let through, and the limits.
type measured struct {
	cost                int64
	rootFields, aliases int
	limits              *Limits
}

// Cost is the cost of op as the limits measured it (see GRAPHQL_MAX_COST), or 0 when they did
// not: a document they could not parse is refused before it runs anyway.
func Cost(op *graphql.OperationContext) int64 {
	m, _ := op.Stats.GetExtension(measuredKey).(measured)
	return m.cost
}

// Batch prices the operations of one batch, each already let through on its own, as one
// operation: a batch may ask no more of the gateway and the upstream than one operation may,
// or ten operations each just under the limits would cost ten times what one may. Their costs
// add up against GRAPHQL_MAX_COST, and so do their root fields (each a call to the upstream,
// at least) against GRAPHQL_MAX_ROOT_FIELDS and their aliases (each a field run again) against
// GRAPHQL_MAX_ALIASES; depth and tokens bound each document, and each was checked alone. A
// refusal is the batch's one error, OPERATION_LIMIT_EXCEEDED; nil lets the batch run.
// Operations the limits did not measure (none installed, a document that did not parse) add
// nothing.
func Batch(ops []*graphql.OperationContext) *gqlerror.Error {
	var sum measured
	for _, op := range ops {
		m, ok := op.Stats.GetExtension(measuredKey).(measured)
		if !ok {
			continue
		}
		sum.cost = add(sum.cost, m.cost)
		sum.rootFields += m.rootFields
		sum.aliases += m.aliases
		if sum.limits == nil {
			sum.limits = m.limits
		}
	}
	if sum.limits == nil {
		return nil
	}
	l := *sum.limits
	switch n := len(ops); {
	case l.Cost > 0 && sum.cost > int64(l.Cost):
		return refusal("The batch's %d operations cost %d together; a batch may cost at most %d, as one operation may (GRAPHQL_MAX_COST)", n, sum.cost, l.Cost)
	case l.RootFields > 0 && sum.rootFields > l.RootFields:
		return refusal("The batch's %d operations select %d root fields together; a batch may select at most %d, as one operation may (GRAPHQL_MAX_ROOT_FIELDS)", n, sum.rootFields, l.RootFields)
	case l.Aliases > 0 && sum.aliases > l.Aliases:
		return refusal("The batch's %d operations have %d aliases together; a batch may have at most %d, as one operation may (GRAPHQL_MAX_ALIASES)", n, sum.aliases, l.Aliases)
	}
	return nil
}

// refusal is the error of an operation over a limit: its cause gives the gateway's presenter
// the code and message, and its extensions give them to gqlgen's default presenter.
func refusal(format string, args ...any) *gqlerror.Error {
	msg := fmt.Sprintf(format, args...)
	return &gqlerror.Error{
		Message:    msg,
		Err:        apperr.New(apperr.OperationLimitExceeded, msg),
		Extensions: map[string]any{"code": apperr.OperationLimitExceeded},
	}
}

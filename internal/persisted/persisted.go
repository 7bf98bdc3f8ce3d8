// Package persisted runs operations clients name by id instead of sending in full: automatic
// persisted queries (Apollo's protocol: extensions.persistedQuery.sha256Hash, answered
// PersistedQueryNotFound until the client sends the document with its hash), and trusted
// documents, the operations of a manifest a front end's build wrote, which may be made the
// only operations the gateway runs. Mobile clients send a hash of 64 bytes instead of a
// document of kilobytes, and a gateway that runs trusted documents only cannot be made to run
// an operation its own front ends do not.
package persisted

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/ratelimit"
)

// Config is what the extension serves.
type Config struct {
	// Store keeps automatically persisted queries; nil turns them off, and a hash the manifest
	// does not hold is answered PersistedQueryNotSupported.
	Store Store
	// Manifest is the trusted documents, served by their ids; nil is none.
	Manifest *Manifest
	// Only refuses every operation that is not a trusted document, and turns automatic
	// persisted queries off: registering one would make any document trusted.
	Only bool
	// AllowIntrospection lets operations that only introspect through while Only is set, so a
	// GraphQL IDE or codegen can still read the schema when introspection is served.
	AllowIntrospection bool
	// Exempt lets a request through while Only is set, judging by its headers; nil exempts none.
	Exempt func(http.Header) bool
	// Log receives the store's failures, which never fail an operation. Nil logs nothing.
	Log *slog.Logger
	// Observe counts what became of each operation named by id, or sent to be registered: one
	// of the Outcome constants. Nil counts nothing.
	Observe func(outcome string)

	// Quota counts what each caller registers, by ratelimit.CallerKey: the advisor of its
	// firm, or its address. It is to be shared by the replicas sharing the Store (a
	// ratelimit.Redis on the same Redis), or a caller may register as much on each. Nil
	// counts in the process.
	Quota ratelimit.Limiter
	// CallerDocuments is how many documents one caller may register each QuotaPeriod; 0 is
	// DefaultCallerDocuments, and a negative number no limit.
	CallerDocuments int
	// CallerBytes is how many bytes of documents one caller may register each QuotaPeriod; 0
	// is DefaultCallerBytes, and a negative number no limit.
	CallerBytes int
	// QuotaPeriod is the period of CallerDocuments and CallerBytes; 0 is DefaultQuotaPeriod.
	QuotaPeriod time.Duration
}

// The defaults of what one caller may register. A front end has tens to a few hundred
// operations, each registered once per replica's store and then kept while used; one that
// registers hundreds of new documents an hour is generating them.
const (
	DefaultCallerDocuments = 200
	DefaultCallerBytes     = 4 << 20
	DefaultQuotaPeriod     = time.Hour
)

// What became of an operation named by id, as Config.Observe is told.
const (
	OutcomeTrusted    = "trusted"    // a trusted document, by its id
	OutcomeHit        = "hit"        // found in the store
	OutcomeMiss       = "miss"       // not found: the client is asked for the document
	OutcomeRegistered = "registered" // the document, sent with its hash, is now in the store
	OutcomeRefused    = "refused"    // not a trusted document, while only those run
	OutcomeLimited    = "limited"    // ran, and not registered: its caller registered its quota
)

// CodeLimit is the code a response carries in extensions.persistedQuery when its document ran
// but was not registered, because its caller has registered as many documents or bytes as it
// may for now. It is not an error: the operation ran and answered.
const CodeLimit apperr.Code = "PERSISTED_QUERY_LIMIT"

// Extension is the gqlgen handler extension that serves persisted operations. It must be used
// before anything that reads the operation's document, such as the operation limits, so that
// they see the document an id names.
type Extension struct{ cfg Config }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
	graphql.ResponseInterceptor
} = (*Extension)(nil)

// New returns the extension serving cfg.
func New(cfg Config) *Extension {
	if cfg.Only {
		cfg.Store = nil
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string) {}
	}
	if cfg.Quota == nil {
		cfg.Quota = ratelimit.NewMemory(nil)
	}
	if cfg.CallerDocuments == 0 {
		cfg.CallerDocuments = DefaultCallerDocuments
	}
	if cfg.CallerBytes == 0 {
		cfg.CallerBytes = DefaultCallerBytes
	}
	if cfg.QuotaPeriod <= 0 {
		cfg.QuotaPeriod = DefaultQuotaPeriod
	}
	return &Extension{cfg: cfg}
}

// ExtensionName names the extension in gqlgen's stats.
func (*Extension) ExtensionName() string { return "PersistedOperations" }

// Validate accepts every schema.
func (*Extension) Validate(graphql.ExecutableSchema) error { return nil }

// MaxRegisteredBytes bounds a document registered as an automatic persisted query: one that
// validates may still carry megabytes of string literals or comments, and the store is shared
// by every caller. A larger document runs, and is sent in full each time.
const MaxRegisteredBytes = 64 << 10

// statsKey is where the extension leaves what it did, in the operation's stats.
const statsKey = "PersistedOperations"

// stats is what the extension did with one operation, kept in its stats until the operation
// has run.
type stats struct {
	// register is the hash to register the document as, once it has run without errors;
	// emptied when it has been tried, so that a subscription tries once.
	register string
	// unlisted marks a document that is not trusted, to refuse in Only mode once parsed.
	unlisted bool
}

// The errors' messages are the ones Apollo's clients look for: Apollo Kotlin and iOS compare
// the message, not the code, before sending the document in full.
const (
	notFoundMessage     = "PersistedQueryNotFound"
	notSupportedMessage = "PersistedQueryNotSupported"
)

// MutateOperationParameters fills in the document a request names by id, from the trusted
// documents or the store, and refuses what the protocol or Only mode does not allow.
func (e *Extension) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	id, err := requestedID(p.Extensions)
	if err != nil {
		return err
	}
	st := &stats{}
	graphql.GetOperationContext(ctx).Stats.SetExtension(statsKey, st)
	m := e.cfg.Manifest
	if id == "" {
		if e.cfg.Only && (m == nil || !m.Trusts(p.Query)) {
			st.unlisted = true // refused once parsed, unless it only introspects
		}
		return nil
	}
	hash := strings.TrimPrefix(id, "sha256:")
	if p.Query == "" {
		if m != nil {
			if doc, ok := m.Document(id); ok {
				p.Query = doc
				e.cfg.Observe(OutcomeTrusted)
				return nil
			}
			if doc, ok := m.Document(hash); ok {
				p.Query = doc
				e.cfg.Observe(OutcomeTrusted)
				return nil
			}
		}
		if e.cfg.Only {
			e.cfg.Observe(OutcomeRefused)
			return refusal(apperr.PersistedQueryNotInList, fmt.Sprintf(
				"No trusted document has the id %s: the gateway runs only the documents of PERSISTED_OPERATIONS_FILE", id))
		}
		if e.cfg.Store == nil {
			return refusal(apperr.PersistedQueryNotSupported, notSupportedMessage)
		}
		doc, ok, err := e.cfg.Store.Get(ctx, hash)
		if err != nil {
			// The client sends the document in full when told it is not found: nothing is lost.
			e.cfg.Log.WarnContext(ctx, "persisted query store unavailable", "error", err)
		}
		if !ok {
			e.cfg.Observe(OutcomeMiss)
			return refusal(apperr.PersistedQueryNotFound, notFoundMessage)
		}
		e.cfg.Observe(OutcomeHit)
		p.Query = doc
		return nil
	}
	if !isSHA256(hash) {
		return badInput("extensions.persistedQuery.sha256Hash must be the SHA-256 of the query in lower-case hex, 64 characters")
	}
	if sum := sha256.Sum256([]byte(p.Query)); hex.EncodeToString(sum[:]) != hash {
		return badInput("extensions.persistedQuery.sha256Hash is not the SHA-256 of the query: hash the query exactly as it is sent")
	}
	switch {
	case m != nil && m.Trusts(p.Query):
	case e.cfg.Only:
		st.unlisted = true
	case e.cfg.Store != nil && len(p.Query) <= MaxRegisteredBytes:
		st.register = hash
	}
	return nil
}

// MutateOperationContext refuses an untrusted document in Only mode, now that it has parsed and
// gqlgen knows whether it only introspects.
func (e *Extension) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	st, _ := op.Stats.GetExtension(statsKey).(*stats)
	if st == nil {
		return nil
	}
	if st.unlisted {
		if e.cfg.AllowIntrospection && introspectionOnly(op.Operation) {
			return nil
		}
		if e.cfg.Exempt != nil && e.cfg.Exempt(op.Headers) {
			return nil
		}
		e.cfg.Observe(OutcomeRefused)
		return refusal(apperr.OperationNotInList,
			"The operation is not a trusted document: the gateway runs only the documents of PERSISTED_OPERATIONS_FILE, sent by their ids")
	}
	return nil
}

// InterceptResponse registers a document sent with its hash once it has run and answered
// without errors: not when it validated, as before, since much can refuse an operation after
// that (the operation limits, which come after this extension; GET, which runs no mutation;
// authorization, as it runs). A store then holds only operations the gateway
// has run for some caller, and nothing a refused request sent. A subscription is registered
// with its first event.
//
// A caller that has registered its quota has its operation run and answered all the same, with
// extensions.persistedQuery saying PERSISTED_QUERY_LIMIT and why, and its document is not
// registered: refusing the operation would punish a client for a protocol it follows, and
// the client, told PersistedQueryNotFound next time, sends the document in full again.
func (e *Extension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil || !graphql.HasOperationContext(ctx) {
		return resp
	}
	op := graphql.GetOperationContext(ctx)
	st, _ := op.Stats.GetExtension(statsKey).(*stats)
	if st == nil || st.register == "" || len(resp.Errors) > 0 {
		return resp
	}
	hash := st.register
	st.register = ""
	if msg := e.register(ctx, hash, op.RawQuery); msg != "" {
		if resp.Extensions == nil {
			resp.Extensions = make(map[string]any)
		}
		resp.Extensions["persistedQuery"] = map[string]any{"code": CodeLimit, "message": msg}
	}
	return resp
}

// register registers doc as hash, within its caller's quota. It returns why it did not when
// that is the caller's quota.
func (e *Extension) register(ctx context.Context, hash, doc string) (refused string) {
	// The answer waits on this: a stalled Redis costs it this much, once.
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	if msg, err := e.withinQuota(ctx, hash, doc); err != nil {
		// Not registered: nothing is lost, the client will be asked for the document again.
		e.cfg.Log.WarnContext(ctx, "persisted query quota cannot be counted", "error", apperr.Redact(err.Error()))
		return ""
	} else if msg != "" {
		e.cfg.Observe(OutcomeLimited)
		return msg
	}
	if err := e.cfg.Store.Put(ctx, hash, doc); err != nil {
		// The operation ran anyway; its client will be asked for the document again.
		e.cfg.Log.WarnContext(ctx, "persisted query store unavailable", "error", err)
		return ""
	}
	e.cfg.Observe(OutcomeRegistered)
	return ""
}

// registerTimeout bounds counting a registration against its caller's quota and storing it.
const registerTimeout = 250 * time.Millisecond

// withinQuota counts a registration against its caller's quota of documents and of bytes (in
// KiB, so that a quota of megabytes fits the limiter's counts), and says why not when it is
// spent. Every registration tried counts, one of a document the store already holds too:
// telling them apart would cost every registration a call to the store first, and clients
// send a document with its hash only when told the store does not hold it.
func (e *Extension) withinQuota(ctx context.Context, hash, doc string) (refused string, err error) {
	caller := ratelimit.CallerKey(ctx)
	per := e.cfg.QuotaPeriod
	kib := (len(hash) + len(doc) + 1023) >> 10
	quotas := []struct {
		name  string
		limit int
		n     int
		unit  string
	}{
		{"bytes", e.cfg.CallerBytes >> 10, kib, "KiB of documents"},
		{"documents", e.cfg.CallerDocuments, 1, "documents"},
	}
	for _, q := range quotas {
		if q.limit < 0 {
			continue
		}
		limit := max(q.limit, 1)
		res, err := e.cfg.Quota.AllowN(ctx, "persisted-"+q.name+":"+caller, ratelimit.Limit{Rate: limit, Burst: limit, Period: per}, min(q.n, limit))
		if err != nil {
			return "", fmt.Errorf("count a persisted query's %s against its caller's quota: %w", q.name, err)
		}
		if !res.Allowed {
			return fmt.Sprintf("The operation ran, and its document was not registered as a persisted query: "+
				"a caller may register %d %s %s, and this one has; its documents are to be sent in full "+
				"for %d s", limit, q.unit, every(per), apperr.RetrySeconds(res.RetryAfter)), nil
		}
	}
	return "", nil
}

// requestedID is the id a request names its document by, from extensions.persistedQuery
// (sha256Hash, version 1). Transports put a request's documentId there too.
func requestedID(ext map[string]any) (string, *gqlerror.Error) {
	raw, ok := ext["persistedQuery"]
	if !ok || raw == nil {
		return "", nil
	}
	pq, ok := raw.(map[string]any)
	if !ok {
		return "", badInput("extensions.persistedQuery must be an object with version 1 and a sha256Hash")
	}
	if v := fmt.Sprint(pq["version"]); v != "1" {
		return "", badInput(fmt.Sprintf("extensions.persistedQuery.version is %s: the gateway serves version 1", v))
	}
	id, _ := pq["sha256Hash"].(string)
	if !validID(id) {
		return "", badInput("extensions.persistedQuery.sha256Hash must be the document's id: its SHA-256 in hex, at most 128 characters")
	}
	return id, nil
}

func isSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// introspectionOnly reports whether op selects nothing but the schema's introspection fields.
func introspectionOnly(op *ast.OperationDefinition) bool {
	if op == nil || op.Operation != ast.Query {
		return false
	}
	return onlyMeta(op.SelectionSet)
}

func onlyMeta(set ast.SelectionSet) bool {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.Name != "__schema" && s.Name != "__type" && s.Name != "__typename" {
				return false
			}
		case *ast.InlineFragment:
			if !onlyMeta(s.SelectionSet) {
				return false
			}
		case *ast.FragmentSpread:
			if s.Definition == nil || !onlyMeta(s.Definition.SelectionSet) {
				return false
			}
		}
	}
	return true
}

// every says a period in words.
func every(d time.Duration) string {
	switch d {
	case time.Hour:
		return "an hour"
	case time.Minute:
		return "a minute"
	case 24 * time.Hour:
		return "a day"
	}
	return "every " + d.String()
}

// refusal is an error with code, whose message is shown as it is.
func refusal(code apperr.Code, msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Err: apperr.New(code, msg), Extensions: map[string]any{"code": code}}
}

func badInput(msg string) *gqlerror.Error { return refusal(apperr.BadUserInput, msg) }

// Package gateway composes the Advisor GraphQL gateway from its parts: the event log and hub,
// the upstream clients (or the embedded sandbox standing in for them), caller authentication,
// the domains, the schema and the HTTP server. The command and the end-to-end tests build
// gateways through it.
package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/analysis"
	"github.com/advisorhq/gateway/internal/assistant"
	"github.com/advisorhq/gateway/internal/assistantpage"
	"github.com/advisorhq/gateway/internal/config"
	"github.com/advisorhq/gateway/internal/connlimit"
	"github.com/advisorhq/gateway/internal/diskbudget"
	"github.com/advisorhq/gateway/internal/eventhub"
	"github.com/advisorhq/gateway/internal/family"
	"github.com/advisorhq/gateway/internal/familypage"
	"github.com/advisorhq/gateway/internal/graceful"
	"github.com/advisorhq/gateway/internal/httpserver"
	"github.com/advisorhq/gateway/internal/metrics"
	"github.com/advisorhq/gateway/internal/oplimit"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/subgraph"
	"github.com/advisorhq/gateway/internal/tenant"
	"github.com/advisorhq/gateway/internal/tracing"
	"github.com/advisorhq/gateway/internal/transport"
	"github.com/advisorhq/gateway/internal/vault"
	"github.com/advisorhq/gateway/internal/webhook"
)

// Gateway is a gateway that has opened what it needs and listens, ready to Serve.
type Gateway struct {
	cfg      config.Gateway
	log      *slog.Logger
	stdout   io.Writer
	ln       net.Listener
	base     string
	handler  *httpserver.Handler
	embedded *embeddedSandbox
	// assistantPage tells whether the pop-out assistant is served, for the start-up lines.
	assistantPage bool
	// closers release what New opened, in the order New opened it; Close runs them backwards.
	closers []func()
}

// An Option changes where a gateway writes or traces.
type Option func(*options)

type options struct {
	stdout, logs io.Writer
	tracer       trace.TracerProvider
}

// Output is where the gateway prints its start-up lines (the addresses it serves at, the
// embedded sandbox's credentials). None by default.
func Output(w io.Writer) Option { return func(o *options) { o.stdout = w } }

// LogTo is where the gateway writes its log lines, in LOG_FORMAT. None by default.
func LogTo(w io.Writer) Option { return func(o *options) { o.logs = w } }

// Tracer is where the gateway's spans go. None by default.
func Tracer(tp trace.TracerProvider) Option { return func(o *options) { o.tracer = tp } }

// New opens everything cfg asks for and listens on cfg.Addr: the event log (Redis or in
// process), persisted operations and rate limits, the event hub, the embedded sandbox when there
// is no ADVISOR_BASE_URL, the firms' upstream client, caller authentication, the assistant's
// session host, the domains, bulk loads, referrals, the schema and the HTTP handler. What it
// opens lives until Close; ctx is not kept beyond New except by what outlives draining (the
// hub, the embedded sandbox), which Close stops.
func New(ctx context.Context, cfg config.Gateway, opts ...Option) (_ *Gateway, err error) {
	o := options{stdout: io.Discard, logs: io.Discard}
	for _, opt := range opts {
		opt(&o)
	}
	g := &Gateway{log: NewLogger(cfg.LogFormat, o.logs), stdout: o.stdout}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	if err := g.open(ctx, cfg, o.tracer); err != nil {
		return nil, err
	}
	return g, nil
}

// onClose has Close release what was just opened.
func (g *Gateway) onClose(f func()) { g.closers = append(g.closers, f) }

// Close releases what New opened, last opened first: loads under way, the session host and
// caller authentication, then the embedded sandbox (after the gateway has drained, since
// in-flight requests may still need it), the hub, the event log and the listener.
func (g *Gateway) Close() {
	for i := len(g.closers) - 1; i >= 0; i-- {
		g.closers[i]()
	}
	g.closers = nil
}

func (g *Gateway) open(ctx context.Context, cfg config.Gateway, tp trace.TracerProvider) error {
	log := g.log
	m := metrics.New()

	// Listen first: the embedded sandbox needs the gateway's address to send its webhooks to.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on ADDR %s: %w", cfg.Addr, err)
	}
	g.onClose(func() { _ = ln.Close() })
	g.ln = ln
	base := "http://" + displayAddr(ln.Addr())
	g.base = base

	events, bulkProgress, redisClient, closeEvents, err := openEventLog(cfg, tp)
	if err != nil {
		return err
	}
	g.onClose(closeEvents)
	persistedOps, err := openPersisted(cfg, redisClient, log.With("component", "persisted"), m.ObservePersisted)
	if err != nil {
		return err
	}
	rateLimits := openRateLimits(cfg, redisClient, log.With("component", "ratelimit"))
	var legacyFirm string // of events stored before they had firms: a one-firm gateway's
	if len(cfg.Firms) == 1 {
		legacyFirm = cfg.Firms[0].ID
	}
	hub := eventhub.New(events, eventhub.Options{Buffer: cfg.SubscriberBuffer, OutageGrace: cfg.EventsOutageGrace, Logger: log.With("component", "events"), Tracer: tp,
		DefaultFirm: legacyFirm})
	// The hub outlives the server's draining (Close stops it, not ctx), so a subscriber sees its
	// socket close with "reconnect" rather than an error from the hub.
	hubCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	hubDone := make(chan struct{})
	go func() { defer close(hubDone); hub.Run(hubCtx) }()
	g.onClose(func() { stopHub(); <-hubDone })

	upstream := advisor.Options{
		BaseURL:       cfg.AdvisorBaseURL,
		Timeout:       cfg.UpstreamTimeout,
		MaxConcurrent: cfg.UpstreamConnections,
		Observe:       m.ObserveUpstream,
		Tracer:        tp,
	}
	sandboxURL := ""
	if cfg.Sandboxed() {
		if sandboxURL, err = g.useEmbeddedSandbox(ctx, &cfg); err != nil {
			return err
		}
		// Asked below the mount path for the host each caller used, the sandbox answers with
		// addresses on the gateway's origin (sandboxTransport).
		upstream.BaseURL = sandboxURL + sandbox.MountPath
		conns := cfg.UpstreamConnections
		if conns <= 0 {
			conns = advisor.DefaultMaxConcurrent
		}
		upstream.HTTPClient = &http.Client{Transport: g.embedded.transport(advisor.NewTransport(conns), base)}
	}
	g.cfg = cfg
	firms, err := tenant.NewDirectory(cfg.Firms)
	if err != nil {
		return fmt.Errorf("the firms served: %w", err)
	}
	if err := webhook.CheckKeys(webhookKeys(firms)); err != nil {
		return fmt.Errorf("the firms' webhook keys: %w", err)
	}
	access := &tenant.Policy{Firms: firms, AdminRole: cfg.Auth.FirmAdminRole}
	upstream.Firms = firms
	api, err := advisor.New(upstream)
	if err != nil {
		return fmt.Errorf("ADVISOR_BASE_URL: %w", err)
	}
	callers, err := openCallerAuth(ctx, cfg.Auth, sandboxURL, log.With("component", "auth"))
	if err != nil {
		return err
	}
	g.onClose(callers.close)
	callers.describe(g.stdout, base)
	sessionHost, err := openSessionHost(cfg.AssistantSession, g.embedded, tp)
	if err != nil {
		return err
	}
	var sessionReady []httpserver.ReadyCheck
	if sessionHost != nil {
		g.onClose(sessionHost.Close)
		sessionReady = append(sessionReady, httpserver.ReadyCheck{Name: "assistant_session", Check: sessionHost.Health})
	}
	fam := family.NewService(api)
	docs := vault.NewService(api, vault.DefaultDetailConcurrency)
	// Uploads' temporary files and bulk loads' copies of their files draw from one budget.
	disk, err := diskbudget.New(cfg.UploadDiskBudget)
	if err != nil {
		return fmt.Errorf("UPLOAD_DISK_BUDGET: %w", err)
	}
	bulkDeps, err := openBulk(cfg, firms, api, bulkProgress, disk, log)
	if err != nil {
		return err
	}
	if bulkDeps.Loads != nil {
		// Closed first: loads under way end when the gateway has drained.
		g.onClose(bulkDeps.Loads.Close)
	}
	var referralTransport http.RoundTripper
	if g.embedded != nil && cfg.ReferralURL == sandboxURL+sandbox.MountPath {
		referralTransport = g.embedded.transport(http.DefaultTransport.(*http.Transport).Clone(), base)
	}
	referrals, err := openReferral(cfg, referralTransport, tp)
	if err != nil {
		return err
	}
	// A gateway that is no subgraph serves a schema without the federation's definitions.
	var served *ast.Schema
	if !cfg.Federation {
		served = subgraph.Without(generated.NewExecutableSchema(generated.Config{}).Schema())
	}
	schema := generated.NewExecutableSchema(generated.Config{
		Schema: served,
		Resolvers: &graph.Resolver{Version: version(), Family: fam, Vault: docs, Hub: hub,
			Analysis: analysis.NewService(api, hub, docs, eventhub.MaxRecent), Bulk: bulkDeps, Referral: referrals,
			Assistant: &assistant.Sessions{Client: sessionHost}, Access: access},
	})
	var assistantPage http.Handler
	switch {
	case cfg.AssistantEmbedURL != "":
		page, err := assistantpage.New(cfg.AssistantEmbedURL)
		if err != nil {
			return fmt.Errorf("ASSISTANT_EMBED_URL: %w", err)
		}
		assistantPage = page
	case g.embedded != nil:
		// The embedded sandbox's chat, on the gateway's own origin: the pop-out names no host.
		assistantPage = assistantpage.SameOrigin(sandbox.MountPath)
	}
	g.assistantPage = assistantPage != nil
	handler := httpserver.New(httpserver.Deps{
		Assistant: assistantPage,
		Tracer:    tp,
		Log:       log,
		Schema:    schema,
		Metrics:   m,
		PerRequest: func(ctx context.Context) context.Context {
			return advisor.WithBudget(advisor.WithCache(ctx), cfg.UpstreamBudget)
		},
		Webhooks: &webhook.Receiver{Log: events, Keys: webhookKeys(firms), Logger: log.With("component", "webhooks"), Observe: m.ObserveWebhook,
			ObserveUnknown: m.ObserveWebhookUnknown},
		// Every caller is admitted into the firm of its token, or refused before any upstream call.
		Authenticate: access.Authenticate(callers.authenticate),
		Persisted:    persistedOps,
		FamilyPage:   familypage.New("/graphql", ideURL(cfg.IDE)),
		RateLimits:   rateLimits,
		Ready: append([]httpserver.ReadyCheck{
			{Name: "advisor", Check: pingFirms(api, firms), Advisory: true},
			{Name: "events", Check: hub.Ready},
		}, append(callers.ready, sessionReady...)...),
		Config: httpConfig(cfg, graph.ShareEvents(hub), disk),
	})
	g.handler = handler
	g.onClose(handler.Close)

	// Every subscriber counts, however many share one execution of their subscription.
	m.Gauge("advisor_event_subscribers", "Open subscriptions on this replica.", func() float64 { return float64(handler.Subscriptions()) })
	m.Gauge("advisor_subscription_executions", "Executions serving the open subscriptions: subscribers of the same operation, variables and caller share one.",
		func() float64 { return float64(handler.Executions()) })
	return nil
}

// Serve prints the addresses the gateway answers at and serves until ctx ends; then it stops
// accepting, ends the subscriptions and gives in-flight requests a few seconds to finish. It
// returns nil after a shutdown that ctx asked for, and what failed otherwise. Close releases
// the rest.
func (g *Gateway) Serve(ctx context.Context) error {
	cfg, base, log, stdout := g.cfg, g.base, g.log, g.stdout
	// Every address the gateway answers at, so that nobody has to look them up.
	fmt.Fprintf(stdout, "Advisor GraphQL gateway serving %[1]s\n  GraphQL:  %[1]s/graphql\n  Webhooks: %[1]s/webhooks\n", base)
	if cfg.IDE {
		fmt.Fprintf(stdout, "  IDE:      %s/\n", base)
	}
	if cfg.Introspection {
		fmt.Fprintf(stdout, "  Schema:   %s/graphql/schema.graphql\n", base)
	}
	if g.embedded != nil && g.embedded.demoWID != "" {
		fmt.Fprintf(stdout, "  Family:   %s/family/%s (the demo Hartwell family, drawn)\n", base, g.embedded.demoWID)
	} else {
		fmt.Fprintf(stdout, "  Family:   %s/family/{wid} (a top account's family, drawn)\n", base)
	}
	if g.assistantPage {
		fmt.Fprintf(stdout, "  Assistant: %[1]s/assistant (opened by %[1]s/assistant/open.js; try %[1]s/assistant/demo)\n", base)
	}
	fmt.Fprintf(stdout, "  Health:   %[1]s/healthz\n  Ready:    %[1]s/readyz\n  Metrics:  %[1]s/metrics\n", base)
	srv := &http.Server{
		Handler:           g.front(g.handler),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    config.DefaultMaxHeaderBytes,
	}
	srv.RegisterOnShutdown(g.handler.CloseStreams)
	maxConns := cfg.MaxConnections
	if maxConns == 0 {
		maxConns = connectionLimit()
	}
	log.Info("serving", "max_connections", maxConns)
	shutdownBegan := make(chan time.Time, 1)
	noticeShutdown := context.AfterFunc(ctx, func() {
		log.Info("shutting down")
		shutdownBegan <- time.Now()
	})
	err := graceful.Serve(ctx, srv, connlimit.Listen(g.ln, maxConns))
	waitCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if werr := g.handler.WaitStreams(waitCtx); werr != nil {
		log.Warn("WebSockets still open after shutting down", "error", werr)
	}
	// Only a shutdown that was asked for has drained; a failure to serve is returned.
	if !noticeShutdown() {
		log.Info("stopped", "draining", time.Since(<-shutdownBegan))
	}
	return err
}

// httpConfig is the HTTP handler's configuration, its transports' included, as cfg sets it;
// share and disk are what the transports share with the rest of the gateway: which
// subscriptions share an execution, and the disk budget the bulk loads draw from too.
func httpConfig(cfg config.Gateway, share transport.Share, disk *diskbudget.Budget) httpserver.Config {
	return httpserver.Config{
		Transport: transport.Config{
			AllowedOrigins:         cfg.AllowedOrigins,
			MaxRequestBytes:        cfg.MaxRequestBytes,
			MaxMessageBytes:        cfg.MaxRequestBytes,
			BodyBounds:             transport.BodyBounds{Depth: cfg.MaxRequestDepth, Values: cfg.MaxRequestValues},
			MaxUploadBytes:         cfg.MaxUploadBytes,
			MaxUploadFiles:         cfg.MaxUploadFiles,
			DiskBudget:             disk,
			KeepAlive:              cfg.KeepAlive,
			WriteTimeout:           cfg.WriteTimeout,
			BatchLimit:             cfg.BatchLimit,
			PersistedMaxAge:        cfg.PersistedQueryMaxAge,
			MaxOperationsPerSocket: cfg.MaxSubscriptionsPerSocket,
			SubscriberBuffer:       cfg.SubscriberBuffer,
			Share:                  share,
			// The subscription resolvers tell the transports, through the feed, why a stream ended
			// and where each event leaves it.
			Track: func(ctx context.Context) (context.Context, transport.Feed) { return graph.Track(ctx) },
		},
		Introspection: cfg.Introspection,
		IDE:           cfg.IDE,
		BodyTimeout:   cfg.BodyTimeout,
		Limits: oplimit.Limits{
			Tokens: cfg.MaxTokens, Depth: cfg.MaxDepth, Aliases: cfg.MaxAliases, RootFields: cfg.MaxRootFields,
			Cost: cfg.MaxCost, ResponseBytes: cfg.MaxResponseBytes,
		},
	}
}

// NewLogger writes the gateway's log lines to w in format (config.LogText or config.LogJSON),
// each line logged with a request's context carrying its trace and span ids.
func NewLogger(format string, w io.Writer) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(w, nil)
	if format == config.LogJSON {
		h = slog.NewJSONHandler(w, nil)
	}
	return slog.New(tracing.LogHandler(h))
}

// version is the module version the binary was built from, "(devel)" for a local build.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return info.Main.Version
	}
	return "(devel)"
}

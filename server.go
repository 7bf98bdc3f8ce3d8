// Command gateway is the Advisor GraphQL gateway. With no configuration it runs against an
// embedded sandbox of the Advisor service; `gateway sandbox` serves that sandbox alone.
package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/graph"
	"github.com/advisorhq/gateway/graph/generated"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/assistant"
	"github.com/advisorhq/gateway/internal/assistantpage"
	"github.com/advisorhq/gateway/internal/bulk"
	"github.com/advisorhq/gateway/internal/bulkcli"
	"github.com/advisorhq/gateway/internal/bulkprogress"
	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/config"
	"github.com/advisorhq/gateway/internal/connlimit"
	"github.com/advisorhq/gateway/internal/diskbudget"
	"github.com/advisorhq/gateway/internal/eventhub"
	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/family"
	"github.com/advisorhq/gateway/internal/familypage"
	"github.com/advisorhq/gateway/internal/httpserver"
	"github.com/advisorhq/gateway/internal/loglevel"
	"github.com/advisorhq/gateway/internal/metrics"
	"github.com/advisorhq/gateway/internal/oplimit"
	"github.com/advisorhq/gateway/internal/persisted"
	"github.com/advisorhq/gateway/internal/ratelimit"
	"github.com/advisorhq/gateway/internal/redisconn"
	"github.com/advisorhq/gateway/internal/referral"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sandbox/sftpd"
	"github.com/advisorhq/gateway/internal/sftpupload"
	"github.com/advisorhq/gateway/internal/tenant"
	"github.com/advisorhq/gateway/internal/tracing"
	"github.com/advisorhq/gateway/internal/transport"
	"github.com/advisorhq/gateway/internal/vault"
	"github.com/advisorhq/gateway/internal/webhook"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// run starts what args ask for and serves until ctx ends. Configuration comes from args and
// getenv only, so tests run the real thing on 127.0.0.1:0 and read its address from stdout.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "sandbox" {
		return runSandbox(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "bulk" {
		return bulkcli.Run(ctx, args[1:], getenv, stdout, stderr)
	}
	if len(args) > 0 {
		return fmt.Errorf("unknown command %q: run with no arguments for the gateway, or \"sandbox\" or \"bulk\"", args[0])
	}
	return runGateway(ctx, getenv, stdout, stderr, nil)
}

func runSandbox(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "enroll" {
		return runEnroll(args[1:], stdout, stderr)
	}
	cfg, err := sandbox.ParseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	cfg.Options.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	sb, err := sandbox.New(cfg.Options)
	if err != nil {
		return fmt.Errorf("start the sandbox: %w", err)
	}
	defer sb.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on -addr %s: %w", cfg.Addr, err)
	}
	// A credential set in the environment is the user's secret: say where it is, not what.
	token, creds := sandbox.DefaultAccessToken, sandbox.DefaultBasicCredentials
	if cfg.TokenFromEnv {
		token = "$SANDBOX_ACCESS_TOKEN"
	}
	if cfg.CredentialsFromEnv {
		creds = "$SANDBOX_BASIC_CREDENTIALS"
	}
	sftpLogin := "user and password " + sandbox.DefaultSFTPCredentials
	if cfg.SFTPCredentialsFromEnv {
		sftpLogin = "user and password $SANDBOX_SFTP_CREDENTIALS"
	}
	referralLogin := "x-api-key " + sandbox.DefaultReferralAPIKey + ", signing secret " + sandbox.DefaultReferralSecret
	if cfg.ReferralFromEnv {
		referralLogin = "x-api-key $SANDBOX_REFERRAL_API_KEY, signing secret $SANDBOX_REFERRAL_SECRET"
	}
	sftpSrv, sftpLn, err := listenSFTP(sb, cfg.SFTPAddr, cfg.SFTPAddr != sandbox.DefaultSFTPAddr)
	if err != nil {
		_ = ln.Close()
		return err
	}
	sessions, sessionLn, err := listenSessionHost(sb, cfg.SessionEnv, cfg.SessionAddr, cfg.SessionAddr != sandbox.DefaultSessionAddr)
	if err != nil {
		_ = ln.Close()
		_ = sftpLn.Close()
		return err
	}
	fmt.Fprintf(stdout, `Advisor sandbox serving http://%[1]s
  v2 paths: Authorization: Bearer %[2]s
  v1 paths: Basic credentials %[3]s
  try:      curl -H "Authorization: Bearer %[2]s" http://%[1]s/v2/top-accounts/
  bulk:     sftp://%[4]s (%[5]s), host key %[6]s
  referral: POST /v1/refer/{%[7]s} (%[8]s)
  sessions: https://%[9]s (mutual TLS, HTTP/2; %[10]s certificates: go run . sandbox enroll -file-dir %[11]s -env %[10]s -out DIR)
  firms:    %[12]s with the credentials above; %[13]s with Bearer %[14]s, Basic and SFTP %[15]s, webhook key %[16]s
`, ln.Addr(), token, creds, sftpLn.Addr(), sftpLogin, sftpSrv.Fingerprint(), strings.Join(cfg.Options.Partners, ","), referralLogin,
		sessionLn.Addr(), sessions.Env, sessions.Dir,
		sandbox.DemoFirmID, sandbox.SecondFirmID, sandbox.SecondAccessToken, sandbox.SecondBasicCredentials, sandbox.SecondWebhookKey)
	return serveSandbox(ctx, sb, ln, sftpSrv, sftpLn, sessions, sessionLn)
}

// runEnroll issues a client certificate of the sandbox's session host (`sandbox enroll`).
func runEnroll(args []string, stdout, stderr io.Writer) error {
	cfg, err := sandbox.ParseEnrollFlags(args, stderr)
	if err != nil {
		return err
	}
	now := time.Now()
	e, err := sandbox.Enroll(cfg.FileDir, cfg.Env, cfg.Name, now.Add(-time.Minute), now.Add(cfg.TTL))
	if err != nil {
		return fmt.Errorf("sandbox enroll: %w", err)
	}
	if err := sandbox.WriteEnrollment(e, cfg.Out); err != nil {
		return fmt.Errorf("sandbox enroll: %w", err)
	}
	fmt.Fprintf(stdout, "Enrolled %q for %s until %s: %s/client.crt, client.key and the host's CA ca.crt\n",
		cfg.Name, cfg.Env, e.NotAfter.UTC().Format(time.RFC3339), cfg.Out)
	return nil
}

// listenSessionHost makes the sandbox's session host of env and its listener: on addr, or,
// unless exact, on a free loopback port when addr is taken.
func listenSessionHost(sb *sandbox.Sandbox, env, addr string, exact bool) (*sandbox.SessionHost, net.Listener, error) {
	h, err := sb.SessionHost(env)
	if err != nil {
		return nil, nil, fmt.Errorf("start the sandbox's session host: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && !exact {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listen on -session-addr %s: %w", addr, err)
	}
	return h, ln, nil
}

// listenSFTP makes the sandbox's SFTP server and its listener: on addr, or, unless exact (an
// address the user asked for), on a free loopback port when addr is taken.
func listenSFTP(sb *sandbox.Sandbox, addr string, exact bool) (*sftpd.Server, net.Listener, error) {
	srv, err := sb.SFTP()
	if err != nil {
		return nil, nil, fmt.Errorf("start the sandbox's SFTP server: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && !exact {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listen on -sftp-addr %s: %w", addr, err)
	}
	return srv, ln, nil
}

// serveSandbox serves the sandbox's HTTP interface and its SFTP server until ctx ends, and
// returns once both have stopped.
func serveSandbox(ctx context.Context, sb *sandbox.Sandbox, ln net.Listener, sftpSrv *sftpd.Server, sftpLn net.Listener,
	sessions *sandbox.SessionHost, sessionLn net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sftpDone, sessionsDone := make(chan error, 1), make(chan error, 1)
	go func() { sftpDone <- sftpSrv.Serve(ctx, sftpLn) }()
	go func() { sessionsDone <- sessions.Serve(ctx, sessionLn) }()
	err := serve(ctx, sandboxServer(sb), ln)
	cancel()
	if serr := <-sftpDone; serr != nil && err == nil {
		err = fmt.Errorf("serve SFTP: %w", serr)
	}
	if serr := <-sessionsDone; serr != nil && err == nil {
		err = fmt.Errorf("serve the session host: %w", serr)
	}
	return err
}

// runGateway serves the gateway. Its spans go to tp, or, when tp is nil, where the OTEL_*
// settings say (tests pass an in-memory one).
func runGateway(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer, tp trace.TracerProvider) error {
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg.LogFormat, stderr)
	if tp == nil {
		var shutdown func(context.Context) error
		tp, shutdown, err = tracing.Setup(ctx, getenv)
		if err != nil {
			return err
		}
		// Deferred first, so it runs last: the spans of the draining requests are flushed too.
		defer func() {
			// Not ctx, which has ended by now.
			flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := shutdown(flushCtx); err != nil {
				log.Warn("flush the last spans", "error", err)
			}
		}()
	}
	m := metrics.New()

	// Listen first: the embedded sandbox needs the gateway's address to send its webhooks to.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on ADDR %s: %w", cfg.Addr, err)
	}
	defer ln.Close()
	base := "http://" + displayAddr(ln.Addr())

	events, bulkProgress, redisClient, closeEvents, err := openEventLog(cfg, tp)
	if err != nil {
		return err
	}
	defer closeEvents()
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
	// The hub outlives the server's draining (it is stopped by this defer, not by ctx), so a
	// subscriber sees its socket close with "reconnect" rather than an error from the hub.
	hubCtx, stopHub := context.WithCancel(context.WithoutCancel(ctx))
	hubDone := make(chan struct{})
	go func() { defer close(hubDone); hub.Run(hubCtx) }()
	defer func() { stopHub(); <-hubDone }()

	upstream := advisor.Options{
		BaseURL:       cfg.AdvisorBaseURL,
		Timeout:       cfg.UpstreamTimeout,
		MaxConcurrent: cfg.UpstreamConnections,
		Observe:       m.ObserveUpstream,
		Tracer:        tp,
	}
	sandboxURL := ""
	var embedded *embeddedSandbox
	if cfg.Sandboxed() {
		// The gateway serves the sandbox's firms, each with a webhook key made for this run
		// (the first firm's is WEBHOOK_API_KEY when set, so deliveries can be played by hand).
		firms := sandbox.DefaultFirms()
		for i := range firms {
			firms[i].WebhookKey = randomKey()
		}
		if cfg.WebhookAPIKey != "" {
			firms[0].WebhookKey = cfg.WebhookAPIKey
		}
		// The gateway's own pages (the pop-out assistant) may embed the sandbox's chat.
		origins := append(slices.Clone(sandbox.DefaultEmbedOrigins), base, loopbackURL(ln.Addr()))
		sb, err := startEmbeddedSandbox(ctx, log, loopbackURL(ln.Addr())+"/webhooks", firms, origins)
		if err != nil {
			return err
		}
		// Deferred before the gateway serves, so the sandbox stops after the gateway has drained.
		defer sb.stop()
		sbBase := sb.url
		sandboxURL, embedded = sbBase, sb
		upstream.BaseURL = sbBase
		if cfg.AssistantEmbedURL == "" {
			cfg.AssistantEmbedURL = sbBase
		}
		cfg.Firms = sandboxFirms(firms)
		// Bulk files go to the sandbox's own SFTP server, whose host key is trusted because the
		// gateway made it; nothing else is ever trusted without configuration.
		user, pass, _ := strings.Cut(sandbox.DefaultSFTPCredentials, ":")
		cfg.Bulk = config.BulkSFTP{Addr: sb.sftpAddr, User: user, Password: pass, Dir: config.DefaultBulkDir, HostKeyFingerprint: sb.fingerprint}
		if cfg.ReferralURL == "" {
			// Referrals go to the sandbox's referral endpoint with its demo key and secret.
			cfg.ReferralURL = sbBase
			cfg.ReferralAPIKey, cfg.ReferralSigningSecret = sandbox.DefaultReferralAPIKey, sandbox.DefaultReferralSecret
		}
		fmt.Fprintf(stdout, "No ADVISOR_BASE_URL: the upstream is the embedded Advisor sandbox at %s (firms %s and %s)\n",
			sbBase, sandbox.DemoFirmID, sandbox.SecondFirmID)
		fmt.Fprintf(stdout, "  its bulk files: sftp://%s@%s (password %s, host key %s)\n", user, sb.sftpAddr, pass, sb.fingerprint)
		fmt.Fprintf(stdout, "  play live events: curl -H \"Authorization: Bearer %s\" -H \"Content-Type: application/json\" -d '{\"scenario\":\"onboarding\"}' %s/sandbox/events\n",
			sandbox.DefaultAccessToken, sbBase)
		if cfg.ReferralURL == sbBase {
			fmt.Fprintf(stdout, "  its referral partners (referClient): %s\n", strings.Join(sandbox.DefaultReferralPartners, ", "))
		}
	}
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
	defer callers.close()
	callers.describe(stdout, sandboxURL)
	sessionHost, err := openSessionHost(cfg.AssistantSession, embedded, tp)
	if err != nil {
		return err
	}
	var sessionReady []httpserver.ReadyCheck
	if sessionHost != nil {
		defer sessionHost.Close()
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
		// Deferred before the gateway serves: loads under way end when it has drained.
		defer bulkDeps.Loads.Close()
	}
	referrals, err := openReferral(cfg, tp)
	if err != nil {
		return err
	}
	schema := generated.NewExecutableSchema(generated.Config{
		Resolvers: &graph.Resolver{Version: version(), Family: fam, Vault: docs, Hub: hub, Bulk: bulkDeps, Referral: referrals,
			Assistant: &assistant.Sessions{Client: sessionHost}, Access: access},
	})
	var assistantPage http.Handler
	if cfg.AssistantEmbedURL != "" {
		page, err := assistantpage.New(cfg.AssistantEmbedURL)
		if err != nil {
			return fmt.Errorf("ASSISTANT_EMBED_URL: %w", err)
		}
		assistantPage = page
	}
	handler := httpserver.New(httpserver.Deps{
		Assistant: assistantPage,
		Tracer:    tp,
		Log:       log,
		Schema:    schema,
		Metrics:   m,
		PerRequest: func(ctx context.Context) context.Context {
			return advisor.WithBudget(advisor.WithCache(ctx), cfg.UpstreamBudget)
		},
		Webhooks: &webhook.Receiver{Log: events, Keys: webhookKeys(firms), Logger: log.With("component", "webhooks"), Observe: m.ObserveWebhook},
		// Every caller is admitted into the firm of its token, or refused before any upstream call.
		Authenticate: access.Authenticate(callers.authenticate),
		Share:        graph.ShareEvents(hub),
		DiskBudget:   disk,
		Persisted:    persistedOps,
		FamilyPage:   familypage.New("/graphql", ideURL(cfg.IDE)),
		RateLimits:   rateLimits,
		Ready: append([]httpserver.ReadyCheck{
			{Name: "advisor", Check: pingFirms(api, firms), Advisory: true},
			{Name: "events", Check: hub.Ready},
		}, append(callers.ready, sessionReady...)...),
		Config: httpserver.Config{
			AllowedOrigins:  cfg.AllowedOrigins,
			MaxRequestBytes: cfg.MaxRequestBytes,
			BodyBounds:      transport.BodyBounds{Depth: cfg.MaxRequestDepth, Values: cfg.MaxRequestValues},
			MaxUploadBytes:  cfg.MaxUploadBytes,
			MaxUploadFiles:  cfg.MaxUploadFiles,
			Introspection:   cfg.Introspection,
			IDE:             cfg.IDE,
			KeepAlive:       cfg.KeepAlive,
			BodyTimeout:     cfg.BodyTimeout,
			WriteTimeout:    cfg.WriteTimeout,
			BatchLimit:      cfg.BatchLimit,
			PersistedMaxAge: cfg.PersistedQueryMaxAge,

			MaxSubscriptionsPerSocket: cfg.MaxSubscriptionsPerSocket,
			SubscriberBuffer:          cfg.SubscriberBuffer,
			UploadDiskBudget:          cfg.UploadDiskBudget,
			Limits: oplimit.Limits{
				Tokens: cfg.MaxTokens, Depth: cfg.MaxDepth, Aliases: cfg.MaxAliases, RootFields: cfg.MaxRootFields,
				Cost: cfg.MaxCost, ResponseBytes: cfg.MaxResponseBytes,
			},
		},
	})

	// Every subscriber counts, however many share one execution of their subscription.
	m.Gauge("advisor_event_subscribers", "Open subscriptions on this replica.", func() float64 { return float64(handler.Subscriptions()) })
	m.Gauge("advisor_subscription_executions", "Executions serving the open subscriptions: subscribers of the same operation, variables and caller share one.",
		func() float64 { return float64(handler.Executions()) })

	// Every address the gateway answers at, so that nobody has to look them up.
	fmt.Fprintf(stdout, "Advisor GraphQL gateway serving %[1]s\n  GraphQL:  %[1]s/graphql\n  Webhooks: %[1]s/webhooks\n", base)
	if cfg.IDE {
		fmt.Fprintf(stdout, "  IDE:      %s/\n", base)
	}
	if cfg.Introspection {
		fmt.Fprintf(stdout, "  Schema:   %s/graphql/schema.graphql\n", base)
	}
	if embedded != nil && embedded.demoWID != "" {
		fmt.Fprintf(stdout, "  Family:   %s/family/%s (the demo Hartwell family, drawn)\n", base, embedded.demoWID)
	} else {
		fmt.Fprintf(stdout, "  Family:   %s/family/{wid} (a top account's family, drawn)\n", base)
	}
	if assistantPage != nil {
		fmt.Fprintf(stdout, "  Assistant: %[1]s/assistant (opened by %[1]s/assistant/open.js; try %[1]s/assistant/demo)\n", base)
	}
	fmt.Fprintf(stdout, "  Health:   %[1]s/healthz\n  Ready:    %[1]s/readyz\n  Metrics:  %[1]s/metrics\n", base)
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    config.DefaultMaxHeaderBytes,
	}
	srv.RegisterOnShutdown(handler.CloseStreams)
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
	err = serve(ctx, srv, connlimit.Listen(ln, maxConns))
	waitCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if werr := handler.WaitStreams(waitCtx); werr != nil {
		log.Warn("WebSockets still open after shutting down", "error", werr)
	}
	// Only a shutdown that was asked for has drained; a failure to serve is returned.
	if !noticeShutdown() {
		log.Info("stopped", "draining", time.Since(<-shutdownBegan))
	}
	return err
}

// openEventLog opens the event store: the event log and the progress of bulk loads, in Redis
// with REDIS_URL, in process without. It returns the Redis client too (nil without one), and a
// function that closes them. With tp, every Redis command made for a request is a span of its
// trace.
func openEventLog(cfg config.Gateway, tp trace.TracerProvider) (eventlog.Log, bulkprogress.Store, redis.UniversalClient, func(), error) {
	if cfg.RedisURL == "" {
		return eventlog.NewMemory(cfg.EventHistory, cfg.DedupWindow, nil), bulkprogress.NewMemory(time.Now), nil, func() {}, nil
	}
	target, err := redisconn.Parse(cfg.RedisURL, cfg.RedisCluster)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	// A stalled Redis fails requests within eventlog.CallTimeout instead of hanging them.
	client := target.Open(eventlog.CallTimeout)
	if tp != nil {
		// Children only: the event hub's reads, which never stop, would each be a trace. No
		// statement: a command's arguments are the events' bodies.
		err := redisotel.InstrumentTracing(client, redisotel.WithTracerProvider(tracing.ChildrenOnly(tp)),
			redisotel.WithDBStatement(false), redisotel.WithCallerEnabled(false))
		if err != nil {
			_ = client.Close()
			return nil, nil, nil, nil, fmt.Errorf("trace Redis commands: %w", err)
		}
	}
	return eventlog.NewRedis(client, cfg.RedisKeyPrefix, cfg.EventHistory, cfg.DedupWindow),
		bulkprogress.NewRedis(client, cfg.RedisKeyPrefix), client, func() { _ = client.Close() }, nil
}

// ideURL is where the family page links to the IDE: its path, or none when it is off.
func ideURL(on bool) string {
	if on {
		return "/"
	}
	return ""
}

// openRateLimits makes what counts each caller's operations against the RATE_LIMIT* budgets:
// in Redis when there is one, so that replicas share a caller's budget, in process otherwise.
// Nil when no budget is set.
func openRateLimits(cfg config.Gateway, client redis.UniversalClient, log *slog.Logger) *ratelimit.Extension {
	limits := ratelimit.Limits{
		Operations:    ratelimit.Limit{Rate: cfg.RateLimit, Burst: cfg.RateLimitBurst, Period: time.Second},
		Subscriptions: ratelimit.Limit{Rate: cfg.RateLimitSubscriptions, Burst: cfg.RateLimitSubscriptions, Period: time.Minute},
		Cost:          ratelimit.Limit{Rate: cfg.RateLimitCost, Burst: cfg.RateLimitCost, Period: time.Minute},
	}
	if !limits.On() {
		if !cfg.Sandboxed() {
			log.Warn("no rate limits: any caller may send as many operations as the operation limits allow; set RATE_LIMIT, RATE_LIMIT_SUBSCRIPTIONS and RATE_LIMIT_COST")
		}
		return nil
	}
	var limiter ratelimit.Limiter = ratelimit.NewMemory(nil)
	if client != nil {
		limiter = ratelimit.NewRedis(client, cfg.RedisKeyPrefix)
	}
	return ratelimit.New(ratelimit.Config{Limiter: limiter, Limits: limits, Cost: oplimit.Cost, Log: log})
}

// memoryPersistedBytes bounds the persisted queries one replica keeps without Redis.
const memoryPersistedBytes = 32 << 20

// openPersisted makes what serves operations named by id: automatic persisted queries, kept in
// Redis when there is one so replicas share them, and the trusted documents of
// PERSISTED_OPERATIONS_FILE. Against the embedded sandbox, where the IDE is a developer's, the
// IDE's requests (which say so in a header) run whatever PERSISTED_OPERATIONS_ONLY says, so
// the same settings can be tried in development and deployed.
func openPersisted(cfg config.Gateway, client redis.UniversalClient, log *slog.Logger, observe func(string)) (*persisted.Extension, error) {
	pc := persisted.Config{Only: cfg.PersistedOperationsOnly, AllowIntrospection: cfg.Introspection, Log: log, Observe: observe}
	if cfg.PersistedQueries {
		pc.Store = persisted.NewMemory(memoryPersistedBytes)
		if client != nil {
			pc.Store = persisted.NewRedis(client, cfg.RedisKeyPrefix, cfg.PersistedQueryTTL, persisted.MaxBytes(cfg.PersistedQueryMaxBytes))
			// Quotas shared by the replicas, as the documents are.
			pc.Quota = ratelimit.NewRedis(client, cfg.RedisKeyPrefix)
		}
		pc.CallerDocuments, pc.CallerBytes = cfg.PersistedQueryCallerDocuments, int(cfg.PersistedQueryCallerBytes)
	}
	if cfg.PersistedOperationsFile != "" {
		m, err := persisted.LoadManifest(cfg.PersistedOperationsFile)
		if err != nil {
			return nil, fmt.Errorf("PERSISTED_OPERATIONS_FILE: %w", err)
		}
		pc.Manifest = m
		log.Info("trusted documents loaded", "documents", m.Len(), "only", cfg.PersistedOperationsOnly)
	}
	if cfg.Sandboxed() && cfg.IDE {
		pc.Exempt = httpserver.FromIDE
	}
	return persisted.New(pc), nil
}

// newLogger writes the gateway's log lines to w in format (config.LogText or config.LogJSON),
// each line logged with a request's context carrying its trace and span ids.
func newLogger(format string, w io.Writer) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(w, nil)
	if format == config.LogJSON {
		h = slog.NewJSONHandler(w, nil)
	}
	return slog.New(tracing.LogHandler(h))
}

// callerAuth is how the gateway authenticates its callers, as openCallerAuth made it.
type callerAuth struct {
	// authenticate is nil with AUTH_DISABLED: something in front of the gateway authenticates.
	authenticate func(context.Context, http.Header) (context.Context, error)
	// ready asks whether tokens can be verified: the JWKS has been fetched.
	ready     []httpserver.ReadyCheck
	anonymous *callerauth.Caller
	close     func()
}

// openCallerAuth makes the caller authentication cfg asks for: tokens of AUTH_JWKS_URL's
// identity provider; with the embedded sandbox and no AUTH_JWKS_URL, tokens of the sandbox's,
// and a request without a token acting as the demo advisor so the IDE works with no setup;
// nothing with AUTH_DISABLED.
func openCallerAuth(ctx context.Context, cfg config.Auth, sandboxURL string, log *slog.Logger) (callerAuth, error) {
	if cfg.Disabled {
		log.Warn("AUTH_DISABLED=true: the gateway authenticates no caller; it must sit behind something that does")
		return callerAuth{close: func() {}}, nil
	}
	vcfg := callerauth.Config{
		JWKSURL: cfg.JWKSURL, Issuer: cfg.Issuer, Audience: cfg.Audience,
		AdvisorClaim: cfg.AdvisorClaim, FirmClaim: cfg.FirmClaim,
	}
	var anonymous *callerauth.Caller
	if cfg.JWKSURL == "" && sandboxURL != "" {
		vcfg.JWKSURL, vcfg.Issuer, vcfg.Audience = sandboxURL+"/sandbox/jwks.json", sandbox.TokenIssuer, sandbox.TokenAudience
		anonymous = &callerauth.Caller{AdvisorID: sandbox.DefaultAdvisorID, FirmID: sandbox.DemoFirmID, Subject: sandbox.DefaultAdvisorID}
	}
	v, err := callerauth.New(ctx, vcfg)
	if err != nil {
		return callerAuth{}, fmt.Errorf("caller authentication: %w", err)
	}
	a := &callerauth.Authenticator{Verifier: v, Anonymous: anonymous, Log: log}
	return callerAuth{
		authenticate: a.Authenticate,
		ready:        []httpserver.ReadyCheck{{Name: "auth", Check: v.Ready}},
		anonymous:    anonymous,
		close:        func() { _ = v.Close() },
	}, nil
}

// describe prints how callers authenticate, with the sandbox's token command when it is the
// identity provider.
func (c callerAuth) describe(stdout io.Writer, sandboxURL string) {
	if c.anonymous == nil {
		return
	}
	fmt.Fprintf(stdout, "  callers:  without a token, the demo advisor %s of firm %s; a token for another:\n", c.anonymous.AdvisorID, c.anonymous.FirmID)
	fmt.Fprintf(stdout, "            curl -H \"Authorization: Bearer %s\" -H \"Content-Type: application/json\" -d '{\"advisor\":\"adv-002\",\"firm\":\"firm-001\"}' %s/sandbox/token\n",
		sandbox.DefaultAccessToken, sandboxURL)
	fmt.Fprintf(stdout, "            a caller of the second firm, which sees its own data only:\n")
	fmt.Fprintf(stdout, "            curl -H \"Authorization: Bearer %s\" -H \"Content-Type: application/json\" -d '{\"advisor\":\"%s\",\"firm\":\"%s\"}' %s/sandbox/token\n",
		sandbox.SecondAccessToken, sandbox.SecondAdvisorID, sandbox.SecondFirmID, sandboxURL)
}

// openBulk makes what the bulk fields need: loads run in the background when there is an SFTP
// server to send them to (the embedded sandbox's, or BULK_SFTP_*), none otherwise.
func openBulk(cfg config.Gateway, firms *tenant.Directory, api *advisor.Client, progress bulkprogress.Store, disk *diskbudget.Budget, log *slog.Logger) (graph.Bulk, error) {
	b := graph.Bulk{Progress: progress, Existing: func() bulk.Existing { return bulk.NewRecords(api) }}
	if !cfg.Bulk.Configured() {
		return b, nil
	}
	// Each firm's files go up with its own login, so the service files them under that firm.
	uploaders := bulk.PerFirm{}
	for _, f := range firms.Firms() {
		up, err := sftpupload.New(sftpupload.Config{
			Addr: cfg.Bulk.Addr, User: f.SFTP.User, Password: f.SFTP.Password, KeyFile: f.SFTP.KeyFile,
			Dir: cfg.Bulk.Dir, KnownHostsFile: cfg.Bulk.KnownHosts, HostKeyFingerprint: cfg.Bulk.HostKeyFingerprint,
		}, nil)
		if err != nil {
			return b, fmt.Errorf("bulk uploads of %s: %w", f, err)
		}
		uploaders[f.ID] = up
	}
	b.Loads = bulk.NewLoads(bulk.LoadsConfig{
		Uploader: bulk.PerFirm(uploaders), Progress: progress, Existing: b.Existing, DiskBudget: disk, Log: log.With("component", "bulk"),
	})
	return b, nil
}

// connectionLimit is how many client connections the gateway holds at once when MAX_CONNECTIONS
// is not set: what the process's open-file limit leaves after a reserve for the upstream, Redis,
// uploads' temporary files and the embedded sandbox. Beyond it, new connections wait in the
// listen queue instead of failing every accept (health checks and webhooks included) with
// "too many open files".
func connectionLimit() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur > 1<<20 {
		return 1 << 16
	}
	if lim.Cur > 2048 {
		return int(lim.Cur) - 1024
	}
	return int(lim.Cur) / 2
}

// sandboxFirms are the embedded sandbox's firms as the gateway serves them: the same
// credentials, on both sides of the loopback.
func sandboxFirms(firms []sandbox.Firm) []tenant.Firm {
	out := make([]tenant.Firm, len(firms))
	for i, f := range firms {
		user, pass, _ := strings.Cut(f.SFTPCredentials, ":")
		out[i] = tenant.Firm{
			ID: f.ID, AccessToken: f.AccessToken, BasicCredentials: f.BasicCredentials, WebhookKey: f.WebhookKey,
			SFTP: tenant.SFTPLogin{User: user, Password: pass},
		}
	}
	return out
}

// webhookKeys are the keys the webhook receiver tells the firms' deliveries apart by.
func webhookKeys(firms *tenant.Directory) []webhook.Key {
	var keys []webhook.Key
	for _, f := range firms.Firms() {
		keys = append(keys, webhook.Key{Firm: f.ID, Key: f.WebhookKey})
	}
	return keys
}

// pingFirms checks that the service answers each firm's credentials: a firm whose token was
// revoked shows in readiness by its id.
func pingFirms(api *advisor.Client, firms *tenant.Directory) func(context.Context) error {
	return func(ctx context.Context) error {
		var errs []error
		for _, f := range firms.Firms() {
			if err := api.Ping(tenant.WithFirm(ctx, f)); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", f, err))
			}
		}
		return errors.Join(errs...)
	}
}

// randomKey is a webhook key for the embedded sandbox, which shares it with the gateway.
func randomKey() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	return hex.EncodeToString(b)
}

// loopbackURL is the gateway's address as the embedded sandbox, on this machine, reaches it.
func loopbackURL(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return "http://" + a.String()
	}
	return "http://" + net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

// openReferral is the referral service's client, or, without REFERRAL_URL, a service that
// answers that referrals are off.
func openReferral(cfg config.Gateway, tp trace.TracerProvider) (*referral.Service, error) {
	if cfg.ReferralURL == "" {
		return referral.NewService(nil), nil
	}
	client, err := referral.New(referral.Options{
		URL:     cfg.ReferralURL,
		APIKey:  cfg.ReferralAPIKey,
		Sign:    referral.HMACSigner(cfg.ReferralSigningSecret),
		Timeout: cfg.UpstreamTimeout,
		Tracer:  tp,
	})
	if err != nil {
		return nil, fmt.Errorf("REFERRAL_URL: %w", err)
	}
	return referral.NewService(client), nil
}

// openSessionHost is the client of the session host the assistant's tokens are minted at: the
// embedded sandbox's, with the certificate the gateway enrolled there, or ASSISTANT_SESSION_URL's
// with the files of ASSISTANT_CLIENT_CERT, ASSISTANT_CLIENT_KEY and ASSISTANT_SERVER_CA. Nil when
// there is none: createAssistantSession then says which settings to set.
func openSessionHost(cfg config.AssistantSession, sb *embeddedSandbox, tp trace.TracerProvider) (*assistant.Client, error) {
	if sb != nil {
		cert, err := sb.enrollment.TLSCertificate()
		if err != nil {
			return nil, fmt.Errorf("the embedded sandbox's enrollment: %w", err)
		}
		return assistant.New(assistant.Options{URL: sb.sessionURL, Certificate: cert, ServerCAs: sb.enrollment.ServerCAs(), Tracer: tp})
	}
	if !cfg.Configured() {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		// The error names the files, never their contents.
		return nil, fmt.Errorf("ASSISTANT_CLIENT_CERT and ASSISTANT_CLIENT_KEY: %w", err)
	}
	var pool *x509.CertPool
	if cfg.ServerCAFile != "" {
		pemBytes, err := os.ReadFile(cfg.ServerCAFile)
		if err != nil {
			return nil, fmt.Errorf("ASSISTANT_SERVER_CA: %w", err)
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("ASSISTANT_SERVER_CA: %s holds no PEM certificate", cfg.ServerCAFile)
		}
	}
	c, err := assistant.New(assistant.Options{URL: cfg.URL, Certificate: cert, ServerCAs: pool, Tracer: tp})
	if err != nil {
		return nil, fmt.Errorf("ASSISTANT_SESSION_URL: %w", err)
	}
	return c, nil
}

// embeddedSandbox is the sandbox the gateway runs when it has no ADVISOR_BASE_URL.
type embeddedSandbox struct {
	url, sftpAddr, fingerprint string
	// demoWID is the demo family's wid, which the start-up links the family page to.
	demoWID string
	// sessionURL is its session host, and enrollment the gateway's certificate for it.
	sessionURL string
	enrollment sandbox.Enrollment
	stop       func()
}

// startEmbeddedSandbox serves a demo sandbox on a free loopback port, sending its webhook events
// to the gateway, and its SFTP server for bulk files.
func startEmbeddedSandbox(ctx context.Context, log *slog.Logger, webhookURL string, firms []sandbox.Firm, embedOrigins []string) (*embeddedSandbox, error) {
	sb, err := sandbox.New(sandbox.Options{
		Firms:        firms,
		EmbedOrigins: embedOrigins,
		// Its request lines at debug: they would bury the gateway's own, which say the same.
		Logger:     slog.New(loglevel.Demote(log.Handler())).With("component", "sandbox"),
		WebhookURL: webhookURL,
	})
	if err != nil {
		return nil, fmt.Errorf("start the embedded sandbox: %w", err)
	}
	// The sandbox's usual addresses, so the README's curl and sftp lines work as written; any
	// free port when something else holds them (another gateway, or tests running in parallel).
	ln, err := net.Listen("tcp", sandbox.DefaultAddr)
	if err != nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		_ = sb.Close()
		return nil, fmt.Errorf("listen for the embedded sandbox: %w", err)
	}
	sftpSrv, sftpLn, err := listenSFTP(sb, sandbox.DefaultSFTPAddr, false)
	if err != nil {
		_ = ln.Close()
		_ = sb.Close()
		return nil, fmt.Errorf("the embedded sandbox: %w", err)
	}
	sessions, sessionLn, err := listenSessionHost(sb, sandbox.EnvUAT, sandbox.DefaultSessionAddr, false)
	var enrollment sandbox.Enrollment
	if err == nil {
		// The gateway enrols itself, as an integrator does once at the enrollment host.
		enrollment, err = sessions.Enroll("advisor-gateway")
		if err != nil {
			_ = sessionLn.Close()
		}
	}
	if err != nil {
		_ = ln.Close()
		_ = sftpLn.Close()
		_ = sb.Close()
		return nil, fmt.Errorf("the embedded sandbox: %w", err)
	}
	// Not the signal's context: the gateway drains its in-flight requests after the signal, and
	// they may still need the sandbox; the caller stops it (stop) once the gateway has stopped.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- serveSandbox(ctx, sb, ln, sftpSrv, sftpLn, sessions, sessionLn) }()
	demoWID, _ := sb.TopAccountWID(sandbox.DemoFamilyExternalID)
	return &embeddedSandbox{
		demoWID:     demoWID,
		url:         "http://" + ln.Addr().String(),
		sftpAddr:    sftpLn.Addr().String(),
		fingerprint: sftpSrv.Fingerprint(),
		sessionURL:  "https://" + sessionLn.Addr().String(),
		enrollment:  enrollment,
		stop: func() {
			cancel()
			<-done
			_ = sb.Close()
		},
	}, nil
}

// sandboxServer serves the sandbox. There is no read or write timeout: an upload of a large
// file takes as long as it takes, as it would at the real upload host.
func sandboxServer(sb *sandbox.Sandbox) *http.Server {
	return &http.Server{Handler: sb, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
}

// serve runs srv on ln until ctx ends, then gives in-flight requests a few seconds to finish.
func serve(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// displayAddr shows a wildcard listen address as localhost, which is where a browser on this
// machine reaches it.
func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("localhost", fmt.Sprint(tcp.Port))
}

// version is the module version the binary was built from, "(devel)" for a local build.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return info.Main.Version
	}
	return "(devel)"
}

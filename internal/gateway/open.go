package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"syscall"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/advisorhq/gateway/graph"

	"github.com/advisorhq/gateway/internal/advisor"
	"github.com/advisorhq/gateway/internal/assistant"
	"github.com/advisorhq/gateway/internal/bulk"
	"github.com/advisorhq/gateway/internal/bulkprogress"
	"github.com/advisorhq/gateway/internal/callerauth"
	"github.com/advisorhq/gateway/internal/config"
	"github.com/advisorhq/gateway/internal/diskbudget"
	"github.com/advisorhq/gateway/internal/eventlog"
	"github.com/advisorhq/gateway/internal/httpserver"
	"github.com/advisorhq/gateway/internal/oplimit"
	"github.com/advisorhq/gateway/internal/persisted"
	"github.com/advisorhq/gateway/internal/ratelimit"
	"github.com/advisorhq/gateway/internal/redisconn"
	"github.com/advisorhq/gateway/internal/referral"
	"github.com/advisorhq/gateway/internal/sandbox"
	"github.com/advisorhq/gateway/internal/sftpupload"
	"github.com/advisorhq/gateway/internal/tenant"
	"github.com/advisorhq/gateway/internal/tracing"
	"github.com/advisorhq/gateway/internal/webhook"
)

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
// identity provider: at base, the gateway's address, which serves the sandbox's /sandbox/token.
func (c callerAuth) describe(stdout io.Writer, base string) {
	if c.anonymous == nil {
		return
	}
	fmt.Fprintf(stdout, "  callers:  without a token, the demo advisor %s of firm %s; a token for another:\n", c.anonymous.AdvisorID, c.anonymous.FirmID)
	fmt.Fprintf(stdout, "            curl -fsS -H \"Authorization: Bearer %s\" -H \"Content-Type: application/json\" -d '{\"advisor\":\"adv-002\",\"firm\":\"firm-001\"}' %s/sandbox/token\n",
		sandbox.DefaultAccessToken, base)
	fmt.Fprintf(stdout, "            a caller of the second firm, which sees its own data only:\n")
	fmt.Fprintf(stdout, "            curl -fsS -H \"Authorization: Bearer %s\" -H \"Content-Type: application/json\" -d '{\"advisor\":\"%s\",\"firm\":\"%s\"}' %s/sandbox/token\n",
		sandbox.SecondAccessToken, sandbox.SecondAdvisorID, sandbox.SecondFirmID, base)
}

// openBulk makes what the bulk fields need: loads run in the background when there is an SFTP
// server to send them to (the embedded sandbox's, or BULK_SFTP_*), none otherwise.
func openBulk(cfg config.Gateway, firms *tenant.Directory, api *advisor.Client, progress bulkprogress.Store, disk *diskbudget.Budget, log *slog.Logger) (graph.Bulk, error) {
	b := graph.Bulk{Progress: progress, Existing: func(s bulk.Scope) bulk.Existing { return bulk.NewRecords(api, s) }}
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

// openReferral is the referral service's client (its calls carried by tr, nil for its own), or,
// without REFERRAL_URL, a service that answers that referrals are off.
func openReferral(cfg config.Gateway, tr http.RoundTripper, tp trace.TracerProvider) (*referral.Service, error) {
	if cfg.ReferralURL == "" {
		return referral.NewService(nil), nil
	}
	client, err := referral.New(referral.Options{
		URL:       cfg.ReferralURL,
		APIKey:    cfg.ReferralAPIKey,
		Sign:      referral.HMACSigner(cfg.ReferralSigningSecret),
		Timeout:   cfg.UpstreamTimeout,
		Transport: tr,
		Tracer:    tp,
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

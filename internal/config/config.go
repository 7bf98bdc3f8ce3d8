// Package config reads the gateway's settings. Each is declared once, in settings.go, with
// its default, its meaning and its parser: Load reads the settings through those declarations
// and Reference prints them as the configuration reference, so the two cannot disagree. An
// invalid setting stops start-up with a message that names it.
package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/advisorhq/gateway/internal/bytesize"
	"github.com/advisorhq/gateway/internal/redisconn"
	"github.com/advisorhq/gateway/internal/tenant"
)

// DefaultMaxHeaderBytes bounds a request's headers; it is not a setting.
const DefaultMaxHeaderBytes = 64 << 10

// The formats of the gateway's log lines (LOG_FORMAT).
const (
	LogText = "text"
	LogJSON = "json"
)

// Gateway is the gateway's configuration.
type Gateway struct {
	// Addr is the host:port the gateway listens on (ADDR).
	Addr string
	// AdvisorBaseURL is the Advisor service (ADVISOR_BASE_URL); empty runs the embedded sandbox.
	AdvisorBaseURL string
	// AdvisorFirm is the firm a one-firm gateway serves (ADVISOR_FIRM): the value of its
	// callers' firm claim, whose API user ADVISOR_ACCESS_TOKEN is.
	AdvisorFirm string
	// AdvisorAccessToken is the bearer token of the v2 endpoints (ADVISOR_ACCESS_TOKEN).
	AdvisorAccessToken string `json:"-"`
	// AdvisorBasicCredentials is the "user:password" of the v1 endpoints (ADVISOR_BASIC_CREDENTIALS).
	AdvisorBasicCredentials string `json:"-"`
	// FirmsFile lists the firms of a gateway that serves several, each with its own
	// credentials (FIRMS_FILE); it replaces ADVISOR_FIRM and the per-firm credentials.
	FirmsFile string
	// Firms are the firms served, with their credentials: FIRMS_FILE's, or the one of
	// ADVISOR_FIRM. Empty with the embedded sandbox, whose own firms the gateway then serves.
	Firms []tenant.Firm `json:"-"`
	// UpstreamTimeout bounds each attempt of a call to the Advisor service (UPSTREAM_TIMEOUT).
	UpstreamTimeout time.Duration
	// AllowedOrigins may call the gateway from browsers, with credentials (CORS_ALLOWED_ORIGINS,
	// comma-separated); none by default; "*" is any page, without credentials.
	AllowedOrigins []string
	// MaxRequestBytes bounds a JSON request (MAX_REQUEST_BYTES).
	MaxRequestBytes int64
	// MaxUploadBytes bounds a multipart request with its files (MAX_UPLOAD_BYTES).
	MaxUploadBytes int64
	// MaxUploadFiles bounds the files of one request (MAX_UPLOAD_FILES).
	MaxUploadFiles int
	// Introspection serves the schema and field suggestions (GRAPHQL_INTROSPECTION).
	Introspection bool
	// IDE serves the GraphQL IDE at / (GRAPHQL_IDE).
	IDE bool
	// Federation serves the gateway as a subgraph: the schema with the fields a federation's
	// router reads, `_service` and `_entities` (GRAPHQL_FEDERATION).
	Federation bool
	// MaxTokens bounds an operation's document in lexical tokens, counted before it is parsed
	// (GRAPHQL_MAX_TOKENS).
	MaxTokens int
	// MaxDepth bounds how deeply an operation's selections nest (GRAPHQL_MAX_DEPTH).
	MaxDepth int
	// MaxAliases bounds the aliased fields of an operation (GRAPHQL_MAX_ALIASES).
	MaxAliases int
	// MaxRootFields bounds the fields an operation selects at its root (GRAPHQL_MAX_ROOT_FIELDS).
	MaxRootFields int
	// MaxCost bounds an operation's cost, in which lists multiply what they select by their
	// size (GRAPHQL_MAX_COST).
	MaxCost int
	// MaxResponseBytes bounds one response (or one event of a subscription) (MAX_RESPONSE_BYTES).
	MaxResponseBytes int64
	// UpstreamBudget bounds the requests one operation may make to the Advisor service
	// (UPSTREAM_REQUEST_BUDGET).
	UpstreamBudget int
	// UpstreamConnections bounds the requests to the Advisor service in flight at once, for the
	// whole process; more wait their turn (UPSTREAM_MAX_CONNECTIONS).
	UpstreamConnections int
	// MaxSubscriptionsPerSocket bounds the operations running at once on one WebSocket
	// (MAX_SUBSCRIPTIONS_PER_SOCKET).
	MaxSubscriptionsPerSocket int
	// UploadDiskBudget bounds the bytes all uploads in flight may hold in temporary files
	// (UPLOAD_DISK_BUDGET).
	UploadDiskBudget int64
	// BodyTimeout is how long a request body may take to start arriving; it grows with what
	// arrives, so a slow body that keeps coming is not cut (REQUEST_BODY_TIMEOUT).
	BodyTimeout time.Duration
	// MaxRequestDepth bounds how deeply a request body's values nest, and MaxRequestValues how
	// many values its variables and extensions hold together, checked before the body is
	// decoded (MAX_REQUEST_DEPTH, MAX_REQUEST_VALUES).
	MaxRequestDepth  int
	MaxRequestValues int
	// WriteTimeout is how long one write of an answer or of a stream may wait for a client that
	// stopped reading before the connection is ended (WRITE_TIMEOUT).
	WriteTimeout time.Duration
	// MaxConnections bounds the open client connections; 0 derives it from the process's
	// open-file limit at start-up (MAX_CONNECTIONS).
	MaxConnections int
	// BatchLimit is how many operations one POST may batch in an array (GRAPHQL_BATCH_LIMIT);
	// 0, the default, refuses batches.
	BatchLimit int

	// RateLimit is the operations each caller may start a second (RATE_LIMIT); 0, the
	// default, limits none. RateLimitBurst is how many at once (RATE_LIMIT_BURST; default
	// RateLimit).
	RateLimit      int
	RateLimitBurst int
	// RateLimitSubscriptions is the subscriptions each caller may open a minute
	// (RATE_LIMIT_SUBSCRIPTIONS); 0 limits none.
	RateLimitSubscriptions int
	// RateLimitCost is the operation cost each caller may spend a minute (RATE_LIMIT_COST); 0
	// limits none.
	RateLimitCost int

	// PersistedQueries serves automatic persisted queries (PERSISTED_QUERIES): in Redis with
	// REDIS_URL, shared by replicas, in process without.
	PersistedQueries bool
	// PersistedQueryTTL is how long Redis keeps a persisted query after its last use
	// (PERSISTED_QUERY_TTL).
	PersistedQueryTTL time.Duration
	// PersistedQueryMaxAge is how long a client may cache the answer to a query it named by id
	// over GET (PERSISTED_QUERY_MAX_AGE); 0s caches none.
	PersistedQueryMaxAge time.Duration
	// PersistedQueryMaxBytes bounds the documents Redis keeps for every caller together; the
	// least recently used go first (PERSISTED_QUERY_MAX_BYTES).
	PersistedQueryMaxBytes int64
	// PersistedQueryCallerDocuments and PersistedQueryCallerBytes bound what one caller may
	// register an hour (PERSISTED_QUERY_CALLER_DOCUMENTS, PERSISTED_QUERY_CALLER_BYTES); beyond
	// them its operations still run, unregistered.
	PersistedQueryCallerDocuments int
	PersistedQueryCallerBytes     int64
	// PersistedOperationsFile is a manifest of trusted documents (PERSISTED_OPERATIONS_FILE),
	// as graphql-codegen's client preset or Apollo's manifest generator writes it.
	PersistedOperationsFile string
	// PersistedOperationsOnly refuses every operation that is not one of the trusted documents
	// (PERSISTED_OPERATIONS_ONLY).
	PersistedOperationsOnly bool
	// LogFormat is how log lines are written: slog's text or JSON (LOG_FORMAT).
	LogFormat string

	// RedisURL is the Redis holding the event log (REDIS_URL); empty keeps events in process.
	RedisURL string `json:"-"`
	// RedisCluster says REDIS_URL's one address is a Redis Cluster's (REDIS_CLUSTER): a managed
	// cluster's configuration endpoint. A URL with more than one address is a cluster's anyway.
	RedisCluster bool
	// RedisKeyPrefix starts every Redis key the gateway uses (REDIS_KEY_PREFIX).
	RedisKeyPrefix string
	// WebhookAPIKey is the service-api-key webhook deliveries must carry (WEBHOOK_API_KEY);
	// required with ADVISOR_BASE_URL, generated for the embedded sandbox otherwise.
	WebhookAPIKey string `json:"-"`
	// EventHistory is how many events the log keeps for resuming and recentEvents (EVENT_HISTORY).
	EventHistory int
	// DedupWindow is how long a delivered body is remembered to drop redeliveries
	// (EVENT_DEDUP_WINDOW); at least as long as the service retries.
	DedupWindow time.Duration
	// SubscriberBuffer is how many events a subscriber may fall behind before its subscription
	// ends (SUBSCRIBER_BUFFER).
	SubscriberBuffer int
	// KeepAlive is the interval of keep-alive messages on WebSocket and SSE streams
	// (STREAM_KEEPALIVE).
	KeepAlive time.Duration
	// EventsOutageGrace is how long open subscriptions wait through an outage of the event
	// store before they end with EVENTS_UNAVAILABLE (EVENTS_OUTAGE_GRACE).
	EventsOutageGrace time.Duration

	// Auth is how callers are authenticated (AUTH_*).
	Auth Auth

	// Bulk is where bulk files are uploaded (BULK_SFTP_*); unset against the Advisor service
	// leaves bulk uploads off, and against the embedded sandbox means its SFTP server.
	Bulk BulkSFTP

	// AssistantEmbedURL is the embed host of the chat SDK (ASSISTANT_EMBED_URL): the pop-out
	// page at /assistant loads {embed_url}/v1/sdk/assistant-sdk.js and frames its chat, and
	// allows nothing else in its script-src and frame-src. Empty: the embedded sandbox's
	// address (required with ADVISOR_BASE_URL for /assistant to be served).
	AssistantEmbedURL string
	// AssistantSession is the session host the assistant's tokens are minted at, over mutual
	// TLS (ASSISTANT_SESSION_URL, ASSISTANT_CLIENT_CERT, ASSISTANT_CLIENT_KEY,
	// ASSISTANT_SERVER_CA); unset against the Advisor service, createAssistantSession is off,
	// and against the embedded sandbox the gateway enrols with the sandbox's own.
	AssistantSession AssistantSession

	// ReferralURL is the referral service (REFERRAL_URL); empty leaves referClient off against
	// the Advisor service, and means the embedded sandbox's referral endpoint with it.
	ReferralURL string
	// ReferralAPIKey is its x-api-key (REFERRAL_API_KEY) and ReferralSigningSecret the secret
	// of the user-data-signature (REFERRAL_SIGNING_SECRET); both required with REFERRAL_URL.
	ReferralAPIKey        string `json:"-"`
	ReferralSigningSecret string `json:"-"`
}

// BulkSFTP is the SFTP server bulk files are uploaded to.
type BulkSFTP struct {
	// Addr is the server's host:port (BULK_SFTP_ADDR).
	Addr string
	// User logs in (BULK_SFTP_USER) with Password (BULK_SFTP_PASSWORD) or the private key in
	// KeyFile (BULK_SFTP_KEY_FILE).
	User     string
	Password string `json:"-"`
	KeyFile  string
	// Dir is the remote directory the files go to (BULK_SFTP_DIR).
	Dir string
	// KnownHosts (BULK_SFTP_KNOWN_HOSTS, a known_hosts file) or HostKeyFingerprint
	// (BULK_SFTP_HOST_KEY_FINGERPRINT, "SHA256:..." as ssh-keygen -l prints it) is the server's
	// host key: nothing else is trusted.
	KnownHosts         string
	HostKeyFingerprint string
}

// Auth is how the gateway authenticates its callers.
type Auth struct {
	// JWKSURL is the identity provider's JWK Set that callers' bearer JWTs are verified against
	// (AUTH_JWKS_URL). Empty with the embedded sandbox: the sandbox is the identity provider.
	JWKSURL string
	// Issuer and Audience, when set, must be the tokens' iss and one of their aud
	// (AUTH_ISSUER, AUTH_AUDIENCE).
	Issuer   string
	Audience string
	// AdvisorClaim and FirmClaim name the claims holding the caller's advisor and firm external
	// ids (AUTH_ADVISOR_CLAIM, AUTH_FIRM_CLAIM).
	AdvisorClaim string
	FirmClaim    string
	// TeamClaim and RolesClaim name the optional claims holding the caller's advisor team and
	// roles (AUTH_TEAM_CLAIM, AUTH_ROLES_CLAIM).
	TeamClaim  string
	RolesClaim string
	// FirmAdminRole is the role that lets a caller act for another advisor or team of its firm
	// on the v1 paths (AUTH_FIRM_ADMIN_ROLE); empty, nobody may.
	FirmAdminRole string
	// Disabled says something in front of the gateway authenticates callers, so the gateway
	// does not (AUTH_DISABLED); no operation then knows who its caller is.
	Disabled bool
}

// Configured reports whether bulk uploads have a server.
func (b BulkSFTP) Configured() bool { return b.Addr != "" }

// DefaultBulkDir is where bulk files go on the server unless BULK_SFTP_DIR says otherwise: the
// directory the login starts in.
const DefaultBulkDir = "."

// Sandboxed reports whether the gateway runs against its embedded sandbox.
func (g Gateway) Sandboxed() bool { return g.AdvisorBaseURL == "" }

// Load reads the gateway's configuration from the environment: every setting of settings(),
// from its default, then the settings together. Every problem is reported, each naming its
// setting.
func Load(getenv func(string) string) (Gateway, error) {
	var cfg Gateway
	var errs []error
	for _, sec := range settings(&cfg) {
		for _, s := range sec.settings {
			if s.parse == nil {
				continue // read elsewhere
			}
			if s.value != "" {
				if err := s.parse(s.value); err != nil {
					errs = append(errs, fmt.Errorf("%s: the default %q: %w", s.name, s.value, err))
				}
			}
			if v := getenv(s.name); v != "" {
				if err := s.parse(strings.TrimSpace(v)); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
				}
			}
		}
	}
	errs = append(errs, checkRateLimits(&cfg)...)
	if cfg.PersistedOperationsOnly && cfg.PersistedOperationsFile == "" {
		errs = append(errs, errors.New("PERSISTED_OPERATIONS_ONLY: true needs PERSISTED_OPERATIONS_FILE, the trusted documents it allows"))
	}
	if getenv("REDIS_URL") != "" {
		// Read here rather than by its parser, because REDIS_CLUSTER says how to read it.
		if _, err := redisconn.Parse(cfg.RedisURL, cfg.RedisCluster); err != nil {
			errs = append(errs, errors.New("REDIS_URL: must be a Redis URL such as redis://localhost:6379/0 or rediss://user:password@host:6380, or a cluster's: redis://host1:7000?addr=host2:7001&addr=host3:7002"))
			cfg.RedisURL = ""
		}
	}
	errs = append(errs, checkBulk(getenv, &cfg)...)
	errs = append(errs, loadFirms(getenv, &cfg)...)
	errs = append(errs, checkAuth(getenv, &cfg)...)
	errs = append(errs, checkReferral(&cfg)...)
	errs = append(errs, checkAssistantSession(getenv, &cfg)...)
	if cfg.UploadDiskBudget < cfg.MaxUploadBytes {
		errs = append(errs, fmt.Errorf("UPLOAD_DISK_BUDGET: %s is less than MAX_UPLOAD_BYTES (%s): the largest upload allowed could never be stored",
			bytesize.Format(cfg.UploadDiskBudget), bytesize.Format(cfg.MaxUploadBytes)))
	}
	return cfg, errors.Join(errs...)
}

// checkRateLimits returns what is wrong with the rate limits together, and makes the burst
// the rate when it is not set.
func checkRateLimits(cfg *Gateway) []error {
	var errs []error
	switch {
	case cfg.RateLimitBurst > 0 && cfg.RateLimit == 0:
		errs = append(errs, errors.New("RATE_LIMIT_BURST: needs RATE_LIMIT, the rate it is a burst of"))
	case cfg.RateLimitBurst == 0:
		cfg.RateLimitBurst = cfg.RateLimit
	}
	if cfg.RateLimitCost > 0 && cfg.RateLimitCost < cfg.MaxCost {
		errs = append(errs, fmt.Errorf("RATE_LIMIT_COST: %d a minute is less than GRAPHQL_MAX_COST (%d): an operation the gateway allows could never be afforded",
			cfg.RateLimitCost, cfg.MaxCost))
	}
	return errs
}

// checkAuth returns what is wrong with the caller authentication settings as a whole. Against
// the Advisor service every caller must be authenticated: by tokens of AUTH_JWKS_URL's identity
// provider, or, with AUTH_DISABLED=true, by something in front of the gateway. A gateway that
// would act for anyone with its upstream credentials does not start.
func checkAuth(getenv func(string) string, cfg *Gateway) []error {
	a := &cfg.Auth
	var errs []error
	if a.AdvisorClaim == a.FirmClaim {
		errs = append(errs, fmt.Errorf("AUTH_FIRM_CLAIM: names the claim %q, as AUTH_ADVISOR_CLAIM does; an advisor and a firm are different ids", a.FirmClaim))
	}
	for _, c := range []struct{ name, claim string }{{"AUTH_TEAM_CLAIM", a.TeamClaim}, {"AUTH_ROLES_CLAIM", a.RolesClaim}} {
		if c.claim == a.AdvisorClaim || c.claim == a.FirmClaim {
			errs = append(errs, fmt.Errorf("%s: names the claim %q, which already holds the advisor or the firm", c.name, c.claim))
		}
	}
	if a.Disabled && len(cfg.Firms) > 1 {
		errs = append(errs, errors.New("AUTH_DISABLED: true with several firms in FIRMS_FILE: without a caller's token the gateway cannot tell whose firm a request is for"))
	}
	if a.Disabled && a.JWKSURL != "" {
		errs = append(errs, errors.New("AUTH_DISABLED: true says nothing is verified, yet AUTH_JWKS_URL is set: unset one of them"))
	}
	if a.JWKSURL == "" {
		// Without a JWKS of the operator's, the issuer and audience would go unchecked (the
		// embedded sandbox's tokens have their own), so setting them is a mistake to report.
		for _, name := range []string{"AUTH_ISSUER", "AUTH_AUDIENCE"} {
			if getenv(name) != "" {
				errs = append(errs, fmt.Errorf("%s: needs AUTH_JWKS_URL, the identity provider whose tokens it checks", name))
			}
		}
	}
	if !cfg.Sandboxed() && a.JWKSURL == "" && !a.Disabled {
		errs = append(errs, errors.New("AUTH_JWKS_URL: required when ADVISOR_BASE_URL is set, so that callers are authenticated; "+
			"or AUTH_DISABLED=true when the gateway sits behind something that authenticates them"))
	}
	return errs
}

// bulkSettings are the settings of bulk uploads, in the order their errors are reported.
var bulkSettings = []string{"BULK_SFTP_ADDR", "BULK_SFTP_USER", "BULK_SFTP_PASSWORD", "BULK_SFTP_KEY_FILE",
	"BULK_SFTP_DIR", "BULK_SFTP_KNOWN_HOSTS", "BULK_SFTP_HOST_KEY_FINGERPRINT"}

// checkBulk returns what is wrong with the bulk SFTP settings as a whole: against the Advisor
// service, a server needs a login and a host key; against the embedded sandbox, its own server
// is used and none may be set.
func checkBulk(getenv func(string) string, cfg *Gateway) []error {
	b := &cfg.Bulk
	var given []string
	for _, name := range bulkSettings {
		if getenv(name) != "" {
			given = append(given, name)
		}
	}
	if cfg.Sandboxed() {
		if len(given) > 0 {
			return []error{fmt.Errorf("ADVISOR_BASE_URL: required when %s is set (without it bulk files go to the embedded sandbox's SFTP server)", strings.Join(given, ", "))}
		}
		return nil
	}
	if len(given) == 0 {
		return nil // bulk uploads off
	}
	var errs []error
	if b.Addr == "" {
		errs = append(errs, fmt.Errorf("BULK_SFTP_ADDR: required when %s is set", strings.Join(given, ", ")))
	}
	if getenv("FIRMS_FILE") != "" {
		// Each firm's login is in the file (loadFirms checks it); the host key is shared.
		if b.KnownHosts == "" && b.HostKeyFingerprint == "" {
			errs = append(errs, errors.New("BULK_SFTP_KNOWN_HOSTS: required for bulk uploads, or BULK_SFTP_HOST_KEY_FINGERPRINT: the server's host key is never trusted unseen"))
		}
		return errs
	}
	if b.User == "" {
		errs = append(errs, errors.New("BULK_SFTP_USER: required for bulk uploads"))
	}
	switch {
	case b.Password == "" && b.KeyFile == "":
		errs = append(errs, errors.New("BULK_SFTP_PASSWORD: required for bulk uploads, or BULK_SFTP_KEY_FILE"))
	case b.Password != "" && b.KeyFile != "":
		errs = append(errs, errors.New("BULK_SFTP_KEY_FILE: set it or BULK_SFTP_PASSWORD, not both"))
	}
	switch {
	case b.KnownHosts == "" && b.HostKeyFingerprint == "":
		errs = append(errs, errors.New("BULK_SFTP_KNOWN_HOSTS: required for bulk uploads, or BULK_SFTP_HOST_KEY_FINGERPRINT: the server's host key is never trusted unseen"))
	case b.KnownHosts != "" && b.HostKeyFingerprint != "":
		errs = append(errs, errors.New("BULK_SFTP_HOST_KEY_FINGERPRINT: set it or BULK_SFTP_KNOWN_HOSTS, not both"))
	}
	return errs
}

// AssistantSession is where and as whom the gateway mints assistant session tokens.
type AssistantSession struct {
	// URL is the session host, https (ASSISTANT_SESSION_URL).
	URL string
	// CertFile and KeyFile are the gateway's enrolled client certificate and its key, PEM
	// (ASSISTANT_CLIENT_CERT, ASSISTANT_CLIENT_KEY).
	CertFile string
	KeyFile  string
	// ServerCAFile holds the CA certificates that sign the session host's certificate, PEM
	// (ASSISTANT_SERVER_CA); empty trusts the system's roots.
	ServerCAFile string
}

// Configured reports whether there is a session host.
func (a AssistantSession) Configured() bool { return a.URL != "" }

// assistantSessionSettings are the settings of the session host, in the order their errors are
// reported.
var assistantSessionSettings = []string{"ASSISTANT_SESSION_URL", "ASSISTANT_CLIENT_CERT", "ASSISTANT_CLIENT_KEY", "ASSISTANT_SERVER_CA"}

// checkAssistantSession returns what is wrong with the session host's settings: none, or the
// address with the client certificate and its key; against the embedded sandbox, none.
func checkAssistantSession(getenv func(string) string, cfg *Gateway) []error {
	a := &cfg.AssistantSession
	var given []string
	for _, name := range assistantSessionSettings {
		if getenv(name) != "" {
			given = append(given, name)
		}
	}
	if len(given) == 0 {
		return nil
	}
	if cfg.Sandboxed() {
		return []error{fmt.Errorf("ADVISOR_BASE_URL: required when %s is set (without it the gateway enrols with the embedded sandbox's session host)", strings.Join(given, ", "))}
	}
	var errs []error
	if a.URL == "" && getenv("ASSISTANT_SESSION_URL") == "" {
		errs = append(errs, fmt.Errorf("ASSISTANT_SESSION_URL: required when %s is set", strings.Join(given, ", ")))
	}
	if a.CertFile == "" {
		errs = append(errs, errors.New("ASSISTANT_CLIENT_CERT: required for assistant sessions: the session host authenticates the gateway by its enrolled certificate"))
	}
	if a.KeyFile == "" {
		errs = append(errs, errors.New("ASSISTANT_CLIENT_KEY: required for assistant sessions: the key of ASSISTANT_CLIENT_CERT"))
	}
	return errs
}

// checkReferral returns what is wrong with the referral service's settings: its address
// goes with both credentials; credentials without an address are a mistake, not a default.
func checkReferral(cfg *Gateway) []error {
	var errs []error
	if cfg.ReferralURL != "" {
		if cfg.ReferralAPIKey == "" {
			errs = append(errs, errors.New("REFERRAL_API_KEY: required when REFERRAL_URL is set"))
		}
		if cfg.ReferralSigningSecret == "" {
			errs = append(errs, errors.New("REFERRAL_SIGNING_SECRET: required when REFERRAL_URL is set: every referral is signed with it"))
		}
	} else if cfg.ReferralAPIKey != "" || cfg.ReferralSigningSecret != "" {
		errs = append(errs, errors.New("REFERRAL_URL: required when REFERRAL_API_KEY or REFERRAL_SIGNING_SECRET is set"))
	}
	return errs
}

package config

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/bytesize"
	"github.com/advisorhq/gateway/internal/netaddr"
)

// section is a part of the configuration reference: settings that belong together, in the
// order Load reads them and the reference lists them.
type section struct {
	title string
	// intro, when set, is a paragraph of Markdown printed above the section's table.
	intro string
	// readBy, when set, is what reads every setting of the section, as setting.readBy.
	readBy   string
	settings []setting
}

// setting is one environment variable: what the reference says about it and, for the
// gateway's own settings, how Load reads it. Both come from this one declaration, so the
// reference cannot leave out a setting Load reads nor show a default Load does not use.
type setting struct {
	name string
	// value is the default Load starts from, written as it would be set ("10s", "2MiB"). Load
	// reads it with parse, like a value from the environment, so the reference shows the
	// default as it is.
	value string
	// unset says in words what leaving the setting out means when there is no value to start
	// from ("(the embedded sandbox)"), or adds to value ("(none)").
	unset string
	// meaning is a sentence of Markdown on one line, without "|".
	meaning string
	// readBy names what reads a setting Load does not (parse is nil): a package of this
	// repository (a test checks that it reads the setting) or the OpenTelemetry SDK.
	readBy string
	// parse checks a value, trimmed and not empty, and stores it in the Gateway settings()
	// was given; its error is reported after the setting's name.
	parse func(string) error
}

// What reads the settings that are not the gateway's own.
const (
	readByTracing = "internal/tracing"
	readByOTelSDK = "the OpenTelemetry SDK"
	readBySandbox = "internal/sandbox"
	readByBulkCLI = "internal/bulkcli"
)

// settings declares every setting, each with the parser that stores it in cfg. It is a
// function, not a table, so that each parser is bound to the Gateway being loaded.
func settings(cfg *Gateway) []section {
	b, a, s := &cfg.Bulk, &cfg.Auth, &cfg.AssistantSession
	return []section{{
		title: "Serving",
		settings: []setting{
			{name: "ADDR", value: "127.0.0.1:8080", meaning: "where the gateway listens, `host:port`; the default is this machine only, `:8080` listens on every interface (as the image does)",
				parse: func(v string) error {
					if err := netaddr.HostPort(v, false, true); err != nil {
						return fmt.Errorf("%w: give one such as :8080 or 127.0.0.1:8080", err)
					}
					cfg.Addr = v
					return nil
				}},
			{name: "GRAPHQL_INTROSPECTION", value: "true", parse: boolSetting(&cfg.Introspection),
				meaning: "introspection, the SDL at `/graphql/schema.graphql` and \"Did you mean\" suggestions; switch off in production"},
			{name: "GRAPHQL_IDE", value: "true", parse: boolSetting(&cfg.IDE),
				meaning: "the IDE at `/`"},
			{name: "GRAPHQL_FEDERATION", value: "false", parse: boolSetting(&cfg.Federation),
				meaning: "serves the gateway as a subgraph of a federated graph (Apollo Federation v2): `_service`, whose `sdl` is the schema whatever `GRAPHQL_INTROSPECTION` says, and `_entities`; off, the schema has none of the federation's definitions. Switch on only behind a federation's router ([graphql.md](graphql.md#federation))"},
			{name: "CORS_ALLOWED_ORIGINS", unset: "(none)", parse: originsSetting(&cfg.AllowedOrigins),
				meaning: "comma-separated origins whose pages may call the gateway, with credentials; unset, no answer carries CORS headers; `*` lets any page call it, without credentials (a warning is logged)"},
		},
	}, {
		title: "The Advisor service and its firms",
		intro: "Without `ADVISOR_BASE_URL` the gateway runs its embedded sandbox and serves the sandbox's two firms; " +
			"`ADVISOR_FIRM`, `FIRMS_FILE` and the Advisor credentials are then refused. Against the Advisor service it serves one firm " +
			"(`ADVISOR_FIRM` with its credentials) or several (`FIRMS_FILE`); see [authorization.md](authorization.md).",
		settings: []setting{
			{name: "ADVISOR_BASE_URL", unset: "(the embedded sandbox)", parse: baseURLSetting(&cfg.AdvisorBaseURL, "https://api.advisor.example"),
				meaning: "the Advisor service, an absolute http or https URL; set it for production"},
			{name: "ADVISOR_FIRM", parse: textSetting(&cfg.AdvisorFirm),
				meaning: "the firm a one-firm gateway serves: the value its callers' firm claim carries; required with `ADVISOR_BASE_URL` unless `FIRMS_FILE` is set"},
			{name: "ADVISOR_ACCESS_TOKEN", parse: tokenSetting(&cfg.AdvisorAccessToken),
				meaning: "the firm's v2 bearer token; required with `ADVISOR_BASE_URL` unless `FIRMS_FILE` is set"},
			{name: "ADVISOR_BASIC_CREDENTIALS", parse: userPasswordSetting(&cfg.AdvisorBasicCredentials),
				meaning: "the firm's v1 `user:password`, for the client-scoped contacts"},
			{name: "WEBHOOK_API_KEY", unset: "(generated for the sandbox)",
				meaning: "the `service-api-key` the firm's webhook deliveries carry; at least 16 characters; required with `ADVISOR_BASE_URL` unless `FIRMS_FILE` is set",
				parse: func(v string) error {
					if len(v) < 16 {
						return errors.New("must be at least 16 characters: it is the only thing that authenticates deliveries")
					}
					cfg.WebhookAPIKey = v
					return nil
				}},
			{name: "FIRMS_FILE", parse: textSetting(&cfg.FirmsFile),
				meaning: "a JSON file of several firms, each with its own credentials, webhook key and bulk-file login; replaces `ADVISOR_FIRM`, `ADVISOR_ACCESS_TOKEN`, `ADVISOR_BASIC_CREDENTIALS`, `WEBHOOK_API_KEY` and `BULK_SFTP_USER`/`_PASSWORD`/`_KEY_FILE`"},
			{name: "UPSTREAM_TIMEOUT", value: "10s", parse: durationSetting(&cfg.UpstreamTimeout),
				meaning: "each attempt of an upstream call; reads are tried 3 times with backoff"},
			{name: "UPSTREAM_MAX_CONNECTIONS", value: "64", parse: intSetting(&cfg.UpstreamConnections),
				meaning: "requests to the Advisor service in flight at once, for the whole process; more wait their turn"},
		},
	}, {
		title: "Callers",
		intro: "Callers present a bearer JWT, verified against the identity provider's keys; its claims name the caller's advisor, firm, team and roles.",
		settings: []setting{
			{name: "AUTH_JWKS_URL", unset: "(the embedded sandbox's)",
				meaning: "the identity provider's JWK Set; callers' bearer JWTs are verified against it; required with `ADVISOR_BASE_URL` unless `AUTH_DISABLED=true`",
				parse:   urlSetting(&a.JWKSURL, urlRule{example: "https://idp.example/.well-known/jwks.json", query: true})},
			{name: "AUTH_ISSUER", parse: textSetting(&a.Issuer),
				meaning: "the `iss` tokens must have (needs `AUTH_JWKS_URL`)"},
			{name: "AUTH_AUDIENCE", parse: textSetting(&a.Audience),
				meaning: "an `aud` tokens must have (needs `AUTH_JWKS_URL`)"},
			{name: "AUTH_ADVISOR_CLAIM", value: "sub", parse: textSetting(&a.AdvisorClaim),
				meaning: "the claim holding the caller's advisor external id"},
			{name: "AUTH_FIRM_CLAIM", value: "firm_id", parse: textSetting(&a.FirmClaim),
				meaning: "the claim holding the caller's firm external id; a token of a firm the gateway does not serve is refused (`403`, `4403`)"},
			{name: "AUTH_TEAM_CLAIM", value: "team_id", parse: textSetting(&a.TeamClaim),
				meaning: "the optional claim holding the caller's advisor team, which v1 calls act for"},
			{name: "AUTH_ROLES_CLAIM", value: "roles", parse: textSetting(&a.RolesClaim),
				meaning: "the optional claim holding the caller's roles, a list or a space-separated string"},
			{name: "AUTH_FIRM_ADMIN_ROLE", unset: "(none)", parse: textSetting(&a.FirmAdminRole),
				meaning: "the role that may name another advisor or team of its firm (`advisorId:`, `teamId:`); unset, nobody may"},
			{name: "AUTH_DISABLED", value: "false", parse: boolSetting(&a.Disabled),
				meaning: "`true`: the gateway authenticates nobody, because something in front of it does; only with one firm"},
		},
	}, {
		title: "Operation limits",
		intro: "Each is checked before an operation is validated or reaches the Advisor service; an operation over one gets " +
			"one `OPERATION_LIMIT_EXCEEDED` error naming the setting.",
		settings: []setting{
			{name: "GRAPHQL_MAX_TOKENS", value: "5000", parse: intSetting(&cfg.MaxTokens),
				meaning: "lexical tokens in one document (comments count), counted before it is parsed"},
			{name: "GRAPHQL_MAX_DEPTH", value: "12", parse: intSetting(&cfg.MaxDepth),
				meaning: "how deeply fields nest (`ofType` in introspection adds no level)"},
			{name: "GRAPHQL_MAX_ALIASES", value: "30", parse: intSetting(&cfg.MaxAliases),
				meaning: "fields an operation renames (`a: field`), each time a fragment is used"},
			{name: "GRAPHQL_MAX_ROOT_FIELDS", value: "20", parse: intSetting(&cfg.MaxRootFields),
				meaning: "distinct fields at the operation's top level"},
			{name: "GRAPHQL_MAX_COST", value: "20000", parse: intSetting(&cfg.MaxCost),
				meaning: "an operation's estimated cost: 1 a field, what a list selects multiplied by its size (its `first`, `limit` or `last`, else an assumed size)"},
			{name: "GRAPHQL_COMPLEXITY_LIMIT",
				meaning: "retired: replaced by `GRAPHQL_MAX_COST`; set, it stops start-up",
				parse: func(string) error {
					return errors.New("replaced by GRAPHQL_MAX_COST, whose cost multiplies what lists select by their size")
				}},
			{name: "MAX_RESPONSE_BYTES", value: "16MiB", parse: sizeSetting(&cfg.MaxResponseBytes),
				meaning: "one response, or one event of a subscription; a larger one ends with an error"},
			{name: "UPSTREAM_REQUEST_BUDGET", value: "50", parse: intSetting(&cfg.UpstreamBudget),
				meaning: "requests to the Advisor service one operation (or one subscription event) may make"},
		},
	}, {
		title: "Requests and connections",
		settings: []setting{
			{name: "MAX_REQUEST_BYTES", value: "2MiB", parse: sizeSetting(&cfg.MaxRequestBytes),
				meaning: "a JSON request body; larger ones get `413` before parsing"},
			{name: "MAX_REQUEST_DEPTH", unset: "`32`", parse: intSetting(&cfg.MaxRequestDepth),
				meaning: "how deeply a request's values may nest; checked in one pass over the bytes before anything is decoded"},
			{name: "MAX_REQUEST_VALUES", unset: "`10000`", parse: intSetting(&cfg.MaxRequestValues),
				meaning: "values a request's variables and extensions may hold together (over a whole batch); checked before decoding"},
			{name: "REQUEST_BODY_TIMEOUT", value: "30s", parse: durationSetting(&cfg.BodyTimeout),
				meaning: "how long a request body may take to begin; each byte that arrives adds 2 ms (500 bytes a second keep any body going); a slower body gets `408` and its connection is closed"},
			{name: "WRITE_TIMEOUT", value: "30s", parse: durationSetting(&cfg.WriteTimeout),
				meaning: "how long one write of an answer or a stream may wait for a client that stopped reading; then the connection is closed"},
			{name: "MAX_UPLOAD_BYTES", value: compactSize(advisorspec.MaxFileSize), parse: sizeSetting(&cfg.MaxUploadBytes),
				meaning: "a multipart request with its files (the vault's own limit)"},
			{name: "MAX_UPLOAD_FILES", value: "10", parse: intSetting(&cfg.MaxUploadFiles),
				meaning: "files in one multipart request"},
			{name: "UPLOAD_DISK_BUDGET", value: "10GiB", parse: sizeSetting(&cfg.UploadDiskBudget),
				meaning: "bytes all uploads in flight may hold in temporary files, at least `MAX_UPLOAD_BYTES`; beyond it uploads get `503` with `Retry-After`"},
			{name: "MAX_CONNECTIONS", unset: "(the open-file limit less 1,024)", parse: intSetting(&cfg.MaxConnections),
				meaning: "client connections held at once; more wait in the listen queue"},
			{name: "MAX_SUBSCRIPTIONS_PER_SOCKET", value: "100", parse: intSetting(&cfg.MaxSubscriptionsPerSocket),
				meaning: "operations running at once on one WebSocket"},
		},
	}, {
		title: "Events and Redis",
		settings: []setting{
			{name: "REDIS_URL", unset: "(in-process event log)", parse: textSetting(&cfg.RedisURL), // checked with REDIS_CLUSTER in check
				meaning: "Redis for the event log, persisted queries and rate limits, shared by replicas: `redis://host:6379/0`, `rediss://user:password@host`; a Redis Cluster as `redis://host1:7000?addr=host2:7000&addr=host3:7000`"},
			{name: "REDIS_CLUSTER", value: "false", parse: boolSetting(&cfg.RedisCluster),
				meaning: "`REDIS_URL`'s one address is a Redis Cluster's (a managed cluster's configuration endpoint); a URL with several addresses is a cluster's anyway"},
			{name: "REDIS_KEY_PREFIX", value: "advisor-gateway:",
				meaning: "starts every Redis key, so deployments can share a Redis; no `{` or `}` (the keys carry hash tags of their own)",
				parse: func(v string) error {
					// The keys' hash tags ({events}, {bulk}) keep each script on one slot of a
					// cluster; a brace in the prefix would move or empty the tag ("x{}" hashes
					// whole keys).
					if strings.ContainsAny(v, "{}") {
						return errors.New("may not contain { or }: the gateway's keys carry hash tags of their own")
					}
					cfg.RedisKeyPrefix = v
					return nil
				}},
			{name: "EVENT_HISTORY", value: "100000", parse: intSetting(&cfg.EventHistory),
				meaning: "events kept for resuming and `recentEvents`"},
			{name: "EVENT_DEDUP_WINDOW", value: "72h", parse: durationSetting(&cfg.DedupWindow),
				meaning: "how long a delivered body is remembered, to drop redeliveries; at least as long as the service retries"},
			{name: "SUBSCRIBER_BUFFER", value: "256", parse: intSetting(&cfg.SubscriberBuffer),
				meaning: "events a subscriber may fall behind before its subscription ends (`SLOW_CONSUMER`)"},
			{name: "STREAM_KEEPALIVE", value: "15s", parse: durationSetting(&cfg.KeepAlive),
				meaning: "keep-alive interval on quiet WebSocket and SSE streams; a busy one whose peer vanished is ended by TCP after twice it"},
			{name: "EVENTS_OUTAGE_GRACE", unset: "`30s`", parse: durationSetting(&cfg.EventsOutageGrace),
				meaning: "how long open subscriptions wait through an outage of the event store before ending with `EVENTS_UNAVAILABLE`"},
		},
	}, {
		title: "Bulk loads",
		intro: "Against the embedded sandbox bulk files go to its own SFTP server and none of these may be set; " +
			"against the Advisor service, with none set, bulk loads are off (checks still work).",
		settings: []setting{
			{name: "BULK_SFTP_ADDR", unset: "(the embedded sandbox's)",
				meaning: "the SFTP server bulk files go to, `host:port`",
				parse: func(v string) error {
					if err := netaddr.HostPort(v, true, false); err != nil {
						return fmt.Errorf("%w: give one such as sftp.advisor.example:22", err)
					}
					b.Addr = v
					return nil
				}},
			{name: "BULK_SFTP_USER", parse: textSetting(&b.User),
				meaning: "the firm's user; with `FIRMS_FILE`, each firm's login is in the file"},
			{name: "BULK_SFTP_PASSWORD", parse: textSetting(&b.Password),
				meaning: "the user's password; or `BULK_SFTP_KEY_FILE`, not both"},
			{name: "BULK_SFTP_KEY_FILE", parse: textSetting(&b.KeyFile),
				meaning: "a file holding the user's unencrypted private key; or `BULK_SFTP_PASSWORD`, not both"},
			{name: "BULK_SFTP_DIR", value: DefaultBulkDir, parse: textSetting(&b.Dir),
				meaning: "the remote directory, as the server resolves it for the user"},
			{name: "BULK_SFTP_KNOWN_HOSTS", parse: textSetting(&b.KnownHosts),
				meaning: "a `known_hosts` file holding the server's host key; this or `BULK_SFTP_HOST_KEY_FINGERPRINT` is required"},
			{name: "BULK_SFTP_HOST_KEY_FINGERPRINT",
				meaning: "the server's host key as `ssh-keygen -l` prints it, `SHA256:...`; or `BULK_SFTP_KNOWN_HOSTS`, not both",
				parse: func(v string) error {
					if !isSHA256Fingerprint(v) {
						return errors.New(`must be a SHA256 fingerprint as ssh-keygen -lf prints it, such as "SHA256:" and 43 characters of base64`)
					}
					b.HostKeyFingerprint = v
					return nil
				}},
		},
	}, {
		title: "The assistant and referrals",
		intro: "Unset against the embedded sandbox, the sandbox's own services are used; against the Advisor service, each feature is off until its settings are given.",
		settings: []setting{
			{name: "ASSISTANT_EMBED_URL", unset: "(the embedded sandbox's, below `/sandbox` on the gateway's own origin)",
				meaning: "the chat SDK's embed host, whose `/v1/sdk/assistant-sdk.js` the pop-out at `/assistant` loads and whose chat it frames; unset against the Advisor service, `/assistant` is not served",
				parse:   baseURLSetting(&cfg.AssistantEmbedURL, "https://embed.advisor.example")},
			{name: "ASSISTANT_SESSION_URL", unset: "(the embedded sandbox's)",
				meaning: "the session host that mints assistant session tokens, `https` (mutual TLS); unset against the Advisor service, `createAssistantSession` is off",
				parse: urlSetting(&s.URL, urlRule{example: "https://session.advisor.example", httpsOnly: true, trim: true,
					why: ": the session host speaks only mutual TLS"})},
			{name: "ASSISTANT_CLIENT_CERT", parse: textSetting(&s.CertFile),
				meaning: "the gateway's enrolled client certificate, a PEM file; required with `ASSISTANT_SESSION_URL`"},
			{name: "ASSISTANT_CLIENT_KEY", parse: textSetting(&s.KeyFile),
				meaning: "the key of `ASSISTANT_CLIENT_CERT`, a PEM file; required with `ASSISTANT_SESSION_URL`"},
			{name: "ASSISTANT_SERVER_CA", unset: "(the system's roots)", parse: textSetting(&s.ServerCAFile),
				meaning: "PEM file of the CA that signs the session host's certificate"},
			{name: "REFERRAL_URL", unset: "(the embedded sandbox's)", parse: baseURLSetting(&cfg.ReferralURL, "https://referrals.advisor.example"),
				meaning: "the referral service, an absolute http or https URL; unset against the Advisor service, `referClient` answers that referrals are off"},
			{name: "REFERRAL_API_KEY", parse: tokenSetting(&cfg.ReferralAPIKey),
				meaning: "its `x-api-key`; required with `REFERRAL_URL`"},
			{name: "REFERRAL_SIGNING_SECRET", parse: tokenSetting(&cfg.ReferralSigningSecret),
				meaning: "the shared secret of the `user-data-signature` (hex HMAC-SHA256 of the body); required with `REFERRAL_URL`"},
		},
	}, {
		title: "Persisted queries and batches",
		settings: []setting{
			{name: "PERSISTED_QUERIES", value: "true", parse: boolSetting(&cfg.PersistedQueries),
				meaning: "automatic persisted queries: in Redis with `REDIS_URL` (shared by replicas), else in process (32 MiB, least recently used first)"},
			{name: "PERSISTED_QUERY_TTL", value: "168h", parse: durationSetting(&cfg.PersistedQueryTTL),
				meaning: "how long Redis keeps a persisted query after its last use"},
			{name: "PERSISTED_QUERY_MAX_BYTES", value: "64MiB", parse: sizeSetting(&cfg.PersistedQueryMaxBytes),
				meaning: "the persisted queries Redis keeps for all callers; the least recently used go first"},
			{name: "PERSISTED_QUERY_CALLER_DOCUMENTS", value: "200", parse: intSetting(&cfg.PersistedQueryCallerDocuments),
				meaning: "documents one caller may register an hour; beyond it, its operations run unregistered"},
			{name: "PERSISTED_QUERY_CALLER_BYTES", value: "4MiB", parse: sizeSetting(&cfg.PersistedQueryCallerBytes),
				meaning: "bytes of documents one caller may register an hour"},
			{name: "PERSISTED_QUERY_MAX_AGE", value: "60s",
				meaning: "`Cache-Control: private, max-age` of a query named by id over GET and answered without errors; `0s` for none",
				parse: func(v string) error {
					d, err := time.ParseDuration(v)
					if err != nil || d < 0 || d%time.Second != 0 {
						return fmt.Errorf("%q is not a whole number of seconds such as 60s, or 0s to cache nothing", v)
					}
					cfg.PersistedQueryMaxAge = d
					return nil
				}},
			{name: "PERSISTED_OPERATIONS_FILE", parse: textSetting(&cfg.PersistedOperationsFile),
				meaning: "trusted documents: graphql-codegen's `persisted-documents.json` or Apollo's persisted query manifest"},
			{name: "PERSISTED_OPERATIONS_ONLY", value: "false", parse: boolSetting(&cfg.PersistedOperationsOnly),
				meaning: "`true`: run the trusted documents only (needs `PERSISTED_OPERATIONS_FILE`)"},
			{name: "GRAPHQL_BATCH_LIMIT", value: "0", parse: countSetting(&cfg.BatchLimit, "%q is not a whole number of operations, 0 to refuse batches"),
				meaning: "operations one POST may batch in a JSON array; `0` refuses batches"},
		},
	}, {
		title: "Rate limits",
		intro: "Budgets of each caller: the advisor its token names, or the client's address without one. " +
			"With `REDIS_URL` a caller has one budget across replicas; without, each replica counts its own.",
		settings: []setting{
			{name: "RATE_LIMIT", value: "0", unset: "(none)", parse: countSetting(&cfg.RateLimit, noLimit),
				meaning: "operations each caller may start a second, on average"},
			{name: "RATE_LIMIT_BURST", unset: "(as `RATE_LIMIT`)", parse: countSetting(&cfg.RateLimitBurst, noLimit),
				meaning: "operations each caller may start at once (needs `RATE_LIMIT`)"},
			{name: "RATE_LIMIT_SUBSCRIPTIONS", value: "0", unset: "(none)", parse: countSetting(&cfg.RateLimitSubscriptions, noLimit),
				meaning: "subscriptions each caller may open a minute"},
			{name: "RATE_LIMIT_COST", value: "0", unset: "(none)", parse: countSetting(&cfg.RateLimitCost, noLimit),
				meaning: "operation cost each caller may spend a minute; at least `GRAPHQL_MAX_COST`"},
		},
	}, {
		title: "Logs and traces",
		intro: "Traces are set up from the standard `OTEL_*` variables; " +
			"the OTLP exporter also reads its other settings (certificates, compression, timeout) itself.",
		settings: []setting{
			{name: "LOG_FORMAT", value: LogText,
				meaning: "`text` (`key=value`) or `json` log lines; every line logged for a request carries `trace_id` and `span_id`",
				parse: func(v string) error {
					if v != LogText && v != LogJSON {
						return fmt.Errorf("%q is not a log format: use %s or %s", v, LogText, LogJSON)
					}
					cfg.LogFormat = v
					return nil
				}},
			{name: "OTEL_EXPORTER_OTLP_ENDPOINT", unset: "(tracing off)", readBy: readByTracing,
				meaning: "where spans go over OTLP (`/v1/traces` is added over HTTP); tracing is off unless this or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set"},
			{name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", unset: "(tracing off)", readBy: readByTracing,
				meaning: "where spans go, used as it is; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`"},
			{name: "OTEL_EXPORTER_OTLP_PROTOCOL", unset: "`http/protobuf`", readBy: readByTracing,
				meaning: "`http/protobuf` or `grpc`"},
			{name: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", unset: "(as `OTEL_EXPORTER_OTLP_PROTOCOL`)", readBy: readByTracing,
				meaning: "`http/protobuf` or `grpc`, for traces; wins over `OTEL_EXPORTER_OTLP_PROTOCOL`"},
			{name: "OTEL_SERVICE_NAME", unset: "`advisor-gateway`", readBy: readByTracing,
				meaning: "the traces' `service.name`"},
			{name: "OTEL_SDK_DISABLED", unset: "`false`", readBy: readByTracing,
				meaning: "`true` turns tracing off whatever else is set"},
			{name: "OTEL_TRACES_SAMPLER", unset: "`parentbased_always_on`", readBy: readByOTelSDK,
				meaning: "which traces are kept: `always_on`, `always_off`, `traceidratio`, or one of them `parentbased_`"},
			{name: "OTEL_TRACES_SAMPLER_ARG", readBy: readByOTelSDK,
				meaning: "the sampler's argument, such as the ratio of `traceidratio`"},
			{name: "OTEL_RESOURCE_ATTRIBUTES", readBy: readByOTelSDK,
				meaning: "more attributes of the traces' resource, `key=value,...`; `OTEL_SERVICE_NAME` names the service"},
			{name: "OTEL_EXPORTER_OTLP_HEADERS", readBy: readByOTelSDK,
				meaning: "headers sent with every export, `key=value,...`, such as a collector's API key"},
		},
	}, {
		title: "`go run . sandbox`",
		intro: "The sandbox run alone reads its credentials from the environment (its other settings are flags: `go run . sandbox -h`). " +
			"The gateway's embedded sandbox reads none of these and uses the defaults.",
		readBy: readBySandbox,
		settings: []setting{
			{name: "SANDBOX_ACCESS_TOKEN", unset: "`sandbox-token`",
				meaning: "the bearer token of the v2 paths, for the first firm"},
			{name: "SANDBOX_BASIC_CREDENTIALS", unset: "`sandbox:sandbox`",
				meaning: "the Basic credentials of the v1 paths, `user:password`, for the first firm"},
			{name: "SANDBOX_SFTP_CREDENTIALS", unset: "`sandbox:sandbox`",
				meaning: "the first firm's SFTP login for bulk files, `user:password`"},
			{name: "SANDBOX_WEBHOOK_KEY",
				meaning: "the `service-api-key` webhook deliveries to `-webhook-url` carry; required with `-webhook-url`"},
			{name: "SANDBOX_EMBED_ORIGINS", unset: "`http://localhost:8080,http://127.0.0.1:8080`",
				meaning: "comma-separated origins of the pages that may embed the chat"},
			{name: "SANDBOX_REFERRAL_API_KEY", unset: "`sandbox-referral-key`",
				meaning: "the `x-api-key` of `POST /v1/refer/{partner_id}`"},
			{name: "SANDBOX_REFERRAL_SECRET", unset: "`sandbox-referral-secret`",
				meaning: "the secret of the referrals' `user-data-signature`, the hex HMAC-SHA256 of the body"},
		},
	}, {
		title:  "`go run . bulk`",
		readBy: readByBulkCLI,
		settings: []setting{
			{name: "GATEWAY_TOKEN",
				meaning: "the caller's bearer token the command sends to the gateway; a variable, not a flag, because every user of the machine can read a flag in the process list"},
		},
	}, {
		title: "The test suite",
		intro: "Read by the tests' helpers, not by the gateway.",
		settings: []setting{
			{name: "REQUIRE_REDIS", readBy: "internal/eventlog/eventlogtest",
				meaning: "set, tests that need Redis (the one at `REDIS_URL`, else `redis://127.0.0.1:6379`) or `redis-server` fail instead of skipping, as in CI"},
			{name: "CHROMIUM", unset: "`/usr/bin/chromium`", readBy: "internal/testnpm",
				meaning: "the Chromium the browser tests drive"},
			{name: "REQUIRE_BROWSER", readBy: "internal/testnpm",
				meaning: "set, the browser tests fail instead of skipping when there is no Chromium, as in CI"},
		},
	}}
}

// noLimit is the message of a rate limit that is not a count.
const noLimit = "%q is not a whole number, or 0 for no limit"

// compactSize writes n as a setting is written, "5GiB".
func compactSize(n int64) string { return strings.Replace(bytesize.Format(n), " ", "", 1) }

// stored is the parser that stores in dst what read makes of a value, or returns read's error.
func stored[T any](dst *T, read func(string) (T, error)) func(string) error {
	return func(v string) error {
		x, err := read(v)
		if err != nil {
			return err
		}
		*dst = x
		return nil
	}
}

func textSetting(dst *string) func(string) error {
	return stored(dst, func(v string) (string, error) { return v, nil })
}

// tokenSetting reads a credential sent in a header, where a space would split it.
func tokenSetting(dst *string) func(string) error {
	return stored(dst, func(v string) (string, error) {
		if strings.ContainsAny(v, " \t\r\n") {
			return "", errors.New("must not contain spaces")
		}
		return v, nil
	})
}

func userPasswordSetting(dst *string) func(string) error {
	return stored(dst, func(v string) (string, error) {
		if user, pass, ok := strings.Cut(v, ":"); !ok || user == "" || pass == "" {
			return "", errors.New(`must have the form "user:password"`)
		}
		return v, nil
	})
}

// baseURLSetting reads a service's base address: absolute http or https, without credentials
// or query, kept without a trailing slash.
func baseURLSetting(dst *string, example string) func(string) error {
	return urlSetting(dst, urlRule{example: example, trim: true})
}

// urlRule is what a URL setting accepts beyond an absolute URL naming a host and a real port,
// without credentials (which belong in the settings for them, not in an address that is logged).
type urlRule struct {
	example string
	// httpsOnly refuses http; query allows a query string (a JWK Set's address may carry one);
	// trim keeps the address without a trailing slash, to have paths joined to it.
	httpsOnly, query, trim bool
	// why is said after the example.
	why string
}

func urlSetting(dst *string, r urlRule) func(string) error {
	return stored(dst, func(v string) (string, error) {
		u, err := url.Parse(v)
		schemeOK := u != nil && (u.Scheme == "https" || (u.Scheme == "http" && !r.httpsOnly))
		if err != nil || !schemeOK || u.Host == "" || u.User != nil || (!r.query && (u.RawQuery != "" || u.Fragment != "")) {
			kind, without := "http or https", "credentials or query"
			if r.httpsOnly {
				kind = "https"
			}
			if r.query {
				without = "credentials"
			}
			return "", fmt.Errorf("must be an absolute %s URL without %s, such as %s%s", kind, without, r.example, r.why)
		}
		if err := netaddr.URL(u); err != nil {
			return "", err
		}
		if r.trim {
			v = strings.TrimSuffix(v, "/")
		}
		return v, nil
	})
}

// originsSetting reads a comma-separated list of browser origins, or "*" for any page
// (httpserver warns about it at start-up).
func originsSetting(dst *[]string) func(string) error {
	return func(v string) error {
		for _, o := range strings.Split(v, ",") {
			o = strings.TrimSpace(o)
			if o == "" {
				continue
			}
			if o != "*" {
				u, err := url.Parse(o)
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
					return fmt.Errorf("%q is not an origin such as https://app.example.com", o)
				}
				if err := netaddr.URL(u); err != nil {
					return err
				}
			}
			*dst = append(*dst, o)
		}
		return nil
	}
}

func boolSetting(dst *bool) func(string) error {
	return stored(dst, func(v string) (bool, error) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%q is not true or false", v)
		}
		return b, nil
	})
}

func intSetting(dst *int) func(string) error {
	return stored(dst, func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not a positive whole number", v)
		}
		return n, nil
	})
}

// countSetting reads a whole number where 0 means none; notCount is the message, with the
// value, of anything else.
func countSetting(dst *int, notCount string) func(string) error {
	return stored(dst, func(v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf(notCount, v)
		}
		return n, nil
	})
}

func durationSetting(dst *time.Duration) func(string) error {
	return stored(dst, func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("%q is not a positive duration such as 10s", v)
		}
		return d, nil
	})
}

func sizeSetting(dst *int64) func(string) error {
	return stored(dst, bytesize.Parse)
}

// isSHA256Fingerprint reports whether s is "SHA256:" and the unpadded base64 of 32 bytes.
func isSHA256Fingerprint(s string) bool {
	b64, ok := strings.CutPrefix(s, "SHA256:")
	if !ok || len(b64) != 43 {
		return false
	}
	_, err := base64.RawStdEncoding.DecodeString(b64)
	return err == nil
}

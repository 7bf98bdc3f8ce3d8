// Package transport carries GraphQL operations over HTTP for gqlgen's handler: GET and POST as
// GraphQL over HTTP specifies them, multipart uploads, Server-Sent Events (graphql-sse) and
// WebSockets (graphql-transport-ws and the legacy graphql-ws). gqlgen has transports of its own;
// these answer with the statuses the specification asks for, carry an error code on every
// error, bound what a client may send, and end their streams when the server shuts down.
//
// Streams are built for tens of thousands of mostly idle subscribers on one replica. A
// WebSocket or an HTTP/1.1 SSE stream takes its connection over and holds, while idle, one
// goroutine waiting without a buffer (package socket, and wsconn for the WebSocket protocol);
// subscribers of the same operation, variables and caller share one execution whose answers
// are encoded once (package fanout); and what each connection has to write is queued in an
// outbox and written by a small pool that never waits on a socket (package socket).
//
// One file per protocol, each above what it uses: transport.go assembles json.go (with
// batch.go), multipart.go, sse.go (ssesocket.go, ssestream.go, sseevent.go), websocket.go
// (graphqltransportws.go and legacyws.go over wssession.go), unsupported.go and
// writedeadline.go; below them are what they share: execute.go, incremental.go, response.go,
// stream.go, streams.go, params.go, bodyread.go, bodyscan.go, diskbudget.go, expiry.go and
// answer.go. No file calls into one above it (TestFilesReadTopDown).
package transport

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	gqltransport "github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/advisorhq/gateway/internal/diskbudget"
	"github.com/advisorhq/gateway/internal/gqlrun"
	"github.com/advisorhq/gateway/internal/transport/fanout"
)

// Share decides whether a subscription may share its execution with others that ask for it in
// the same words (see fanout.Share).
type Share = fanout.Share

// Feed is what a subscription's resolver tells of its stream beyond its responses: where each
// leaves the stream, and why the stream ended (see fanout.Feed).
type Feed = fanout.Feed

// Track gives a subscription about to be dispatched its Feed (see fanout.Track).
type Track = fanout.Track

// Config is what the transports need.
type Config struct {
	// AllowedOrigins may open a WebSocket from a browser page, besides the gateway's own
	// pages. Browsers apply no CORS to WebSockets, so the transport checks the origin itself.
	AllowedOrigins []string
	// MaxMessageBytes bounds one message a client sends on a WebSocket.
	MaxMessageBytes int64
	// MaxUploadBytes bounds a multipart request, its files included.
	MaxUploadBytes int64
	// MaxUploadFiles bounds the files of one multipart request.
	MaxUploadFiles int
	// UploadDiskBudget bounds the bytes all multipart uploads in flight may spill to disk; 0
	// is defaultUploadDiskBudget. DiskBudget, when set, is used instead.
	UploadDiskBudget int64
	// DiskBudget is the budget the uploads' temporary files draw from, shared with whatever
	// else keeps temporary files (the bulk loads' copies of their files), so that together
	// they stay within UPLOAD_DISK_BUDGET. Nil makes one of UploadDiskBudget for the uploads
	// alone.
	DiskBudget *diskbudget.Budget
	// WriteTimeout bounds how long one write of an answer may wait for its client to read:
	// each part of a one-off answer (written in pieces of writeChunk, so that a slow reader
	// that keeps reading is not cut off) and each write of a stream. A client that stops
	// reading loses its connection then, and gives back the goroutine and buffers it held.
	// 0 is DefaultWriteTimeout.
	WriteTimeout time.Duration
	// KeepAlive is the interval of keep-alive messages on WebSocket and SSE streams.
	KeepAlive time.Duration
	// MaxOperationsPerSocket bounds the operations running at once on one WebSocket; 0 is
	// defaultMaxOperations.
	MaxOperationsPerSocket int
	// Authenticate vets a WebSocket's credentials: the upgrade's headers merged with
	// connection_init's payload, since a browser cannot set headers on a WebSocket. A refusal
	// closes the socket with 4403. Nil accepts every connection. (HTTP requests are vetted
	// before they reach a transport, by their headers.)
	Authenticate func(ctx context.Context, headers http.Header) (context.Context, error)
	// Streams tracks the WebSocket and SSE streams, so that shutting down can end them. Nil
	// tracks them where no one can end them early.
	Streams *Streams
	// Log receives what goes wrong below the GraphQL level, such as a peer that stopped
	// answering pings. Nil logs nothing.
	Log *slog.Logger
	// Share decides which subscriptions may share one execution; nil shares none.
	Share Share
	// Track gives each execution of a subscription the Feed its resolvers fill: the position
	// a slow consumer is told to resume from, and why a stream its resolver ended ended, which
	// is then its last word (an error with a code: EVENTS_UNAVAILABLE, EVENTS_EXPIRED, ...).
	// Nil tracks nothing: a stream that ends says only that it is complete.
	Track Track
	// SubscriberBuffer is how many responses a subscriber may have waiting to be written before
	// it is ended as a slow consumer; 0 is the default, 256.
	SubscriberBuffer int
	// MessageTimeout bounds how long a WebSocket message may take to arrive once it has begun
	// to; 0 is the default, 10 s.
	MessageTimeout time.Duration
	// InitTimeout is how long a WebSocket client has to send connection_init before it is
	// closed with 4408; 0 is the default, 3 s.
	InitTimeout time.Duration
	// BatchLimit is how many operations a POST may batch in an array; 0 refuses batches.
	BatchLimit int
	// PersistedMaxAge is how long a client may cache the answer to a query it named by id
	// over GET; 0 caches none.
	PersistedMaxAge time.Duration
	// MaxRequestBytes bounds a JSON request body; 0 leaves it to the server in front.
	MaxRequestBytes int64
	// BodyBounds bound what a JSON request holds, checked before it is decoded; the zero value
	// is the defaults.
	BodyBounds BodyBounds
	// CountRefused counts a request refused before it became an operation (malformed, too
	// large, past BodyBounds, of a method or media type no transport serves), over JSON,
	// multipart and SSE alike, against its caller's rate limit, as the rate limits count every
	// operation. An error that says how HTTP answers it (a StatusError, 429) answers the
	// request instead of the refusal. Nil counts none.
	CountRefused func(context.Context) error

	// Workers, when set, run the concurrent fields of the operations answered over HTTP on
	// goroutines kept between fields (gqlrun.Workers); their owner closes them. Nil runs each
	// on a goroutine of its own.
	Workers *gqlrun.Workers

	// beforeRead, when set, runs on each WebSocket session's reader before it reads anything,
	// its init timer running: tests hold the reader there, as a gateway busy accepting
	// thousands of other clients holds it from its turn.
	beforeRead func()

	// plans keep what the executions of a document work out about its selection sets for
	// the executions that follow (gqlrun.Plans); withDefaults makes them, one for the server.
	plans *gqlrun.Plans
}

// New returns the transports in the order gqlgen must try them: the first whose Supports
// accepts a request serves it, and the last accepts everything, to answer what no other
// serves with a status and a message that say what to send instead. Every transport keeps cfg,
// its zero settings given their defaults, and reads it there.
func New(cfg Config) []graphql.Transport {
	c := cfg.withDefaults()
	fan := c.Streams.fanout(c.Share, c.Track, c.SubscriberBuffer)
	// The WebSocket transport takes its connection over and bounds its writes itself; the
	// others write through the ResponseWriter, which writeDeadlines bounds.
	bounded := func(t graphql.Transport) graphql.Transport { return writeDeadlines{t, c.WriteTimeout} }
	return []graphql.Transport{
		bounded(gqltransport.Options{}),
		websocketTransport{c, fan},
		bounded(sseTransport{c, fan}),
		bounded(jsonTransport{c}),
		bounded(newUploads(c)),
		bounded(unsupported{c}),
	}
}

// withDefaults is cfg with its zero settings given their defaults, for the transports to share.
func (cfg Config) withDefaults() *Config {
	if cfg.Streams == nil {
		cfg.Streams = NewStreams()
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.WriteTimeout = cmp.Or(cfg.WriteTimeout, DefaultWriteTimeout)
	cfg.MessageTimeout = cmp.Or(cfg.MessageTimeout, defaultMessageTimeout)
	cfg.InitTimeout = cmp.Or(cfg.InitTimeout, defaultInitTimeout)
	if cfg.MaxOperationsPerSocket <= 0 {
		cfg.MaxOperationsPerSocket = defaultMaxOperations
	}
	cfg.BodyBounds = cfg.BodyBounds.withDefaults()
	cfg.plans = &gqlrun.Plans{}
	return &cfg
}

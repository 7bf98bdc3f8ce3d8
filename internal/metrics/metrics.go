// Package metrics counts what the gateway does, in Prometheus's text format at /metrics: every
// upstream request by operation and status, every GraphQL operation by name and outcome, with
// latency histograms, and the Go runtime's own gauges.
package metrics

import (
	"context"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// maxOperationNames bounds the distinct operation names counted: clients choose the names, and
// each would otherwise be a new series without end.
const maxOperationNames = 200

// Metrics is the gateway's registry. It is safe for concurrent use.
type Metrics struct {
	reg              *prometheus.Registry
	upstream         *prometheus.CounterVec
	upstreamDuration *prometheus.HistogramVec
	operations       *prometheus.CounterVec
	opDuration       *prometheus.HistogramVec
	webhooks         *prometheus.CounterVec
	webhookUnknown   *prometheus.CounterVec
	persisted        *prometheus.CounterVec

	mu    sync.Mutex
	names map[string]bool
}

// New returns a registry with the gateway's metrics and the Go and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "advisor_upstream_requests_total",
			Help: "Requests to the Advisor service, by operation and HTTP status (error: no answer).",
		}, []string{"operation", "status"}),
		upstreamDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "advisor_upstream_request_duration_seconds",
			Help:    "Time to the Advisor service's answer, by operation.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
		}, []string{"operation"}),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "graphql_operations_total",
			Help: "GraphQL operations, by operation name and outcome (ok, or error when the response carries errors).",
		}, []string{"operation", "outcome"}),
		opDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "graphql_operation_duration_seconds",
			Help:    "Time to answer a GraphQL operation, by operation name and outcome.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
		}, []string{"operation", "outcome"}),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "advisor_webhook_events_total",
			Help: "Webhook deliveries received, by event type and outcome (stored, duplicate, invalid, unauthorized, unavailable).",
		}, []string{"type", "outcome"}),
		webhookUnknown: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "advisor_webhook_unknown_values_total",
			Help: "Values of stored webhook deliveries that the gateway does not know yet (an event type or an enumeration's value the service added, or a whole number wider than its field holds), by field (kind).",
		}, []string{"kind"}),
		persisted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "graphql_persisted_operations_total",
			Help: "Operations named by id, by outcome (trusted, hit, miss, registered, refused).",
		}, []string{"outcome"}),
		names: map[string]bool{},
	}
	m.reg.MustRegister(m.upstream, m.upstreamDuration, m.operations, m.opDuration, m.webhooks, m.webhookUnknown, m.persisted,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Gauge registers a gauge read from f at each scrape, such as the open subscriptions.
func (m *Metrics) Gauge(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ObserveUpstream records one request to the Advisor service.
func (m *Metrics) ObserveUpstream(operation, status string, elapsed time.Duration) {
	m.upstream.WithLabelValues(operation, status).Inc()
	m.upstreamDuration.WithLabelValues(operation).Observe(elapsed.Seconds())
}

// ObserveWebhook counts one webhook delivery. eventType must come from a fixed set (the
// specification's types, "Unknown" for the others, or "unknown" when there is none), so the
// series stay bounded.
func (m *Metrics) ObserveWebhook(eventType, outcome string) {
	m.webhooks.WithLabelValues(eventType, outcome).Inc()
}

// ObserveWebhookUnknown counts one value a stored delivery holds that the gateway does not know,
// by the field's name: the specification's field names are a fixed set.
func (m *Metrics) ObserveWebhookUnknown(field string) {
	m.webhookUnknown.WithLabelValues(field).Inc()
}

// ObservePersisted counts one operation named by id, or registered, by outcome: one of a fixed
// few, so the series stay bounded.
func (m *Metrics) ObservePersisted(outcome string) {
	m.persisted.WithLabelValues(outcome).Inc()
}

// Extension returns the gqlgen extension that times every GraphQL response.
func (m *Metrics) Extension() graphql.HandlerExtension { return extension{m} }

type extension struct{ m *Metrics }

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = extension{}

func (extension) ExtensionName() string                   { return "Metrics" }
func (extension) Validate(graphql.ExecutableSchema) error { return nil }

func (e extension) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	start := time.Now()
	resp := next(ctx)
	name := "anonymous"
	if graphql.HasOperationContext(ctx) {
		// The document's own name, which a client need not repeat in operationName.
		if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Name != "" {
			name = op.Name
		}
	}
	outcome := "ok"
	if resp != nil && len(resp.Errors) > 0 {
		outcome = "error"
	}
	name = e.m.label(name)
	e.m.operations.WithLabelValues(name, outcome).Inc()
	e.m.opDuration.WithLabelValues(name, outcome).Observe(time.Since(start).Seconds())
	return resp
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_]`)

// label is the series name for an operation: the name as sent, cut to a sane length, until
// maxOperationNames distinct names have been seen; later new names count as "other".
func (m *Metrics) label(name string) string {
	name = unsafeName.ReplaceAllString(name, "_")
	if len(name) > 64 {
		name = name[:64]
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.names[name] {
		if len(m.names) >= maxOperationNames {
			return "other"
		}
		m.names[name] = true
	}
	return name
}

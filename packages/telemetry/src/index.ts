/**
 * @jr2/telemetry — what both services' telemetry shares (issue 11 item 5, ADR-0420):
 * OpenTelemetry tracing over OTLP/HTTP JSON (off and free unless `OTEL_EXPORTER_OTLP_ENDPOINT`
 * is set), W3C `traceparent` across the Orchestrator → Harness hop, the span attribute names
 * (GenAI semantic conventions and `jr2.*`), and the Prometheus metric families with a Fastify
 * plugin serving `GET /metrics`.
 */
// The OpenTelemetry API types a caller of this package handles, so it needs no API import of its own.
export type { Attributes, Context, Span, Tracer } from "@opentelemetry/api";
export { ROOT_CONTEXT, SpanStatusCode } from "@opentelemetry/api";
export type { SpanUsage } from "./attributes.js";
export {
  CONTENT_ATTRIBUTE_MAX,
  contentAttributes,
  GEN_AI,
  GEN_AI_OPERATION_CHAT,
  JR2_ATTR,
  modelRequestSpanName,
  SPAN_NAMES,
  spanFailed,
  usageAttributes,
} from "./attributes.js";
export type { TelemetryEnv, TracingSettings } from "./env.js";
export { parseOtlpHeaders, readMetricsToken, readTracingSettings } from "./env.js";
export { type KvQueueRow, registerKvQueueMetrics } from "./kv-queue-metrics.js";
export type {
  HarnessMetrics,
  Jr2Metrics,
  MetricLabel,
  MetricsOptions,
  MetricsService,
  OrchestratorMetrics,
} from "./metrics.js";
export {
  createMetrics,
  FINISH_REASON_LABELS,
  finishReasonLabel,
  METRIC_LABELS,
  refusalLabel,
} from "./metrics.js";
export type { MetricsRouteOptions } from "./metrics-route.js";
export { metricsBearerCheck, metricsRoute, PROMETHEUS_CONTENT_TYPE } from "./metrics-route.js";
export type { PrometheusSample, PrometheusScrape } from "./prometheus-text.js";
export { parsePrometheusText, sampleSum } from "./prometheus-text.js";
export type { HeaderCarrier } from "./traceparent.js";
export {
  contextFromTraceparent,
  extractTraceparent,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
  traceHeaders,
  traceparentOf,
  withSpan,
} from "./traceparent.js";
export type { Tracing, TracingOptions } from "./tracing.js";
export { startTracing, TRACING_OFF } from "./tracing.js";

import { ProxyTracerProvider, type Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import { readTracingSettings, type TelemetryEnv } from "./env.js";

/**
 * A service's tracing (issue 11 item 5, ADR-0420): off and free unless an OTLP endpoint is set;
 * on, spans are batched and exported over OTLP/HTTP **JSON** (a receiver needs no protobuf).
 * Nothing is registered globally — no global tracer provider, context manager or propagator —
 * so two services (or two tests) in one process never share an exporter: callers pass the
 * `tracer` and a parent `Context` explicitly (see traceparent.ts).
 */
export interface Tracing {
  /** `true` when spans are recorded and exported. */
  readonly enabled: boolean;
  /**
   * The tracer. Off, it is OpenTelemetry's no-op tracer: a span costs one small object, records
   * nothing, and a child of a remote parent keeps that parent's context (so a `traceparent`
   * passes through a service whose tracing is off).
   */
  readonly tracer: Tracer;
  /** `JR2_OTEL_CAPTURE_CONTENT=true`: spans may carry content (see `contentAttributes`). */
  readonly captureContent: boolean;
  /** Exports every ended span now; resolves when sent or failed (never rejects). */
  flush(): Promise<void>;
  /** Flushes, then stops exporting; later spans are dropped. Never rejects. */
  shutdown(): Promise<void>;
}

/** What {@link startTracing} is built from. */
export interface TracingOptions {
  /** `service.name` of every span (e.g. `jr2-orchestrator`, `jr2-harness`); `OTEL_SERVICE_NAME` overrides. */
  serviceName: string;
  /** `service.version`, when known. */
  serviceVersion?: string;
  /** The environment to read (`OTEL_EXPORTER_OTLP_ENDPOINT`, …); only main passes `process.env`. */
  env: TelemetryEnv;
  /** Replaces the OTLP exporter (tests); tracing is then on whatever the environment says. */
  exporter?: SpanExporter;
}

const TRACER_NAME = "@jr2/telemetry";

/** Tracing that is off: the no-op tracer, nothing to flush. */
export const TRACING_OFF: Tracing = Object.freeze({
  enabled: false,
  // A provider never given a delegate: its tracers stay no-op even if someone registers a
  // global tracer provider later.
  tracer: new ProxyTracerProvider().getTracer(TRACER_NAME),
  captureContent: false,
  flush: async () => {},
  shutdown: async () => {},
});

/**
 * Starts a service's tracing from its environment.
 * @throws Error when an OTLP endpoint variable is set but is not an http(s) URL
 * @example
 * const tracing = startTracing({ serviceName: "jr2-harness", env: process.env });
 * const span = tracing.tracer.startSpan("jr2.submission", {}, extractTraceparent(request.headers));
 * span.end();
 * await tracing.shutdown();
 */
export function startTracing(opts: TracingOptions): Tracing {
  const settings = readTracingSettings(opts.env);
  if (settings.url === undefined && opts.exporter === undefined)
    return settings.captureContent ? { ...TRACING_OFF, captureContent: true } : TRACING_OFF;
  const exporter =
    opts.exporter ??
    new OTLPTraceExporter({
      url: settings.url,
      headers: settings.headers,
      // Exports must not hold a stopping service open.
      keepAlive: false,
    });
  const serviceName = opts.env.OTEL_SERVICE_NAME?.trim() || opts.serviceName;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: serviceName,
      ...(opts.serviceVersion ? { [ATTR_SERVICE_VERSION]: opts.serviceVersion } : {}),
    }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const quiet = (p: Promise<void>) => p.catch(() => {});
  return {
    enabled: true,
    tracer: provider.getTracer(TRACER_NAME, opts.serviceVersion),
    captureContent: settings.captureContent,
    flush: () => quiet(provider.forceFlush()),
    shutdown: () => quiet(provider.shutdown()),
  };
}

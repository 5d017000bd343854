import {
  type Context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  trace,
} from "@opentelemetry/api";
import { TRACE_PARENT_HEADER, TRACE_STATE_HEADER, W3CTraceContextPropagator } from "@opentelemetry/core";

/**
 * The W3C trace context (`traceparent`, `tracestate`) across the Orchestrator → Harness hop
 * (issue 11 item 5): the Orchestrator sends it on admissions, the Harness continues the trace
 * and sends its own on surface reads and picks, so one Turn is one trace across both services.
 * Explicit contexts, no global propagator: a service passes the `Context` it holds.
 */

/** The header names (lower case, as Node delivers them). */
export const TRACEPARENT_HEADER = TRACE_PARENT_HEADER;
export const TRACESTATE_HEADER = TRACE_STATE_HEADER;

const propagator = new W3CTraceContextPropagator();

/** Request headers as Node or Fastify hand them over. */
export type HeaderCarrier = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The context a request's `traceparent` (and `tracestate`) names: a remote parent for the
 * spans the request starts. `ROOT_CONTEXT` when the header is absent or malformed (a new
 * trace begins; a bad header is never an error).
 * @example tracer.startSpan(SPAN_NAMES.SUBMISSION, {}, extractTraceparent(request.headers))
 */
export function extractTraceparent(headers: HeaderCarrier): Context {
  return propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
}

/**
 * The context of a stored `traceparent` string (e.g. a Turn's, saved with its ledger entry so a
 * restore continues the trace); `ROOT_CONTEXT` when it is not a valid one.
 */
export function contextFromTraceparent(traceparent: string, tracestate?: string): Context {
  return extractTraceparent({
    [TRACEPARENT_HEADER]: traceparent,
    ...(tracestate ? { [TRACESTATE_HEADER]: tracestate } : {}),
  });
}

/**
 * Headers carrying `ctx`'s span context: `{ traceparent, tracestate? }` when `ctx` holds a valid
 * span context (a recording span, or a remote parent passed through), `{}` otherwise. Merge
 * them into a request's headers.
 * @example fetch(url, { headers: { ...traceHeaders(ctx), authorization } })
 */
export function traceHeaders(ctx: Context): Record<string, string> {
  const out: Record<string, string> = {};
  propagator.inject(ctx, out, defaultTextMapSetter);
  return out;
}

/** `ctx`'s `traceparent` value, or `undefined` when `ctx` holds no valid span context. */
export function traceparentOf(ctx: Context): string | undefined {
  return traceHeaders(ctx)[TRACEPARENT_HEADER];
}

/** `parent` with `span` as its active span: the parent context of `span`'s children. */
export function withSpan(parent: Context, span: Span): Context {
  return trace.setSpan(parent, span);
}

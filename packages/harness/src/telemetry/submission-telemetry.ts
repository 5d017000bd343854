import { AsyncLocalStorage } from "node:async_hooks";
import {
  type Context,
  contentAttributes,
  finishReasonLabel,
  GEN_AI,
  GEN_AI_OPERATION_CHAT,
  type HarnessMetrics,
  JR2_ATTR,
  modelRequestSpanName,
  SPAN_NAMES,
  spanFailed,
  type Tracing,
  traceHeaders,
  usageAttributes,
  withSpan,
} from "@jr2/telemetry";
import type { StreamEvent, SubmissionRequest } from "@jr2/wire";
import type { RetryNotice } from "../provider/provider-retry.js";
import type { ReportedUsage } from "../provider/provider-usage.js";

/**
 * The Harness's telemetry of a Submission (issue 11 item 5, ADR-0420): a `jr2.submission` span
 * continuing the Turn's trace from the admission's `traceparent`, a `chat <model>` child per
 * model request with the GenAI attributes, and the Harness's counters. The Submission's scope
 * reaches the model request (model-request.ts, inside pi's loop) through an AsyncLocalStorage,
 * as the fetch probe does: pi's seat offers no other path, and engine-pi.ts stays untouched.
 * Spans carry no content and no iid unless `JR2_OTEL_CAPTURE_CONTENT=true`.
 */

/** The Harness's tracing and counters, built once by `buildHarness`. */
export interface HarnessTelemetry {
  tracing: Tracing;
  metrics: HarnessMetrics;
}

/** One Submission's trace: run its work inside `run`, then `end` it with its settlement. */
export interface SubmissionTrace {
  /** `{ traceparent, tracestate? }` of the Submission span: sent on surface reads and picks. */
  headers: Record<string, string>;
  /** Runs `fn` with this Submission as the scope of the model requests it makes. */
  run<T>(fn: () => Promise<T>): Promise<T>;
  end(settlement: Settlement): void;
}

/** How a Submission ended (turn.ts's `Settlement`, named from the wire so no import circle forms). */
type Settlement = Extract<StreamEvent, { type: "submission-settled" }>;

interface Scope {
  telemetry: HarnessTelemetry;
  /** The Submission span's context: the parent of each model request span. */
  context: Context;
}

const scope = new AsyncLocalStorage<Scope>();

/** The model entry a Submission asks for (its own dial, else the definition's). */
const modelOf = (req: SubmissionRequest) => req.model ?? req.definition.model;

/**
 * Starts the Submission's span as a child of `parent` (the admission's `traceparent`, or a new
 * trace). Without telemetry the trace is inert and `headers` is `{}`.
 */
export function startSubmissionTrace(
  telemetry: HarnessTelemetry | undefined,
  parent: Context,
  sub: { iid: string; submissionId: string; req: SubmissionRequest },
): SubmissionTrace {
  if (!telemetry) return { headers: {}, run: (fn) => fn(), end: () => {} };
  const { tracing, metrics } = telemetry;
  const span = tracing.tracer.startSpan(
    SPAN_NAMES.SUBMISSION,
    {
      attributes: {
        [JR2_ATTR.SUBMISSION_ID]: sub.submissionId,
        [JR2_ATTR.SUBMISSION_KIND]: sub.req.kind,
        [JR2_ATTR.AGENT]: sub.req.agent,
        [JR2_ATTR.MODEL_ENTRY]: modelOf(sub.req),
        ...(sub.req.turnId ? { [JR2_ATTR.TURN_ID]: sub.req.turnId } : {}),
        ...contentAttributes(tracing, { [JR2_ATTR.IID]: sub.iid, [GEN_AI.CONVERSATION_ID]: sub.iid }),
      },
    },
    parent,
  );
  const context = withSpan(parent, span);
  return {
    headers: traceHeaders(context),
    run: (fn) => scope.run({ telemetry, context }, fn),
    end(settlement) {
      metrics.submissionsSettled.inc({ model: modelOf(sub.req), outcome: settlement.outcome });
      span.setAttribute(JR2_ATTR.OUTCOME, settlement.outcome);
      if (settlement.outcome === "failed") spanFailed(span, settlement.error?.type ?? "failed");
      span.end();
    },
  };
}

/** What a model request is, for its span. */
export interface ModelRequestSite {
  /** The model entry's name (the metrics' `model` label). */
  entry: string;
  /** The model id sent (`gen_ai.request.model`). */
  modelId: string;
  maxTokens: number;
  temperature: number | undefined;
}

/** How a model request ended, as its span and counters record it. */
export interface ModelRequestEnd {
  kind: "answer" | "failed" | "aborted";
  /** The usage the server reported, when any of it was seen. */
  usage: ReportedUsage | undefined;
  /** The server's finish reason, when it gave one. */
  finishReason: string | undefined;
  /** A failure's type (`provider`, `stream-incomplete`, `replay-lint`, …): `error.type`. */
  errorType?: string;
  /**
   * The request's messages as sent and the answer's content, as JSON — called only with content
   * capture on, so nothing is serialized for a span that may not carry it.
   */
  content?: () => { input: string | undefined; output: string | undefined };
}

/** A model request being observed: report its retries, then its end, once. */
export interface ModelRequestObservation {
  retried(n: RetryNotice): void;
  ended(end: ModelRequestEnd): void;
}

const UNOBSERVED: ModelRequestObservation = { retried: () => {}, ended: () => {} };

/**
 * Starts observing one model request (retries included: they are one request) in the current
 * Submission's scope; outside any scope (no telemetry) it observes nothing.
 */
export function observeModelRequest(site: ModelRequestSite): ModelRequestObservation {
  const current = scope.getStore();
  if (!current) return UNOBSERVED;
  const { tracing, metrics } = current.telemetry;
  const span = tracing.tracer.startSpan(
    modelRequestSpanName(site.modelId),
    {
      attributes: {
        [GEN_AI.OPERATION_NAME]: GEN_AI_OPERATION_CHAT,
        [GEN_AI.PROVIDER_NAME]: "openai",
        [GEN_AI.REQUEST_MODEL]: site.modelId,
        [GEN_AI.REQUEST_MAX_TOKENS]: site.maxTokens,
        ...(site.temperature !== undefined ? { [GEN_AI.REQUEST_TEMPERATURE]: site.temperature } : {}),
        [JR2_ATTR.MODEL_ENTRY]: site.entry,
      },
    },
    current.context,
  );
  let attempts = 1;
  let done = false;
  return {
    retried(n) {
      attempts = n.attempt + 1;
      // The notice's message names the endpoint URL: only its cause and numbers go on the span.
      span.addEvent("jr2.retry", {
        attempt: n.attempt,
        "jr2.retry.cause": n.cause,
        "jr2.retry.wait_ms": n.waitMs,
      });
    },
    ended(end) {
      if (done) return;
      done = true;
      countModelRequest(metrics, site.entry, end);
      span.setAttributes({
        [JR2_ATTR.ATTEMPTS]: attempts,
        ...(end.usage ? usageAttributes(reported(end.usage)) : {}),
        ...(end.usage && end.usage.unreported.length > 0
          ? { [JR2_ATTR.USAGE_UNREPORTED]: end.usage.unreported }
          : {}),
        ...(end.finishReason ? { [GEN_AI.RESPONSE_FINISH_REASONS]: [end.finishReason] } : {}),
      });
      const content = tracing.captureContent && tracing.enabled ? end.content?.() : undefined;
      if (content)
        span.setAttributes(
          contentAttributes(tracing, {
            [GEN_AI.INPUT_MESSAGES]: content.input,
            [GEN_AI.OUTPUT_MESSAGES]: content.output,
          }),
        );
      if (end.kind === "failed") spanFailed(span, end.errorType ?? "failed");
      if (end.kind === "aborted") span.setAttribute(JR2_ATTR.OUTCOME, "aborted");
      span.end();
    },
  };
}

/** The counters of one model request: tokens only where the server reported them. */
function countModelRequest(metrics: HarnessMetrics, model: string, end: ModelRequestEnd): void {
  const finish_reason =
    end.kind === "failed"
      ? "error"
      : end.kind === "aborted"
        ? "aborted"
        : finishReasonLabel(end.finishReason);
  metrics.modelRequests.inc({ model, finish_reason });
  if (!end.usage) return;
  const u = reported(end.usage);
  if (u.promptTokens !== null) metrics.promptTokens.inc({ model }, u.promptTokens);
  if (u.cachedTokens !== null) metrics.cachedTokens.inc({ model }, u.cachedTokens);
  if (u.completionTokens !== null) metrics.outputTokens.inc({ model }, u.completionTokens);
  if (end.usage.unreported.length > 0) metrics.usageUnreported.inc({ model });
}

/** The usage with `null` for each field the server did not report (ADR-0400). */
function reported(u: ReportedUsage) {
  const has = (f: "promptTokens" | "cachedTokens" | "completionTokens") => !u.unreported.includes(f);
  return {
    promptTokens: has("promptTokens") ? u.promptTokens : null,
    cachedTokens: has("cachedTokens") ? u.cachedTokens : null,
    completionTokens: has("completionTokens") ? u.completionTokens : null,
  };
}

/**
 * One model request's life in the Harness, top-down as named phases (open → shape and lint →
 * attempts → report → deliver). About 300 lines on purpose: the phases read in order in one
 * file, as STYLE.md asks of the engine; one attempt is model-attempt.ts, call ingestion
 * answer-ingestion.ts, how pi's stream ends answer-delivery.ts. The transcript (ADR-0159) sees
 * each body once as it first goes out and each attempt's answer (run-state.ts streams them).
 */
import {
  type AssistantMessage,
  createAssistantMessageEventStream,
  type SimpleStreamOptions,
  type streamSimple,
} from "@mariozechner/pi-ai";
import { type ModelRequestObservation, observeModelRequest } from "../telemetry/submission-telemetry.js";
import type { AnswerReport } from "../transcript/transcript-answer.js";
import { type Delivery, deliveryOf, emptyAssistant } from "./answer/answer-delivery.js";
import { ingestCalls, type NeverRun } from "./answer/answer-ingestion.js";
import { installFetchProbe } from "./fetch-probe.js";
import type { EndpointLimiter } from "./limiter.js";
import { type AttemptRequest, type AttemptValue, runAttempt } from "./model-attempt.js";
import type { ResolvedRetryPolicy } from "./models.js";
import { describeSite, type RequestSite } from "./provider-errors.js";
import { type AttemptSeen, type RetryNotice, type RetryOutcome, requestWithRetry } from "./provider-retry.js";
import { type ReportedUsage, reportedUsage } from "./provider-usage.js";
import { type LintMode, lintModeFromEnv, lintPayload } from "./replay/replay-lint.js";
import { replayPayloadHook } from "./replay/replay-policy.js";

/**
 * One model answer for pi (the seat's `streamFn`): endpoint slot, pinned request options, the
 * replay-lint on the payload, retries with the same bytes, and ingestion of the answer — tool
 * arguments normalized once, usage read from the wire. pi sees only a finished answer or one
 * error; nothing partial is ever executed or delivered.
 * @see SPEC §7.2, §5.6; docs/adr/0401-provider-failures.md, docs/adr/0402-replayed-history.md
 */

type PiModel = Parameters<typeof streamSimple>[0];
type PiContext = Parameters<typeof streamSimple>[1];

export { emptyAssistant } from "./answer/answer-delivery.js";
export type { NeverRun } from "./answer/answer-ingestion.js";

/** What one answer's request needs from its run. */
export interface AnswerRun {
  /** The model entry's name, for messages. */
  entry: string;
  policy: ResolvedRetryPolicy;
  apiKey: string;
  aborted: boolean;
  neverRun: Map<string, NeverRun>;
  /** Arguments as parsed from the model's bytes, by tool-call id (pi's are repaired). */
  parsedArgs: Map<string, unknown>;
  failure: { type: string; message: string; cause?: string } | undefined;
  usage(u: ReportedUsage & { finishReason?: string }): void;
  retry(n: RetryNotice): void;
  /** The replay-lint repaired a request (production only). */
  lintRepaired(problems: string[]): void;
  /** A request body as it goes to the provider, with pi's messages it was built from (ADR-0159). */
  requestSent(body: unknown, contextMessages: readonly object[]): void;
  /** An attempt's answer: the one pi is given (`replayed`) or one the conversation never saw. */
  answered(report: AnswerReport): void;
}

export interface StreamFnConfig {
  limiter: EndpointLimiter;
  temperature: number | undefined;
  /** The run in progress, or `undefined` between runs. */
  current(): AnswerRun | undefined;
  lintMode?: LintMode;
  /**
   * Shapes each request body before the replay-lint (e.g. a per-template reasoning-echo policy);
   * it must be a pure function of the body, so every request stays a byte extension.
   */
  shapePayload?: (params: Record<string, unknown>) => void;
}

/** Builds the seat's streamFn: each call is one model request, run as the phases below. */
export function createStreamFn(cfg: StreamFnConfig) {
  installFetchProbe();
  const lintMode = cfg.lintMode ?? lintModeFromEnv();
  return (model: PiModel, context: PiContext, options: SimpleStreamOptions | undefined) => {
    const out = createAssistantMessageEventStream();
    const run = cfg.current();
    if (!run || options?.signal?.aborted || run.aborted) {
      finish(out, emptyAssistant(model, "aborted", "aborted"), "aborted");
      return out;
    }
    const req = openRequest(cfg, lintMode, run, model, context, options, out);
    void answer(req);
    return out;
  };
}

/** Ends pi's stream with one error (pi stores `msg`). */
function finish(out: AnswerStream, msg: AssistantMessage, reason: "error" | "aborted"): void {
  out.push({ type: "error", reason, error: msg });
  out.end();
}

type AnswerStream = ReturnType<typeof createAssistantMessageEventStream>;

/** The bytes a request sends and the lint's refusal, set once by the first attempt's payload hook. */
interface PayloadState {
  /** The first attempt's body, as sent; every retry sends it again. */
  bytes: string | undefined;
  lintError: string | undefined;
}

/** One model request in flight: what every phase reads. */
interface RequestState {
  cfg: StreamFnConfig;
  run: AnswerRun;
  model: PiModel;
  out: AnswerStream;
  signal: AbortSignal | undefined;
  site: RequestSite;
  payload: PayloadState;
  attempt: AttemptRequest;
  /** Attempts started so far (the transcript's `attempt`). */
  tries: number;
  /** The request's span and counters (ADR-0420); inert outside a Submission's telemetry scope. */
  observed: ModelRequestObservation;
}

/** Phase 1 (synchronous, before pi gets the stream): the site, the payload hook, pinned options, the span. */
function openRequest(
  cfg: StreamFnConfig,
  lintMode: LintMode,
  run: AnswerRun,
  model: PiModel,
  context: PiContext,
  options: SimpleStreamOptions | undefined,
  out: AnswerStream,
): RequestState {
  const site: RequestSite = {
    entry: run.entry,
    id: model.id,
    baseUrl: model.baseUrl,
    maxTokens: model.maxTokens,
    contextWindow: model.contextWindow,
  };
  const payload: PayloadState = { bytes: undefined, lintError: undefined };
  const pinned: SimpleStreamOptions = {
    ...options,
    apiKey: run.apiKey,
    maxTokens: model.maxTokens,
    temperature: cfg.temperature,
    cacheRetention: "short",
    // Retries are ours (bounded, reported, same bytes); the OpenAI client's are off.
    maxRetries: 0,
    // Our attempt timer (retry.requestTimeoutMs) covers the whole request; the client's own
    // timeout must never fire first (its abort would read as a request that was never sent).
    timeoutMs: 2 ** 31 - 1,
    sessionId: undefined,
    onPayload: (built: unknown) => shapeAndLint(cfg, lintMode, run, model, payload, built, context.messages),
  };
  const observed = observeModelRequest({
    entry: run.entry,
    modelId: model.id,
    maxTokens: model.maxTokens,
    temperature: cfg.temperature,
  });
  const attempt: AttemptRequest = {
    limiter: cfg.limiter,
    model,
    context,
    pinned,
    signal: options?.signal,
    lintError: () => payload.lintError,
    errored: (message) => emptyAssistant(model, "error", message),
  };
  return { cfg, run, model, out, signal: options?.signal, site, payload, attempt, tries: 0, observed };
}

/**
 * The payload hook (pi's `onPayload`): the first attempt's body is shaped, linted and kept;
 * a retry sends those bytes again (they hit the prefix cache). A lint refusal is kept and rethrown.
 */
function shapeAndLint(
  cfg: StreamFnConfig,
  lintMode: LintMode,
  run: AnswerRun,
  model: PiModel,
  payload: PayloadState,
  built: unknown,
  /** pi's messages the body was built from (the transcript reads their tags). */
  messages: readonly object[],
): unknown {
  if (payload.bytes !== undefined) return JSON.parse(payload.bytes);
  // Earlier reasoning dropped or echoed per model entry (ADR-0310), before the lint reads it.
  const params = replayPayloadHook(built, model);
  try {
    cfg.shapePayload?.(params as Record<string, unknown>);
    const problems = lintPayload(params as { messages?: unknown }, lintMode);
    if (problems.length > 0) run.lintRepaired(problems);
  } catch (err) {
    payload.lintError = err instanceof Error ? err.message : String(err);
    throw err;
  }
  payload.bytes = JSON.stringify(params);
  // Once per request, as it first goes out: the transcript reads the body, never changes it.
  run.requestSent(params, messages);
  return params;
}

/** Phases 2–4: attempts with retries, then the refused lint or the outcome reported and delivered. */
async function answer(req: RequestState): Promise<void> {
  const outcome = await attempts(req);
  if (req.payload.lintError !== undefined) return refuseLinted(req, req.payload.lintError);
  report(req, outcome);
  deliver(req, deliveryOf(outcome));
}

/** Phase 2: attempts until an answer, a fatal failure, the bound or an abort (ADR-0401). */
function attempts(req: RequestState): Promise<RetryOutcome<AttemptValue>> {
  let last: AttemptSeen<AttemptValue> | undefined;
  return requestWithRetry<AttemptValue>({
    policy: req.run.policy,
    site: req.site,
    signal: req.signal,
    onRetry: (n) => {
      req.observed.retried(n);
      req.run.retry(n);
      // The retried attempt's answer never reaches the conversation: streamed as not replayed.
      if (last) req.run.answered(unseen(req, last, n.attempt, `${n.cause}: ${siteless(req, n.message)}`));
    },
    usable: (seen) => seen.probe.sawFinishReason,
    attempt: async (startTimeout) => {
      req.tries++;
      const seen = await runAttempt(req.attempt, startTimeout);
      last = seen.kind === "ended" ? seen : undefined;
      return seen;
    },
  });
}

/** An attempt's answer that the conversation never sees (retried, failed or aborted). */
function unseen(
  req: RequestState,
  seen: AttemptSeen<AttemptValue>,
  attempt: number,
  error: string,
): AnswerReport {
  return {
    attempt,
    message: seen.value.message,
    raw: seen.value.raw,
    probe: seen.probe,
    replayed: false,
    error,
  };
}

/** A failure's message without the request's site (the transcript names the model entry itself). */
function siteless(req: RequestState, message: string): string {
  const where = `${describeSite(req.site)}: `;
  return message.startsWith(where) ? message.slice(where.length) : message;
}

/** Phase 3a: the replay-lint refused the history — a `replay-lint` failure, nothing sent again. */
function refuseLinted(req: RequestState, lintError: string): void {
  req.observed.ended({
    kind: "failed",
    errorType: "replay-lint",
    usage: undefined,
    finishReason: undefined,
  });
  req.run.failure = { type: "replay-lint", message: lintError };
  finish(req.out, emptyAssistant(req.model, "error", lintError), "error");
}

/** Phase 3b: the usage read from the wire (to the run) and the request's span ended. */
function report(req: RequestState, outcome: RetryOutcome<AttemptValue>): void {
  const seen = outcome.seen;
  const usage =
    seen && (seen.probe.usage || seen.probe.timings || outcome.kind === "answer")
      ? reportedUsage(seen.probe)
      : undefined;
  if (usage)
    req.run.usage({
      ...usage,
      ...(seen?.probe.finishReason ? { finishReason: seen.probe.finishReason } : {}),
    });
  const answered = outcome.kind === "answer" ? outcome.seen.value.message : undefined;
  req.observed.ended({
    kind: outcome.kind === "answer" && !answered ? "failed" : outcome.kind,
    usage,
    finishReason: seen?.probe.finishReason,
    ...(outcome.kind === "failed" ? { errorType: outcome.type } : {}),
    ...(outcome.kind === "answer" && !answered ? { errorType: "no-answer" } : {}),
    // Read only when content capture is on (JR2_OTEL_CAPTURE_CONTENT=true).
    content: () => ({
      input:
        req.payload.bytes === undefined ? undefined : JSON.stringify(JSON.parse(req.payload.bytes).messages),
      output: answered ? JSON.stringify(answered.content) : undefined,
    }),
  });
}

/** Phase 4: pi gets the finished answer (tool calls ingested) or exactly one error. */
function deliver(req: RequestState, delivery: Delivery): void {
  const { run, model, out } = req;
  if (delivery.kind === "error") {
    if (delivery.failure) run.failure = delivery.failure;
    const why = delivery.failure
      ? `${delivery.failure.cause ?? delivery.failure.type}: ${siteless(req, delivery.message)}`
      : delivery.message;
    if (delivery.seen) run.answered(unseen(req, delivery.seen, req.tries, why));
    finish(out, emptyAssistant(model, delivery.reason, delivery.message), delivery.reason);
    return;
  }
  const { message, raw } = delivery;
  ingestCalls(run, message, raw);
  run.answered({ attempt: req.tries, message, raw, probe: delivery.seen.probe, replayed: true });
  out.push({ type: "done", reason: message.stopReason as "stop" | "length" | "toolUse", message });
  out.end();
}

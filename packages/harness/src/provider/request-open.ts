import type { SimpleStreamOptions } from "@mariozechner/pi-ai";
import { observeModelRequest } from "../telemetry/submission-telemetry.js";
import { emptyAssistant } from "./answer/answer-delivery.js";
import type { AttemptRequest } from "./model-attempt.js";
import type { RequestSite } from "./provider-errors.js";
import { type LintMode, lintPayload } from "./replay/replay-lint.js";
import { replayPayloadHook } from "./replay/replay-policy.js";
import type {
  AnswerRun,
  AnswerStream,
  PayloadState,
  PiContext,
  PiModel,
  RequestState,
  StreamFnConfig,
} from "./request-state.js";

/**
 * Phase 1 of one model request (model-request.ts): the site, the pinned options, the payload
 * hook that shapes, lints and keeps the first attempt's bytes, and the request's span.
 * @see SPEC §7.2; docs/adr/0402-replayed-history.md, docs/adr/0310-reasoning-replay-per-template.md
 */

/** Phase 1 (synchronous, before pi gets the stream): the site, the payload hook, pinned options, the span. */
export function openRequest(
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
    // Our stream timers (first token, then idle: stream-timers.ts) bound the request; the client's own
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
    kv: run.kv,
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

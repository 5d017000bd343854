/**
 * One model request's life in the Harness, top-down as named phases: open (request-open.ts:
 * site, pinned options, the payload hook that shapes and lints) → attempts → the refused lint,
 * or report → deliver. One attempt is model-attempt.ts, call ingestion answer-ingestion.ts, how
 * pi's stream ends answer-delivery.ts; the shapes the phases share are request-state.ts. The
 * transcript (ADR-0159) sees each body once as it first goes out and each attempt's answer
 * (run-state.ts streams them).
 */
import {
  type AssistantMessage,
  createAssistantMessageEventStream,
  type SimpleStreamOptions,
} from "@mariozechner/pi-ai";
import type { AnswerReport } from "../transcript/transcript-answer.js";
import { type Delivery, deliveryOf, emptyAssistant } from "./answer/answer-delivery.js";
import { ingestCalls } from "./answer/answer-ingestion.js";
import { installFetchProbe } from "./fetch-probe.js";
import { type AttemptValue, runAttempt } from "./model-attempt.js";
import { describeSite } from "./provider-errors.js";
import { type AttemptSeen, type RetryOutcome, requestWithRetry } from "./provider-retry.js";
import { reportedUsage } from "./provider-usage.js";
import { lintModeFromEnv } from "./replay/replay-lint.js";
import { openRequest } from "./request-open.js";
import type { AnswerStream, PiContext, PiModel, RequestState, StreamFnConfig } from "./request-state.js";

/**
 * One model answer for pi (the seat's `streamFn`): endpoint slot, pinned request options, the
 * replay-lint on the payload, retries with the same bytes, and ingestion of the answer — tool
 * arguments normalized once, usage read from the wire. pi sees only a finished answer or one
 * error; nothing partial is ever executed or delivered.
 * @see SPEC §7.2, §5.6; docs/adr/0401-provider-failures.md, docs/adr/0402-replayed-history.md
 */

export { emptyAssistant } from "./answer/answer-delivery.js";
export type { NeverRun } from "./answer/answer-ingestion.js";
export type { AnswerRun, StreamFnConfig } from "./request-state.js";

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
    attempt: async (startTimeout, progress) => {
      req.tries++;
      const seen = await runAttempt(req.attempt, startTimeout, progress);
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
  if (usage && usage.unreported.length === 0) req.run.kv?.observe(usage.promptTokens, usage.cachedTokens);
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

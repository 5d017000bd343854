import {
  type AssistantMessage,
  type AssistantMessageEvent,
  createAssistantMessageEventStream,
  type SimpleStreamOptions,
  streamSimple,
} from "@mariozechner/pi-ai";
import { installFetchProbe, newProbe, withFetchProbe } from "./fetch-probe.js";
import type { EndpointLimiter } from "./limiter.js";
import type { ResolvedRetryPolicy } from "./models.js";
import type { RequestSite } from "./provider-errors.js";
import { type RetryNotice, requestWithRetry } from "./provider-retry.js";
import { type ReportedUsage, reportedUsage } from "./provider-usage.js";
import { type LintMode, lintModeFromEnv, lintPayload, normalizeArguments } from "./replay-lint.js";
import { replayPayloadHook } from "./replay-policy.js";
import { observeModelRequest } from "./submission-telemetry.js";

/**
 * One model answer for pi (the seat's `streamFn`): endpoint slot, pinned request options, the
 * replay-lint on the payload, retries with the same bytes, and ingestion of the answer — tool
 * arguments normalized once, usage read from the wire. pi sees only a finished answer or one
 * error; nothing partial is ever executed or delivered.
 * @see SPEC §7.2, §5.6; docs/adr/0401-provider-failures.md, docs/adr/0402-replayed-history.md
 */

type PiModel = Parameters<typeof streamSimple>[0];
type PiContext = Parameters<typeof streamSimple>[1];

/** Why a tool call is not run: from ingestion (`truncated`, `not-json`, `not-object`) or later. */
export type NeverRun =
  | { reason: "truncated" }
  | { reason: "not-json"; sent: string }
  | { reason: "not-object"; sent: string; kind: string };

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

/** Builds the seat's streamFn. */
export function createStreamFn(cfg: StreamFnConfig) {
  installFetchProbe();
  const lintMode = cfg.lintMode ?? lintModeFromEnv();
  return (model: PiModel, context: PiContext, options: SimpleStreamOptions | undefined) => {
    const out = createAssistantMessageEventStream();
    const run = cfg.current();
    const finish = (msg: AssistantMessage, reason: "error" | "aborted") => {
      out.push({ type: "error", reason, error: msg });
      out.end();
    };
    if (!run || options?.signal?.aborted || run.aborted) {
      finish(emptyAssistant(model, "aborted", "aborted"), "aborted");
      return out;
    }
    const site: RequestSite = {
      entry: run.entry,
      id: model.id,
      baseUrl: model.baseUrl,
      maxTokens: model.maxTokens,
      contextWindow: model.contextWindow,
    };
    let payload: string | undefined;
    let lintError: string | undefined;
    const onPayload = (built: unknown) => {
      // A retry sends the first attempt's bytes again (they hit the prefix cache).
      if (payload !== undefined) return JSON.parse(payload);
      // Earlier reasoning dropped or echoed per model entry (ADR-0310), before the lint reads it.
      const params = replayPayloadHook(built, model);
      try {
        cfg.shapePayload?.(params as Record<string, unknown>);
        const problems = lintPayload(params as { messages?: unknown }, lintMode);
        if (problems.length > 0) run.lintRepaired(problems);
      } catch (err) {
        lintError = err instanceof Error ? err.message : String(err);
        throw err;
      }
      payload = JSON.stringify(params);
      return params;
    };
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
      onPayload,
    };
    // The request's span and counters (ADR-0420); inert outside a Submission's telemetry scope.
    const observed = observeModelRequest({
      entry: run.entry,
      modelId: model.id,
      maxTokens: model.maxTokens,
      temperature: cfg.temperature,
    });
    void (async () => {
      const outcome = await requestWithRetry<{
        message: AssistantMessage | undefined;
        raw: Map<number, string>;
      }>({
        policy: run.policy,
        site,
        signal: options?.signal,
        onRetry: (n) => {
          observed.retried(n);
          run.retry(n);
        },
        usable: (seen) => seen.probe.sawFinishReason,
        attempt: async (startTimeout) => {
          const release = await cfg.limiter.acquire(model.baseUrl, options?.signal);
          if (!release) return { kind: "skipped" as const };
          const probe = newProbe();
          const raw = new Map<number, string>();
          let last: Extract<AssistantMessageEvent, { type: "done" | "error" }> | undefined;
          try {
            const signal = startTimeout();
            const inner = withFetchProbe(probe, () => streamSimple(model, context, { ...pinned, signal }));
            for await (const ev of inner as AsyncIterable<AssistantMessageEvent>) {
              if (ev.type === "toolcall_delta")
                raw.set(ev.contentIndex, (raw.get(ev.contentIndex) ?? "") + ev.delta);
              if (ev.type === "done" || ev.type === "error") last = ev;
            }
          } catch (err) {
            last = {
              type: "error",
              reason: "error",
              error: emptyAssistant(model, "error", err instanceof Error ? err.message : String(err)),
            };
          } finally {
            release();
          }
          // A history the lint refused is never sent again (strict mode, tests).
          if (lintError !== undefined) return { kind: "skipped" as const };
          const message = last?.type === "done" ? last.message : last?.error;
          return {
            kind: "ended" as const,
            done: last?.type === "done",
            piError: last?.type === "error" ? last.error.errorMessage : undefined,
            probe,
            value: { message, raw },
          };
        },
      });
      if (lintError !== undefined) {
        observed.ended({
          kind: "failed",
          errorType: "replay-lint",
          usage: undefined,
          finishReason: undefined,
        });
        run.failure = { type: "replay-lint", message: lintError };
        return finish(emptyAssistant(model, "error", lintError), "error");
      }
      const seen = outcome.seen;
      const usage =
        seen && (seen.probe.usage || seen.probe.timings || outcome.kind === "answer")
          ? reportedUsage(seen.probe)
          : undefined;
      if (usage)
        run.usage({
          ...usage,
          ...(seen?.probe.finishReason ? { finishReason: seen.probe.finishReason } : {}),
        });
      const answered = outcome.kind === "answer" ? outcome.seen.value.message : undefined;
      observed.ended({
        kind: outcome.kind === "answer" && !answered ? "failed" : outcome.kind,
        usage,
        finishReason: seen?.probe.finishReason,
        ...(outcome.kind === "failed" ? { errorType: outcome.type } : {}),
        ...(outcome.kind === "answer" && !answered ? { errorType: "no-answer" } : {}),
        // Read only when content capture is on (JR2_OTEL_CAPTURE_CONTENT=true).
        content: () => ({
          input: payload === undefined ? undefined : JSON.stringify(JSON.parse(payload).messages),
          output: answered ? JSON.stringify(answered.content) : undefined,
        }),
      });
      if (outcome.kind === "aborted") return finish(emptyAssistant(model, "aborted", "aborted"), "aborted");
      if (outcome.kind === "failed") {
        run.failure = {
          type: outcome.type,
          message: outcome.message,
          ...(outcome.cause ? { cause: outcome.cause } : {}),
        };
        return finish(emptyAssistant(model, "error", outcome.message), "error");
      }
      const { message, raw } = outcome.seen.value;
      if (!message) return finish(emptyAssistant(model, "error", "no answer"), "error");
      ingestCalls(run, message, raw);
      out.push({ type: "done", reason: message.stopReason as "stop" | "length" | "toolUse", message });
      out.end();
    })();
    return out;
  };
}

/**
 * Normalizes each tool call's arguments once, at ingestion: what history replays is a JSON
 * object (`{}` when the model's bytes were not one), the model's bytes stay beside it as
 * `rawArguments`; calls of a cut-off answer and calls with non-object arguments are never run.
 * Every call leaves with an id of its own within the answer (a server may send none, or repeat one).
 */
function ingestCalls(run: AnswerRun, msg: AssistantMessage, raw: Map<number, string>): void {
  // Verdicts are per answer: a server that numbers its ids per answer (`call_0` every time)
  // must not have an earlier answer's refusal or arguments applied to this one's call.
  run.neverRun.clear();
  run.parsedArgs.clear();
  const ids = new Set<string>();
  msg.content.forEach((block, index) => {
    if (block.type !== "toolCall") return;
    // A call without an id (or with one another call of this answer holds) gets its own, once
    // here, so the history replays it and no verdict or pick lands on another call.
    if (block.id === "" || ids.has(block.id)) block.id = uniqueId(block.id, index, ids);
    ids.add(block.id);
    const text = raw.get(index) ?? "";
    const reading = normalizeArguments(text);
    block.arguments = reading.value;
    (block as { rawArguments?: string }).rawArguments = text;
    if (msg.stopReason === "length") run.neverRun.set(block.id, { reason: "truncated" });
    else if (reading.kind === "not-json") run.neverRun.set(block.id, { reason: "not-json", sent: text });
    else if (reading.kind === "not-object")
      run.neverRun.set(block.id, { reason: "not-object", sent: text, kind: reading.sent });
    else run.parsedArgs.set(block.id, reading.value);
  });
}

/** `<id>_<index>` (`call_<index>` for no id), suffixed further until no call of the answer holds it. */
function uniqueId(id: string, index: number, taken: ReadonlySet<string>): string {
  let candidate = `${id || "call"}_${index}`;
  while (taken.has(candidate)) candidate = `${candidate}_`;
  return candidate;
}

/** An answer with no content: what pi stores for an aborted or failed request. */
export function emptyAssistant(
  model: PiModel,
  stopReason: "error" | "aborted",
  errorMessage: string,
): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason,
    errorMessage,
    timestamp: Date.now(),
  };
}

import { createHash } from "node:crypto";
import { type Answer, cutAtMaxTokens, decisionLine, fillerReasoning, planToAnswer } from "./answer.js";
import { shapeAnswer } from "./call-shapes.js";
import { type ChatRequest, parseChatRequest } from "./chat-request.js";
import { encodePrompt, renderPrompt, type TemplateName, THINKING_TEMPLATES } from "./chat-template.js";
import { type ConversationView, readConversation } from "./conversation.js";
import { KvClock } from "./kv/kv-clock.js";
import { KV_SCENARIO } from "./kv/kv-engine.js";
import { type Faults, parseModelName, type SimModel } from "./model-name.js";
import { type OpenAIErrorBody, SimRequestError, type VllmErrorBody } from "./openai-error.js";
import { decide, type Plan } from "./policies.js";
import { PrefixCache } from "./prefix-cache.js";
import { Recorder, type SimUsage } from "./recorder.js";
import { checkReplay } from "./replay-checks.js";
import type { AnswerMeta, StreamEnding } from "./sse.js";

/**
 * Options of one simulator. All optional.
 *
 * - `blockSize`: tokens per prefix-cache block (16, vLLM's default);
 * - `cacheBlocks`: blocks the LRU keeps (65 536 ≈ 1M tokens);
 * - `template`: the chat template of a model name without `@<template>` (`"qwen3"`);
 * - `maxModelLen`: prompt + requested completion tokens allowed (131 072), as vLLM's
 *   `--max-model-len`;
 * - `reasoningField`: the field reasoning is streamed in — `reasoning` (vLLM ≥ 0.17, the
 *   default) or the older `reasoning_content`; a model name's `+reasoning_content` overrides it;
 * - `now`: the clock, for `created` and `receivedAt`.
 *
 * @see SPEC §9
 */
export interface ModelSimOptions {
  blockSize?: number;
  cacheBlocks?: number;
  template?: TemplateName;
  maxModelLen?: number;
  reasoningField?: "reasoning" | "reasoning_content";
  now?: () => Date;
  /**
   * The time model (`--time-scale`, kv/kv-engine.ts): real ms per simulated second. Set, answers
   * wait for their prefill and decode on a KV budget of `cacheBlocks`; unset, they do not wait.
   */
  timeScale?: number;
}

/** Distinct request bodies whose attempt counts are kept (least recently sent forgotten first). */
const ATTEMPTS_KEPT = 100_000;

/** The outcome of one chat request: a refusal to send, or an answer to send. */
export type ChatOutcome =
  | {
      kind: "refused";
      status: number;
      body: OpenAIErrorBody | VllmErrorBody;
      headers: Record<string, string>;
    }
  | {
      kind: "answer";
      request: ChatRequest;
      model: SimModel;
      answer: Answer;
      /** What the simulator counted (recorded); `wireUsage` is what the faults let on the wire. */
      usage: SimUsage;
      wireUsage: Record<string, unknown> | null;
      meta: AnswerMeta;
      /** How the stream ends (the `abort`, `cut`, `dropper` faults) — `complete` when none fires. */
      ending: StreamEnding;
    };

/**
 * The simulator behind the routes: validation, rendering, prefix-cache accounting, policy and
 * recording, for one request at a time. HTTP lives in the routes.
 */
export class Simulator {
  readonly recorder = new Recorder();
  readonly cache: PrefixCache;
  /** The time model, when `timeScale` is set. */
  readonly kv: KvClock | undefined;
  readonly #template: TemplateName;
  readonly #maxModelLen: number;
  readonly #reasoningField: "reasoning" | "reasoning_content";
  readonly #now: () => Date;
  /** Sends so far of each exact body (sha256), for the per-body fault counts. */
  #attempts = new Map<string, number>();
  /** Requests so far naming each model, for `loading:N`. */
  #perModel = new Map<string, number>();

  constructor(options: ModelSimOptions = {}) {
    this.cache = new PrefixCache(options.blockSize ?? 16, options.cacheBlocks ?? 65_536);
    this.#template = options.template ?? "qwen3";
    this.#maxModelLen = options.maxModelLen ?? 131_072;
    this.#reasoningField = options.reasoningField ?? "reasoning";
    this.#now = options.now ?? (() => new Date());
    this.kv =
      options.timeScale === undefined
        ? undefined
        : new KvClock(
            { ...KV_SCENARIO, blockSize: this.cache.blockSize, totalBlocks: this.cache.capacity },
            options.timeScale,
          );
  }

  /**
   * Handle one raw `POST /v1/chat/completions` body; records it whatever the outcome.
   *
   * @param raw - the body exactly as received.
   */
  chat(raw: string): ChatOutcome {
    const receivedAt = this.#now();
    let model: string | null = null;
    try {
      const request = parseChatRequest(raw);
      model = request.model;
      const outcome = this.#answer(request, raw, receivedAt);
      this.recorder.record({
        receivedAt: receivedAt.toISOString(),
        model,
        raw,
        status: 200,
        usage: outcome.usage,
        error: null,
      });
      return outcome;
    } catch (err) {
      const refusal =
        err instanceof SimRequestError
          ? err
          : new SimRequestError(
              "invalid_request",
              `the chat template refused the messages: ${(err as Error).message}`,
            );
      this.recorder.record({
        receivedAt: receivedAt.toISOString(),
        model,
        raw,
        status: refusal.status,
        usage: null,
        error: refusal.code,
      });
      return { kind: "refused", status: refusal.status, body: refusal.toBody(), headers: refusal.headers };
    }
  }

  #answer(request: ChatRequest, raw: string, receivedAt: Date): Extract<ChatOutcome, { kind: "answer" }> {
    const model = parseModelName(request.model, this.#template);
    const { faults } = model;
    const digest = createHash("sha256").update(raw).digest("hex");
    const attempt = (this.#attempts.get(digest) ?? 0) + 1;
    this.#attempts.delete(digest);
    this.#attempts.set(digest, attempt);
    // Bounded: a soak of distinct bodies forgets the least recently sent ones first.
    if (this.#attempts.size > ATTEMPTS_KEPT) this.#attempts.delete(this.#attempts.keys().next().value!);
    // Only `loading:N` names are counted, so the map holds no more names than clients ask to load.
    const seen = faults.loading === undefined ? 0 : (this.#perModel.get(request.model) ?? 0) + 1;
    if (faults.loading !== undefined) this.#perModel.set(request.model, seen);
    if (faults.loading !== undefined && seen <= faults.loading) {
      throw new SimRequestError(
        "model_loading",
        `model-sim (a simulator) is loading ${request.model}: request ${seen} of the first ${faults.loading} is refused`,
        null,
        503,
        { shape: "vllm" },
      );
    }
    const limited = faults.rateLimit?.attempts ?? 0;
    if (attempt <= limited) {
      const seconds = String(faults.rateLimit?.retryAfter ?? 1);
      throw new SimRequestError(
        "rate_limited",
        `rate limited: attempt ${attempt} of this request body is refused, retry after ${seconds} s`,
        null,
        429,
        { shape: "vllm", headers: { "retry-after": seconds } },
      );
    }
    // Replay checks run before rendering, as vLLM's message parsing runs before its template.
    checkReplay(request.messages);
    const tokens = encodePrompt(model.template, renderPrompt(model.template, request));
    const requested = request.max_completion_tokens ?? request.max_tokens ?? 0;
    const limit = Math.min(this.#maxModelLen, faults.overflow ?? Number.POSITIVE_INFINITY);
    if (tokens.length + requested > limit) {
      throw new SimRequestError(
        "context_length_exceeded",
        `This model's maximum context length is ${limit} tokens. However, you requested ` +
          `${tokens.length + requested} tokens (${tokens.length} in the messages, ${requested} in the completion). ` +
          "Please reduce the length of the messages or completion.",
        faults.overflow === undefined ? "messages" : null,
        400,
        { shape: faults.overflow === undefined ? "openai" : "vllm" },
      );
    }
    // Blocks of running sequences' decoded tokens are not free for cached prefixes.
    if (this.kv) this.cache.shrinkTo(this.cache.capacity - this.kv.engine.decodeBlocks());
    const lookup = this.cache.lookupAndInsert(tokens, `${model.template}:${request.cache_salt ?? ""}`);
    const view = readConversation(request);
    const plan = overlong(decide(model.policy, view, request), faults, view, request);
    const thinking =
      THINKING_TEMPLATES.has(model.template) && request.chat_template_kwargs?.enable_thinking !== false;
    const seed = Number.parseInt(digest.slice(40, 48), 16);
    const reasoning = thinking ? reasoningFor(plan, faults, seed) : null;
    const whole = shapeAnswer(
      planToAnswer(plan, `chatcmpl-tool-${digest.slice(0, 16)}`, reasoning),
      faults.callShape,
    );
    const budget = request.max_completion_tokens ?? request.max_tokens ?? null;
    const { answer, completionTokens } = cutAtMaxTokens(
      whole,
      budget,
      (text) => encodePrompt(model.template, text).length,
    );
    const usage: SimUsage = {
      prompt_tokens: lookup.promptTokens,
      completion_tokens: completionTokens,
      total_tokens: lookup.promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: lookup.cachedTokens },
    };
    const meta: AnswerMeta = {
      id: `chatcmpl-sim-${digest.slice(16, 40)}`,
      created: Math.floor(receivedAt.getTime() / 1000),
      model: request.model,
      reasoningField: faults.reasoningField ?? this.#reasoningField,
      ...(faults.callShape ? { callShape: faults.callShape } : {}),
    };
    return {
      kind: "answer",
      request,
      model,
      answer,
      usage,
      wireUsage: wireUsage(usage, faults),
      meta,
      ending: endingFor(attempt - limited, faults),
    };
  }

  /** The sends so far of one exact body: what the per-body fault counts read. */
  attemptsOf(raw: string): number {
    return this.#attempts.get(createHash("sha256").update(raw).digest("hex")) ?? 0;
  }

  /** Forget recorded requests and cached blocks: a fresh simulator. */
  reset(): void {
    this.recorder.reset();
    this.cache.clear();
    this.kv?.engine.resetTotals();
    this.#attempts.clear();
    this.#perModel.clear();
  }
}

/**
 * Which stream failure, if any, the `n`-th send of a body (counted after its rate-limited sends)
 * meets: the `abort` attempts first, then `cut`, then `dropper` — one request can meet each class
 * in turn before it gets through.
 */
function endingFor(n: number, faults: Faults): StreamEnding {
  let passed = 0;
  for (const [ending, count] of [
    ["abort", faults.abort],
    ["cut", faults.cut],
    ["drop", faults.drop],
    ["error", faults.errorEvent],
    ["silence", faults.headSilence],
  ] as const) {
    if (count === undefined) continue;
    if (n <= passed + count) return ending;
    passed += count;
  }
  return "complete";
}

/** The usage the wire carries: none (`nousage`), or without `prompt_tokens_details` (`nodetails`). */
function wireUsage(usage: SimUsage, faults: Faults): Record<string, unknown> | null {
  if (faults.noUsage) return null;
  if (faults.overCache)
    // A server seen reporting more cached tokens than the prompt has (issue 25 §6).
    return { ...usage, prompt_tokens_details: { cached_tokens: Math.ceil(usage.prompt_tokens * 1.5) } };
  if (!faults.noDetails) return { ...usage };
  const { prompt_tokens_details: _details, ...rest } = usage;
  return rest;
}

/** The reasoning of a thinking model: the decision, padded to the `think:` token count. */
function reasoningFor(plan: Plan, faults: Faults, seed: number): string {
  const decision = decisionLine(plan);
  const range = faults.think;
  if (!range) return decision;
  const tokens = range.min + (seed % (range.max - range.min + 1));
  return fillerReasoning(tokens, seed, decision);
}

/** `overlong`: the answer rambles on in content past any output budget, then makes its call. */
function overlong(plan: Plan, faults: Faults, view: ConversationView, request: ChatRequest): Plan {
  if (faults.overlong === undefined || view.assistantAnswers >= faults.overlong) return plan;
  // Bounded by the context-length check above (the budget fits the model length).
  const words = Math.min(request.max_completion_tokens ?? request.max_tokens ?? 1024, 131_072) + 64;
  const ramble = fillerReasoning(words, 0, "Let me explain everything first.");
  return { kind: "text", text: plan.kind === "text" ? `${ramble} ${plan.text}` : ramble };
}

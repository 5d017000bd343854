import { createHash } from "node:crypto";
import { type Answer, generatedText, planToAnswer } from "./answer.js";
import { type ChatRequest, parseChatRequest } from "./chat-request.js";
import { encodePrompt, renderPrompt, type TemplateName } from "./chat-template.js";
import { readConversation } from "./conversation.js";
import { parseModelName, type SimModel } from "./model-name.js";
import { type OpenAIErrorBody, SimRequestError } from "./openai-error.js";
import { decide } from "./policies.js";
import { PrefixCache } from "./prefix-cache.js";
import { Recorder, type SimUsage } from "./recorder.js";
import { checkReplay } from "./replay-checks.js";
import type { AnswerMeta } from "./sse.js";

/**
 * Options of one simulator. All optional.
 *
 * - `blockSize`: tokens per prefix-cache block (16, vLLM's default);
 * - `cacheBlocks`: blocks the LRU keeps (65 536 ≈ 1M tokens);
 * - `template`: the chat template of a model name without `@<template>` (`"qwen3"`);
 * - `maxModelLen`: prompt + requested completion tokens allowed (131 072), as vLLM's
 *   `--max-model-len`;
 * - `now`: the clock, for `created` and `receivedAt`.
 *
 * @see SPEC §9
 */
export interface ModelSimOptions {
  blockSize?: number;
  cacheBlocks?: number;
  template?: TemplateName;
  maxModelLen?: number;
  now?: () => Date;
}

/** The outcome of one chat request: a refusal to send, or an answer to send. */
export type ChatOutcome =
  | { kind: "refused"; status: number; body: OpenAIErrorBody }
  | {
      kind: "answer";
      request: ChatRequest;
      model: SimModel;
      answer: Answer;
      usage: SimUsage;
      meta: AnswerMeta;
    };

/**
 * The simulator behind the routes: validation, rendering, prefix-cache accounting, policy and
 * recording, for one request at a time. HTTP lives in the routes.
 */
export class Simulator {
  readonly recorder = new Recorder();
  readonly cache: PrefixCache;
  readonly #template: TemplateName;
  readonly #maxModelLen: number;
  readonly #now: () => Date;

  constructor(options: ModelSimOptions = {}) {
    this.cache = new PrefixCache(options.blockSize ?? 16, options.cacheBlocks ?? 65_536);
    this.#template = options.template ?? "qwen3";
    this.#maxModelLen = options.maxModelLen ?? 131_072;
    this.#now = options.now ?? (() => new Date());
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
      return { kind: "refused", status: refusal.status, body: refusal.toBody() };
    }
  }

  #answer(request: ChatRequest, raw: string, receivedAt: Date): Extract<ChatOutcome, { kind: "answer" }> {
    const model = parseModelName(request.model, this.#template);
    // Replay checks run before rendering, as vLLM's message parsing runs before its template.
    checkReplay(request.messages);
    const tokens = encodePrompt(model.template, renderPrompt(model.template, request));
    const requested = request.max_completion_tokens ?? request.max_tokens ?? 0;
    if (tokens.length + requested > this.#maxModelLen) {
      throw new SimRequestError(
        "context_length_exceeded",
        `This model's maximum context length is ${this.#maxModelLen} tokens. However, you requested ` +
          `${tokens.length + requested} tokens (${tokens.length} in the messages, ${requested} in the completion).`,
        "messages",
      );
    }
    const lookup = this.cache.lookupAndInsert(tokens, `${model.template}:${request.cache_salt ?? ""}`);
    const digest = createHash("sha256").update(raw).digest("hex");
    const plan = decide(model.policy, readConversation(request), request);
    const thinking = request.chat_template_kwargs?.enable_thinking === true;
    const answer = planToAnswer(plan, `chatcmpl-tool-${digest.slice(0, 16)}`, thinking);
    const completionTokens = encodePrompt(model.template, generatedText(answer)).length;
    const usage: SimUsage = {
      prompt_tokens: lookup.promptTokens,
      completion_tokens: completionTokens,
      total_tokens: lookup.promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: lookup.cachedTokens },
    };
    const meta = {
      id: `chatcmpl-sim-${digest.slice(16, 40)}`,
      created: Math.floor(receivedAt.getTime() / 1000),
      model: request.model,
    };
    return { kind: "answer", request, model, answer, usage, meta };
  }

  /** Forget recorded requests and cached blocks: a fresh simulator. */
  reset(): void {
    this.recorder.reset();
    this.cache.clear();
  }
}

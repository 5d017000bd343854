import type { Model } from "@mariozechner/pi-ai";
import { z } from "zod";

/**
 * How a model entry's earlier reasoning is replayed in the history it is sent (issue 10 §4,
 * ADR-0310). The reasoning a model streamed is kept by pi in its thinking blocks; pi-ai echoes
 * it on every later assistant message under the field it arrived in. Whether that is right
 * depends on the chat template, because prefix caches key on the rendered prompt:
 *
 * - `drop` (the default): no assistant message carries reasoning. Under Qwen3's template an
 *   echoed reasoning is rendered only until the next user message (a new Turn, a nudge, a
 *   restatement) and then dropped, which re-renders — and re-prefills — everything from the
 *   first assistant message after the previous user message. Never echoing keeps every request
 *   an extension of the previous one under every template; under a Qwen3.6-style template that
 *   needs `preserve_thinking: true` (sent by pi's `qwen-chat-template` thinking format) so the
 *   empty think blocks of earlier answers render the same before and after a user message.
 * - `echo`: every assistant message carries its reasoning as both `reasoning` and
 *   `reasoning_content` (current vLLM and older servers read one or the other) and the request
 *   asks `chat_template_kwargs.preserve_thinking: true`. Only for templates that honour it
 *   (Qwen3.6's): the model then reads all its earlier reasoning, and the history grows by it.
 *
 * The restatement (seed ADR-0029) keeps its role (`user`), place and count under both.
 * @see SPEC §7.7; ADR-0310
 */
export const ReasoningReplay = z.enum(["drop", "echo"]);
export type ReasoningReplay = z.infer<typeof ReasoningReplay>;

/** The default for an entry without `reasoningReplay`. */
export const DEFAULT_REASONING_REPLAY: ReasoningReplay = "drop";

const POLICY = Symbol.for("jr2.reasoningReplay");
const REASONING_FIELDS = ["reasoning", "reasoning_content", "reasoning_text"] as const;

/**
 * Attach an entry's replay policy to its pi model (the seat passes the model to every request).
 * @returns the same model object.
 */
export function withReplayPolicy<M extends object>(model: M, policy: ReasoningReplay | undefined): M {
  Object.defineProperty(model, POLICY, { value: policy ?? DEFAULT_REASONING_REPLAY, enumerable: true });
  return model;
}

/** The replay policy attached to a pi model; the default when none was. */
export function replayPolicyOf(model: Model<never> | object): ReasoningReplay {
  const value = (model as Record<symbol, unknown>)[POLICY];
  return value === "echo" || value === "drop" ? value : DEFAULT_REASONING_REPLAY;
}

type Payload = { messages?: unknown; chat_template_kwargs?: unknown; [key: string]: unknown };

/**
 * Apply a replay policy to one outgoing Chat Completions payload (pi-ai's `onPayload`), after pi
 * built it and before it is sent. Pure: returns a new payload, the input is not changed. Only
 * assistant messages' reasoning fields and `chat_template_kwargs.preserve_thinking` can differ,
 * and the same history always maps to the same bytes — so each request stays a byte extension
 * of the previous one.
 *
 * @param payload - the OpenAI `chat.completions.create` params; anything else is returned as is.
 * @see ADR-0310
 */
export function applyReplayPolicy(payload: unknown, policy: ReasoningReplay): unknown {
  if (typeof payload !== "object" || payload === null) return payload;
  const body = payload as Payload;
  if (!Array.isArray(body.messages)) return payload;
  const messages = body.messages.map((message: unknown) => {
    if (typeof message !== "object" || message === null) return message;
    const m = message as Record<string, unknown>;
    if (m.role !== "assistant") return message;
    const reasoning = REASONING_FIELDS.map((field) => m[field]).find(
      (value): value is string => typeof value === "string" && value.length > 0,
    );
    const { reasoning: _a, reasoning_content: _b, reasoning_text: _c, ...rest } = m;
    if (policy === "drop" || reasoning === undefined) return rest;
    return { ...rest, reasoning, reasoning_content: reasoning };
  });
  if (policy === "drop") return { ...body, messages };
  const kwargs =
    typeof body.chat_template_kwargs === "object" && body.chat_template_kwargs !== null
      ? (body.chat_template_kwargs as Record<string, unknown>)
      : {};
  return { ...body, messages, chat_template_kwargs: { ...kwargs, preserve_thinking: true } };
}

/** pi-ai's `onPayload` for a seat: the model's replay policy applied to every request. */
export function replayPayloadHook(payload: unknown, model: object): unknown {
  return applyReplayPolicy(payload, replayPolicyOf(model));
}

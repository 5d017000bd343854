import { setTimeout as sleep } from "node:timers/promises";
import type { Answer } from "./answer.js";
import { type CallShape, callDeltas } from "./call-shapes.js";

/** The fields every chunk and completion of one answer share. */
export interface AnswerMeta {
  id: string;
  created: number;
  model: string;
  /** The field reasoning goes in: `reasoning` (vLLM ≥ 0.17) or the older `reasoning_content`. */
  reasoningField: "reasoning" | "reasoning_content";
  /** How the tool call is laid out (a hostile server's shape, issue 25); absent: one call at index 0. */
  callShape?: CallShape;
}

/**
 * How a stream ends: `complete` (finish chunk, usage, `[DONE]`), or one of the mid-stream
 * failures after half the answer: `abort` (a finish chunk with vLLM's `finish_reason: "abort"`,
 * then usage and `[DONE]` as usual), `drop` (the response ends cleanly with no finish reason, no
 * usage, no `[DONE]`: field case C6) or `cut` (the same point; the route then destroys the socket);
 * `silence`: the head and first token, then nothing (the route paces it: stream-pacing.ts).
 */
export type StreamEnding = "complete" | "abort" | "drop" | "cut" | "error" | "silence";

/** The error event the `errorevent` fault ends a stream with (vLLM/SGLang's shape, issue 25 §5). */
export const ERROR_EVENT = {
  error: { message: "CUDA out of memory (model-sim errorevent)", type: "InternalServerError", code: 500 },
};

/** Split text into token-sized pieces (4 code points), never inside a surrogate pair. */
export function pieces(text: string, size = 4): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(""));
  return out;
}

function frame(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`;
}

/** The deltas of an answer after the role chunk, and where a mid-stream failure cuts them. */
function deltas(
  answer: Answer,
  reasoningField: string,
  shape?: CallShape,
): { list: Record<string, unknown>[]; cutAt: number } {
  const list: Record<string, unknown>[] = [];
  for (const piece of pieces(answer.reasoning ?? "")) list.push({ [reasoningField]: piece });
  for (const piece of pieces(answer.content ?? "")) list.push({ content: piece });
  let cutAt = Math.max(1, Math.ceil(list.length / 2));
  if (answer.toolCall) {
    const argPieces = pieces(answer.toolCall.arguments, 8);
    const calls = callDeltas(answer.toolCall, argPieces, shape);
    // Mid-call: the head and half the argument deltas (C6: a partial call must never run).
    cutAt = list.length + Math.ceil(argPieces.length / 2);
    list.push(...calls);
  }
  return { list, cutAt: Math.min(cutAt, list.length) };
}

/**
 * The SSE frames of one streamed answer, in vLLM's shapes: a role chunk, reasoning deltas (in
 * `meta.reasoningField`), content deltas, a tool-call head (`index`, `id`, `type`,
 * `function.name`) then argument deltas under the same `index`, a chunk with `finish_reason`, a
 * usage chunk with `choices: []` when `usage` is given, and `data: [DONE]`. A failing `ending`
 * stops after half the answer (mid-call when there is a call).
 *
 * @param usage - the usage chunk's `usage`, or null for none (not asked, or the `nousage` fault).
 * @param msPerPiece - latency before each token-sized piece (the `slow` policy); 0 = none.
 * @see SPEC §9
 */
export async function* answerFrames(
  answer: Answer,
  meta: AnswerMeta,
  usage: Record<string, unknown> | null,
  msPerPiece: number,
  ending: StreamEnding = "complete",
): AsyncGenerator<string> {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    frame({
      id: meta.id,
      object: "chat.completion.chunk",
      created: meta.created,
      model: meta.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
  yield chunk({ role: "assistant", content: "" });
  const { list, cutAt } = deltas(answer, meta.reasoningField, meta.callShape);
  const sent = ending === "complete" ? list.length : cutAt;
  for (const delta of list.slice(0, sent)) {
    if (msPerPiece > 0) await sleep(msPerPiece);
    yield chunk(delta);
  }
  if (ending === "drop" || ending === "cut") return;
  if (ending === "error") {
    yield frame(ERROR_EVENT);
    return;
  }
  yield chunk({}, ending === "abort" ? "abort" : answer.finishReason);
  if (usage) {
    yield frame({
      id: meta.id,
      object: "chat.completion.chunk",
      created: meta.created,
      model: meta.model,
      choices: [],
      usage,
    });
  }
  yield "data: [DONE]\n\n";
}

/** The non-streamed `chat.completion` body of an answer; `usage` null leaves it out. */
export function completionBody(
  answer: Answer,
  meta: AnswerMeta,
  usage: Record<string, unknown> | null,
  finishReason: string | null = answer.finishReason,
): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content: answer.content };
  if (answer.reasoning !== null) message[meta.reasoningField] = answer.reasoning;
  if (answer.toolCall) {
    const { id, name, arguments: args } = answer.toolCall;
    message.tool_calls = [{ id, type: "function", function: { name, arguments: args } }];
  }
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
    ...(usage ? { usage } : {}),
  };
}

import { setTimeout as sleep } from "node:timers/promises";
import type { Answer } from "./answer.js";
import type { SimUsage } from "./recorder.js";

/** The fields every chunk and completion of one answer share. */
export interface AnswerMeta {
  id: string;
  created: number;
  model: string;
}

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

/**
 * The SSE frames of one streamed answer, in vLLM's shapes: a role chunk, reasoning and content
 * deltas, a tool-call head (`index`, `id`, `type`, `function.name`) then argument deltas under
 * the same `index`, a chunk with `finish_reason`, a usage chunk with `choices: []` when asked,
 * and `data: [DONE]`. A dropped answer stops after half its argument deltas — no
 * finish_reason, no usage, no `[DONE]` (field case C6).
 *
 * @param msPerPiece - latency before each token-sized piece (the `slow` policy); 0 = none.
 * @see SPEC §9
 */
export async function* answerFrames(
  answer: Answer,
  meta: AnswerMeta,
  usage: SimUsage | null,
  msPerPiece: number,
): AsyncGenerator<string> {
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    frame({
      id: meta.id,
      object: "chat.completion.chunk",
      created: meta.created,
      model: meta.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
  const pace = async () => {
    if (msPerPiece > 0) await sleep(msPerPiece);
  };

  yield chunk({ role: "assistant", content: "" });
  for (const piece of pieces(answer.reasoning ?? "")) {
    await pace();
    yield chunk({ reasoning_content: piece });
  }
  for (const piece of pieces(answer.content ?? "")) {
    await pace();
    yield chunk({ content: piece });
  }
  if (answer.toolCall) {
    const { id, name, arguments: args } = answer.toolCall;
    await pace();
    yield chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: "" } }] });
    const argPieces = pieces(args, 8);
    const sent = answer.finishReason === null ? Math.ceil(argPieces.length / 2) : argPieces.length;
    for (const piece of argPieces.slice(0, sent)) {
      await pace();
      yield chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
    }
  }
  if (answer.finishReason === null) return;
  yield chunk({}, answer.finishReason);
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

/** The non-streamed `chat.completion` body of an answer. */
export function completionBody(answer: Answer, meta: AnswerMeta, usage: SimUsage): Record<string, unknown> {
  const message: Record<string, unknown> = { role: "assistant", content: answer.content };
  if (answer.reasoning !== null) message.reasoning_content = answer.reasoning;
  if (answer.toolCall) {
    const { id, name, arguments: args } = answer.toolCall;
    message.tool_calls = [{ id, type: "function", function: { name, arguments: args } }];
  }
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }],
    usage,
  };
}

import type { Answer } from "./answer.js";
import type { CallShape } from "./model-name.js";

/**
 * How an answer's tool call is laid out on the stream when the model name asks for a hostile
 * shape real servers send (issue 25; README "Stream shapes"):
 * - `dupcalls:N` — the call N times in one answer (indexes 0…N-1, distinct ids), as models that
 *   duplicate parallel calls do;
 * - `sharedid` — the call twice (indexes 0 and 1) under one id, the same in every answer
 *   ({@link SHARED_ID}), as llama.cpp sends one constant id for every call;
 * - `noindex` — no `index` on any tool-call delta, the id on the first delta only (older Ollama);
 * - `thinkcall` — the call written as `<tool_call>` markup inside the reasoning and no
 *   `tool_calls` (Qwen3 under vLLM's reasoning parser), `finish_reason: "stop"`.
 */
export type { CallShape };

/** The one id `sharedid` gives every call of every answer (a constant, as llama.cpp's). */
export const SHARED_ID = "call_shared";

/** `thinkcall`: the answer's call moved into its reasoning as markup; other shapes: unchanged. */
export function shapeAnswer(answer: Answer, shape: CallShape | undefined): Answer {
  if (shape?.kind !== "thinkcall" || !answer.toolCall) return answer;
  const { name, arguments: args } = answer.toolCall;
  const markup = `<tool_call>\n{"name": "${name}", "arguments": ${args}}\n</tool_call>`;
  return {
    ...answer,
    reasoning: answer.reasoning ? `${answer.reasoning}\n${markup}` : markup,
    toolCall: null,
    finishReason: "stop",
  };
}

/**
 * The tool-call deltas of one call in `shape` (default: one call at index 0, its head then its
 * arguments in `argPieces`).
 */
export function callDeltas(
  call: NonNullable<Answer["toolCall"]>,
  argPieces: readonly string[],
  shape: CallShape | undefined,
): Record<string, unknown>[] {
  const one = (index: number | undefined, id: string): Record<string, unknown>[] => {
    const at = index === undefined ? {} : { index };
    return [
      { tool_calls: [{ ...at, id, type: "function", function: { name: call.name, arguments: "" } }] },
      ...argPieces.map((piece) => ({ tool_calls: [{ ...at, function: { arguments: piece } }] })),
    ];
  };
  switch (shape?.kind) {
    case "dupcalls":
      return Array.from({ length: shape.copies }, (_, i) => one(i, `${call.id}-${i}`)).flat();
    case "sharedid":
      return [...one(0, SHARED_ID), ...one(1, SHARED_ID)];
    case "noindex":
      return one(undefined, call.id);
    default:
      return one(0, call.id);
  }
}

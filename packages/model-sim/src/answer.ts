import type { Plan } from "./policies.js";

/** Why an answer ended; null when the stream is cut off without one (`dropper`). */
export type FinishReason = "stop" | "tool_calls" | "length" | null;

/** One answer as it goes on the wire: the `message` of a completion, and its end. */
export interface Answer {
  content: string | null;
  reasoning: string | null;
  toolCall: { id: string; name: string; arguments: string } | null;
  finishReason: FinishReason;
}

/** Cut a JSON text inside its first string value (or halfway when it has none). */
function cutMidString(json: string): string {
  const valueStart = json.search(/:\s*"/);
  if (valueStart < 0) return json.slice(0, Math.max(1, Math.floor(json.length / 2)));
  const open = json.indexOf('"', valueStart);
  return json.slice(0, open + 1 + Math.min(4, Math.max(1, json.length - open - 3)));
}

/**
 * Write a policy's plan as an answer.
 *
 * @param plan - what the policy decided.
 * @param toolCallId - the id the call gets (deterministic per request).
 * @param thinking - the request asked for reasoning (`chat_template_kwargs.enable_thinking`).
 */
export function planToAnswer(plan: Plan, toolCallId: string, thinking: boolean): Answer {
  const reasoning = thinking
    ? plan.kind === "call"
      ? `The newest "Allowed now" line decides: I call ${plan.name}.`
      : "I answer in text."
    : null;
  if (plan.kind === "text") return { content: plan.text, reasoning, toolCall: null, finishReason: "stop" };
  const args = JSON.stringify(plan.arguments);
  switch (plan.form) {
    case "textcall":
      return {
        content: `I will call ${plan.name}.\n<tool_call>\n{"name": "${plan.name}", "arguments": ${args}}\n</tool_call>`,
        reasoning,
        toolCall: null,
        finishReason: "stop",
      };
    case "stringified":
      return {
        content: null,
        reasoning,
        toolCall: { id: toolCallId, name: plan.name, arguments: JSON.stringify(args) },
        finishReason: "tool_calls",
      };
    case "truncated":
      return {
        content: null,
        reasoning,
        toolCall: { id: toolCallId, name: plan.name, arguments: cutMidString(args) },
        finishReason: "length",
      };
    case "dropped":
      return {
        content: null,
        reasoning,
        toolCall: { id: toolCallId, name: plan.name, arguments: args },
        finishReason: null,
      };
    case "tool_call":
      return {
        content: null,
        reasoning,
        toolCall: { id: toolCallId, name: plan.name, arguments: args },
        finishReason: "tool_calls",
      };
  }
}

/** The text of an answer as the model would have generated it, for counting completion tokens. */
export function generatedText(answer: Answer): string {
  let out = answer.reasoning ? `<think>\n${answer.reasoning}\n</think>\n\n` : "";
  out += answer.content ?? "";
  if (answer.toolCall) {
    out += `<tool_call>\n{"name": "${answer.toolCall.name}", "arguments": ${answer.toolCall.arguments}}\n</tool_call>`;
  }
  return out;
}

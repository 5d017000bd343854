import type { Plan } from "./policies.js";

/**
 * Why an answer ended, as vLLM says it: `abort` is vLLM's engine-initiated abort; null when the
 * stream is cut off without one (the `dropper` and `cut` faults).
 */
export type FinishReason = "stop" | "tool_calls" | "length" | "abort" | null;

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

// Common words that are one token each in the Qwen and Llama 3 vocabularies (with their space).
const WORDS = (
  "the model reads the allowed picks and the task then checks each file and plans the next step " +
  "before it calls a tool so that the workflow moves on while the state stays the same until a " +
  "pick is made and the answer comes back with what is allowed now for this turn"
).split(" ");

/**
 * Deterministic reasoning of about `tokens` tokens (one common word each), seeded by the
 * request's bytes: the same request always thinks the same thoughts.
 */
export function fillerReasoning(tokens: number, seed: number, decision: string): string {
  const words: string[] = [];
  for (let i = 0; i < tokens; i++) words.push(WORDS[(seed + i * 7) % WORDS.length]!);
  return `${decision} ${words.join(" ")}`.trim();
}

/**
 * Write a policy's plan as an answer.
 *
 * @param plan - what the policy decided.
 * @param toolCallId - the id the call gets (deterministic per request).
 * @param reasoning - the answer's reasoning text, or null when the model does not think.
 */
export function planToAnswer(plan: Plan, toolCallId: string, reasoning: string | null): Answer {
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
    case "tool_call":
      return {
        content: null,
        reasoning,
        toolCall: { id: toolCallId, name: plan.name, arguments: args },
        finishReason: "tool_calls",
      };
  }
}

/** The decision sentence a thinking model opens its reasoning with. */
export function decisionLine(plan: Plan): string {
  return plan.kind === "call"
    ? `The newest "Allowed now" line decides: I call ${plan.name}.`
    : "I answer in text.";
}

/** The text of an answer as the model would have generated it, for counting completion tokens. */
export function generatedText(answer: Answer): string {
  let out = answer.reasoning !== null ? `<think>\n${answer.reasoning}\n</think>\n\n` : "";
  out += answer.content ?? "";
  if (answer.toolCall) {
    out += `<tool_call>\n{"name": "${answer.toolCall.name}", "arguments": ${answer.toolCall.arguments}}\n</tool_call>`;
  }
  return out;
}

/** A prefix of `text` holding about `share` (0–1) of it. */
function share(text: string, part: number): string {
  return Array.from(text)
    .slice(0, Math.floor(Array.from(text).length * Math.max(0, Math.min(1, part))))
    .join("");
}

/**
 * Cut an answer at the request's output budget, as a real server does: generation stops after
 * `maxTokens` tokens — inside the reasoning (then no content and no call at all), inside the
 * content, or inside the call's arguments — with `finish_reason: "length"`.
 *
 * @param answer - the whole answer.
 * @param maxTokens - `max_completion_tokens` / `max_tokens` of the request; null = no budget.
 * @param count - tokens of a generated text (the template's tokenizer).
 * @returns the answer unchanged when it fits; else the cut answer and `completionTokens` = maxTokens.
 */
export function cutAtMaxTokens(
  answer: Answer,
  maxTokens: number | null,
  count: (text: string) => number,
): { answer: Answer; completionTokens: number } {
  const total = count(generatedText(answer));
  if (maxTokens === null || total <= maxTokens) return { answer, completionTokens: total };
  const reasoningTokens = answer.reasoning !== null ? count(`<think>\n${answer.reasoning}\n</think>\n\n`) : 0;
  if (reasoningTokens >= maxTokens) {
    const reasoning = share(answer.reasoning ?? "", maxTokens / reasoningTokens);
    return {
      answer: { content: null, reasoning, toolCall: null, finishReason: "length" },
      completionTokens: maxTokens,
    };
  }
  const left = (maxTokens - reasoningTokens) / Math.max(1, total - reasoningTokens);
  const cut: Answer = { ...answer, finishReason: "length" };
  if (answer.toolCall && !answer.content) {
    cut.toolCall = { ...answer.toolCall, arguments: share(answer.toolCall.arguments, left) };
  } else {
    cut.content = share(answer.content ?? "", left);
    cut.toolCall = null;
  }
  return { answer: cut, completionTokens: maxTokens };
}

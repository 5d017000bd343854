import type { FaultCause } from "./harness.js";

/**
 * Each fault cause in words, with the `agent.fault` reason it rides (docs/reference/errors.md is
 * generated from this table by scripts/gen-errors-doc.mjs; a test keeps the two in step).
 * @see SPEC §5.6; issue 10 §3, issue 25
 */
export const FAULT_CAUSE_DOCS: Readonly<Record<FaultCause, { reason: string; meaning: string }>> = {
  "context-overflow": {
    reason: "infra",
    meaning: "the prompt does not fit the model's context; never retried",
  },
  "bad-request": {
    reason: "infra",
    meaning: "the model server refused the request (4xx, or a history it cannot parse); never retried",
  },
  "unknown-model": { reason: "infra", meaning: "the model server or the Harness's table has no such model" },
  unavailable: { reason: "infra", meaning: "the endpoint stayed down or loading past `retry.maxWaitMs`" },
  "stream-cut": {
    reason: "infra",
    meaning:
      "answers kept being cut mid-stream past `retry.attempts` — a cut socket, no finish reason, or a stream timer (first token, then idle) that fired; the retry line names the timer",
  },
  "output-limit": { reason: "runaway", meaning: "two answers in a row were cut at `maxTokens`" },
  "text-call": {
    reason: "no-signal",
    meaning:
      "the model wrote its tool call as text (in its content or its reasoning) and made none, past the nudge budget",
  },
  "unparsable-output": {
    reason: "no-signal",
    meaning:
      "the model server could not read the model's output as a tool call (llama-server's peg-format error), again after one nudge; never retried with the same bytes",
  },
  "refusal-loop": {
    reason: "runaway",
    meaning:
      "`refusalBudget` picks (the model entry's; default 8) outside the Allowed picks, or invented tools, refused in one Submission, or 8 guard refusals in a row; the detail names the picks tried and the Allowed picks",
  },
  "tool-loop": {
    reason: "runaway",
    meaning:
      "the model made the same Working-tool call (name and arguments) 5 times in a row; warned at the 3rd",
  },
};

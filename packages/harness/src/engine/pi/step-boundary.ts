import type { AgentEvent } from "@mariozechner/pi-agent-core";
import type { AssistantMessage } from "@mariozechner/pi-ai";
import { callKey } from "../../provider/answer/answer-ingestion.js";
import { type RunState, textOf } from "./run-state.js";

/**
 * A step's two edges in pi's loop. When a model answer ends, {@link countAnswer} counts it and
 * halts a runaway (answers cut at the output limit, identical calls, the step budget); when the
 * answer's tool results are in, {@link atStepBoundary} asks the Turn for a restatement of the
 * Allowed picks (or, after an answer cut with no call, a request to go on) and steers it in.
 * @see SPEC §7.2 step 5, §7.5; issue 10 §3
 */

/** Answers in a row cut at `maxTokens` that end a Submission (`output-limit`, issue 10 §3). */
export const OUTPUT_CUTS_LIMIT = 2;

/**
 * Answers in a row making the same calls that count as runaway. Runaway counts model answers,
 * never the calls of one answer: identical calls within an answer run once (ingestion answers
 * the rest "Not run"). Issue 25 §1 supersedes SPEC §5.6's "4 identical consecutive tool calls".
 */
export const IDENTICAL_CALLS_LIMIT = 4;

/**
 * On an answer's `message_end`: counts the step, shows the answer to observers and sets
 * `run.halt` when the run became a runaway. Errored or aborted answers count as steps only.
 */
export function countAnswer(run: RunState, m: AssistantMessage): void {
  run.steps++;
  run.req.hooks.message("assistant", textOf(m));
  if (m.stopReason === "error" || m.stopReason === "aborted") return;
  const calls = m.content.filter((c) => c.type === "toolCall");
  run.cuts = m.stopReason === "length" ? run.cuts + 1 : 0;
  if (run.cuts >= OUTPUT_CUTS_LIMIT) {
    const model = run.req.model;
    run.halt = {
      type: "runaway",
      cause: "output-limit",
      message: `${run.cuts} answers in a row were cut at the output limit (maxTokens ${model.maxTokens} of model entry \`${run.req.entry}\`); raise maxTokens in JR2_MODELS, or leave room for thinking`,
    };
    return;
  }
  // One key an answer: the set of distinct picks it made (a repeat inside it adds nothing).
  // Working-tool calls have their own bound (tool-execution.ts); an answer of only those never matches.
  const picks = calls.filter((c) => !run.workingNames.has(c.name));
  run.callKeys.push(
    picks.length === 0
      ? `\u0002${run.steps}`
      : [...new Set(picks.map((c) => callKey(c.name, c.arguments)))].sort().join("\u0001"),
  );
  const lastKeys = run.callKeys.slice(-IDENTICAL_CALLS_LIMIT);
  if (
    lastKeys.length === IDENTICAL_CALLS_LIMIT &&
    lastKeys.every((k) => k === lastKeys[0]) &&
    calls.length > 0
  ) {
    run.halt = {
      type: "runaway",
      message: `${IDENTICAL_CALLS_LIMIT} answers in a row made the same tool calls`,
    };
  } else if (run.steps >= run.req.maxSteps && calls.length > 0) {
    run.halt = { type: "runaway", message: `step budget of ${run.req.maxSteps} model requests spent` };
  }
}

/**
 * On pi's `turn_end` (one answer and its tool results): unless the answer failed or the run is
 * aborted, over or halted, steers the Turn's boundary restatement (§7.5) and, after an answer cut
 * at the output limit with no call, the Turn's request to go on. `steer` queues a user message.
 */
export async function atStepBoundary(
  run: RunState,
  event: Extract<AgentEvent, { type: "turn_end" }>,
  steer: (text: string, part: "restatement" | "continue") => void,
): Promise<void> {
  const m = event.message;
  if (m.role !== "assistant" || m.stopReason === "error" || m.stopReason === "aborted") return;
  if (run.aborted || run.turnOver || run.halt) return;
  const text = await run.req.hooks.boundary(event.toolResults.length === 0);
  if (text !== undefined && !run.aborted && !run.turnOver) steer(text, "restatement");
  // An answer cut at the output limit with no call would end the loop: ask once more (the
  // second cut in a row ends the Submission with `output-limit`).
  const cut =
    m.stopReason === "length" && event.toolResults.length === 0 ? run.req.hooks.outputCut() : undefined;
  if (cut !== undefined && !run.aborted && !run.turnOver) steer(cut, "continue");
}

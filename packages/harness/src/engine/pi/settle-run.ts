import type { AgentMessage } from "@mariozechner/pi-agent-core";
import type { EngineOutcome as RunOutcome } from "../engine.js";
import { isTextCall } from "../text-call.js";
import { type RunState, textOf } from "./run-state.js";

/**
 * The last phase of a run: how it ended, read from the run's bookkeeping and the conversation's
 * last message. turn.ts maps the {@link RunOutcome} to the Submission's settlement.
 * @see SPEC §7.2 step 6; docs/adr/0151-pi-interception.md
 */

export type { EngineOutcome as RunOutcome } from "../engine.js";

/** The reasoning of an answer (its thinking parts joined). */
function reasoningOf(m: Extract<AgentMessage, { role: "assistant" }>): string {
  return m.content.map((c) => (c.type === "thinking" ? c.thinking : "")).join("");
}

/**
 * Aborted wins, then a runaway halt, then a failed or aborted last answer (the request's own
 * failure when the streamFn recorded one, else pi's message); an answer that only wrote a tool
 * call as text completes with `textCall` and a warn line; anything else completed.
 */
export function settleRun(run: RunState, last: AgentMessage | undefined): RunOutcome {
  if (run.aborted) return { kind: "aborted" };
  if (run.halt) return { kind: "failed", error: run.halt };
  if (last?.role === "assistant" && (last.stopReason === "error" || last.stopReason === "aborted")) {
    return {
      kind: "failed",
      error: run.failure ?? { type: "provider", message: last.errorMessage ?? "model request failed" },
    };
  }
  if (
    last?.role === "assistant" &&
    last.stopReason === "stop" &&
    !last.content.some((c) => c.type === "toolCall")
  ) {
    if (isTextCall(textOf(last))) {
      run.req.hooks.trouble(
        "warn",
        "the model wrote a tool call as text and made none; the server's tool-call parser may be off (vLLM: --enable-auto-tool-choice --tool-call-parser hermes)",
      );
      return { kind: "completed", textCall: true };
    }
    // Qwen3 writes its call inside <think>; vLLM's reasoning parser keeps it there (issue 25 §4).
    // Never parsed, never delivered: the same text-call nudge, naming where it was.
    if (isTextCall(reasoningOf(last))) {
      run.req.hooks.trouble(
        "warn",
        "the model wrote a tool call as text inside its reasoning and made none; nothing was run (the server's reasoning parser keeps calls written inside <think>)",
      );
      return { kind: "completed", textCall: true, textCallWhere: "reasoning" };
    }
  }
  return { kind: "completed" };
}

import { HARNESS_RESTARTED, type Notice } from "@jr2/wire";
import type { NextSubmission } from "./admission.js";
import type { Settlement } from "./follow.js";
import { endTurn, type TurnState } from "./turn-state.js";

/**
 * A Submission a restarted Harness settled `failed { type: "harness-restarted" }` (issue 27,
 * ADR-0175): the Harness kept the conversation, only the running Submission died with the
 * process. SPEC §5.6's exception path: the Turn waits for Rest and is admitted again on the
 * SAME conversation (`kept: true`), told it was interrupted and — when a pick of this Turn was
 * answered — that answer; no budget is spent. A Harness that no longer holds the conversation
 * answers the admission 404 and the lost-conversation path takes over.
 * @see SPEC §5.6; docs/adr/0175-harness-durable-state.md
 */

/** Re-admissions of one Turn after Harness restarts before it faults (a crash-looping Harness). */
export const RESTART_READMITS = 3;

/**
 * The Harness answered 404 for a continued conversation the run holds a byte-exact history of
 * (a wiped data dir, a Harness without one): admit `next` again with that history pushed, once
 * per Turn, so the Harness rebuilds the conversation instead of a new one starting. `undefined`
 * when there is nothing to push or it was pushed already (then the conversation is truly lost).
 */
export function withPushedHistory(state: TurnState, next: NextSubmission): NextSubmission | undefined {
  if (next.history || state.historyPushed) return undefined;
  const history = state.ports.historyOf?.(state.iid);
  if (!history) return undefined;
  state.historyPushed = true;
  state.ports.log("warn", "the Harness lost the conversation; admitting again with its kept history", {
    iid: state.iid,
    submissions: history.submissions.length,
  });
  return { ...next, kept: true, history };
}

/** Why a conversation could not be rebuilt, for the feed's `retry` line (said with the loss). */
export function lostReason(state: TurnState): string {
  if (state.historyPushed) return "conversation lost and its pushed history not taken; admitted on a new one";
  return state.ports.historyOf?.(state.iid)
    ? "conversation lost; admitted on a new one"
    : "conversation lost (no byte-exact history kept of it); admitted on a new one";
}

/** Whether `settlement` is a restarted Harness's settlement of the Submission it lost. */
export function isHarnessRestarted(settlement: Settlement): boolean {
  return settlement.outcome === "failed" && settlement.error?.type === HARNESS_RESTARTED;
}

/**
 * The next Submission after a `harness-restarted` settlement: the task again on the same
 * conversation, after Rest, with the `readmitted` notice (and `pick-answer`), said on the feed
 * as a `retry`. Past {@link RESTART_READMITS} the Turn faults `infra` / `unavailable` and
 * `undefined` is returned.
 */
export function onHarnessRestarted(state: TurnState): NextSubmission | undefined {
  const { ports } = state;
  state.restartReadmits = (state.restartReadmits ?? 0) + 1;
  if (state.restartReadmits > RESTART_READMITS) {
    endTurn(state, {
      reason: "infra",
      detail: `the Harness at ${ports.client.endpoint.url} restarted during this Turn ${state.restartReadmits} times; it is not admitted again`,
      cause: "unavailable",
    });
    return undefined;
  }
  const last = ports.lastAnswer();
  const notices: Notice[] = [
    { type: "readmitted" },
    ...(last ? [{ type: "pick-answer" as const, pick: last.pick, answer: last.answer }] : []),
  ];
  ports.telemetry({
    type: "retry",
    attempt: ++state.attempt,
    reason: "the Harness restarted; the Turn is admitted again on its conversation",
  });
  return { kind: "task", kept: true, notices, waitForRest: true };
}

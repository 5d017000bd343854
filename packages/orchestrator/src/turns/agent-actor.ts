import { admitNext, followFrom, onConversationLost, reattach } from "./admission.js";
import type { TurnFault } from "./fault-causes.js";
import { DRAIN_MS, follow } from "./follow.js";
import {
  isHarnessRestarted,
  lostReason,
  onHarnessRestarted,
  withPushedHistory,
} from "./harness-restarted.js";
import { afterSettlement } from "./nudge-budget.js";
import type { TurnHandle, TurnPorts } from "./turn-ports.js";
import {
  abortRemote,
  DEADLINE_SETTLE_MS,
  endTurn,
  isOver,
  newTurnState,
  type TurnState,
} from "./turn-state.js";

/**
 * The Agent actor's mechanics for one Turn (SPEC §5), top-down: re-attach or admit, ledger,
 * follow the Submission, then fault or ask again (nudge and wake on one budget); the deadline
 * and the abort on exit around it. The phases live beside it — `admission.ts` (admit, ledger,
 * re-admission on a new conversation), `follow.ts` (the stream, reconnects, the outage line),
 * `nudge-budget.ts` (the ask-again rule), `turn-state.ts` (what they share) — and the types
 * the run host sees in `turn-ports.ts`.
 * It holds no xstate object: the run host hands it ports (the live Allowed picks, whether the
 * Turn is still open, a change watch, the ledger, the feed), so it is testable against a fake
 * Harness and a fake Machine.
 */

export type {
  FaultReason,
  LedgerEntry,
  TurnConfig,
  TurnHandle,
  TurnPorts,
  TurnTelemetry,
} from "./turn-ports.js";
export { defaultTurnConfig } from "./turn-ports.js";

/**
 * Starts the mechanics of one Turn. Re-attaches when the ledger holds an admission with this
 * Turn's turnId (§5.4), otherwise admits the task.
 * @see SPEC §5.1–§5.7
 */
export function startTurn(ports: TurnPorts): TurnHandle {
  const state = newTurnState(ports);
  const deadline = armDeadline(state);
  const done = live(state)
    .catch((error: unknown) => {
      ports.log("warn", "Turn mechanics failed", { error: String(error) });
      endTurn(state, { reason: "infra", detail: String(error) });
    })
    .finally(() => {
      ports.clearTimeout(deadline);
    });
  return { done, stop: (options) => stop(state, deadline, options) };
}

/**
 * A Turn's life until it ends: each round admits the next Submission (unless one is ledgered),
 * follows it to its settlement, and decides what comes next. A lost conversation — at the
 * admission or on the stream — admits the task again on a new one.
 */
async function live(state: TurnState): Promise<void> {
  let { ledgered, next, catchUpFrom } = reattach(state);
  let budget = state.ports.config.nudgeBudget;
  while (!state.stopped) {
    let entry = ledgered;
    ledgered = undefined;
    let from: string | undefined;
    if (!entry) {
      const admitted = await admitNext(state, next);
      if (admitted.kind === "ended") return;
      if (admitted.kind === "lost") {
        // A 404 on a kept admission: push the kept history once before giving the conversation up.
        const pushed = admitted.reason === undefined ? withPushedHistory(state, next) : undefined;
        if (pushed) {
          next = pushed;
          continue;
        }
        next = onConversationLost(state, admitted.reason ?? lostReason(state));
        catchUpFrom = undefined; // a new conversation: nothing earlier to read
        continue;
      }
      entry = admitted.entry;
      state.historyPushed = false; // taken: a later loss may push it again
      from = followFrom(entry, catchUpFrom);
      catchUpFrom = undefined;
    }
    const followed = await follow(state, from === undefined ? entry : { ...entry, offset: from });
    if (followed.kind === "stopped") return;
    if (followed.kind === "lost") {
      // The stream's 404: the Submission died with the conversation; rebuilt from the kept
      // history it is admitted again on the same one, as after a restart (issue 27).
      const again = state.ports.historyOf?.(state.iid) ? onHarnessRestarted(state) : undefined;
      const pushed = again && withPushedHistory(state, again);
      next = pushed ?? (isOver(state) ? next : onConversationLost(state, lostReason(state)));
      if (isOver(state)) return;
      continue;
    }
    if (isOver(state)) return;
    if (state.pastDeadline) {
      endPastDeadline(state, state.pastDeadline, followed.settlement.commit);
      return;
    }
    if (isHarnessRestarted(followed.settlement)) {
      // The Harness kept the conversation; only this Submission died with it (§5.6, ADR-0175).
      const again = onHarnessRestarted(state);
      if (!again) return;
      next = again;
      continue;
    }
    const after = await afterSettlement(state, followed.settlement, budget);
    if (after.kind === "ended") return;
    budget = after.budget;
    next = after.next;
  }
}

/**
 * Past the Turn's deadline (§5.6): abort the Submission, then `agent.fault { deadline }`. When
 * the abort stopped a running Submission, the fault waits (at most {@link DEADLINE_SETTLE_MS})
 * for its settlement, read by the Turn's loop: the Worktree commit it carries goes into the
 * version the fault makes (ADR-0219). The loop reading it sends the fault itself.
 */
function armDeadline(state: TurnState): unknown {
  const { ports } = state;
  const { deadlineMs } = ports.config;
  return ports.setTimeout(() => {
    if (state.stopped) return;
    const fault = { reason: "deadline", detail: `the Turn ran past its ${deadlineMs} ms deadline` } as const;
    state.pastDeadline = fault;
    void abortRemote(state).then((answer) => {
      if ((answer as { aborted?: boolean } | undefined)?.aborted !== true) endTurn(state, fault);
      else if (!isOver(state))
        state.deadlineWait = ports.setTimeout(() => endTurn(state, fault), DEADLINE_SETTLE_MS);
    });
  }, deadlineMs);
}

/** The aborted Submission of a Turn past its deadline settled: its commit kept, then the fault. */
function endPastDeadline(
  state: TurnState,
  fault: TurnFault,
  commit?: Readonly<Record<string, string>>,
): void {
  if (state.deadlineWait !== undefined) state.ports.clearTimeout(state.deadlineWait);
  if (commit) state.ports.recordCommits?.(commit);
  endTurn(state, fault);
}

/**
 * The Turn's state exited: stop reading (at once on shutdown, after a bounded drain otherwise),
 * end any wait, and abort the Submission — a Turn that is over but whose Submission runs is an
 * unaccounted writer (§5.1); a host shutting down leaves it running for restore.
 */
function stop(state: TurnState, deadline: unknown, options?: { shutdown?: boolean }): void {
  if (state.stopped) return;
  const { ports } = state;
  state.stopped = true;
  state.shuttingDown = options?.shutdown === true;
  ports.clearTimeout(deadline);
  if (state.deadlineWait !== undefined) ports.clearTimeout(state.deadlineWait);
  if (state.shuttingDown) state.polls.abort();
  else
    ports.setTimeout(() => {
      state.drained = true;
      state.polls.abort();
    }, DRAIN_MS);
  state.wakeUnsubscribe?.();
  state.wakeResolve?.();
  if (!state.shuttingDown) {
    const { iid } = state;
    void abortRemote(state).then((answer) => {
      if ((answer as { ok?: boolean } | undefined)?.ok === true) ports.aborted?.(iid);
    });
  }
}

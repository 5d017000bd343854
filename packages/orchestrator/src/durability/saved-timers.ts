/**
 * A run's delayed events as its saves capture them (§8, §13 "Restore"): read from the actor
 * system into the RunBlob, and which of them the last commit held (a new one reaching the store
 * is the `timer-armed` crash point).
 * @see SPEC §8, §13 "Restore"
 */
import type { Logger } from "pino";
import type { EventObject } from "xstate";
import { actorPathOf, pendingDelayedEvents } from "../xstate/adapter.js";
import type { SavedRun } from "./saved-run.js";
import type { SavedTimer } from "./store/run-store.js";

/**
 * The run's pending delayed events, as restore re-arms them (§8, §13 "Restore").
 * @throws what reading the actor system throws (see {@link readTimers})
 */
export function timersOf(run: SavedRun): SavedTimer[] {
  return pendingDelayedEvents(run.actor.system).map((e) => ({
    id: e.id,
    sourcePath: actorPathOf(e.source),
    targetPath: actorPathOf(e.target),
    event: e.event as EventObject,
    delay: e.delay,
    startedAt: e.startedAt,
    dueAt: e.startedAt + e.delay,
  }));
}

/** The run's pending timers; none when the system cannot be read (the run is faulted then). */
export function readTimers(log: Logger, run: SavedRun): SavedTimer[] {
  try {
    return timersOf(run);
  } catch (error) {
    log.error({ runId: run.runId, err: error }, "reading the run's timers failed");
    return [];
  }
}

/** Per run: the timer ids in its last committed blob. */
export type CommittedTimers = WeakMap<SavedRun, Set<string>>;

/**
 * Records `timers` as `run`'s committed ones.
 * @returns whether one of them was not in the run's previous commit (a timer newly armed)
 */
export function commitTimers(
  committed: CommittedTimers,
  run: SavedRun,
  timers: readonly SavedTimer[],
): boolean {
  const before = committed.get(run) ?? new Set<string>();
  const ids = new Set(timers.map((t) => t.id));
  committed.set(run, ids);
  return [...ids].some((id) => !before.has(id));
}

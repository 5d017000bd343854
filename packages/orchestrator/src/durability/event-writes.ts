/**
 * The run event log's writes (ADR-0256), the outbox rule of ADR-0250 applied to the feed: an
 * event reporting a state change (`status`, `gate`, `pick`, `gate-answered`, `timer`) waits
 * for the next save of its run's current state (not a held snapshot) and commits in that
 * transaction — never an event for a state that was not saved, never a saved state without
 * its events. Any other event (usage, retry, admission, text-call, a Turn's fault) is a fact:
 * rows inserted on their own (pending-rows.ts: batched per cascade, retried with backoff); a
 * save carries a run's pending facts too. The RunBlob never carries the log.
 * @see SPEC §8
 */
import type { RunFeedEvent } from "@jr2/wire";
import { type PendingRows, pendingRows } from "./pending-rows.js";
import type { SaveContext } from "./save-context.js";
import type { SavedRun } from "./saved-run.js";

/** The feed event types that report a state change: committed with the save of that state. */
const STATE_EVENTS: ReadonlySet<RunFeedEvent["type"]> = new Set([
  "status",
  "gate",
  "pick",
  "gate-answered",
  "timer",
]);

/** Whether `event` reports a state change (outbox rule) rather than a fact (inserted on its own). */
export function reportsState(event: RunFeedEvent): boolean {
  return STATE_EVENTS.has(event.type);
}

/** Events waiting for the store: state events per run, facts per run id with their flush. */
export interface PendingEvents {
  /** Per run: state events waiting for the next commit of its current state, in order. */
  readonly state: Map<SavedRun, RunFeedEvent[]>;
  /** Facts not yet committed, by run id (batched, retried: pending-rows.ts). */
  readonly facts: PendingRows<RunFeedEvent>;
}

/** Nothing pending. */
export function createPendingEvents(ctx: SaveContext): PendingEvents {
  return {
    state: new Map(),
    facts: pendingRows(ctx, (runId, events) => ctx.store.appendEvents(runId, events), "run events"),
  };
}

/**
 * Queues `event` of `run`: a state event for its next save (the caller schedules one), a fact
 * for the next batch — unless a state event of the run waits for its save: then the fact waits
 * with it, so the run's events commit in seq order (ADR-0284; a follower resuming after a
 * fact's seq would otherwise skip the earlier state event committed later).
 * @returns whether it is a state event (a save is needed)
 */
export function queueEvent(
  ctx: SaveContext,
  pending: PendingEvents,
  run: SavedRun,
  event: RunFeedEvent,
): boolean {
  const waiting = pending.state.get(run);
  if (reportsState(event)) {
    if (ctx.closed || run.frozen) return false; // its state will never be saved from memory
    const list = waiting ?? [];
    list.push(event);
    pending.state.set(run, list);
    return true;
  }
  if (waiting && waiting.length > 0) waiting.push(event);
  else pending.facts.queue(run.runId, [event]);
  return false;
}

/**
 * Takes what a save of `run` carries: its pending facts, and its state events unless the
 * snapshot is held (that save does not commit the current state).
 */
export function takeEvents(pending: PendingEvents, run: SavedRun, held: boolean): RunFeedEvent[] {
  const facts = pending.facts.take(run.runId);
  const state = held ? [] : (pending.state.get(run) ?? []);
  if (!held) pending.state.delete(run);
  return [...facts, ...state];
}

/**
 * A save carrying `events` failed: its state events wait for the next save (unless the run
 * froze: that state is never saved), its facts are written on their own with backoff.
 */
export function returnEvents(
  pending: PendingEvents,
  run: SavedRun,
  events: readonly RunFeedEvent[],
  error: unknown,
): void {
  // A run let go of: nothing of it is written again (another incarnation goes on, ADR-0284).
  if (run.movedAway) return;
  if (!run.frozen && events.some(reportsState)) {
    // In seq order with what is still waiting: its facts too (they follow a state event).
    const first = events.findIndex(reportsState);
    const facts = events.slice(0, first);
    pending.state.set(run, [...events.slice(first), ...(pending.state.get(run) ?? [])]);
    if (facts.length > 0) pending.facts.keep(run.runId, facts, error);
    return;
  }
  const facts = events.filter((e) => !reportsState(e));
  if (facts.length > 0) pending.facts.keep(run.runId, facts, error);
}

/** Drops `run`'s pending state events (a frozen run is reloaded from its last save). */
export function forgetEvents(pending: PendingEvents, run: SavedRun): void {
  pending.state.delete(run);
}

/** Shutdown: stops the retry and writes the pending facts if the store takes them (never rejects). */
export async function writeEventsOnClose(pending: PendingEvents): Promise<void> {
  await pending.facts.writeOnClose();
  // State events not taken by a save report states the stop does not save: dropped.
  pending.state.clear();
}

/**
 * The run event log's writes (ADR-0256), the outbox rule of ADR-0250 applied to the feed: an
 * event reporting a state change (`status`, `gate`, `pick`, `gate-answered`, `timer`) waits
 * for the next save of its run's current state (not a held snapshot) and commits in that
 * transaction — never an event for a state that was not saved, never a saved state without
 * its events. Any other event (usage, retry, admission, text-call, a Turn's fault) is a fact:
 * rows inserted on their own, batched per cascade (a microtask), retried with backoff; a save carries
 * a run's pending facts too. The RunBlob never carries the log.
 * @see SPEC §8
 */
import type { RunFeedEvent } from "@jr2/wire";
import { backoffMs, type SaveContext, storeFailed } from "./save-context.js";
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
  /** Facts not yet committed, by run id. */
  readonly facts: Map<string, RunFeedEvent[]>;
  /** A flush is queued for the end of the current cascade (a microtask: one batch). */
  flushQueued: boolean;
  /** The backoff timer of a failed write, while one waits. */
  retry: NodeJS.Timeout | undefined;
  /** Failed writes in a row (the backoff's exponent). */
  failures: number;
}

/** Nothing pending. */
export function createPendingEvents(): PendingEvents {
  return { state: new Map(), facts: new Map(), flushQueued: false, retry: undefined, failures: 0 };
}

/**
 * Queues `event` of `run`: a state event for its next save (the caller schedules one), a fact
 * for the next batch. @returns whether it is a state event (a save is needed)
 */
export function queueEvent(
  ctx: SaveContext,
  pending: PendingEvents,
  run: SavedRun,
  event: RunFeedEvent,
): boolean {
  if (reportsState(event)) {
    if (ctx.closed || run.frozen) return false; // its state will never be saved from memory
    push(pending.state, run, [event]);
    return true;
  }
  push(pending.facts, run.runId, [event]);
  if (!pending.flushQueued && !pending.retry && !ctx.closed) {
    pending.flushQueued = true;
    // A microtask, as usage rows (ADR-0255): a usage event and its row are written in the same turn.
    queueMicrotask(() => flushFacts(ctx, pending));
  }
  return false;
}

/**
 * Takes what a save of `run` carries: its pending facts, and its state events unless the
 * snapshot is held (that save does not commit the current state).
 */
export function takeEvents(pending: PendingEvents, run: SavedRun, held: boolean): RunFeedEvent[] {
  const facts = pending.facts.get(run.runId) ?? [];
  pending.facts.delete(run.runId);
  const state = held ? [] : (pending.state.get(run) ?? []);
  if (!held) pending.state.delete(run);
  return [...facts, ...state];
}

/**
 * A save carrying `events` failed: its state events wait for the next save (unless the run
 * froze: that state is never saved), its facts are written on their own with backoff.
 */
export function returnEvents(
  ctx: SaveContext,
  pending: PendingEvents,
  run: SavedRun,
  events: readonly RunFeedEvent[],
  error: unknown,
): void {
  const state = events.filter(reportsState);
  const facts = events.filter((e) => !reportsState(e));
  if (state.length > 0 && !run.frozen) pending.state.set(run, [...state, ...(pending.state.get(run) ?? [])]);
  if (facts.length > 0) {
    pending.facts.set(run.runId, [...facts, ...(pending.facts.get(run.runId) ?? [])]);
    retryLater(ctx, pending, run.runId, error);
  }
}

/** Drops `run`'s pending state events (a frozen run is reloaded from its last save). */
export function forgetEvents(pending: PendingEvents, run: SavedRun): void {
  pending.state.delete(run);
}

/** Shutdown: stops the retry and writes the pending facts if the store takes them (never rejects). */
export async function writeEventsOnClose(ctx: SaveContext, pending: PendingEvents): Promise<void> {
  if (pending.retry) clearTimeout(pending.retry);
  for (const [runId, events] of pending.facts) await ctx.store.appendEvents(runId, events).catch(() => {});
  pending.facts.clear();
  // State events not taken by a save report states the stop does not save: dropped.
  pending.state.clear();
}

/** Writes every run's pending facts, one transaction per run; a failure keeps them and retries. */
function flushFacts(ctx: SaveContext, pending: PendingEvents): void {
  pending.flushQueued = false;
  if (ctx.closed) return;
  for (const [runId, events] of [...pending.facts]) {
    pending.facts.delete(runId);
    ctx.store.appendEvents(runId, events).then(
      () => {
        pending.failures = 0;
      },
      (error: unknown) => {
        storeFailed(ctx, error);
        pending.facts.set(runId, [...events, ...(pending.facts.get(runId) ?? [])]);
        retryLater(ctx, pending, runId, error);
      },
    );
  }
}

/** Pending facts could not be written: flush again with backoff (logged on the first failure). */
function retryLater(ctx: SaveContext, pending: PendingEvents, runId: string, error: unknown): void {
  if (pending.retry || ctx.closed) return;
  const delay = backoffMs(ctx.backoff, pending.failures++);
  if (pending.failures === 1)
    ctx.log.error({ runId, err: error }, "recording run events failed; retrying with backoff");
  pending.retry = setTimeout(() => {
    pending.retry = undefined;
    flushFacts(ctx, pending);
  }, delay);
  pending.retry.unref?.();
}

function push<K>(map: Map<K, RunFeedEvent[]>, key: K, events: RunFeedEvent[]): void {
  const list = map.get(key) ?? [];
  list.push(...events);
  map.set(key, list);
}

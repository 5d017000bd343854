/**
 * One save of a run (SPEC §8, ADR-0250), in phases: refuse (closed, frozen) → take what it
 * writes (the blob now, the outbox's effects, the pending usage and feed events, the Turn
 * records waiting for a save) → commit after the run's earlier saves → on success the store
 * accepts writes again, the commit's crash points, then the effects run; on failure the usage,
 * the effects and the Turn records wait for the next write.
 * @see SPEC §4.3, §5.4, §8
 */
import type { RunFeedEvent } from "@jr2/wire";
import { crashPoint } from "./crash-points.js";
import { type PendingEvents, reportsState, returnEvents, takeEvents } from "./event-writes.js";
import { type Effect, type Outbox, releaseEffects, returnEffects, takeEffects } from "./outbox.js";
import type { PendingRows } from "./pending-rows.js";
import { blobOf, type Snapshots } from "./run-blob.js";
import { type SaveContext, storeCommitted, storeFailed, wasFenced } from "./save-context.js";
import type { SavedRun } from "./saved-run.js";
import { type CommittedTimers, commitTimers } from "./saved-timers.js";
import type { RunBlob, StoredPickAnswer } from "./store/run-store.js";
import { type TurnRecord, turnRecordsOfSave } from "./transcript-rows.js";
import { returnTurns, takeTurns, turnsCommitted, type WaitingTurns } from "./turn-writes.js";
import type { UsageRecord } from "./usage-totals.js";

/** The state a run host's saves share, passed to every phase. */
export interface Saves {
  readonly ctx: SaveContext;
  readonly snapshots: Snapshots;
  /** Effects waiting for the next commit of a run's current state. */
  readonly outbox: Outbox;
  /** Usage records not yet committed (kept across a freeze: they are facts). */
  readonly usage: PendingRows<UsageRecord>;
  /** Feed events not yet committed (ADR-0256): state events wait for a save, facts are batched. */
  readonly events: PendingEvents;
  /** Turn records waiting for the next save of their run's current state (ADR-0296). */
  readonly turns: WaitingTurns;
  /** Per-run save chain: saves of one run commit in call order even on an async store. */
  readonly chains: Map<SavedRun, Promise<void>>;
  /** Timer ids in the last committed blob of each run (the `timer-armed` crash point). */
  readonly committedTimers: CommittedTimers;
}

/** What one save writes and what waits for its commit, all taken when it was asked for. */
interface SaveWork {
  blob: RunBlob;
  picks: readonly StoredPickAnswer[] | undefined;
  usage: UsageRecord[];
  effects: Effect[];
  events: RunFeedEvent[];
  turns: TurnRecord[];
  /** The blob is a held snapshot (a pick in delivery): the state as of before it, no Gate it opened. */
  held: boolean;
}

/**
 * Takes the blob now (so a hold applies as of this call) and commits it after the earlier ones.
 * Never throws synchronously.
 * @returns resolves after the commit; rejects when closed, when the run is frozen, or with what
 * the store throws
 */
export function enqueueSave(saves: Saves, run: SavedRun, picks?: readonly StoredPickAnswer[]): Promise<void> {
  if (saves.ctx.closed) return Promise.reject(new Error("the run store is closed (shutting down)"));
  // A frozen run's memory is not its state (its last save failed): it is never saved again.
  if (run.frozen) return Promise.reject(new Error("the run is frozen: its last save failed"));
  let work: SaveWork;
  try {
    work = takeWork(saves, run, picks);
  } catch (error) {
    // Never a synchronous throw: `changed` runs this from a microtask (an uncaught exception).
    return Promise.reject(error);
  }
  const previous = saves.chains.get(run) ?? Promise.resolve();
  const next = previous.catch(() => {}).then(() => commit(saves, run, work));
  chain(saves.chains, run, next);
  return next;
}

/** The blob (which may fault the run), then the effects it releases, the usage and events it carries. */
function takeWork(saves: Saves, run: SavedRun, picks: readonly StoredPickAnswer[] | undefined): SaveWork {
  const blob = blobOf(saves.ctx, saves.snapshots, run);
  const held = saves.snapshots.held.has(run);
  const effects = takeEffects(saves.outbox, run, held);
  const usage = saves.usage.take(run.runId);
  const events = takeEvents(saves.events, run, held);
  const turns = takeTurns(saves.turns, run, held);
  return { blob, picks, usage, effects, events, turns, held };
}

/** Writes `work` in one transaction; settles its effects and usage either way. */
async function commit(saves: Saves, run: SavedRun, work: SaveWork): Promise<void> {
  // A save queued behind the foreground save that froze the run holds the state that save's pick
  // produced (ADR-0296): committed, it would move the run past a pick answered as not taken.
  if (run.frozen) return refuseFrozen(saves, run, work);
  try {
    await saves.ctx.store.save(
      work.blob,
      work.picks,
      work.usage,
      work.events,
      undefined,
      undefined,
      work.turns,
    );
  } catch (error) {
    // Fenced (ADR-0280): the run is let go, nothing of this save waits for a next one.
    if (!wasFenced(saves.ctx, error)) saveFailed(saves, run, work, error);
    throw error;
  }
  storeCommitted(saves.ctx, run.runId);
  turnsCommitted(run, turnRecordsOfSave(work.picks ?? [], work.turns));
  committed(saves, run, work.blob, work.held);
  releaseEffects(saves.ctx.log, run, work.effects);
}

/** The store failing; the save's usage and effects wait for the next write. */
function saveFailed(saves: Saves, run: SavedRun, work: SaveWork, error: unknown): void {
  storeFailed(saves.ctx, error);
  if (work.usage.length > 0) {
    // Facts from the Harness, whatever becomes of the run: written on their own later.
    saves.usage.keep(run.runId, work.usage, error);
  }
  returnEffects(saves.outbox, run, work.effects);
  returnEvents(saves.events, run, work.events, error);
  returnTurns(saves.turns, run, work.turns);
}

/** A frozen run's queued save writes nothing; its facts (usage, fact events) are written on their own. */
function refuseFrozen(saves: Saves, run: SavedRun, work: SaveWork): Promise<never> {
  saves.usage.queue(run.runId, work.usage);
  saves.events.facts.queue(
    run.runId,
    work.events.filter((e) => !reportsState(e)),
  );
  return Promise.reject(new Error("the run is frozen: its last save failed"));
}

/**
 * What a commit of `blob` marks: a Gate saved open, a timer newly armed (their crash points).
 * A held snapshot is the state before the pick in delivery, so a Gate that pick opened is not in
 * it: marking it saved there logged "Gate saved open" (and fired `gate-open`) before the pick's
 * own save — a kill then restored the Turn before the pick, and the crash harness blamed the Gate.
 */
function committed(saves: Saves, run: SavedRun, blob: RunBlob, held: boolean): void {
  if (run.gatesUnsaved && !held) {
    run.gatesUnsaved = false;
    saves.ctx.log.info({ runId: run.runId, gates: [...run.gates.keys()] }, "Gate saved open");
    crashPoint("gate-open");
  }
  if (commitTimers(saves.committedTimers, run, blob.timers)) crashPoint("timer-armed");
}

/** Makes `next` the run's chain tail, removed once it settles (if still the tail). */
function chain(chains: Map<SavedRun, Promise<void>>, run: SavedRun, next: Promise<void>): void {
  chains.set(run, next);
  // The cleanup's own promise rejects with `next`: handled here, or a failed save (a full
  // disk) is an unhandled rejection that ends the process (issue 16 item 1).
  next
    .finally(() => {
      if (chains.get(run) === next) chains.delete(run);
    })
    .catch(() => {});
}

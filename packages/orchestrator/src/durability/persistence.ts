/**
 * Saving runs (SPEC §8): the RunBlob of a live run, written after every burst of macrosteps of
 * any of its actors and immediately on a ledger write; a pick's answer rides the same
 * transaction as the snapshot it produced (§4.3). Decisions: ADR-0250.
 *
 * The run host's one entry to its saves; the parts live beside it: `saves.ts` (one save, the
 * per-run chain), `run-blob.ts` (what a save writes, held snapshots), `outbox.ts` (effects
 * released after commit), `background-saves.ts` (retry with backoff, ADR-0253),
 * `pending-rows.ts` (rows written on their own: usage ADR-0255, transcripts ADR-0257),
 * `event-writes.ts` (the event log, ADR-0256), `turn-writes.ts` (Turn records that wait for a
 * save, ADR-0296), `saved-timers.ts` (timers' capture), sharing the
 * state of `save-context.ts`.
 * @see SPEC §4.3, §5.4, §8
 */
import type { HistorySubmission, RunFeedEvent } from "@jr2/wire";
import type { Logger } from "pino";
import {
  cancelAllRetries,
  cancelRetry,
  createBackgroundSaves,
  saveAfterCascade,
} from "./background-saves.js";
import { createPendingEvents, forgetEvents, queueEvent, writeEventsOnClose } from "./event-writes.js";
import { addEffect } from "./outbox.js";
import { pendingRows } from "./pending-rows.js";
import { createSnapshots, holdSnapshot } from "./run-blob.js";
import type { SaveContext } from "./save-context.js";
import type { SavedRun } from "./saved-run.js";
import { enqueueSave, type Saves } from "./saves.js";
import type { HistoryWrite } from "./store/history-store.js";
import type { PickKey, RunStore, StoredPickAnswer } from "./store/run-store.js";
import { type TranscriptRow, type TurnRecord, transcriptKey } from "./transcript-rows.js";
import { waitForSave, waitsForSave } from "./turn-writes.js";
import { type UsageRecord, usageKey } from "./usage-totals.js";

export { timersOf } from "./saved-timers.js";

/**
 * One run's saves, as the run host drives them. None throws except `save` (a failed commit);
 * a run whose snapshot cannot be taken is faulted and saved with its last good snapshot.
 */
export interface RunPersistence {
  /**
   * Something changed in `run` (any actor's macrostep, a status change): saves once the
   * current synchronous cascade of macrosteps is over (a microtask), so every state an outside
   * party could observe is saved before it can observe it.
   */
  changed(run: SavedRun): void;
  /**
   * Saves `run` now with `picks`, resolving after the commit (a ledger write, a pick's answer,
   * a Gate event). @throws what the store throws: the caller must not answer as if saved
   */
  save(run: SavedRun, picks?: readonly StoredPickAnswer[]): Promise<void>;
  /**
   * Holds `run`'s snapshot as it is now while a pick is in flight: saves until `release`
   * write the held snapshot (with the current ledger and epochs), so the pick's effect is
   * committed only together with its answer. Holds nest.
   */
  hold(run: SavedRun): () => void;
  /**
   * Runs `fn` after the next commit of `run`'s current state (not a held snapshot) — the outbox
   * of effects that leave the process (an admission, a remote abort). Schedules that save.
   * Dropped after `close()`: a restart finds the run as last committed.
   */
  afterCommit(run: SavedRun, fn: () => void): void;
  /**
   * The stored answer for `key` in `runId`, with the Turn and scope it was given in: with a
   * turnId only that Turn's, without the newest of any Turn (ADR-0252).
   */
  pickAnswer(runId: string, key: PickKey): Promise<StoredPickAnswer | undefined>;
  /**
   * Records one model request's usage of `run` once by its key (ADR-0255): written to the store
   * on its own (never by re-saving the blob), retried until it is; also carried by the run's
   * next save. @returns false when that key was recorded already (a stream read again)
   */
  recordUsage(run: SavedRun, record: UsageRecord): boolean;
  /**
   * Records one numbered feed event of `run` in its durable log (ADR-0256): an event reporting
   * a state change rides the next save of the run's current state (one is scheduled); any other
   * is inserted on its own, batched, never by re-saving the blob.
   */
  recordEvent(run: SavedRun, event: RunFeedEvent): void;
  /**
   * Records one transcript row of `run` once by its key (ADR-0257): inserted on its own,
   * batched, never by re-saving the blob. @returns false when that key was recorded already
   */
  recordTranscript(run: SavedRun, row: TranscriptRow): boolean;
  /**
   * Writes `run`'s Turn record as it is now (ADR-0257); the newest write wins. A record of a Turn
   * whose registration is not committed yet, or one that `ends` the Turn (its state exited),
   * rides the run's next save of its current state (one is scheduled; dropped if that state is
   * never saved: ADR-0296); any other is written on its own, batched.
   */
  recordTurn(run: SavedRun, turn: TurnRecord, ends?: boolean): void;
  /**
   * Stores one `history` part of conversation `iid` of `run` (ADR-0176): on its own, batched,
   * once by its sha256 (the caller records it in memory first and calls only for a new one).
   */
  recordHistory(run: SavedRun, iid: string, part: HistorySubmission): void;
  /** Deletes `iid`'s stored history (a fresh conversation whose Turn ended), after its queued parts. */
  dropHistory(run: SavedRun, iid: string): void;
  /**
   * Whether the store accepts writes: `failing` from a failed commit until the next one
   * succeeds (any run's), with the last error's text (ADR-0253).
   */
  storeState(): { failing: boolean; error?: string };
  /**
   * Drops what is pending for `run` — its scheduled retry, its outbox of effects — and saves it
   * no more: a frozen run is reloaded from its last committed save, never saved from memory.
   */
  forget(run: SavedRun): void;
  /**
   * Forgets `run` as {@link RunPersistence.forget} does and drops its pending rows unwritten:
   * another instance holds it now (ADR-0280 "Letting go") and reads them again from the Harness.
   */
  letGo(run: SavedRun): void;
  /**
   * Waits for pending saves; later background saves are skipped and foreground ones reject
   * (shutdown: the stop must not be saved, and nothing may be answered as saved).
   */
  close(): Promise<void>;
}

/** How background saves retry (ADR-0253); times in milliseconds. */
export interface SaveRetryOptions {
  /** First retry delay; doubles per failure. Default 500. */
  minMs?: number;
  /** Largest retry delay. Default 30 000. */
  maxMs?: number;
  /** A run's failing saves are logged at most once per this long. Default 60 000. */
  logEveryMs?: number;
  /** Called once when a commit succeeds after the store failed (frozen runs can be reloaded). */
  onRecovered?: () => void;
  /** Called when a write of a run was refused by the fence (FencedError, ADR-0280): let it go. */
  onFenced?: (runId: string) => void;
}

/**
 * Creates the saves of a run host over `store`. Save errors of background saves are logged
 * (the next save retries the whole blob); foreground saves reject.
 */
export function createRunPersistence(
  store: RunStore,
  log: Logger,
  now: () => Date,
  retry: SaveRetryOptions = {},
): RunPersistence {
  const ctx: SaveContext = {
    store,
    log,
    now,
    backoff: {
      minMs: retry.minMs ?? 500,
      maxMs: retry.maxMs ?? 30_000,
      logEveryMs: retry.logEveryMs ?? 60_000,
    },
    onRecovered: retry.onRecovered,
    onFenced: retry.onFenced,
    closed: false,
    failing: undefined,
  };
  const saves: Saves = {
    ctx,
    snapshots: createSnapshots(),
    outbox: new Map(),
    usage: pendingRows(ctx, (runId, records) => store.recordUsage(runId, records), "usage"),
    events: createPendingEvents(ctx),
    chains: new Map(),
    turns: new Map(),
    committedTimers: new WeakMap(),
  };
  const background = createBackgroundSaves();
  const transcripts = pendingRows<TranscriptRow>(
    ctx,
    (id, rows) => store.recordTranscript(id, rows),
    "transcripts",
  );
  const turns = pendingRows<TurnRecord>(ctx, (id, rows) => store.recordTurns(id, rows), "Turn records");
  // One queue for parts and drops: a drop is written after the parts queued before it. Aside
  // (ADR-0176): a failed history write costs only the fallback, never a run's health or lease.
  const histories = store.conversationHistory;
  const historyRows = pendingRows<HistoryWrite>(
    ctx,
    (id, writes) => histories?.writeHistory(id, writes) ?? Promise.resolve(),
    "conversation histories",
    { aside: true },
  );

  const forget = (run: SavedRun) => {
    cancelRetry(background, run);
    saves.outbox.delete(run);
    saves.snapshots.held.delete(run);
    forgetEvents(saves.events, run);
    // Records waiting for a save of a state never saved from memory (ADR-0296).
    saves.turns.delete(run);
  };

  return {
    changed: (run) => saveAfterCascade(saves, background, run),
    recordUsage(run, record) {
      const key = usageKey(record);
      if (run.usage.has(key)) return false;
      run.usage.set(key, record);
      if (!ctx.closed) saves.usage.queue(run.runId, [record]);
      return true;
    },
    recordEvent(run, event) {
      if (queueEvent(ctx, saves.events, run, event)) saveAfterCascade(saves, background, run);
    },
    recordTranscript(run, row) {
      const key = transcriptKey(row);
      if (run.transcriptKeys?.has(key)) return false;
      run.transcriptKeys?.add(key);
      if (!ctx.closed) transcripts.queue(run.runId, [row]);
      return true;
    },
    recordTurn(run, turn, ends = false) {
      if (ctx.closed) return;
      if (!waitsForSave(run, turn, ends)) return turns.queue(run.runId, [turn]);
      if (run.frozen) return;
      waitForSave(saves.turns, run, turn);
      saveAfterCascade(saves, background, run);
    },
    recordHistory(run, iid, part) {
      if (histories && !ctx.closed) historyRows.queue(run.runId, [{ iid, part }]);
    },
    dropHistory(run, iid) {
      if (histories && !ctx.closed) historyRows.queue(run.runId, [{ iid, drop: true }]);
    },
    storeState: () =>
      ctx.failing === undefined ? { failing: false } : { failing: true, error: ctx.failing },
    forget: (run) => forget(run),
    letGo(run) {
      forget(run);
      for (const rows of [saves.usage, saves.events.facts, transcripts, turns, historyRows])
        rows.drop(run.runId);
    },
    save: (run, picks) => enqueueSave(saves, run, picks),
    afterCommit(run, fn) {
      if (ctx.closed) return;
      addEffect(saves.outbox, run, fn);
      saveAfterCascade(saves, background, run);
    },
    hold: (run) => holdSnapshot(log, saves.snapshots, run),
    async pickAnswer(runId, key) {
      return store.pickAnswer(runId, key);
    },
    async close() {
      ctx.closed = true;
      cancelAllRetries(background);
      await saves.usage.writeOnClose();
      await writeEventsOnClose(saves.events);
      await transcripts.writeOnClose();
      await turns.writeOnClose();
      // Records waiting for a save describe states the stop does not save: a restart restores without them.
      saves.turns.clear();
      await historyRows.writeOnClose();
      await Promise.allSettled([...saves.chains.values()]);
    },
  };
}

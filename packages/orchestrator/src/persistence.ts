/**
 * Saving runs (SPEC §8): the RunBlob of a live run, written after every burst of macrosteps of
 * any of its actors and immediately on a ledger write; a pick's answer rides the same
 * transaction as the snapshot it produced (§4.3). Decisions: ADR-0250.
 * @see SPEC §4.3, §5.4, §8
 */
import type { UsageTotals } from "@jr2/wire";
import type { Logger } from "pino";
import type { EventObject } from "xstate";
import { crashPoint } from "./crash-points.js";
import type { LiveRun } from "./live-run.js";
import type { PickKey, RunBlob, RunStore, SavedTimer, StoredPickAnswer } from "./store/run-store.js";
import { sumUsage } from "./usage-totals.js";
import { actorPathOf, pendingDelayedEvents } from "./xstate-adapter.js";

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
  changed(run: LiveRun): void;
  /**
   * Saves `run` now with `picks`, resolving after the commit (a ledger write, a pick's answer,
   * a Gate event). @throws what the store throws: the caller must not answer as if saved
   */
  save(run: LiveRun, picks?: readonly StoredPickAnswer[]): Promise<void>;
  /**
   * Holds `run`'s snapshot as it is now while a pick is in flight: saves until `release`
   * write the held snapshot (with the current ledger and epochs), so the pick's effect is
   * committed only together with its answer. Holds nest.
   */
  hold(run: LiveRun): () => void;
  /**
   * Runs `fn` after the next commit of `run`'s current state (not a held snapshot) — the outbox
   * of effects that leave the process (an admission, a remote abort). Schedules that save.
   * Dropped after `close()`: a restart finds the run as last committed.
   */
  afterCommit(run: LiveRun, fn: () => void): void;
  /**
   * The stored answer for `key` in `runId`, with the Turn and scope it was given in: with a
   * turnId only that Turn's, without the newest of any Turn (ADR-0252).
   */
  pickAnswer(runId: string, key: PickKey): Promise<StoredPickAnswer | undefined>;
  /**
   * Waits for pending saves; later background saves are skipped and foreground ones reject
   * (shutdown: the stop must not be saved, and nothing may be answered as saved).
   */
  close(): Promise<void>;
}

interface Held {
  count: number;
  snapshot: unknown;
  timers: SavedTimer[];
  status: RunBlob["status"];
  fault: RunBlob["fault"];
}

/**
 * Creates the saves of a run host over `store`. Save errors of background saves are logged
 * (the next save retries the whole blob); foreground saves reject.
 */
export function createRunPersistence(store: RunStore, log: Logger, now: () => Date): RunPersistence {
  let closed = false;
  const scheduled = new Set<LiveRun>();
  const held = new Map<LiveRun, Held>();
  /** Per-run save chain: saves of one run commit in call order even on an async store. */
  const chains = new Map<LiveRun, Promise<void>>();
  /** Effects waiting for the next commit of a run's current state. */
  const outbox = new Map<LiveRun, Array<() => void>>();
  /** Timer ids in the last committed blob of each run (the `timer-armed` crash point). */
  const savedTimers = new WeakMap<LiveRun, Set<string>>();

  /** The last snapshot of each run that could be taken (the fallback of {@link snapshotOf}). */
  const lastSnapshots = new WeakMap<LiveRun, unknown>();

  /**
   * The run's persisted snapshot. Never throws: a snapshot xstate cannot take (an errored
   * actor's may lack the children it names) faults the run and saves the last one taken.
   */
  function snapshotOf(run: LiveRun): unknown {
    try {
      const snapshot = run.actor.getPersistedSnapshot();
      lastSnapshots.set(run, snapshot);
      return snapshot;
    } catch (error) {
      const reason = `the run's snapshot cannot be saved: ${error instanceof Error ? error.message : String(error)}`;
      log.error({ runId: run.runId, err: error }, "taking the run's snapshot failed; the run is faulted");
      run.faultRun(reason);
      return lastSnapshots.get(run) ?? null;
    }
  }

  /** The run's pending timers; none when the system cannot be read (the run is faulted then). */
  function timersSafe(run: LiveRun): SavedTimer[] {
    try {
      return timersOf(run);
    } catch (error) {
      log.error({ runId: run.runId, err: error }, "reading the run's timers failed");
      return [];
    }
  }

  function blobOf(run: LiveRun): RunBlob {
    const hold = held.get(run);
    // Taken first: a snapshot that cannot be taken faults the run, and the blob says so.
    const snapshot = hold ? hold.snapshot : snapshotOf(run);
    const timers = hold ? hold.timers : timersSafe(run);
    return {
      runId: run.runId,
      workflow: run.workflow,
      machineFingerprint: run.fingerprint,
      status: hold ? hold.status : run.status,
      snapshot,
      input: run.input ?? null,
      ledger: Object.fromEntries(run.ledger),
      epochs: Object.fromEntries(run.epochs),
      timers,
      usage: usageOf(run),
      ...((hold ? hold.fault : run.fault) ? { fault: hold ? hold.fault : run.fault } : {}),
      createdAt: run.createdAt.toISOString(),
      updatedAt: now().toISOString(),
    };
  }

  /** Takes the blob now (so a hold applies as of this call) and commits it after the earlier ones. */
  function enqueue(run: LiveRun, picks?: readonly StoredPickAnswer[]): Promise<void> {
    if (closed) return Promise.reject(new Error("the run store is closed (shutting down)"));
    let blob: RunBlob;
    try {
      blob = blobOf(run);
    } catch (error) {
      // Never a synchronous throw: `changed` runs this from a microtask (an uncaught exception).
      return Promise.reject(error);
    }
    const effects = held.has(run) ? [] : (outbox.get(run) ?? []);
    if (effects.length > 0) outbox.delete(run);
    const previous = chains.get(run) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(async () => {
        try {
          await store.save(blob, picks);
        } catch (error) {
          if (effects.length > 0) outbox.set(run, [...effects, ...(outbox.get(run) ?? [])]);
          throw error;
        }
        afterCommit(run, blob);
        for (const effect of effects) {
          try {
            effect();
          } catch (error) {
            log.error({ runId: run.runId, err: error }, "an effect after a commit threw");
          }
        }
      });
    chains.set(run, next);
    void next.finally(() => {
      if (chains.get(run) === next) chains.delete(run);
    });
    return next;
  }

  function afterCommit(run: LiveRun, blob: RunBlob): void {
    if (run.gatesUnsaved) {
      run.gatesUnsaved = false;
      log.info({ runId: run.runId, gates: [...run.gates.keys()] }, "Gate saved open");
      crashPoint("gate-open");
    }
    const before = savedTimers.get(run) ?? new Set<string>();
    const ids = new Set(blob.timers.map((t) => t.id));
    savedTimers.set(run, ids);
    if ([...ids].some((id) => !before.has(id))) crashPoint("timer-armed");
  }

  return {
    changed(run) {
      if (closed || scheduled.has(run)) return;
      scheduled.add(run);
      queueMicrotask(() => {
        scheduled.delete(run);
        if (closed) return;
        enqueue(run).catch((error: unknown) =>
          log.error({ runId: run.runId, err: error }, "saving the run failed; the next change retries"),
        );
      });
    },
    save: (run, picks) => enqueue(run, picks),
    afterCommit(run, fn) {
      if (closed) return;
      const list = outbox.get(run) ?? [];
      list.push(fn);
      outbox.set(run, list);
      this.changed(run);
    },
    hold(run) {
      const current = held.get(run);
      if (current) current.count++;
      else
        held.set(run, {
          count: 1,
          snapshot: snapshotOf(run),
          timers: timersSafe(run),
          status: run.status,
          fault: run.fault,
        });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const h = held.get(run);
        if (h && --h.count === 0) held.delete(run);
      };
    },
    async pickAnswer(runId, key) {
      return store.pickAnswer(runId, key);
    },
    async close() {
      closed = true;
      await Promise.allSettled([...chains.values()]);
    },
  };
}

/** The run's pending delayed events, as restore re-arms them (§8, §13 "Restore"). */
export function timersOf(run: LiveRun): SavedTimer[] {
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

/** Usage totals of the run's feed. */
function usageOf(run: LiveRun): UsageTotals {
  return sumUsage(run.feed.since().filter((event) => event.type === "usage"));
}

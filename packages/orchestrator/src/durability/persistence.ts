/**
 * Saving runs (SPEC §8): the RunBlob of a live run, written after every burst of macrosteps of
 * any of its actors and immediately on a ledger write; a pick's answer rides the same
 * transaction as the snapshot it produced (§4.3). Decisions: ADR-0250.
 * @see SPEC §4.3, §5.4, §8
 */
import type { Logger } from "pino";
import type { EventObject } from "xstate";
import { actorPathOf, pendingDelayedEvents } from "../xstate/adapter.js";
import { crashPoint } from "./crash-points.js";
import type { SavedRun } from "./saved-run.js";
import type { PickKey, RunBlob, RunStore, SavedTimer, StoredPickAnswer } from "./store/run-store.js";
import { sumUsage, type UsageRecord, usageKey } from "./usage-totals.js";

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
export function createRunPersistence(
  store: RunStore,
  log: Logger,
  now: () => Date,
  retry: SaveRetryOptions = {},
): RunPersistence {
  const minMs = retry.minMs ?? 500;
  const maxMs = retry.maxMs ?? 30_000;
  const logEveryMs = retry.logEveryMs ?? 60_000;
  let closed = false;
  /** The last commit failed (and none succeeded since): its error text. */
  let failing: string | undefined;
  /** Per run: failed background saves in a row, the retry timer, when it was last logged. */
  const retries = new Map<SavedRun, { failures: number; timer?: NodeJS.Timeout; loggedAt?: number }>();
  const scheduled = new Set<SavedRun>();
  const held = new Map<SavedRun, Held>();
  /** Per-run save chain: saves of one run commit in call order even on an async store. */
  const chains = new Map<SavedRun, Promise<void>>();
  /** Effects waiting for the next commit of a run's current state. */
  const outbox = new Map<SavedRun, Array<() => void>>();
  /** Timer ids in the last committed blob of each run (the `timer-armed` crash point). */
  const savedTimers = new WeakMap<SavedRun, Set<string>>();

  /** Usage records not yet committed, by run id (kept across a freeze: they are facts). */
  const pendingUsage = new Map<string, UsageRecord[]>();
  let usageFlushScheduled = false;
  let usageRetry: NodeJS.Timeout | undefined;
  let usageFailures = 0;

  /** Writes every pending usage record; a failure keeps them and retries with backoff. */
  function flushUsage(): void {
    usageFlushScheduled = false;
    if (closed) return;
    for (const [runId, records] of [...pendingUsage]) {
      pendingUsage.delete(runId);
      store.recordUsage(runId, records).then(
        () => {
          usageFailures = 0;
        },
        (error: unknown) => {
          failing = error instanceof Error ? error.message : String(error);
          pendingUsage.set(runId, [...records, ...(pendingUsage.get(runId) ?? [])]);
          retryUsageLater(runId, error);
        },
      );
    }
  }

  /** Pending usage could not be written: flush again with backoff (logged on the first failure). */
  function retryUsageLater(runId: string, error: unknown): void {
    if (usageRetry || closed) return;
    const delay = Math.min(maxMs, minMs * 2 ** usageFailures++);
    if (usageFailures === 1)
      log.error({ runId, err: error }, "recording usage failed; retrying with backoff");
    usageRetry = setTimeout(() => {
      usageRetry = undefined;
      flushUsage();
    }, delay);
    usageRetry.unref?.();
  }

  /** The last snapshot of each run that could be taken (the fallback of {@link snapshotOf}). */
  const lastSnapshots = new WeakMap<SavedRun, unknown>();

  /**
   * The run's persisted snapshot. Never throws: a snapshot xstate cannot take (an errored
   * actor's may lack the children it names) faults the run and saves the last one taken.
   */
  function snapshotOf(run: SavedRun): unknown {
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
  function timersSafe(run: SavedRun): SavedTimer[] {
    try {
      return timersOf(run);
    } catch (error) {
      log.error({ runId: run.runId, err: error }, "reading the run's timers failed");
      return [];
    }
  }

  function blobOf(run: SavedRun): RunBlob {
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
      usage: sumUsage(run.usage.values()),
      ...((hold ? hold.fault : run.fault) ? { fault: hold ? hold.fault : run.fault } : {}),
      createdAt: run.createdAt.toISOString(),
      updatedAt: now().toISOString(),
    };
  }

  /** Takes the blob now (so a hold applies as of this call) and commits it after the earlier ones. */
  function enqueue(run: SavedRun, picks?: readonly StoredPickAnswer[]): Promise<void> {
    if (closed) return Promise.reject(new Error("the run store is closed (shutting down)"));
    // A frozen run's memory is not its state (its last save failed): it is never saved again.
    if (run.frozen) return Promise.reject(new Error("the run is frozen: its last save failed"));
    let blob: RunBlob;
    try {
      blob = blobOf(run);
    } catch (error) {
      // Never a synchronous throw: `changed` runs this from a microtask (an uncaught exception).
      return Promise.reject(error);
    }
    const effects = held.has(run) ? [] : (outbox.get(run) ?? []);
    if (effects.length > 0) outbox.delete(run);
    const usage = pendingUsage.get(run.runId) ?? [];
    pendingUsage.delete(run.runId);
    const previous = chains.get(run) ?? Promise.resolve();
    const next = previous
      .catch(() => {})
      .then(async () => {
        try {
          await store.save(blob, picks, usage);
        } catch (error) {
          failing = error instanceof Error ? error.message : String(error);
          if (usage.length > 0) {
            // Facts from the Harness, whatever becomes of the run: written on their own later.
            pendingUsage.set(run.runId, [...usage, ...(pendingUsage.get(run.runId) ?? [])]);
            retryUsageLater(run.runId, error);
          }
          if (effects.length > 0 && !run.frozen) outbox.set(run, [...effects, ...(outbox.get(run) ?? [])]);
          throw error;
        }
        if (failing !== undefined) {
          failing = undefined;
          log.info({ runId: run.runId }, "the run store accepts writes again");
          try {
            retry.onRecovered?.();
          } catch (error) {
            log.error({ err: error }, "reacting to the store's recovery threw");
          }
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
    // The cleanup's own promise rejects with `next`: handled here, or a failed save (a full
    // disk) is an unhandled rejection that ends the process (issue 16 item 1).
    next
      .finally(() => {
        if (chains.get(run) === next) chains.delete(run);
      })
      .catch(() => {});
    return next;
  }

  function afterCommit(run: SavedRun, blob: RunBlob): void {
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

  /** A background save of `run` failed: retry with backoff, log at most once a minute. */
  function backgroundFailed(run: SavedRun, error: unknown): void {
    if (closed || run.frozen) return;
    const state = retries.get(run) ?? { failures: 0 };
    retries.set(run, state);
    const delay = Math.min(maxMs, minMs * 2 ** state.failures);
    state.failures++;
    const at = now().getTime();
    if (state.loggedAt === undefined || at - state.loggedAt >= logEveryMs) {
      state.loggedAt = at;
      log.error(
        { runId: run.runId, err: error, failures: state.failures, retryInMs: delay },
        "saving the run failed; retrying with backoff",
      );
    }
    if (state.timer) clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      state.timer = undefined;
      background(run);
    }, delay);
    state.timer.unref?.();
  }

  /** A background save: never rejects (a failure schedules the retry). */
  function background(run: SavedRun): void {
    if (closed || run.frozen) return;
    enqueue(run).then(
      () => {
        const state = retries.get(run);
        if (state?.timer) clearTimeout(state.timer);
        retries.delete(run);
      },
      (error: unknown) => backgroundFailed(run, error),
    );
  }

  return {
    changed(run) {
      if (closed || run.frozen || scheduled.has(run)) return;
      scheduled.add(run);
      queueMicrotask(() => {
        scheduled.delete(run);
        background(run);
      });
    },
    recordUsage(run, record) {
      const key = usageKey(record);
      if (run.usage.has(key)) return false;
      run.usage.set(key, record);
      if (closed) return true;
      const list = pendingUsage.get(run.runId) ?? [];
      list.push(record);
      pendingUsage.set(run.runId, list);
      if (!usageFlushScheduled && !usageRetry) {
        usageFlushScheduled = true;
        queueMicrotask(flushUsage);
      }
      return true;
    },
    storeState: () => (failing === undefined ? { failing: false } : { failing: true, error: failing }),
    forget(run) {
      const state = retries.get(run);
      if (state?.timer) clearTimeout(state.timer);
      retries.delete(run);
      outbox.delete(run);
      held.delete(run);
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
      for (const state of retries.values()) if (state.timer) clearTimeout(state.timer);
      retries.clear();
      if (usageRetry) clearTimeout(usageRetry);
      // Usage read before the stop is a fact: written now if the store takes it.
      for (const [runId, records] of pendingUsage) await store.recordUsage(runId, records).catch(() => {});
      pendingUsage.clear();
      await Promise.allSettled([...chains.values()]);
    },
  };
}

/** The run's pending delayed events, as restore re-arms them (§8, §13 "Restore"). */
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

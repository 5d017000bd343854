/**
 * What a save writes (SPEC §8): the RunBlob of a live run — its snapshot, timers, ledger,
 * epochs and usage — or, while a pick is in flight, the snapshot held as it was when the pick
 * arrived, so the pick's effect is committed only together with its answer (§4.3, ADR-0250).
 * @see SPEC §4.3, §8
 */
import type { Logger } from "pino";
import { type OwedAbort, owedAbortsField } from "./owed-aborts.js";
import type { SaveContext } from "./save-context.js";
import type { SavedRun } from "./saved-run.js";
import { readTimers } from "./saved-timers.js";
import { snapshotWithTextErrors } from "./snapshot-errors.js";
import type { RunBlob, SavedTimer } from "./store/run-store.js";
import { sumUsage } from "./usage-totals.js";

/** A run's state as held while picks are in flight; `count` holds nest. */
export interface HeldSnapshot {
  count: number;
  snapshot: unknown;
  timers: SavedTimer[];
  status: RunBlob["status"];
  fault: RunBlob["fault"];
  outcome: RunBlob["outcome"];
  /** The aborts owed as of the held state (a save of it must not owe a later state's). */
  owedAborts: OwedAbort[];
}

/** The snapshots saves write from: those held per run, and each run's last one taken. */
export interface Snapshots {
  /** Per run: its held state while a pick is in flight. */
  readonly held: Map<SavedRun, HeldSnapshot>;
  /** The last snapshot of each run that could be taken (the fallback of {@link snapshotOf}). */
  readonly lastTaken: WeakMap<SavedRun, unknown>;
}

/** None held, none taken. */
export function createSnapshots(): Snapshots {
  return { held: new Map(), lastTaken: new WeakMap() };
}

/**
 * The run's persisted snapshot. Never throws: a snapshot xstate cannot take (an errored
 * actor's may lack the children it names) faults the run and saves the last one taken.
 */
export function snapshotOf(log: Logger, snapshots: Snapshots, run: SavedRun): unknown {
  try {
    // An errored actor's error is kept as text: JSON keeps none of an Error's fields.
    const snapshot = snapshotWithTextErrors(run.actor.getPersistedSnapshot());
    snapshots.lastTaken.set(run, snapshot);
    return snapshot;
  } catch (error) {
    const reason = `the run's snapshot cannot be saved: ${error instanceof Error ? error.message : String(error)}`;
    log.error({ runId: run.runId, err: error }, "taking the run's snapshot failed; the run is faulted");
    run.faultRun(reason);
    return snapshots.lastTaken.get(run) ?? null;
  }
}

/**
 * Holds `run`'s snapshot, timers, status and fault as they are now (or nests in the hold
 * there is): saves write them until every hold is released.
 * @returns the release (idempotent)
 */
export function holdSnapshot(log: Logger, snapshots: Snapshots, run: SavedRun): () => void {
  const current = snapshots.held.get(run);
  if (current) current.count++;
  else
    snapshots.held.set(run, {
      count: 1,
      snapshot: snapshotOf(log, snapshots, run),
      timers: readTimers(log, run),
      status: run.status,
      fault: run.fault,
      outcome: run.outcome,
      owedAborts: [...(run.owedAborts?.values() ?? [])],
    });
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const h = snapshots.held.get(run);
    if (h && --h.count === 0) snapshots.held.delete(run);
  };
}

/**
 * The blob a save of `run` writes now: the held state while one is held, else the current
 * one; the ledger, epochs and usage are always the current ones.
 */
export function blobOf(ctx: SaveContext, snapshots: Snapshots, run: SavedRun): RunBlob {
  const hold = snapshots.held.get(run);
  // Taken first: a snapshot that cannot be taken faults the run, and the blob says so.
  const snapshot = hold ? hold.snapshot : snapshotOf(ctx.log, snapshots, run);
  const timers = hold ? hold.timers : readTimers(ctx.log, run);
  const status = hold ? hold.status : run.status;
  const owed = hold ? hold.owedAborts : [...(run.owedAborts?.values() ?? [])];
  return {
    runId: run.runId,
    workflow: run.workflow,
    machineFingerprint: run.fingerprint,
    status,
    snapshot,
    input: run.input ?? null,
    ledger: Object.fromEntries(run.ledger),
    epochs: Object.fromEntries(run.epochs),
    timers,
    usage: sumUsage(run.usage.values()),
    ...((hold ? hold.fault : run.fault) ? { fault: hold ? hold.fault : run.fault } : {}),
    ...settledFields(hold ? hold.outcome : run.outcome, run.faults),
    ...(run.digests ?? {}),
    ...owedAbortsField(status, owed),
    ...(run.repoSlots?.size ? { repoSlots: Object.fromEntries(run.repoSlots) } : {}),
    ...(run.repoCommits?.size ? { repoCommits: Object.fromEntries(run.repoCommits) } : {}),
    createdAt: run.createdAt.toISOString(),
    updatedAt: ctx.now().toISOString(),
  };
}

/** The outcome once settled and the faults once any arrived (ADR-0062); absent otherwise. */
function settledFields(
  outcome: RunBlob["outcome"],
  faults: RunBlob["faults"],
): Pick<RunBlob, "outcome" | "faults"> {
  return {
    ...(outcome === undefined ? {} : { outcome }),
    ...(faults && faults.length > 0 ? { faults: structuredClone(faults) } : {}),
  };
}

/**
 * Restore (SPEC §8): before the HTTP listener answers, each live run is recreated from its
 * snapshot. Its invoked children restart with their persisted input, so each Agent slot
 * registers its surface again and its Turn driver re-attaches to the ledgered admission of
 * its own turnId (§5.4); Gates re-open with the same ids (path-derived or authored); saved
 * `after` timers and delayed sends are re-armed from the RunBlob. A run whose Machine changed
 * shape is marked `drifted`, never restored blindly; one marked so whose fingerprints match the
 * served Machine again at a later start is restored as `running`. Decisions: ADR-0251.
 * @see SPEC §5.4, §6, §8, §13 "Restore"
 */
import type { Logger } from "pino";
import type { AnyStateMachine, EventObject } from "xstate";
import { actorAtPath, rearmDelayedEvent } from "../xstate/adapter.js";
import { type OwedAbort, owedAbortsOf } from "./owed-aborts.js";
import type { RestorableRun } from "./saved-run.js";
import { DamagedRunError, type RunBlob, type RunStore } from "./store/run-store.js";
import { sumUsage, type UsageRecord, usageKey } from "./usage-totals.js";

/** What a restore did, for the log and `GET /runs`. */
export interface RestoreReport {
  /** Live runs recreated from their snapshots. */
  restored: string[];
  /** Runs not restored because their Machine changed shape (or is no longer served). */
  drifted: Array<{ runId: string; workflow: string; reason: string }>;
  /** Runs whose stored row cannot be decoded: served as `faulted`, the row left untouched. */
  damaged: Array<{ runId: string; reason: string }>;
  /** Settled runs kept readable (done, faulted, cancelled, drifted earlier). */
  settled: number;
  /** Saved timers re-armed across all restored runs. */
  timers: number;
}

/** What restoring needs from the run host. */
export interface RestoreDeps<R extends RestorableRun = RestorableRun> {
  store: RunStore;
  /** The served workflows' Machines and their fingerprints now (nested ones by path, ADR-0271). */
  machineOf(workflow: string): ServedMachine | undefined;
  /**
   * Recreates a live run from its blob's parts, not yet started: the host's run with its hooks
   * (Turns, Gate announcements, saves). Throws like the Machine does (the run is kept faulted).
   */
  revive(init: RunRevival): R;
  log: Logger;
  /** Wall clock in epoch ms (timers' remaining delay). */
  nowMs(): number;
  /** Called once a live run is restored and settled (the host reads ended Turns' usage, ADR-0255). */
  restored?(run: R): void;
  /**
   * Sends the aborts the blob owes (ADR-0280), called before the run starts: each queued ahead
   * of any admission on its iid. Absent: not sent (they stay owed in the run).
   */
  sendOwedAborts?(run: R, owed: readonly OwedAbort[]): void;
}

/** A served Machine: its fingerprint and every Machine's by path (`""` = its own). */
export interface ServedMachine {
  machine: AnyStateMachine;
  fingerprint: string;
  machineFingerprints?: Record<string, string>;
}

/** What {@link RestoreDeps.revive} recreates a run from. */
export interface RunRevival {
  runId: string;
  workflow: string;
  machine: AnyStateMachine;
  input: unknown;
  fingerprint: string;
  /** xstate's persisted snapshot. */
  snapshot: unknown;
  createdAt: Date;
  /** The seq its feed goes on from: one past its stored event log's last (ADR-0256). */
  nextSeq: number;
}

/**
 * Restores every run of the store: live runs are recreated and started (their Turns start
 * again and re-attach), settled and drifted runs are returned as blobs to serve read-only.
 * A run whose restore throws is kept as `faulted` with the reason, never half-running.
 * @returns the started live runs, the read-only blobs and the report
 */
export async function restoreRuns<R extends RestorableRun>(
  deps: RestoreDeps<R>,
): Promise<{ live: R[]; stored: RunBlob[]; report: RestoreReport }> {
  const report: RestoreReport = { restored: [], drifted: [], damaged: [], settled: 0, timers: 0 };
  const live: R[] = [];
  const stored: RunBlob[] = [];
  for (const summary of await deps.store.list()) {
    let blob: RunBlob | undefined;
    try {
      blob = await deps.store.load(summary.runId);
    } catch (error) {
      // One damaged row (issue 16 item 3): that run is reported faulted, the others restored.
      // Its row is left as it is (quarantined), so a backup or a fix can still read it.
      if (!(error instanceof DamagedRunError)) throw error;
      const damaged = damagedRunBlob(summary, error.message);
      stored.push(damaged);
      report.damaged.push({ runId: summary.runId, reason: error.message });
      deps.log.error(
        { runId: summary.runId, code: "damaged", reason: error.message },
        "run not restored: its stored row cannot be decoded; kept as faulted (see `jr2 store check`)",
      );
      continue;
    }
    if (!blob) continue;
    if (blob.status === "drifted") blob = await driftCleared(blob, deps);
    if (blob.status !== "running") {
      // Totals from the recorded rows (ADR-0255); a blob saved before usage rows keeps its own.
      const usage = await deps.store.usage(blob.runId);
      if (usage.length > 0) blob.usage = sumUsage(usage);
      stored.push(blob);
      report.settled++;
      continue;
    }
    const outcome = await restoreRun(blob, deps);
    if (outcome.kind === "live") {
      live.push(outcome.run);
      report.restored.push(blob.runId);
      report.timers += outcome.timers;
    } else {
      stored.push(outcome.blob);
      if (outcome.kind === "drifted")
        report.drifted.push({ runId: blob.runId, workflow: blob.workflow, reason: outcome.reason });
    }
  }
  deps.log.info(
    {
      restored: report.restored.length,
      drifted: report.drifted.length,
      damaged: report.damaged.length,
      settled: report.settled,
      timers: report.timers,
    },
    "runs restored",
  );
  return { live, stored, report };
}

/** What restoring one live run's blob gave. */
export type RestoreOutcome<R extends RestorableRun = RestorableRun> =
  | { kind: "live"; run: R; timers: number }
  | { kind: "drifted"; blob: RunBlob; reason: string }
  | { kind: "faulted"; blob: RunBlob }
  /** The blob was settled already (a frozen run whose end had been committed): served read-only. */
  | { kind: "settled"; blob: RunBlob };

/**
 * Restores one `running` blob: recreated and started (Turns re-attach, timers re-armed), or
 * `drifted` (the Machine changed shape), or `faulted` when recreating it throws — the blob
 * re-saved with that status. Used at start-up and to reload a frozen run (ADR-0253).
 * @param extraUsage - usage recorded in memory and not yet stored (a frozen run's), kept
 * @throws what the store throws when re-saving a drifted or faulted blob
 */
export async function restoreRun<R extends RestorableRun>(
  blob: RunBlob,
  deps: RestoreDeps<R>,
  extraUsage?: readonly UsageRecord[],
): Promise<RestoreOutcome<R>> {
  const served = deps.machineOf(blob.workflow);
  const reason = driftReason(blob, served);
  if (!served || reason !== undefined) return keepDrifted(blob, deps, reason ?? "drifted");
  try {
    const run = await reviveRun(blob, served.machine, deps, extraUsage);
    const owed = owedAbortsOf(blob);
    // Before the run starts: ahead of any new admission on those iids (ADR-0280).
    if (owed.length > 0) deps.sendOwedAborts?.(run, owed);
    run.start();
    const timers = rearmTimers(run, blob, deps);
    await run.settle();
    deps.restored?.(run);
    deps.log.info(
      {
        runId: blob.runId,
        workflow: blob.workflow,
        ledgered: Object.keys(blob.ledger).length,
        timers: blob.timers.length,
      },
      "run restored",
    );
    return { kind: "live", run, timers };
  } catch (error) {
    return keepFaulted(blob, deps, error);
  }
}

/**
 * Why `blob` cannot be restored onto the Machine served now; undefined when it can. The top
 * fingerprint first, then each nested Machine's the blob saved (ADR-0271): a changed
 * `workspace()` body or invoked child Machine is drift too. A blob saved before nested
 * fingerprints were kept is compared by the top one alone.
 */
export function driftReason(blob: RunBlob, served: ServedMachine | undefined): string | undefined {
  if (!served) return `workflow \`${blob.workflow}\` is no longer served`;
  if (served.fingerprint !== blob.machineFingerprint)
    return `the Machine of \`${blob.workflow}\` changed shape (fingerprint ${blob.machineFingerprint.slice(0, 12)} → ${served.fingerprint.slice(0, 12)})`;
  const now = served.machineFingerprints;
  if (!blob.machineFingerprints || !now) return undefined;
  for (const path of new Set([...Object.keys(blob.machineFingerprints), ...Object.keys(now)])) {
    const saved = blob.machineFingerprints[path];
    const served = now[path];
    if (saved === served) continue;
    const which = `the Machine at \`${path}\` of \`${blob.workflow}\``;
    if (saved === undefined) return `${which} is new`;
    if (served === undefined) return `${which} is no longer invoked`;
    return `${which} changed shape (fingerprint ${saved.slice(0, 12)} → ${served.slice(0, 12)})`;
  }
  return undefined;
}

/**
 * The drift verdict follows the fingerprints served now: a run marked `drifted` at an earlier
 * start whose saved fingerprints match the served Machine again (a start with the wrong
 * workflows folder, then the right one) is `running` again — re-saved so, its drift reason
 * dropped — and restored as any live run. Before, one wrong start left it drifted for good.
 * A run that still drifts is returned as it is.
 * @throws what the store throws when re-saving the blob
 */
async function driftCleared(blob: RunBlob, deps: RestoreDeps<RestorableRun>): Promise<RunBlob> {
  const served = deps.machineOf(blob.workflow);
  if (!served || driftReason(blob, served) !== undefined) return blob;
  const { fault, ...rest } = blob;
  const running: RunBlob = { ...rest, status: "running" };
  await deps.store.save(running, [], [], [], undefined, { ifStatus: "drifted" });
  deps.log.info(
    { runId: blob.runId, workflow: blob.workflow, was: fault?.reason },
    "drift cleared: the served Machine matches the run's saved fingerprints again; restoring it",
  );
  return running;
}

/** Recreates the run (not started) and re-seeds its ledger, epochs and recorded usage. */
async function reviveRun<R extends RestorableRun>(
  blob: RunBlob,
  machine: AnyStateMachine,
  deps: RestoreDeps<R>,
  extraUsage: readonly UsageRecord[] | undefined,
): Promise<R> {
  const last = await deps.store.lastEventSeq(blob.runId);
  const run = deps.revive({
    nextSeq: last === undefined ? 0 : last + 1,
    runId: blob.runId,
    workflow: blob.workflow,
    machine,
    input: blob.input,
    fingerprint: blob.machineFingerprint,
    snapshot: blob.snapshot,
    createdAt: new Date(blob.createdAt),
  });
  for (const [iid, entry] of Object.entries(blob.ledger)) run.ledger.set(iid, entry);
  for (const [address, epoch] of Object.entries(blob.epochs)) run.epochs.set(address, epoch);
  for (const owed of owedAbortsOf(blob)) run.owedAborts?.set(owed.iid, owed);
  for (const [key, slot] of Object.entries(blob.repoSlots ?? {})) run.repoSlots?.set(key, slot);
  for (const [key, commit] of Object.entries(blob.repoCommits ?? {})) run.repoCommits?.set(key, commit);
  run.faults?.push(...(blob.faults ?? []));
  // What was recorded is what the run used: a stream read again adds nothing twice (ADR-0255).
  for (const record of [...(await deps.store.usage(blob.runId)), ...(extraUsage ?? [])])
    run.usage.set(usageKey(record), record);
  // Likewise transcripts and Turn records (ADR-0257): the follower re-reads from the ledgered offset.
  for (const key of await deps.store.transcriptKeys(blob.runId)) run.transcriptKeys?.add(key);
  // A stored record's Turn was registered in a committed save (ADR-0296): its records go on their own.
  for (const turn of await deps.store.turns(blob.runId)) {
    run.turns?.set(turn.turnId, turn);
    run.committedTurns?.add(turn.turnId);
  }
  // The byte-exact history (ADR-0176): a Harness that lost its data dir is pushed it again.
  // Best effort: a failed read costs only that fallback, never the run (it is not faulted).
  const histories = await Promise.resolve(deps.store.conversationHistory?.histories(blob.runId)).catch(
    (error: unknown) => {
      deps.log.warn(
        { runId: blob.runId, err: error },
        "reading the run's stored conversation history failed; restored without it (a Harness that lost its data dir starts those conversations anew)",
      );
      return undefined;
    },
  );
  for (const { iid, part } of histories ?? []) run.histories?.record(iid, part);
  return run;
}

/** Saves `blob` as `drifted` with `reason` (never restored blindly) and logs it. */
async function keepDrifted(
  blob: RunBlob,
  deps: RestoreDeps<RestorableRun>,
  reason: string,
): Promise<{ kind: "drifted"; blob: RunBlob; reason: string }> {
  const drifted: RunBlob = { ...blob, status: "drifted", fault: { reason } };
  await deps.store.save(drifted);
  deps.log.warn(
    { runId: blob.runId, workflow: blob.workflow, code: "drifted", reason },
    "run not restored: drifted",
  );
  return { kind: "drifted", blob: drifted, reason };
}

/** Saves `blob` as `faulted` naming why recreating it threw (never half-running) and logs it. */
async function keepFaulted(
  blob: RunBlob,
  deps: RestoreDeps<RestorableRun>,
  error: unknown,
): Promise<{ kind: "faulted"; blob: RunBlob }> {
  const failed: RunBlob = {
    ...blob,
    status: "faulted",
    fault: { reason: `restore failed: ${error instanceof Error ? error.message : String(error)}` },
  };
  await deps.store.save(failed);
  deps.log.error({ runId: blob.runId, err: error }, "run restore failed; kept as faulted");
  return { kind: "faulted", blob: failed };
}

/** The read-only stand-in of a run whose row cannot be decoded: faulted, naming why. */
export function damagedRunBlob(
  summary: Pick<RunBlob, "runId" | "workflow" | "status" | "updatedAt">,
  reason: string,
): RunBlob {
  return {
    runId: summary.runId,
    workflow: summary.workflow,
    machineFingerprint: "",
    status: "faulted",
    snapshot: null,
    input: null,
    ledger: {},
    epochs: {},
    timers: [],
    usage: sumUsage([]),
    fault: { reason: `the stored run cannot be read: ${reason}` },
    createdAt: summary.updatedAt,
    updatedAt: summary.updatedAt,
  };
}

/** Re-arms the blob's saved delayed events with their remaining delay; returns how many. */
function rearmTimers(run: RestorableRun, blob: RunBlob, deps: Pick<RestoreDeps, "log" | "nowMs">): number {
  let armed = 0;
  for (const timer of blob.timers) {
    const source = actorAtPath(run.actor, timer.sourcePath);
    const target = actorAtPath(run.actor, timer.targetPath);
    if (!source || !target) {
      deps.log.warn({ runId: run.runId, timer: timer.id }, "a saved timer's actor is gone; not re-armed");
      continue;
    }
    rearmDelayedEvent(run.actor.system, {
      source,
      target,
      event: timer.event as EventObject,
      delay: Math.max(0, timer.dueAt - deps.nowMs()),
      id: timer.id,
    });
    armed++;
  }
  return armed;
}

/**
 * The two ends of a run host's life (§8). Restore: the store's live runs recreated with this
 * host's hooks at start-up (settled and drifted runs stay in the store, read back when asked;
 * ADR-0260), a frozen run reloaded from its last save once the store takes writes (ADR-0253),
 * each restored run's ended Turns' usage read from their Harness (ADR-0255). Close: every live
 * run stopped unsaved, so the next start restores it as it was last committed.
 * @see SPEC §8
 */

import type { OwedAbort } from "../durability/owed-aborts.js";
import {
  type RestoreDeps,
  type RestoreOutcome,
  type RestoreReport,
  type RunRevival,
  restoreRun,
  restoreRuns,
} from "../durability/restore.js";
import type { LedgerEntry, RunBlob } from "../durability/store/run-store.js";
import { capEntry } from "../durability/transcript-rows.js";
import type { UsageRecord } from "../durability/usage-totals.js";
import { toolCallLines } from "../turns/tool-call-lines.js";
import { type TranscriptEvent, usageFeedEntry } from "../turns/turn-driver.js";
import type { HostState } from "./host-state.js";
import { confirmHeld } from "./let-go.js";
import { LiveRun } from "./live-run.js";
import { machineDigestsOf } from "./machine-digests.js";
import { startOwnershipLoop } from "./ownership-loop.js";
import { adoptRuns } from "./run-adoption.js";
import { evictWhenSaved } from "./run-table.js";

/**
 * Restores the store's runs once, before serving: live ones into memory, a damaged row kept as
 * its faulted stand-in (ADR-0254). On a shared store (`ownership`, ADR-0280), only the runs
 * this instance adopts, and the ownership loop starts (renew, let go, adopt). Never throws for
 * one bad run.
 */
export async function restoreHostRuns(state: HostState): Promise<RestoreReport> {
  // A shared store (ADR-0280): only the runs this instance adopts, then the ownership loop.
  if (state.ownership) {
    const adopt = () => adoptRuns(state, restoreDeps(state));
    const report = await adopt();
    state.ownershipLoop ??= startOwnershipLoop(state, adopt);
    return report;
  }
  const { live, stored: blobs, report } = await restoreRuns(restoreDeps(state));
  const damagedIds = new Set(report.damaged.map((d) => d.runId));
  for (const blob of blobs) if (damagedIds.has(blob.runId)) state.damaged.set(blob.runId, blob);
  for (const run of live) state.runs.set(run.runId, run);
  // A run that settled while it was being restored leaves memory too.
  for (const run of live) evictWhenSaved(state, run);
  return report;
}

/**
 * Shutdown (§8): agent routes answer 503 from now on, pending saves commit, then every run's
 * actors stop without being saved (Turns stop with `shuttingDown()` true: no remote abort),
 * so each live run stays restorable; the store is closed. A second call does nothing.
 */
export async function closeHost(state: HostState): Promise<void> {
  if (state.stopping) return;
  state.stopping = true;
  await state.ownershipLoop?.stop();
  state.frozenRuns.close();
  state.drains.abort();
  // Commit what is pending, then stop without saving: the stop is not the run's state.
  await state.persistence.close();
  for (const run of state.runs.values()) run.actor.stop();
  await Promise.all([...state.runs.values()].map((run) => run.settle()));
  // A graceful stop hands the runs on at once (ADR-0280); a failing store only delays that.
  await state.store.ownership
    ?.relinquish()
    .catch((error: unknown) =>
      state.log.warn({ err: error }, "expiring this instance's leases at shutdown failed"),
    );
  await state.store.close();
}

/**
 * The frozen runs' reload of `blob` (see `createFrozenRuns`): restored as at start-up, going on
 * with the frozen run's feed (its followers keep following) and its in-memory usage.
 */
export function reloadFrozenRun(
  state: HostState,
  blob: RunBlob,
  run: LiveRun,
  usage: readonly UsageRecord[],
): Promise<RestoreOutcome<LiveRun>> {
  const { log, hooks } = state;
  return restoreRun(
    blob,
    {
      ...restoreDeps(state),
      revive: (init: RunRevival) => new LiveRun({ ...init, log, hooks, feed: run.feed }),
    },
    usage,
  );
}

/** The reload's result replaces the frozen run in memory (or it leaves: its blob is read back). */
export function replaceFrozenRun(
  state: HostState,
  runId: string,
  outcome: RestoreOutcome<LiveRun> | undefined,
): void {
  if (outcome?.kind === "live") state.runs.set(runId, outcome.run);
  // Settled, drifted or faulted: its blob is in the store, read back when asked.
  else state.runs.delete(runId);
}

/**
 * An operator's control (resume, retry; ADR-0271) revives a stored `running` blob through the
 * host as restore does: into memory when it went live (it leaves again once settled, ADR-0260).
 */
export async function reviveStoredRun(
  state: HostState,
  blob: RunBlob,
  fresh = false,
): Promise<RestoreOutcome<LiveRun>> {
  const deps = restoreDeps(state);
  // `fresh`: started again from its stored input (a Machine-fault retry, ADR-0272), not its snapshot.
  if (fresh) {
    const { log, hooks } = state;
    deps.revive = (init: RunRevival) => new LiveRun({ ...init, snapshot: undefined, log, hooks });
  }
  const outcome = await restoreRun(blob, deps);
  if (outcome.kind === "live") {
    state.runs.set(blob.runId, outcome.run);
    evictWhenSaved(state, outcome.run);
  }
  return outcome;
}

/** What restore needs from this host: its store, Machines, run hooks and clock (a fork restores with it too, ADR-0270). */
export function restoreDeps(state: HostState): RestoreDeps<LiveRun> {
  const { store, log, hooks, now } = state;
  return {
    store,
    machineOf(workflow: string) {
      const machine = state.workflows.get(workflow);
      const info = state.infos.get(workflow);
      if (!machine || !info) return undefined;
      const { machineFingerprints } = machineDigestsOf(machine);
      return { machine, fingerprint: info.fingerprint, machineFingerprints };
    },
    revive: (init: RunRevival) => new LiveRun({ ...init, log, hooks }),
    log,
    nowMs: () => now().getTime(),
    restored: (run: LiveRun) => drainEndedTurns(state, run),
    sendOwedAborts: (run: LiveRun, owed: readonly OwedAbort[]) => sendOwedAborts(state, run, owed),
  };
}

/**
 * Sends again the aborts a restored run owes (ADR-0280), before it starts: each in its iid's
 * FIFO, so ahead of any new admission there; acknowledged ones are dropped (the next save says
 * so), the others stay owed. In the background; the lease is checked before each.
 */
function sendOwedAborts(state: HostState, run: LiveRun, owed: readonly OwedAbort[]): void {
  const abort = state.turnDriver.abortOwed?.bind(state.turnDriver);
  if (!abort) return;
  const { ownership } = state;
  for (const o of owed) {
    state.log.info(
      { runId: run.runId, iid: o.iid, submissionId: o.submissionId },
      "sending an abort the restored run owes, before it goes on",
    );
    abort({
      harnessUrl: o.harnessUrl,
      iid: o.iid,
      // Sent by a run not served from memory yet (a resume before its claiming save) too: it
      // must leave before the run's first admission on that iid.
      ...(ownership
        ? {
            instanceId: ownership.instanceId,
            holdsLease: async () =>
              !run.movedAway && (state.runs.get(run.runId) !== run || (await confirmHeld(state, run))),
          }
        : {}),
    }).then((acknowledged) => {
      if (acknowledged && run.owedAborts.get(o.iid)?.submissionId === o.submissionId)
        run.owedAborts.delete(o.iid);
    });
  }
}

/**
 * A transcript entry read by a restore's drain (ADR-0257): recorded once by its stream position
 * as its Turn's; its tool calls' feed lines only when new. A Turn without turnId records none.
 */
function recordDrainedTranscript(
  state: HostState,
  run: LiveRun,
  iid: string,
  entry: LedgerEntry,
  event: TranscriptEvent,
): void {
  if (entry.turnId === null) return;
  const { submissionId, position } = event;
  const at = new Date().toISOString();
  const row = { iid, submissionId, position, turnId: entry.turnId, at, ...capEntry(event.entry) };
  if (!state.persistence.recordTranscript(run, row) || !entry.child) return;
  const agent = entry.child.slice(entry.child.lastIndexOf("#") + 1);
  for (const line of toolCallLines(row.entry, agent))
    run.feed.append({ ...line, child: entry.child } as never);
}

/**
 * Reads the rest of each ended Turn's usage and transcript from the Harness it was admitted on (ADR-0255, ADR-0257):
 * Turns of `run` not live now, with a Harness to ask. In the background, aborted on close.
 */
function drainEndedTurns(state: HostState, run: LiveRun): void {
  const drain = state.turnDriver.drainUsage?.bind(state.turnDriver);
  if (!drain) return;
  const live = new Set(state.registrations.ofRun(run.runId).map((r) => r.iid));
  for (const [iid, entry] of run.ledger) {
    const harnessUrl = entry.harnessUrl ?? state.placement?.instanceHarnessUrl;
    if (live.has(iid) || !harnessUrl) continue;
    const { ownership } = state;
    drain(
      {
        harnessUrl,
        iid,
        entry,
        // Each read checks the lease (ADR-0280); a run let go reads nothing more (ADR-0283).
        ...(ownership ? { instanceId: ownership.instanceId, holdsLease: () => confirmHeld(state, run) } : {}),
      },
      (read) => {
        const record = entry.turnId === null ? read : { ...read, turnId: entry.turnId };
        const recorded = state.persistence.recordUsage(run, record);
        // On the event log too, once (ADR-0256); an entry saved before ADR-0256 names no Turn.
        if (recorded && entry.child)
          run.feed.append({ ...usageFeedEntry(record), child: entry.child } as never);
        return recorded;
      },
      AbortSignal.any([state.drains.signal, run.readers.signal]),
      (event) => recordDrainedTranscript(state, run, iid, entry, event),
    ).catch((error: unknown) =>
      state.log.warn({ runId: run.runId, err: error }, "reading an ended Turn's usage failed"),
    );
  }
}

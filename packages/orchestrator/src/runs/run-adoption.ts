/**
 * Adoption (ADR-0280): on a shared store an instance restores only the runs it owns. It takes
 * over every `running` run of a workflow it serves whose lease expired, has none, or names
 * this instance (an earlier process of it) — `RunOwnership.adopt` — and restores each adopted
 * blob into memory exactly as after a restart: Turns re-attached by turnId from the ledger,
 * timers re-armed, drift decided by restore (a fingerprint it does not serve is `drifted`).
 * At start-up and on every tick of the ownership loop.
 * @see SPEC §8; ADR-0251, ADR-0280
 */
import { damagedRunBlob, type RestoreDeps, type RestoreReport, restoreRun } from "../durability/restore.js";
import type { Adoption } from "../durability/store/ownership.js";
import type { RunBlob } from "../durability/store/run-store.js";
import type { HostState } from "./host-state.js";
import type { LiveRun } from "./live-run.js";
import { evictWhenSaved } from "./run-table.js";

/**
 * Adopts what this instance may take over and restores it (`deps`: the host's restore deps).
 * A run already in memory is skipped; one whose restore throws is logged, the others go on.
 * @returns what was restored, as a start-up restore reports it (settled runs are not read)
 * @throws what `adopt` throws (the store cannot be reached): the loop retries next tick
 */
export async function adoptRuns(state: HostState, deps: RestoreDeps<LiveRun>): Promise<RestoreReport> {
  const report: RestoreReport = { restored: [], drifted: [], damaged: [], settled: 0, timers: 0 };
  const ownership = state.ownership;
  if (!ownership || state.stopping) return report;
  const adoption: Adoption & { damaged?: Array<{ runId: string; reason: string }> } = await ownership.adopt([
    ...state.workflows.keys(),
  ]);
  const { adopted } = adoption;
  for (const damaged of adoption.damaged ?? []) keepDamaged(state, damaged, report);
  for (const blob of adopted) {
    if (state.stopping) break;
    if (state.runs.has(blob.runId)) continue; // hosted here already
    dropLeftovers(state, blob.runId);
    await adoptOne(state, deps, blob, report).catch((error: unknown) => {
      // Not live (its drifted or faulted re-save failed): not served from memory.
      state.runs.delete(blob.runId);
      state.log.error({ runId: blob.runId, err: error }, "restoring an adopted run failed");
    });
  }
  if (adopted.length > 0)
    state.log.info(
      { instanceId: ownership.instanceId, adopted: adopted.length, restored: report.restored.length },
      "runs adopted",
    );
  return report;
}

/**
 * A run let go of by this process is torn down then (ADR-0283); a live surface of it still
 * registered here would refuse the restored Turn (`conflict`). Removed, loudly: it is a bug.
 */
function dropLeftovers(state: HostState, runId: string): void {
  const left = state.registrations.ofRun(runId);
  if (left.length === 0) return;
  for (const registration of left) state.registrations.deregister(registration);
  state.log.error(
    { runId, iids: left.map((r) => r.iid) },
    "a run adopted again still had Turns registered from its earlier incarnation here; removed before restoring it",
  );
}

/** An adopted run whose blob cannot be decoded: served as its faulted stand-in, as at a restart (ADR-0254). */
function keepDamaged(
  state: HostState,
  damaged: { runId: string; reason: string },
  report: RestoreReport,
): void {
  const { runId, reason } = damaged;
  const at = state.now().toISOString();
  state.damaged.set(runId, damagedRunBlob({ runId, workflow: "", status: "faulted", updatedAt: at }, reason));
  report.damaged.push(damaged);
  state.log.error(
    { runId, code: "damaged", reason },
    "adopted run not restored: its stored row cannot be decoded; kept as faulted (see `jr2 store check`)",
  );
}

/** Restores one adopted blob: in memory from its revival on (its picks find it), out if it did not go live. */
async function adoptOne(
  state: HostState,
  deps: RestoreDeps<LiveRun>,
  blob: RunBlob,
  report: RestoreReport,
): Promise<void> {
  const holder = await state.ownership?.holder(blob.runId);
  state.log.info(
    {
      runId: blob.runId,
      workflow: blob.workflow,
      epoch: holder?.epoch,
      instanceId: state.ownership?.instanceId,
      heldBy: holder?.instanceId,
    },
    "run adopted: restoring it as after a restart",
  );
  const outcome = await restoreRun(blob, {
    ...deps,
    revive: (init) => {
      const run = deps.revive(init);
      state.runs.set(run.runId, run);
      return run;
    },
  });
  if (outcome.kind !== "live") {
    state.runs.delete(blob.runId);
    if (outcome.kind === "drifted")
      report.drifted.push({ runId: blob.runId, workflow: blob.workflow, reason: outcome.reason });
    return;
  }
  // Let go while it was being restored (its lease moved again): it is not served from here.
  if (outcome.run.movedAway) return;
  report.restored.push(blob.runId);
  report.timers += outcome.timers;
  // Followers see the move (on any instance: the event is on the run's log).
  if (state.ownership && holder)
    outcome.run.feed.append({ type: "adopted", instance: state.ownership.instanceId, epoch: holder.epoch });
  evictWhenSaved(state, outcome.run);
}

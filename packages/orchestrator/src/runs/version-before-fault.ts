/**
 * The newest kept version saved before a run's faulting macrostep (issue 22 §2, ADR-0272): what a
 * retry of a Machine fault, and a fork of a version its Machine faulted in, restore. The versions
 * the fault saved (`faulted`, and a held save of the macrostep that faulted) are skipped; the
 * first `running` one with a snapshot whose Machine did not error is it. None — an earlier
 * settlement, or a restart from the stored input (a version without a snapshot) comes first, or
 * nothing is left — means the fault was in the run's initial macrostep.
 */
import type { RunBlob } from "../durability/store/run-store.js";
import type { HostState } from "./host-state.js";

/** Whether a saved snapshot is of a Machine that errored (xstate's `status: "error"`). */
export function machineErrored(snapshot: unknown): boolean {
  return (snapshot as { status?: unknown } | null)?.status === "error";
}

/**
 * The newest version of `runId` below `below` (default: all) saved running before the fault the
 * versions end with; undefined when the fault was in the initial macrostep.
 */
export async function versionBeforeFault(
  state: HostState,
  runId: string,
  below = Number.POSITIVE_INFINITY,
): Promise<{ version: number; at: string; blob: RunBlob } | undefined> {
  const newestFirst = [...(await state.store.versions(runId))].filter((v) => v.version < below).reverse();
  let skipping = true;
  for (const summary of newestFirst) {
    // The fault's own saves first; after them, a settlement ends the search.
    if (summary.status !== "running") {
      if (skipping) continue;
      return undefined;
    }
    skipping = false;
    const kept = await state.store.version(runId, summary.version);
    if (!kept) continue;
    if (kept.blob.snapshot === null || kept.blob.snapshot === undefined) return undefined;
    if (machineErrored(kept.blob.snapshot)) continue;
    return { version: summary.version, at: summary.at, blob: kept.blob };
  }
  return undefined;
}

/**
 * A fork of a version its Machine faulted in (issue 22 §2, ADR-0272): restoring that snapshot
 * would fault the fork at once with the old error, so the fork does what a retry does — it starts
 * from the newest kept version saved before the faulting macrostep (its live Turns admitted on new
 * conversations, its timers re-armed), or, when the fault was in the run's initial macrostep, from
 * the source's stored input — or is refused naming why.
 * @see SPEC §8; ADR-0270, ADR-0272
 */
import { Jr2Error } from "@jr2/wire";
import type { StoredRunVersion } from "../durability/store/run-store.js";
import type { HostState } from "./host-state.js";
import { machineErrored, versionBeforeFault } from "./version-before-fault.js";

/** What a fork restores: a version (maybe an earlier one than asked), or `fresh` — the stored input. */
export interface ForkSource {
  version: StoredRunVersion;
  /** Start from the version's stored input, not its snapshot (the fault was in the initial macrostep). */
  fresh: boolean;
}

/**
 * The source a fork of `version` restores: the version itself unless its Machine errored there.
 * @throws JR2_ERR_FORK_CONTEXT_INVALID when a context patch is asked of a fork that starts again
 *   from the input (there is no saved context to patch)
 */
export async function forkSourceOf(
  state: HostState,
  runId: string,
  version: StoredRunVersion,
  patching: boolean,
): Promise<ForkSource> {
  if (!machineErrored(version.blob.snapshot)) return { version, fresh: false };
  const before = await versionBeforeFault(state, runId, version.version);
  if (before) {
    state.log.info(
      { runId, asked: version.version, restored: before.version },
      "fork of a version its Machine faulted in: the newest version before the faulting macrostep is restored",
    );
    const kept = await state.store.version(runId, before.version);
    if (kept) return { version: kept, fresh: false };
  }
  if (patching)
    throw new Jr2Error("JR2_ERR_FORK_CONTEXT_INVALID", {
      runId,
      version: version.version,
      detail:
        "its Machine faulted in the run's initial macrostep, so the fork starts again from the run's stored input and has no saved context to patch; start a new run with the input you want instead",
    });
  const { blob } = version;
  return {
    version: { ...version, blob: { ...blob, snapshot: null, timers: [], ledger: {}, epochs: {} } },
    fresh: true,
  };
}

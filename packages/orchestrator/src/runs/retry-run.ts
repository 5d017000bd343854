/**
 * `POST /runs/:runId/retry` (issue 13 item 3, ADR-0271): a run that faulted (an unrouted
 * `agent.fault`) or reached a `failed` outcome through a routed one is set back, in place, to
 * its last kept version before the fault, with the faulted Turn admitted again on a new
 * conversation (a new turnId, its budget new). The blob and the `retried` event commit in one
 * transaction (kept as the run's next version), then the run is revived through the host under
 * the same runId, so its working directory is the same.
 * @see SPEC §5.6, §8; ADR-0062, ADR-0270, ADR-0271
 */
import { Jr2Error, type RetryAnswer, type RunFeedEvent } from "@jr2/wire";
import type { RunBlob } from "../durability/store/run-store.js";
import type { GateClient } from "./gate-delivery.js";
import { reviveStoredRun } from "./host-restore.js";
import { type HostState, serialized } from "./host-state.js";
import { type MachineRetryAsk, retryMachineFault } from "./machine-fault-retry.js";
import { checkoutForRetry } from "./repo-versions.js";
import { faultToRetry, holdsTurn, retriedBlob } from "./retry-plan.js";
import { storedBlob } from "./run-table.js";

/**
 * Retries the newest Turn fault of `runId` in place.
 * A run faulted by its Machine itself is retried by {@link retryMachineFault} (ADR-0272): only
 * with `ask.confirm`, and once its workflow's source changed or with `ask.force`.
 * @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_NOT_RETRYABLE (running, succeeded, cancelled,
 *   drifted, no Turn fault, or no kept version before it), JR2_ERR_RUN_RETRY_UNCONFIRMED (a
 *   Machine fault's plan), JR2_ERR_SERVICE_STOPPING, what the store throws
 */
export async function retryRun(
  state: HostState,
  runId: string,
  by: GateClient,
  ask: MachineRetryAsk = {},
): Promise<RetryAnswer> {
  if (state.stopping) throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
  return serialized(state, runId, async () => {
    const live = state.runs.get(runId);
    // Settled in memory and not yet evicted: its settled blob is what the store holds next.
    if (live?.status === "running")
      throw new Jr2Error("JR2_ERR_RUN_NOT_RETRYABLE", { runId, why: "it is running" });
    if (live) await state.persistence.save(live);
    const now = await storedBlob(state, runId);
    const found = faultToRetry(now);
    if ("why" in found) throw new Jr2Error("JR2_ERR_RUN_NOT_RETRYABLE", { runId, why: found.why });
    if ("machineFault" in found) {
      const answer = await retryMachineFault(state, now, found.machineFault, ask, by);
      if (live) state.runs.delete(runId);
      return answer;
    }
    const turnId = found.fault.turnId!;
    const before = await versionBefore(state, runId, turnId);
    if (!before)
      throw new Jr2Error("JR2_ERR_RUN_NOT_RETRYABLE", {
        runId,
        why: `no kept version holds the faulted Turn ${turnId} of ${found.fault.state}#${found.fault.agent} live (its versions were pruned)`,
      });
    const at = state.now().toISOString();
    const retried = retriedBlob(before.blob, now, turnId, at);
    const last = await state.store.lastEventSeq(runId);
    const event: RunFeedEvent = {
      seq: last === undefined ? 0 : last + 1,
      at,
      type: "retried",
      child: retried.child,
      turnId: retried.turnId,
      fromVersion: before.version,
      by,
    };
    // The Repo Slots' files set back to the version's commits first (issue 28 §3): a Harness
    // that cannot (a commit gone) refuses the retry, and nothing was set back.
    await checkoutForRetry(state, before.blob);
    // Set back and logged together: a kill before leaves the run as it ended, after it restores running.
    await state.store.save(retried.blob, [], [], [event], {
      kind: "retry",
      child: retried.child,
      from: before.version,
      by,
    });
    if (live) state.runs.delete(runId);
    state.log.info({ runId, child: retried.child, fromVersion: before.version, by }, "faulted Turn retried");
    const outcome = await reviveStoredRun(state, retried.blob);
    return {
      runId,
      status: outcome.kind === "live" ? outcome.run.status : outcome.blob.status,
      child: retried.child,
      turnId: retried.turnId,
      fromVersion: before.version,
      value: (retried.blob.snapshot as { value?: unknown } | null)?.value ?? null,
      seq: event.seq,
    };
  });
}

/** The newest kept version of `runId` in which Turn `turnId` is live and the run running. */
async function versionBefore(
  state: HostState,
  runId: string,
  turnId: string,
): Promise<{ version: number; blob: RunBlob } | undefined> {
  const versions = await state.store.versions(runId);
  for (const summary of [...versions].reverse()) {
    if (summary.status !== "running") continue;
    const kept = await state.store.version(runId, summary.version);
    if (kept && holdsTurn(kept.blob, turnId)) return { version: summary.version, blob: kept.blob };
  }
  return undefined;
}

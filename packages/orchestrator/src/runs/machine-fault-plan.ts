/**
 * Retrying a run faulted by its Machine (issue 22 §2, ADR-0272), decided: whether it may be
 * retried now (its workflow's source changed since it faulted, or `force`; the Machine's shape
 * unchanged — the drift rules stand), where it restarts — the newest kept version saved before
 * the faulting macrostep, or its stored input when the fault was in its initial macrostep — the
 * event that macrostep handled (read from the run's log), and the blob that sets the run back.
 * Reads the store; writes nothing (the effects are `retry-run.ts`'s).
 * @see SPEC §5.6, §8; ADR-0270, ADR-0271, ADR-0272
 */
import { Jr2Error, type MachineFaultRetry, type RunFeedEvent } from "@jr2/wire";
import { driftReason } from "../durability/restore.js";
import type { RunBlob } from "../durability/store/run-store.js";
import type { HostState } from "./host-state.js";
import { machineDigestsOf } from "./machine-digests.js";
import { renewTurns } from "./retry-plan.js";
import { versionBeforeFault } from "./version-before-fault.js";

/** A planned Machine-fault retry: what the operator is shown, and the version restored (if any). */
export interface MachineFaultPlan {
  retry: MachineFaultRetry;
  /** The version restored; undefined: the run starts again from its stored input. */
  before?: { version: number; blob: RunBlob };
}

/**
 * Plans the retry of `now` (a run faulted by its Machine with `reason`).
 * @throws JR2_ERR_RUN_NOT_RETRYABLE — its workflow is not served, its Machine changed shape
 *   (drift: fork or resume rules), or its source is the one it faulted under and not `force`
 */
export async function planMachineFaultRetry(
  state: HostState,
  now: RunBlob,
  reason: string,
  force: boolean,
): Promise<MachineFaultPlan> {
  const { runId } = now;
  const refuse = (why: string) => new Jr2Error("JR2_ERR_RUN_NOT_RETRYABLE", { runId, why });
  const machine = state.workflows.get(now.workflow);
  const info = state.infos.get(now.workflow);
  if (!machine || !info)
    throw refuse(`its Machine faulted (${reason}) and workflow \`${now.workflow}\` is no longer served`);
  const digests = machineDigestsOf(machine);
  const drift = driftReason(now, {
    machine,
    fingerprint: info.fingerprint,
    machineFingerprints: digests.machineFingerprints,
  });
  if (drift !== undefined)
    throw refuse(
      `its Machine faulted (${reason}) and ${drift}; fork a version saved by the served Machine instead`,
    );
  const sourceDigest = { faulted: now.sourceDigest ?? null, served: digests.sourceDigest ?? null };
  if (!force && (sourceDigest.faulted === null || sourceDigest.faulted === sourceDigest.served))
    throw refuse(
      `its Machine faulted (${reason}) under ${sourceDigest.faulted === null ? "a workflow source not recorded" : `the workflow source served now (sha256 ${sourceDigest.faulted.slice(0, 12)})`}; ` +
        'fix the workflow file and restart the Orchestrator, then retry — or pass --force (`{"force": true}`) to retry as it is',
    );
  const before = await versionBeforeFault(state, runId);
  if (!before) return { retry: { reason, from: "input", newConversations: ["*"], sourceDigest } };
  const event = await faultingEvent(state, runId, before.at);
  const preview = structuredClone(before.blob.snapshot);
  const newConversations = renewTurns(preview, runId, {}, {});
  return {
    retry: { reason, from: before.version, ...(event ? { event } : {}), newConversations, sourceDigest },
    before,
  };
}

/**
 * What the faulting macrostep handled, in words, read from the run's log: the newest pick,
 * Gate answer or timer after `since` (the restored version's time) and before the fault.
 * - a timer fires again (the restored version's timers are re-armed);
 * - a pick's Turn is admitted again on a new conversation (its model picks again);
 * - a Gate answer: the Gate is open again (its payload is not on the log: answer it again).
 */
async function faultingEvent(state: HostState, runId: string, since: string): Promise<string | undefined> {
  const log: RunFeedEvent[] = [];
  for (let from = 0; ; ) {
    const page = await state.store.events(runId, from, 500);
    log.push(...page);
    if (page.length < 500) break;
    from = page.at(-1)!.seq + 1;
  }
  const faultAt = log.findLastIndex((e) => e.type === "status" && e.status === "faulted");
  for (const e of log.slice(0, faultAt < 0 ? log.length : faultAt).reverse()) {
    if (e.at < since) break;
    if (e.type === "timer") return `timer ${e.after} (fires again)`;
    if (e.type === "pick")
      return `pick ${e.name} of ${e.child} (its Turn is asked again on a new conversation)`;
    if (e.type === "gate-answered")
      return `Gate ${e.gate} ← ${e.event} (the Gate is open again: answer it again)`;
  }
  return undefined;
}

/**
 * The blob that retries a Machine fault: `before` (a kept version) with every live Turn on a new
 * conversation, or — none — the run emptied to start again from its stored input (snapshot
 * `null`, no timers; the host starts it fresh). Either way: `running`, no fault or outcome, epochs
 * never going back (each the newest of the version's and `now`'s, a renewed one past both), the
 * fault records and usage of `now`, the source digest served.
 */
export function machineRetryBlob(
  now: RunBlob,
  before: RunBlob | undefined,
  served: { sourceDigest?: string | undefined },
  at: string,
): RunBlob {
  const base = before ?? now;
  const epochs: Record<string, number> = { ...base.epochs };
  for (const [address, epoch] of Object.entries(now.epochs))
    epochs[address] = Math.max(epochs[address] ?? 0, epoch);
  const { fault: _fault, outcome: _outcome, sourceDigest: _digest, ...rest } = base;
  let snapshot: unknown = null;
  let ledger: RunBlob["ledger"] = {};
  if (before) {
    snapshot = structuredClone(before.snapshot);
    ledger = { ...before.ledger };
    renewTurns(snapshot, now.runId, epochs, ledger);
  } else {
    // A restart: every conversation the run had moves to its next epoch — one admitted at epoch
    // 0 (its iid is its address) too, so no conversation of the faulted start is continued.
    for (const address of Object.keys(epochs)) epochs[address] = (epochs[address] ?? 0) + 1;
    for (const iid of Object.keys(now.ledger)) {
      const numbered = /^(.*)\/(\d+)$/.exec(iid);
      const [address, epoch] = numbered ? [numbered[1]!, Number(numbered[2])] : [iid, 0];
      epochs[address] = Math.max(epochs[address] ?? 0, epoch + 1);
    }
  }
  return {
    ...rest,
    status: "running",
    snapshot,
    ledger,
    epochs,
    timers: before ? before.timers : [],
    usage: now.usage,
    ...(now.faults ? { faults: now.faults } : {}),
    ...(served.sourceDigest === undefined ? {} : { sourceDigest: served.sourceDigest }),
    updatedAt: at,
  };
}

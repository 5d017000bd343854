/**
 * `POST /runs/:runId/retry` of a run faulted by its Machine (issue 22 §2, ADR-0272): without
 * `confirm`, the plan (409 `JR2_ERR_RUN_RETRY_UNCONFIRMED`, nothing changed); with it, the run is
 * set back in place — to the newest kept version saved before the faulting macrostep (its live
 * Turns on new conversations, its timers re-armed), or emptied to start again from its stored
 * input — under the same runId, the blob and the `retried` event committed in one transaction,
 * then revived on the Machine served now. New turnIds and iids; epochs never go back.
 * @see SPEC §5.6, §8; ADR-0271, ADR-0272
 */
import { Jr2Error, type MachineFaultRetry, type RetryAnswer, type RunFeedEvent } from "@jr2/wire";
import type { RunBlob } from "../durability/store/run-store.js";
import type { GateClient } from "./gate-delivery.js";
import { reviveStoredRun } from "./host-restore.js";
import type { HostState } from "./host-state.js";
import { machineDigestsOf } from "./machine-digests.js";
import { machineRetryBlob, planMachineFaultRetry } from "./machine-fault-plan.js";

/** What the operator asked: `confirm` applies the plan; `force` retries under an unchanged source. */
export interface MachineRetryAsk {
  confirm?: boolean | undefined;
  force?: boolean | undefined;
}

/**
 * Plans, and with `ask.confirm` applies, the retry of `now` (faulted by its Machine with `reason`).
 * Runs inside the run's serialized section (retry-run.ts).
 * @throws JR2_ERR_RUN_RETRY_UNCONFIRMED (the plan, with `machineFault`), JR2_ERR_RUN_NOT_RETRYABLE
 *   (see {@link planMachineFaultRetry}), what the store throws
 */
export async function retryMachineFault(
  state: HostState,
  now: RunBlob,
  reason: string,
  ask: MachineRetryAsk,
  by: GateClient,
): Promise<RetryAnswer> {
  const { runId } = now;
  const plan = await planMachineFaultRetry(state, now, reason, ask.force === true);
  if (!ask.confirm)
    throw new Jr2Error("JR2_ERR_RUN_RETRY_UNCONFIRMED", {
      runId,
      reason,
      plan: planWords(plan.retry),
      machineFault: plan.retry,
    });
  const at = state.now().toISOString();
  const served = machineDigestsOf(state.workflows.get(now.workflow)!);
  const blob = machineRetryBlob(now, plan.before?.blob, served, at);
  const last = await state.store.lastEventSeq(runId);
  const { sourceDigest: _digests, ...logged } = plan.retry;
  const event: RunFeedEvent = {
    seq: last === undefined ? 0 : last + 1,
    at,
    type: "retried",
    child: "(Machine)",
    turnId: "",
    fromVersion: plan.before?.version ?? null,
    by,
    machineFault: logged,
  };
  await state.store.save(
    blob,
    [],
    [],
    [event],
    plan.before
      ? { kind: "retry", child: "(Machine)", from: plan.before.version, by }
      : { kind: "start", by },
  );
  state.log.info({ runId, from: plan.retry.from, by }, "run faulted by its Machine retried");
  const outcome = await reviveStoredRun(state, blob, plan.before === undefined);
  return {
    runId,
    status: outcome.kind === "live" ? outcome.run.status : outcome.blob.status,
    child: "(Machine)",
    turnId: "",
    fromVersion: plan.before?.version ?? null,
    value: (blob.snapshot as { value?: unknown } | null)?.value ?? null,
    seq: event.seq,
    machineFault: plan.retry,
  };
}

/** The plan in words (the refusal's `{plan}`): where it restarts, the event, the new conversations. */
export function planWords(plan: MachineFaultRetry): string {
  const from =
    plan.from === "input"
      ? "start it again from its stored input (the fault was in its initial macrostep), every Turn on a new conversation"
      : `restore version ${plan.from} (the newest saved before the faulting macrostep)${plan.event ? ` and deliver again ${plan.event}` : ""}; on a new conversation: ${plan.newConversations.join(", ") || "no Turn"}`;
  return from;
}

/**
 * Closing a drifted run (issue 22 §3): a run whose workflow lost the state it is in can be
 * neither resumed nor forked, so `jr2 cancel` (and the console) end it as `cancelled` with no
 * Machine — the blob rewritten by a conditional save (`ifStatus: drifted`: on PostgreSQL under
 * the fence of ADR-0280, the row locked), in one transaction with its `status` event (who
 * asked) and its version; then its Harness conversations are aborted. A racing resume and
 * cancel: exactly one commits; the other is told which action won
 * (`JR2_ERR_RUN_STATUS_CHANGED`). Decisions: ADR-0276.
 * @see SPEC §8; ADR-0271, ADR-0280
 */
import {
  type CancelAnswer,
  type ControlClient,
  Jr2Error,
  type RunFeedEvent,
  type RunStatus,
} from "@jr2/wire";
import { FencedError } from "../durability/store/ownership.js";
import { type RunBlob, RunStatusChangedError } from "../durability/store/run-store.js";
import { valueOfBlob } from "../durability/store/versions.js";
import type { HostState } from "./host-state.js";

/**
 * Cancels the drifted run `blob` (read inside the run's chain). Resolves once the cancel
 * committed; the Harness aborts leave after, in the background.
 * @throws JR2_ERR_RUN_STATUS_CHANGED when another action changed it first, here or on another
 *   instance (nothing written), what the store throws
 */
export async function cancelDrifted(
  state: HostState,
  blob: RunBlob,
  by: ControlClient,
): Promise<CancelAnswer> {
  const { runId } = blob;
  const at = state.now().toISOString();
  const last = await state.store.lastEventSeq(runId);
  const drift = blob.fault?.reason ?? "drifted";
  const event: RunFeedEvent = {
    seq: last === undefined ? 0 : last + 1,
    at,
    type: "status",
    status: "cancelled",
    value: valueOfBlob(blob),
    outcome: "cancelled",
    reason: `cancelled while drifted (${drift})`,
    by,
  };
  const { fault: _drift, ...rest } = blob;
  const next: RunBlob = { ...rest, status: "cancelled", outcome: "cancelled", updatedAt: at };
  try {
    await state.store.save(next, [], [], [event], { kind: "cancel" }, { ifStatus: "drifted" });
  } catch (error) {
    throw await lostRace(state, runId, error);
  }
  await endOpenTurns(state, runId, at);
  abortConversations(state, blob);
  state.log.info({ runId, by, drift }, "drifted run cancelled");
  return { runId, status: "cancelled" };
}

/**
 * What a conditional save of the drifted run `runId` that threw `error` answers: another
 * action won — the status changed (RunStatusChangedError), or, on PostgreSQL, a racing resume
 * on another instance already claimed its lease (FencedError) — JR2_ERR_RUN_STATUS_CHANGED
 * naming it; any other error as it is.
 */
export async function lostRace(state: HostState, runId: string, error: unknown): Promise<unknown> {
  if (error instanceof RunStatusChangedError) return statusChanged(state, runId, "drifted", error.found);
  if (error instanceof FencedError) return statusChanged(state, runId, "drifted", undefined);
  return error;
}

/**
 * JR2_ERR_RUN_STATUS_CHANGED for `runId`, expected `expected` but `found`: `change` names the
 * action that won, read from the newest operator or status entry of its log.
 */
export async function statusChanged(
  state: HostState,
  runId: string,
  expected: RunStatus,
  found: RunStatus | undefined,
): Promise<Jr2Error> {
  const status = found ?? (await state.store.load(runId))?.status ?? "gone";
  return new Jr2Error("JR2_ERR_RUN_STATUS_CHANGED", {
    runId,
    status,
    expected,
    change: (await lastChange(state, runId)).text,
  });
}

/**
 * The refusal of a resume of `runId`, stored as `status` (not drifted): JR2_ERR_RUN_STATUS_CHANGED
 * naming the operator's action when one changed it last (a cancel or resume that won the race),
 * else JR2_ERR_RUN_NOT_DRIFTED.
 */
export async function notDrifted(state: HostState, runId: string, status: RunStatus): Promise<Jr2Error> {
  const change = await lastChange(state, runId);
  return change.byOperator
    ? new Jr2Error("JR2_ERR_RUN_STATUS_CHANGED", { runId, status, expected: "drifted", change: change.text })
    : new Jr2Error("JR2_ERR_RUN_NOT_DRIFTED", { runId, status });
}

/** The newest change of the run's status on its log, in words (`resumed by cli at …`). */
async function lastChange(state: HostState, runId: string): Promise<{ text: string; byOperator: boolean }> {
  const none = { text: "its log names no change", byOperator: false };
  const last = await state.store.lastEventSeq(runId);
  if (last === undefined) return none;
  const events = await state.store.events(runId, Math.max(0, last - 50), 60);
  for (const e of events.reverse()) {
    if (e.type === "resumed") return { text: `resumed by ${e.by} at ${e.at}`, byOperator: true };
    if (e.type === "retried") return { text: `retried by ${e.by} at ${e.at}`, byOperator: true };
    if (e.type === "status" && e.status !== "running")
      return { text: `${e.outcome ?? e.status}${e.by ? ` by ${e.by}` : ""} at ${e.at}`, byOperator: !!e.by };
  }
  return none;
}

/** The Turn records still open end as `left` (the run will not continue them). */
async function endOpenTurns(state: HostState, runId: string, at: string): Promise<void> {
  const open = (await state.store.turns(runId)).filter((t) => t.endedAt === null);
  if (open.length > 0)
    await state.store.recordTurns(
      runId,
      open.map((t) => ({ ...t, endedAt: at, outcome: "left" as const })),
    );
}

/**
 * Aborts the run's conversations at their Harnesses (each iid of its ledger; an idle one is a
 * no-op there). In the background: the cancel already committed, a Harness down is only logged.
 */
function abortConversations(state: HostState, blob: RunBlob): void {
  const abort = state.turnDriver.abortOwed?.bind(state.turnDriver);
  if (!abort) return;
  for (const [iid, entry] of Object.entries(blob.ledger)) {
    const harnessUrl = entry.harnessUrl ?? state.placement?.instanceHarnessUrl;
    if (!harnessUrl) continue;
    const instanceId = state.ownership?.instanceId;
    abort({ harnessUrl, iid, ...(instanceId ? { instanceId } : {}) })
      .then((ok) => {
        if (!ok)
          state.log.warn(
            { runId: blob.runId, iid, harnessUrl },
            "a cancelled drifted run's abort was not acknowledged",
          );
      })
      .catch((error: unknown) =>
        state.log.warn(
          { runId: blob.runId, iid, err: error },
          "aborting a cancelled drifted run's conversation failed",
        ),
      );
  }
}

/**
 * `POST /runs/:runId/resume` (issue 13 item 4, ADR-0271): a drifted run restored against the
 * Machine served now, when that Machine still has every state the snapshot is in. Without
 * `acceptDrift` it is a dry run: the answer says what would change and nothing is written.
 * With it, the rewritten blob and the `resumed` event commit in one transaction, then the run is
 * revived through the host as a restore would (its Turns re-attach, or — an Agent whose Menu
 * changed — are admitted again on a new conversation).
 * @see SPEC §8; ADR-0251, ADR-0271
 */
import { Jr2Error, type ResumeAnswer, type ResumeRequest, type RunFeedEvent } from "@jr2/wire";
import { lostRace, notDrifted } from "./drifted-cancel.js";
import type { GateClient } from "./gate-delivery.js";
import { reviveStoredRun } from "./host-restore.js";
import { type HostState, serialized } from "./host-state.js";
import { machineDigestsOf } from "./machine-digests.js";
import { missingStates, planResume, type ResumePlan, resumedBlob } from "./resume-plan.js";
import { storedBlob } from "./run-table.js";
import { workflowInfo } from "./workflow-table.js";

/**
 * Resumes (or, without `acceptDrift`, plans resuming) the drifted run `runId`.
 * @throws JR2_ERR_RUN_NOT_FOUND, JR2_ERR_RUN_NOT_DRIFTED (any other status),
 *   JR2_ERR_WORKFLOW_NOT_FOUND (its workflow is not served), JR2_ERR_RUN_RESUME_STATES_MISSING
 *   (naming each missing state and its Machine), JR2_ERR_SERVICE_STOPPING, what the store throws
 */
export async function resumeRun(
  state: HostState,
  runId: string,
  request: ResumeRequest,
  by: GateClient,
): Promise<ResumeAnswer> {
  if (state.stopping) throw new Jr2Error("JR2_ERR_SERVICE_STOPPING");
  return serialized(state, runId, async () => {
    const live = state.runs.get(runId);
    if (live) throw new Jr2Error("JR2_ERR_RUN_NOT_DRIFTED", { runId, status: live.status });
    const blob = await storedBlob(state, runId);
    if (blob.status !== "drifted") throw await notDrifted(state, runId, blob.status);
    const info = workflowInfo(state.infos, blob.workflow);
    const machine = state.workflows.get(blob.workflow)!;
    const digests = machineDigestsOf(machine);
    const plan = planResume(blob, machine, digests);
    if (!request.acceptDrift)
      return { ...plan.answer, status: "drifted", resumed: false, moved: plan.moving, seq: null };
    if (!plan.answer.resumable)
      throw new Jr2Error("JR2_ERR_RUN_RESUME_STATES_MISSING", {
        runId,
        workflow: blob.workflow,
        missing: missingStates(plan.answer.states),
      });
    const { blob: next, moved } = resumedBlob(blob, plan, { fingerprint: info.fingerprint, digests });
    const at = state.now().toISOString();
    next.updatedAt = at;
    const last = await state.store.lastEventSeq(runId);
    const event: RunFeedEvent = {
      seq: last === undefined ? 0 : last + 1,
      at,
      type: "resumed",
      accepted: acceptedDrift(plan),
      moved,
      by,
    };
    // The rewrite and its log entry together: a kill before leaves it drifted, after it restores running.
    // Conditional (issue 22): a cancel of the drifted run racing it, on any instance, wins or loses whole.
    try {
      await state.store.save(next, [], [], [event], { kind: "resume", by }, { ifStatus: "drifted" });
    } catch (error) {
      throw await lostRace(state, runId, error);
    }
    await endMovedTurns(state, runId, plan.movingTurnIds, at);
    state.log.info({ runId, moved, by }, "drifted run resumed");
    const outcome = await reviveStoredRun(state, next);
    const status = outcome.kind === "live" ? outcome.run.status : outcome.blob.status;
    return { ...plan.answer, status, resumed: outcome.kind === "live", moved, seq: event.seq };
  });
}

/** The Turn records of the moved Turns end as `left`: they are not continued (a new Turn is). */
async function endMovedTurns(state: HostState, runId: string, turnIds: readonly string[], at: string) {
  if (turnIds.length === 0) return;
  const ended = (await state.store.turns(runId))
    .filter((t) => turnIds.includes(t.turnId) && t.endedAt === null)
    .map((t) => ({ ...t, endedAt: at, outcome: "left" as const }));
  if (ended.length > 0) await state.store.recordTurns(runId, ended);
}

/** The drift accepted, in words: which Machines' fingerprints and which Agents' Menus changed. */
function acceptedDrift(plan: ResumePlan): string {
  const machines = plan.answer.machines
    .filter((m) => m.saved !== m.served)
    .map((m) => `Machine \`${m.machine || "(top)"}\` ${short(m.saved)} → ${short(m.served)}`);
  const menus = plan.answer.menus
    .filter((m) => m.changed)
    .map((m) => `${m.agent}${m.machine ? ` (${m.machine})` : ""}: ${m.why}`);
  return [
    machines.join(", ") || "no fingerprint change",
    menus.length ? `Menus changed: ${menus.join(", ")}` : "no Menu changed",
  ].join("; ");
}

function short(fingerprint: string | null): string {
  return fingerprint ? fingerprint.slice(0, 12) : "none";
}

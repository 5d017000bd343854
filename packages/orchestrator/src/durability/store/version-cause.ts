/**
 * Why a save happened (ADR-0270): the cause a version of a run is kept with, read from what the
 * save carries — its feed events (the state changes it commits, ADR-0256) and its blob. Pure.
 * @see SPEC §8
 */
import type { RunFeedEvent, VersionCause } from "@jr2/wire";
import type { VersionedBlob } from "./versions.js";

/**
 * The cause of a save of `blob` carrying `events`, the first match of: a pick, a Gate answer,
 * a timer, the run settling (fault, cancel, any other outcome), a routed fault, the run's
 * start (its first version), a Turn's admission — its `admission` event, or (the event is a
 * fact written on its own, so a save rarely carries it) a ledger entry `previous`, the blob
 * saved before, did not have; else `step`.
 */
export function causeOfSave(
  blob: VersionedBlob,
  events: readonly RunFeedEvent[],
  first: boolean,
  previous?: VersionedBlob,
): VersionCause {
  const find = <T extends RunFeedEvent["type"]>(type: T) =>
    events.find((e): e is Extract<RunFeedEvent, { type: T }> => e.type === type);
  const pick = find("pick");
  if (pick) return { kind: "pick", child: pick.child, agent: pick.agent, name: pick.name };
  const gate = find("gate-answered");
  if (gate) return { kind: "gate", gate: gate.gate, event: gate.event, by: gate.by };
  const timer = find("timer");
  if (timer) return { kind: "timer", after: timer.after };
  const fault = find("fault");
  if (blob.status === "faulted")
    return {
      kind: "fault",
      reason: blob.fault?.reason ?? "faulted",
      ...(fault ? { child: fault.child } : {}),
    };
  if (blob.status === "cancelled") return { kind: "cancel" };
  if (blob.status !== "running") return { kind: "settled", status: blob.status };
  if (fault) return { kind: "fault", reason: fault.reason, child: fault.child };
  if (first) return { kind: "start" };
  const admission = find("admission");
  if (admission) return { kind: "admission", child: admission.child, agent: admission.agent };
  const admitted = previous ? newAdmission(blob, previous) : undefined;
  if (admitted) return { kind: "admission", ...admitted };
  return { kind: "step" };
}

/** The Turn of a ledger entry of `blob` that `previous` lacks (a new iid or Submission), if any. */
function newAdmission(
  blob: VersionedBlob,
  previous: VersionedBlob,
): { child: string; agent: string } | undefined {
  const before = previous.ledger ?? {};
  for (const [iid, entry] of Object.entries(blob.ledger ?? {})) {
    if (before[iid]?.submissionId === entry.submissionId) continue;
    const child = entry.child ?? iid;
    return { child, agent: child.slice(child.lastIndexOf("#") + 1) || iid };
  }
  return undefined;
}

/**
 * What faults a run (§5.6): an `agent.fault` that no transition of its target takes, or a
 * Machine's error. Pure readings of an inspection event; the run ends itself on them.
 * @see SPEC §5.6
 */
import type { InspectionEvent } from "xstate";
import { errorRecord } from "../durability/snapshot-errors.js";

/** Why a run faulted; `detail` and `cause` are what a Turn fault carried (§5.6). */
export interface RunFault {
  reason: string;
  detail?: string;
  cause?: string;
}

/**
 * The fault an `agent.fault` event brings on the run when no transition of its target takes it;
 * undefined when one does, or the target is not an active Machine.
 */
export function unroutedFault(
  event: Extract<InspectionEvent, { type: "@xstate.event" }>,
): RunFault | undefined {
  const snapshot = event.actorRef.getSnapshot() as { can?: (e: unknown) => boolean; status?: string };
  if (typeof snapshot.can !== "function" || snapshot.status !== "active") return undefined;
  let taken: boolean;
  try {
    taken = snapshot.can(event.event);
  } catch {
    taken = true; // a throwing guard errors the Machine itself; that path faults the run too
  }
  if (taken) return undefined;
  const { reason, detail, cause } = event.event as { reason?: unknown; detail?: unknown; cause?: unknown };
  return {
    reason: `agent.fault (${typeof reason === "string" ? reason : "no reason"}) taken by no transition`,
    ...(typeof detail === "string" ? { detail } : {}),
    ...(typeof cause === "string" ? { cause } : {}),
  };
}

/**
 * A Machine error's text (the run's fault reason): its message. An error read back from JSON is
 * a plain object: its `message` is read the same way — never `[object Object]` (issue 22 §2).
 */
export function errorText(error: unknown): string {
  return errorRecord(error).message;
}

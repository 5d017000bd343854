/**
 * A run's outcome and its fault record (ADR-0062): pure readings the live run applies when an
 * `agent.fault` arrives and when it settles. The outcome is computed once, at the status that
 * settles the run, and saved with it.
 * @see SPEC §5.6, ADR-0062
 */
import type { RunFaultRecord, RunOutcome, RunStatus } from "@jr2/wire";
import type { AnyStateMachine } from "xstate";
import { finalOutcomeOf } from "../menu/outcomes.js";

/** Where a Turn ran, as the run remembers it from its start (for its faults). */
export interface TurnPlace {
  agent: string;
  state: string;
  turnId: string | null;
}

/**
 * The record of one `agent.fault` event: its Turn (from `places` by the sender's iid, else the
 * sender's name and the ledger's turnId), reason, cause, detail, whether a transition took it.
 */
export function faultRecordOf(
  event: { sender?: { name?: unknown; iid?: unknown }; reason?: unknown; cause?: unknown; detail?: unknown },
  routed: boolean,
  places: ReadonlyMap<string, TurnPlace>,
  ledgerTurnId: (iid: string) => string | null | undefined,
  at: Date,
): RunFaultRecord {
  const iid = typeof event.sender?.iid === "string" ? event.sender.iid : "";
  const place = places.get(iid);
  const agent = place?.agent ?? (typeof event.sender?.name === "string" ? event.sender.name : "");
  return {
    agent,
    state: place?.state ?? "",
    turnId: place?.turnId ?? ledgerTurnId(iid) ?? null,
    reason: typeof event.reason === "string" ? event.reason : "unknown",
    ...(typeof event.cause === "string" ? { cause: event.cause } : {}),
    ...(typeof event.detail === "string" ? { detail: event.detail } : {}),
    routed,
    at: at.toISOString(),
  };
}

/**
 * The outcome of a run reaching `status`: `done` → the declared outcome of the root's final
 * state `value` (default `succeeded`); `faulted`, `cancelled` → themselves; `running` and
 * `drifted` → none.
 */
export function outcomeOf(
  status: RunStatus,
  machine: AnyStateMachine,
  value: unknown,
): RunOutcome | undefined {
  switch (status) {
    case "done":
      return finalOutcomeOf(machine, value);
    case "faulted":
    case "cancelled":
      return status;
    default:
      return undefined;
  }
}

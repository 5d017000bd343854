import type { FaultCause } from "@jr2/wire";
import type { AgentFaultEvent } from "../turns/agent-fault-event.js";

export type { AgentFaultEvent, AgentFaultReason } from "../turns/agent-fault-event.js";

/** An inline guard as xstate calls it on an `agent.fault` transition (any context and event). */
export type FaultGuard = (args: { context: unknown; event: { type: string } }) => boolean;

/**
 * Types an `agent.fault` guard: `test` reads the event as an {@link AgentFaultEvent}, so a
 * misspelt cause or reason (`fault.cause === "timeout"`) is a type error. Since ADR-0010 an
 * inline guard on `agent.fault` reads the same type without it; this stays for the workflows
 * written before, and for a guard kept apart from its transition.
 * @param test reads the fault and the Machine's context; it must not throw
 * @see SPEC §5.6
 * @example "agent.fault": [{ guard: faultGuard((f) => f.reason === "infra" && f.cause !== "bad-request"), target: "retryLater" }, { target: "failed" }]
 */
export function faultGuard<TContext = unknown>(
  test: (fault: AgentFaultEvent, context: TContext) => boolean,
): FaultGuard {
  return ({ context, event }) => test(event as AgentFaultEvent, context as TContext);
}

/**
 * A guard that holds when the `agent.fault` it reads carries one of `causes` — the routing a
 * workflow does most, spelled so a misspelt cause is a type error.
 * @param causes the {@link FaultCause}s to take (at least one)
 * @returns an inline guard for an `agent.fault` transition
 * @see SPEC §5.6
 * @example "agent.fault": [{ guard: faultCauseIs("context-overflow", "output-limit"), target: "shorter" }, { target: "failed" }]
 */
export function faultCauseIs(...causes: [FaultCause, ...FaultCause[]]): FaultGuard {
  const wanted = new Set<unknown>(causes);
  return ({ event }) => wanted.has((event as { cause?: unknown }).cause);
}

import type { FaultCause } from "@jr2/wire";

/**
 * The class of an `agent.fault` (§5.6, seed ADR-0016): `infra` (the Harness or the model
 * endpoint failed), `no-signal` (the model stopped without a pick past the nudge budget),
 * `runaway` (a Submission that did not conclude), `deadline`, `placement`, `conflict`.
 */
export type AgentFaultReason = "infra" | "no-signal" | "runaway" | "deadline" | "placement" | "conflict";

/**
 * The `agent.fault` event a state that invokes an Agent routes (§5.6). `cause` (issue 10 §3)
 * says what went wrong where a model request or the Harness failed — a workflow may route on
 * it; `detail` says it in words (it names the model endpoint URL and the model entry) and is
 * for people, never for routing. `cause` is absent for `deadline`, `placement`, `conflict`,
 * a plain `no-signal` and a step-budget `runaway`. Each cause has one reason:
 * `context-overflow`, `bad-request`, `unknown-model`, `unavailable`, `stream-cut` → `infra`;
 * `output-limit` → `runaway`; `text-call` → `no-signal`.
 * @see SPEC §5.6
 * @example
 * "agent.fault": [
 *   { guard: faultGuard((fault) => fault.cause === "context-overflow"), target: "summarize" },
 *   { target: "failed" },
 * ]
 */
export interface AgentFaultEvent {
  type: "agent.fault";
  reason: AgentFaultReason;
  cause?: FaultCause;
  detail?: string;
  sender: { kind: "agent"; name: string; iid: string };
}

/** An inline guard as xstate calls it on an `agent.fault` transition (events typed loosely). */
export type FaultGuard = (args: { context: unknown; event: { type: string } }) => boolean;

/**
 * Types an `agent.fault` guard: `test` reads the event as an {@link AgentFaultEvent}, so a
 * misspelt cause or reason (`fault.cause === "timeout"`) is a type error. The Machine's
 * events are typed loosely (setup.ts), which an annotated parameter cannot narrow.
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

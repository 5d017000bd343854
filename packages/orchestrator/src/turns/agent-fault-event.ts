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

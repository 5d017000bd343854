/**
 * Run outcomes declared on final states (ADR-0062): a top-level final state of a Machine's
 * root may declare `meta: { outcome: "succeeded" | "failed" }` (default `succeeded`). The walk
 * refuses any other value and warns where a final state that an `agent.fault` transition
 * targets directly declares none; the run reads the outcome of the final state it settled in.
 * Pure readings of the built Machine.
 * @see SPEC §5.6, ADR-0062
 */
import { Jr2Error } from "@jr2/wire";
import type { AnyStateMachine } from "xstate";
import { rootOf, type StateNodeLike } from "../xstate/adapter.js";
import type { MachineWarning } from "./machine-model.js";

/** The outcomes a final state may declare. */
export type DeclaredOutcome = "succeeded" | "failed";

/** The root's top-level final states, in document order. */
function topLevelFinals(root: StateNodeLike): StateNodeLike[] {
  return Object.values(root.states).filter((s) => s.type === "final");
}

/** The state's `meta.outcome` as written (undefined when it declares none). */
function declaredOf(node: StateNodeLike): unknown {
  const meta = node.meta;
  return typeof meta === "object" && meta !== null ? (meta as { outcome?: unknown }).outcome : undefined;
}

/**
 * Checks each top-level final state's `meta.outcome`.
 * @returns one `JR2_WARN_OUTCOME_UNDECLARED` per final state an `agent.fault` transition
 *   targets directly that declares no outcome (it would report `succeeded` for a fault)
 * @throws Jr2Error `JR2_ERR_SETUP_OUTCOME_INVALID` naming the state and the value
 */
export function outcomeWarnings(root: StateNodeLike, nodes: readonly StateNodeLike[]): MachineWarning[] {
  const finals = topLevelFinals(root);
  for (const node of finals) {
    const declared = declaredOf(node);
    if (declared !== undefined && declared !== "succeeded" && declared !== "failed")
      throw new Jr2Error("JR2_ERR_SETUP_OUTCOME_INVALID", { state: node.key, got: JSON.stringify(declared) });
  }
  const faultTargets = new Set<string>();
  for (const n of nodes)
    for (const t of n.transitions.get("agent.fault") ?? [])
      for (const x of t.target ?? []) faultTargets.add(x.id);
  return finals
    .filter((node) => faultTargets.has(node.id) && declaredOf(node) === undefined)
    .map((node) => ({
      code: "JR2_WARN_OUTCOME_UNDECLARED" as const,
      message: `final state \`${node.key}\` is the target of an \`agent.fault\` transition but declares no outcome, so a run routed there reports \`succeeded\`; add \`meta: { outcome: "failed" }\` (or "succeeded" to say so)`,
    }));
}

/**
 * The outcome of a run of `machine` that settled `done` in state `value`: the declared outcome
 * of the top-level final state named by `value`, else `succeeded`.
 */
export function finalOutcomeOf(machine: AnyStateMachine, value: unknown): DeclaredOutcome {
  if (typeof value !== "string") return "succeeded";
  const node = rootOf(machine).states[value];
  return node && node.type === "final" && declaredOf(node) === "failed" ? "failed" : "succeeded";
}

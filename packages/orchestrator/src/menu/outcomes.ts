/**
 * Run outcomes declared on final states (ADR-0062): a top-level final state of a Machine's
 * root (or of a parallel root's region) may declare `meta: { outcome: "succeeded" | "failed" }`
 * (default `succeeded`). The walk refuses any other value and warns where a final state that an
 * `agent.fault` transition targets directly declares none; the run reads the outcome of the
 * final state(s) it settled in.
 * Pure readings of the built Machine.
 * @see SPEC §5.6, ADR-0062
 */
import { Jr2Error } from "@jr2/wire";
import type { AnyStateMachine } from "xstate";
import { rootOf, type StateNodeLike } from "../xstate/adapter.js";
import type { MachineWarning } from "./machine-model.js";

/** The outcomes a final state may declare. */
export type DeclaredOutcome = "succeeded" | "failed";

/**
 * The final states that end the root, in document order: its own final children, or for a
 * parallel root each region's final children (the run is done when every region is).
 */
function topLevelFinals(root: StateNodeLike): StateNodeLike[] {
  const finalsOf = (n: StateNodeLike) => Object.values(n.states).filter((s) => s.type === "final");
  return root.type === "parallel" ? Object.values(root.states).flatMap(finalsOf) : finalsOf(root);
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
 * The outcome of a run of `machine` that settled `done` in state `value`: `failed` when a final
 * state `value` names (the root's, or a parallel root's region's) declares it, else `succeeded`.
 */
export function finalOutcomeOf(machine: AnyStateMachine, value: unknown): DeclaredOutcome {
  const root = rootOf(machine);
  const reached: Array<StateNodeLike | undefined> =
    typeof value === "string"
      ? [root.states[value]]
      : typeof value === "object" && value !== null
        ? Object.entries(value).map(([region, key]) =>
            typeof key === "string" ? root.states[region]?.states[key] : undefined,
          )
        : [];
  const failed = reached.some((n) => n?.type === "final" && declaredOf(n) === "failed");
  return failed ? "failed" : "succeeded";
}

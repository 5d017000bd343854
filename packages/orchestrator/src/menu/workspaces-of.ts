/**
 * The workspaces a Machine declares (ADR-0228): every `workspace()` it invokes, at any depth,
 * with its Repo Slots' names — `[]` for a plain workspace. What a fork's wording reads: a run
 * whose workspaces all have Repo Slots never hears of an empty plain directory.
 * Pure: a function of the built Machine (no snapshot, no live actors).
 */
import type { AnyStateMachine } from "xstate";
import { rootOf, type StateNodeLike } from "../xstate/adapter.js";
import { modelOf } from "./machine-model.js";
import { workspaceMarkOf } from "./marks.js";

/** One declared workspace: its name (the `name` option, else the invoke id) and its slots. */
export interface DeclaredWorkspace {
  name: string;
  slots: string[];
}

/** The workspaces `machine` declares, in state-tree order, each name once. */
export function workspacesOf(machine: AnyStateMachine): DeclaredWorkspace[] {
  const out = new Map<string, DeclaredWorkspace>();
  const seen = new Set<AnyStateMachine>();
  const visitMachine = (m: AnyStateMachine) => {
    if (seen.has(m)) return;
    seen.add(m);
    const actors = (m.implementations?.actors ?? {}) as Record<string, unknown>;
    const visit = (node: StateNodeLike) => {
      for (const inv of node.invoke) {
        const logic = typeof inv.src === "string" ? actors[inv.src] : inv.src;
        const mark = workspaceMarkOf(logic);
        if (mark) {
          const name = mark.name ?? inv.id;
          if (!out.has(name)) out.set(name, { name, slots: [...mark.slots] });
          visitMachine(mark.body);
        } else if (logic && typeof logic === "object" && modelOf(logic as AnyStateMachine)) {
          visitMachine(logic as AnyStateMachine);
        }
      }
      for (const child of Object.values(node.states)) visit(child);
    };
    visit(rootOf(m));
  };
  visitMachine(machine);
  return [...out.values()];
}

/** The names of the plain workspaces (no Repo Slot) among `workspaces`. */
export function plainWorkspaceNames(workspaces: readonly DeclaredWorkspace[]): string[] {
  return workspaces.filter((w) => w.slots.length === 0).map((w) => w.name);
}

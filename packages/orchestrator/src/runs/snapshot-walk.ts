/**
 * Reading xstate's persisted snapshot of a run (plain JSON, as the RunBlob holds it): the
 * Machines it is in (each with its actor path and state value) and the live Agent slots (their
 * persisted {@link TurnInput}: iid, turnId). Paths are actor paths below the run root, as
 * `actorPathOf` writes them (`working/body`), which are the paths `MachineInfo.machines` names.
 * @see SPEC §8, §13 "Restore"
 */
import type { TurnInput } from "../xstate/run-binding.js";

/** One actor of the snapshot: `path` is its invoker's actor path (`""` = the root Machine). */
export interface SnapshotNode {
  /** A Machine's own path; an Agent slot's invoker's path. */
  path: string;
  /** The child's id (an Agent slot's invoke id), `""` for the root. */
  id: string;
  /** The invoking state's dotted path in its Machine (Agent slots only; `""` otherwise). */
  statePath: string;
}

interface PersistedChild {
  snapshot?: { value?: unknown; input?: unknown; children?: Record<string, PersistedChild> };
}

/** Every Machine the snapshot holds (the root first), with its state value. */
export function snapshotMachines(snapshot: unknown): Array<SnapshotNode & { value: unknown }> {
  const found: Array<SnapshotNode & { value: unknown }> = [];
  walk({ snapshot: snapshot as PersistedChild["snapshot"] }, "", "", (node, path, id) => {
    if (node.snapshot && "value" in node.snapshot)
      found.push({ path, id, statePath: "", value: node.snapshot.value });
  });
  return found;
}

/**
 * Every live Agent slot of the snapshot with its persisted input (the very object: a caller
 * may rewrite it in a copy of the snapshot). `statePath` is read off its invoke id
 * (`0.<machine id>.<state path>`, xstate's generated id) where it has that form.
 */
export function snapshotAgents(snapshot: unknown): Array<SnapshotNode & { input: TurnInput }> {
  const found: Array<SnapshotNode & { input: TurnInput }> = [];
  walk({ snapshot: snapshot as PersistedChild["snapshot"] }, "", "", (node, path, id) => {
    const input = node.snapshot?.input as Partial<TurnInput> | undefined;
    if (!input || typeof input.agentName !== "string" || typeof input.iid !== "string") return;
    const parent = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
    found.push({ path: parent, id, statePath: statePathOfInvokeId(id), input: input as TurnInput });
  });
  return found;
}

/** `0.review-body.implement` → `implement`; an authored id is kept as it is. */
function statePathOfInvokeId(id: string): string {
  const match = /^\d+\.[^.]+\.(.+)$/.exec(id);
  return match?.[1] ?? id;
}

function walk(
  node: PersistedChild,
  path: string,
  id: string,
  visit: (node: PersistedChild, path: string, id: string) => void,
): void {
  visit(node, path, id);
  for (const [childId, child] of Object.entries(node.snapshot?.children ?? {}))
    walk(child, path ? `${path}/${childId}` : childId, childId, visit);
}

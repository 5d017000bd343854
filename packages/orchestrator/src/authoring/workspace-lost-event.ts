/**
 * `workspace.lost` as a workflow routes it (issue 28 §6, ADR-0215): sent to a workspace's body
 * after a Turn of it ended `agent.fault { cause: "workspace-lost" }`. Routing it is optional.
 * @example
 * again: { invoke: { src: "coder" }, on: { "agent.fault": "faulted" } },
 * faulted: { on: { "workspace.lost": "lost" } },
 */
export interface WorkspaceLostEvent {
  type: "workspace.lost";
  /** The workspace's name. */
  workspace: string;
  /** The Repo Slot whose Worktree held the Turn's cwd; absent when none did. */
  slot?: string;
  /** The Worktree that is gone (or the Turn's cwd when no slot held it). */
  path: string;
  /** The Agent whose Turn found it gone. */
  agent: string;
  sender: { kind: "agent"; name: string; iid: string };
}

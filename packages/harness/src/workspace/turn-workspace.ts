import { jr2Error } from "@jr2/wire";
import { symlinkOnPath } from "./git/no-symlink.js";
import { exists } from "./git/run-repository.js";
import type { SandboxGitView } from "./sandbox-view.js";
import type { Workspaces } from "./workspaces.js";

/**
 * What a Turn asks of the Harness's git (issue 28 §3, §4, §6), keyed by the Turn's cwd and
 * iid; never throws for a cwd that is not a Repo Slot (a plain workspace: nothing to do).
 */
export interface TurnWorkspace {
  /** The Worktree's path when `cwd` is (inside) a Repo Slot whose Worktree is gone; else undefined. */
  lostAt(cwd: string): Promise<string | undefined>;
  /**
   * Why a Turn at `cwd` is refused because a folder between the work root and `cwd` is a symlink
   * (a Working tool swapped it for a link to another run's Worktree or a host directory, which
   * bwrap would bind read-write): the `JR2_ERR_WORKSPACE_SYMLINK` message; undefined when no
   * component is a link or `cwd` is outside the work root (ADR-0227).
   */
  linkedAt(cwd: string): Promise<string | undefined>;
  /**
   * Commits the Repo Slot at `cwd` if it changed (before a pick is posted, or at a fault's
   * settlement); `{ "<workspace>/<slot>": head }`, or undefined when `cwd` is no slot.
   */
  commitAt(
    cwd: string,
    who: { agent: string; state: string; pick?: string },
  ): Promise<Record<string, string> | undefined>;
  /**
   * The prompt with each `{{diff repos.<slot>}}` replaced by that slot's committed diff of the
   * run (bounded by `JR2_DIFF_MAX_BYTES`, with a cut line); a slot this Harness does not know is
   * replaced by a line saying so. Input mappers stay pure: the Harness expands at admission.
   */
  expandPrompt(prompt: string, runId: string): Promise<string>;
  /**
   * The read-only binds and git environment a sandboxed Turn at `cwd` needs for its own
   * `git status`/`log`/`diff` in a Repo Slot (ADR-0214); undefined when `cwd` holds no slot.
   */
  sandboxView(cwd: string): Promise<SandboxGitView | undefined>;
}

/** `{{diff repos.app}}` (spaces allowed inside the braces). */
export const DIFF_PLACEHOLDER = /\{\{\s*diff\s+repos\.([A-Za-z0-9][A-Za-z0-9_-]*)\s*\}\}/g;

/** The Turn's view over {@link Workspaces}. */
export function createTurnWorkspace(workspaces: Workspaces): TurnWorkspace {
  return {
    async lostAt(cwd) {
      const r = await workspaces.slotAt(cwd);
      return r && !(await exists(r.worktree)) ? r.worktree : undefined;
    },
    async linkedAt(cwd) {
      const found = await symlinkOnPath(workspaces.config.workRoot, cwd);
      if (!found) return undefined;
      return `JR2_ERR_WORKSPACE_SYMLINK: ${jr2Error("JR2_ERR_WORKSPACE_SYMLINK", { path: cwd, ...found }).error}`;
    },
    async commitAt(cwd, who) {
      const r = await workspaces.slotAt(cwd);
      if (!r || !(await exists(r.worktree))) return undefined;
      const { commit } = await workspaces.commit({
        runId: r.runId,
        workspace: r.workspace,
        slot: r.slot,
        ...who,
      });
      return { [`${r.workspace}/${r.slot}`]: commit };
    },
    sandboxView: (cwd) => workspaces.sandboxView(cwd),
    async expandPrompt(prompt, runId) {
      const wanted = [...prompt.matchAll(DIFF_PLACEHOLDER)].map((m) => m[1] as string);
      if (wanted.length === 0) return prompt;
      const texts = new Map<string, string>();
      for (const slot of new Set(wanted)) texts.set(slot, await diffText(workspaces, runId, slot));
      return prompt.replace(DIFF_PLACEHOLDER, (_m, slot: string) => texts.get(slot) ?? "");
    },
  };
}

async function diffText(workspaces: Workspaces, runId: string, slot: string): Promise<string> {
  const record = await workspaces.recordOf(runId, slot);
  if (!record) return `[jr2: no Repo Slot \`${slot}\` is attached for this run on this Harness; no diff]`;
  const d = await workspaces.diff({ runId, workspace: record.workspace, slot });
  if (d.text === "") return `[jr2: no changes on ${record.branch} since ${d.base.slice(0, 12)}]`;
  return `${d.summary}\n\n${d.text}`;
}

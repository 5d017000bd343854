import { join } from "node:path";
import { Jr2Error } from "@jr2/wire";

/** What names a Repo Slot: the run, its workflow, the workspace and the slot's name. */
export interface SlotIds {
  runId: string;
  workflow: string;
  workspace: string;
  slot: string;
}

/** Where a Repo Slot lives on the node, and its branch. */
export interface SlotPaths {
  /** The run's own repository: `<workRoot>/.repos/<runId>/<workspace>/<slot>.git`. */
  repo: string;
  /** The Worktree: `<workRoot>/<runId>/<workspace>/<slot>` (what the Turn's cwd defaults to). */
  worktree: string;
  /** `jr2/<workflow>/<runId>`. */
  branch: string;
}

// A path component and a ref component at once: no `/`, no `..`, no leading `.` or `-`, no `.lock`.
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$/;

/**
 * The paths of a Repo Slot (issue 28 §2). The run's repository lives outside the run's
 * directory (the sandbox binds only that directory read-write), so nothing a Working tool does
 * reaches the repository's config, hooks or refs; the Worktree's `.git` file points there for
 * tools that read it, and jr2's own git never does.
 * @throws Jr2Error `JR2_ERR_WORKSPACE_NAME_INVALID` naming the field and the value
 */
export function slotPaths(workRoot: string, ids: SlotIds): SlotPaths {
  for (const field of ["runId", "workflow", "workspace", "slot"] as const) {
    const value = ids[field];
    if (typeof value !== "string" || value.length > 128 || !NAME.test(value) || value.endsWith(".lock"))
      throw new Jr2Error("JR2_ERR_WORKSPACE_NAME_INVALID", { field, value: String(value) });
  }
  return {
    repo: join(workRoot, ".repos", ids.runId, ids.workspace, `${ids.slot}.git`),
    worktree: join(workRoot, ids.runId, ids.workspace, ids.slot),
    branch: `jr2/${ids.workflow}/${ids.runId}`,
  };
}

/** A record's key in the registry: `<runId>/<workspace>/<slot>`. */
export function slotKey(ids: Pick<SlotIds, "runId" | "workspace" | "slot">): string {
  return `${ids.runId}/${ids.workspace}/${ids.slot}`;
}

/**
 * Regression (issue 28's scale rule, found by `pnpm bench:workspace-soak`): with ~400 runs on the
 * node, the Worktree clean-up removed ~7 Worktrees a minute while ~17 runs a minute settled, so
 * settled runs' Worktrees piled up (250 past their keep) and every removed one left its
 * `<workRoot>/<runId>/<workspace>` folders behind. Root cause: each removal listed every slot
 * record on the node (the store's and the `.repos/*.json` copies) to find its run's slots —
 * a pass was quadratic in the runs kept (~2 s a removal at 400) — and `remove` deleted only the
 * Worktree itself. Fixed: a pass lists the records once and removes each slot by its key; the
 * emptied run folders go too (a folder holding anything else stays).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type Workspaces } from "../../src/workspace/workspaces.js";
import { sweepWorktrees } from "../../src/workspace/worktree-sweeper.js";
import { type GitFixture, makeGitFixture } from "../workspace/git-fixture.js";

let fx: GitFixture | undefined;
afterEach(() => fx?.cleanup());

describe("a Worktree clean-up pass over many runs", () => {
  it("lists the slot records once, removes each slot by its key, and leaves no empty run folder", async () => {
    fx = makeGitFixture();
    const inner = createWorkspaces(
      readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot }),
    );
    const runs = ["run-1", "run-2", "run-3", "run-4"];
    for (const runId of runs)
      for (const slot of ["app", "lib"])
        await inner.attach({ runId, workflow: "review", workspace: "main", slot, url: fx.app });
    // run-4 also has a plain workspace folder with a file in it: that folder stays.
    mkdirSync(join(fx.workRoot, "run-4", "notes"));
    writeFileSync(join(fx.workRoot, "run-4", "notes", "keep.txt"), "mine\n");
    let listings = 0;
    const removals: unknown[] = [];
    const workspaces: Workspaces = {
      ...inner,
      records: async () => {
        listings++;
        return inner.records();
      },
      remove: async (req) => {
        removals.push(req);
        return inner.remove(req);
      },
    };
    const result = await sweepWorktrees({
      workspaces,
      runState: async () => ({ state: "settled", settledAt: new Date(0).toISOString() }),
      keepMs: 0,
    });
    expect(result.removed).toHaveLength(8);
    expect(listings).toBe(1);
    expect(removals).toContainEqual({ runId: "run-1", workspace: "main", slot: "lib" });
    expect(removals).toHaveLength(8);
    for (const runId of ["run-1", "run-2", "run-3"])
      expect(existsSync(join(fx.workRoot, runId)), runId).toBe(false);
    expect(existsSync(join(fx.workRoot, "run-4", "main"))).toBe(false);
    expect(existsSync(join(fx.workRoot, "run-4", "notes", "keep.txt"))).toBe(true);
    // The run's repository stays (fork and retry recreate a Worktree from it).
    expect(existsSync(join(fx.workRoot, ".repos", "run-1", "main", "app.git", "HEAD"))).toBe(true);
  });
});

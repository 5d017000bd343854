/**
 * Regression (issue 28's scale rule; the `worktree` phase's clean-up kill): a Harness SIGKILLed
 * by the clean-up after it removed a settled run's Worktree but before it wrote `removedAt` on
 * the slot's record left the record saying the Worktree was there — forever: `remove` returned
 * early on a missing Worktree without recording that it was gone, so every later pass asked the
 * Orchestrator about that run again, and the record (`.repos/<runId>/<ws>/<slot>.json`) claimed
 * a Worktree no one would ever remove (the soak's "record claims a Worktree after the clean-up").
 * Root cause: `removedAt` was written only by the pass that deleted the directory. Fixed: a
 * removal that finds the Worktree gone records `removedAt` then.
 */
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces } from "../../src/workspace/workspaces.js";
import { sweepWorktrees } from "../../src/workspace/worktree-sweeper.js";
import { type GitFixture, makeGitFixture } from "../workspace/git-fixture.js";

let fx: GitFixture | undefined;
afterEach(() => fx?.cleanup());

describe("a Worktree removed by a clean-up pass that was killed before recording it", () => {
  it("is recorded removed by the next pass, which then stops asking about the run", async () => {
    fx = makeGitFixture();
    const config = readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot });
    const ref = { runId: "run-1", workflow: "review", workspace: "main", slot: "app" };
    const handle = await createWorkspaces(config).attach({ ...ref, url: fx.app });
    // The killed pass: the directory is gone, the record (store and disk copy) still live.
    rmSync(handle.path, { recursive: true, force: true });
    // A new Harness (the restart), its store empty: the disk record is what it knows.
    const restarted = createWorkspaces(config);
    expect((await restarted.record(ref))?.removedAt).toBeUndefined();
    const asked: string[] = [];
    const pass = () =>
      sweepWorktrees({
        workspaces: restarted,
        runState: async (runId) => {
          asked.push(runId);
          return { state: "settled", settledAt: new Date(0).toISOString() };
        },
        keepMs: 0,
      });
    await pass();
    expect((await restarted.record(ref))?.removedAt).toEqual(expect.any(Number));
    await pass();
    expect(asked).toEqual(["run-1"]);
  });
});

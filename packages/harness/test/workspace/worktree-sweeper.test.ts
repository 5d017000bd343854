import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type Workspaces } from "../../src/workspace/workspaces.js";
import { type RunStateSource, sweepWorktrees } from "../../src/workspace/worktree-sweeper.js";
import { type GitFixture, makeGitFixture, userGit } from "./git-fixture.js";

let fx: GitFixture;
let ws: Workspaces;
const DAY = 86_400_000;
const NOW = Date.parse("2026-12-02T12:00:00Z");
const slot = (runId: string) => ({ runId, workflow: "review", workspace: "main", slot: "app" });

beforeEach(async () => {
  fx = makeGitFixture();
  ws = createWorkspaces(readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot }));
  for (const id of ["running", "recent", "old", "deleted", "silent"])
    await ws.attach({ ...slot(id), url: fx.app });
});
afterEach(() => fx.cleanup());

describe("the Worktree clean-up (issue 28 §6)", () => {
  it("removes only on positive knowledge: deleted, or settled past JR2_WORKTREE_KEEP; never a running run or one without an answer", async () => {
    writeFileSync(join(fx.workRoot, "old", "main", "app", "unsaved.txt"), "keep me\n");
    const answers: Record<string, Awaited<ReturnType<RunStateSource>>> = {
      running: { state: "running" },
      recent: { state: "settled", settledAt: new Date(NOW - DAY / 2).toISOString() },
      old: { state: "settled", settledAt: new Date(NOW - 2 * DAY).toISOString() },
      deleted: { state: "deleted" },
      silent: undefined, // the Orchestrator did not answer
    };
    const result = await sweepWorktrees({
      workspaces: ws,
      runState: async (runId) => answers[runId],
      keepMs: DAY,
      now: () => NOW,
    });
    const path = (id: string) => join(fx.workRoot, id, "main", "app");
    expect(result.removed.sort()).toEqual([path("deleted"), path("old")].sort());
    expect(result.unanswered).toEqual(["silent"]);
    for (const id of ["running", "recent", "silent"]) expect(existsSync(path(id)), id).toBe(true);
    for (const id of ["old", "deleted"]) expect(existsSync(path(id)), id).toBe(false);
    // Rescued first: the uncommitted file is in the run's repository.
    const repo = (await ws.record(slot("old")))?.repo as string;
    expect(userGit(repo, "show", "refs/jr2/old/before-remove-1:unsaved.txt")).toBe("keep me");
    // An Orchestrator that throws is no answer either.
    const again = await sweepWorktrees({
      workspaces: ws,
      runState: async () => {
        throw new Error("unreachable");
      },
      keepMs: 0,
      now: () => NOW,
    });
    expect(again.removed).toEqual([]);
  });
});

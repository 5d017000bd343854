/**
 * Regression (found by the Repo Slot SIGKILL soak, ADR-0217): a Harness restarted without a
 * durable store (`JR2_HARNESS_DATA_DIR` unset, or a new one) forgot every Repo Slot — its
 * registry lived in that store only — so the first pick after the restart was posted with no
 * commit and the Worktree's changes were never recorded (the run's branch lacked the second
 * Turn's work). Root cause: nothing on the node's disk named a run's slots. Now each record is
 * also kept beside the run's repository and read back when the store has none.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTurnWorkspace } from "../../src/workspace/turn-workspace.js";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture, userGit } from "../workspace/git-fixture.js";

let fx: GitFixture;
const slot = { runId: "run-1", workflow: "review", workspace: "main", slot: "app" };
const config = () =>
  readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot, JR2_MIRROR_FETCH_S: "0" });

beforeEach(() => {
  fx = makeGitFixture();
});
afterEach(() => fx.cleanup());

describe("a restarted Harness without its store still knows its Repo Slots", () => {
  it("commits the Worktree before a pick, diffs it and lists it, from a fresh in-memory registry", async () => {
    const before = createWorkspaces(config());
    const h = await before.attach({ ...slot, url: fx.app });
    // The restart: a new Workspaces on the same work root, its registry empty.
    const after = createTurnWorkspace(createWorkspaces(config()));
    writeFileSync(join(h.path, "after-restart.txt"), "work done after the restart\n");
    const commit = await after.commitAt(join(h.path, "src"), { agent: "coder", state: "s", pick: "finish" });
    const repo = join(fx.workRoot, ".repos", "run-1", "main", "app.git");
    const head = userGit(repo, "rev-parse", "refs/heads/jr2/review/run-1");
    expect(commit).toEqual({ "main/app": head });
    expect(head).not.toBe(h.base);
    expect(userGit(repo, "show", `${head}:after-restart.txt`)).toBe("work done after the restart");
    expect(await after.expandPrompt("{{diff repos.app}}", "run-1")).toContain("+work done after the restart");
    expect(await after.lostAt(h.path)).toBeUndefined();
  });
});

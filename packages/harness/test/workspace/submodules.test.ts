import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type Workspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture, userGit } from "./git-fixture.js";

/**
 * A Repo Slot's `submodules` option (ADR-0216), on real repositories: by default (`"skip"`) a
 * submodule is an empty directory in the Worktree, as after `git clone` without
 * `--recurse-submodules`, and the handle names it; `"refuse"` fails the attach naming every
 * submodule, before any run repository or Worktree is made; a repository without submodules
 * attaches under either.
 */
let fx: GitFixture;
let ws: Workspaces;
const slot = { runId: "run-1", workflow: "review", workspace: "main", slot: "app" };

beforeEach(() => {
  fx = makeGitFixture();
  ws = createWorkspaces(
    readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot, JR2_MIRROR_FETCH_S: "0" }),
  );
});
afterEach(() => fx.cleanup());

/** Records gitlinks in the user's repository, as `git submodule add` would (no network). */
function addSubmodules(...paths: string[]): void {
  const sha = userGit(fx.app, "rev-parse", "HEAD");
  for (const p of paths) userGit(fx.app, "update-index", "--add", "--cacheinfo", `160000,${sha},${p}`);
  userGit(fx.app, "commit", "--quiet", "-m", "submodules");
}

describe("Repo Slot submodules", () => {
  it("skip (the default): each submodule is an empty directory and the handle names them", async () => {
    addSubmodules("vendor/lib", "third_party/zlib");
    const h = await ws.attach({ ...slot, url: fx.app });
    expect(h.submodules).toEqual(["third_party/zlib", "vendor/lib"]);
    expect(readdirSync(join(h.path, "vendor", "lib"))).toEqual([]);
    expect(existsSync(join(h.path, "README.md"))).toBe(true);
    // The gitlinks stay in the branch as the user's repository has them.
    const repo = (await ws.record(slot))?.repo as string;
    expect(userGit(repo, "ls-tree", "HEAD", "vendor/")).toMatch(/^160000 commit [0-9a-f]{40}\tvendor\/lib$/);
  });

  it("refuse: the attach fails naming the submodules, and nothing is made for the run", async () => {
    addSubmodules("vendor/lib");
    const refused = ws.attach({ ...slot, url: fx.app, submodules: "refuse" });
    await expect(refused).rejects.toMatchObject({
      code: "JR2_ERR_WORKSPACE_SUBMODULES_REFUSED",
      fields: { slot: "app", submodules: ["vendor/lib"] },
    });
    await expect(refused).rejects.toThrow(/has submodules `vendor\/lib` and says `submodules: "refuse"`/);
    expect(existsSync(join(fx.workRoot, "run-1"))).toBe(false);
    expect(existsSync(join(fx.workRoot, ".repos", "run-1"))).toBe(false);
    expect(await ws.record(slot)).toBeUndefined();
  });

  it("a repository without submodules attaches under refuse, and its handle names none", async () => {
    const h = await ws.attach({ ...slot, url: fx.app, submodules: "refuse" });
    expect(h.submodules).toBeUndefined();
    expect(existsSync(join(h.path, "src", "index.ts"))).toBe(true);
  });
});

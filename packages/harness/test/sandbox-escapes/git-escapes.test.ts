import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type Workspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture, userGit } from "../workspace/git-fixture.js";

/**
 * The escape suite's git cases (issue 28 "Hardened git"): what a Working tool could plant in
 * the Worktree, or in the repository were it reachable, never runs when jr2's git commits,
 * diffs, resets or pushes; and one run cannot read another run's branch. Each plant writes a
 * marker file when it runs; the assertion is that the marker never appears.
 */
let fx: GitFixture;
let ws: Workspaces;
const slot = (runId: string) => ({ runId, workflow: "review", workspace: "main", slot: "app" });

beforeEach(() => {
  fx = makeGitFixture();
  ws = createWorkspaces(
    readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot, JR2_MIRROR_FETCH_S: "0" }),
  );
});
afterEach(() => fx.cleanup());

function plantScript(path: string, marker: string): void {
  writeFileSync(path, `#!/bin/sh\necho ran > '${marker}'\nexit 0\n`);
  chmodSync(path, 0o755);
}

/** Every operation jr2's git does on a slot, each of which would trigger a plant that worked. */
async function exercise(runId: string, path: string): Promise<void> {
  writeFileSync(join(path, "change.txt"), `${Date.now()}\n`);
  const c = await ws.commit({ ...slot(runId), agent: "coder", state: "s", pick: "submit" });
  await ws.diff(slot(runId));
  await ws.checkoutAt({ ...slot(runId), commit: c.commit });
  await ws.remove({ runId });
  await ws.checkoutAt({ ...slot(runId), commit: c.commit });
}

describe("git escapes: none of the plants runs, no other run is readable", () => {
  it("a hook planted in the run's repository (pre-commit, post-commit, post-checkout, reference-transaction) never runs", async () => {
    const h = await ws.attach({ ...slot("run-1"), url: fx.app });
    const repo = (await ws.record(slot("run-1")))?.repo as string;
    const marker = join(fx.dir, "hook-ran");
    mkdirSync(join(repo, "hooks"), { recursive: true });
    for (const hook of [
      "pre-commit",
      "post-commit",
      "post-checkout",
      "reference-transaction",
      "post-index-change",
    ])
      plantScript(join(repo, "hooks", hook), marker);
    await exercise("run-1", h.path);
    expect(existsSync(marker)).toBe(false);
  });

  it("an fsmonitor, a filter driver and an external diff in the repository's config never run", async () => {
    const h = await ws.attach({ ...slot("run-1"), url: fx.app });
    const repo = (await ws.record(slot("run-1")))?.repo as string;
    const marker = join(fx.dir, "config-ran");
    const script = join(fx.dir, "evil.sh");
    plantScript(script, marker);
    userGit(repo, "config", "core.fsmonitor", script);
    userGit(repo, "config", "diff.external", script);
    userGit(repo, "config", "filter.evil.clean", script);
    userGit(repo, "config", "filter.evil.smudge", script);
    userGit(repo, "config", "core.sshCommand", script);
    writeFileSync(join(h.path, ".gitattributes"), "* filter=evil diff=evil\n");
    userGit(repo, "config", "diff.evil.textconv", script);
    await exercise("run-1", h.path);
    expect(existsSync(marker)).toBe(false);
    // jr2 wrote its own config back before each operation: the plants are gone.
    expect(readFileSync(join(repo, "config"), "utf8")).not.toContain(script);
  });

  it("a rewritten .git file in the Worktree (pointing at a planted repository with hooks) is never followed", async () => {
    const h = await ws.attach({ ...slot("run-1"), url: fx.app });
    const marker = join(fx.dir, "gitfile-ran");
    const evil = join(fx.dir, "evil.git");
    userGit(fx.dir, "init", "--quiet", "--bare", evil);
    plantScript(join(evil, "hooks", "pre-commit"), marker);
    userGit(evil, "config", "core.fsmonitor", join(evil, "hooks", "pre-commit"));
    writeFileSync(join(h.path, ".git"), `gitdir: ${evil}\n`);
    writeFileSync(join(h.path, "x.txt"), "x\n");
    const c = await ws.commit({ ...slot("run-1"), agent: "coder", state: "s" });
    expect(existsSync(marker)).toBe(false);
    // The commit went into the run's repository, not the planted one.
    const repo = (await ws.record(slot("run-1")))?.repo as string;
    expect(userGit(repo, "rev-parse", "refs/heads/jr2/review/run-1")).toBe(c.commit);
    expect(userGit(evil, "for-each-ref")).toBe("");
  });

  it("a config.worktree turning on worktreeConfig with an fsmonitor never runs", async () => {
    const h = await ws.attach({ ...slot("run-1"), url: fx.app });
    const repo = (await ws.record(slot("run-1")))?.repo as string;
    const marker = join(fx.dir, "worktree-config-ran");
    const script = join(fx.dir, "evil.sh");
    plantScript(script, marker);
    userGit(repo, "config", "extensions.worktreeConfig", "true");
    writeFileSync(
      join(repo, "config.worktree"),
      `[core]\n\tfsmonitor = ${script}\n\thooksPath = ${fx.dir}\n`,
    );
    plantScript(join(fx.dir, "pre-commit"), marker);
    await exercise("run-1", h.path);
    expect(existsSync(marker)).toBe(false);
  });

  it("another run's branch is not readable: `git show jr2/review/run-1` from run-2's Worktree and repository fails", async () => {
    const h1 = await ws.attach({ ...slot("run-1"), url: fx.app });
    writeFileSync(join(h1.path, "secret-plan.txt"), "run-1 only\n");
    const c = await ws.commit({ ...slot("run-1"), agent: "coder", state: "s" });
    const h2 = await ws.attach({ ...slot("run-2"), url: fx.app });
    const repo2 = (await ws.record(slot("run-2")))?.repo as string;
    expect(() => userGit(h2.path, "show", "jr2/review/run-1")).toThrow();
    expect(() => userGit(repo2, "show", `${c.commit}:secret-plan.txt`)).toThrow();
    // The shared mirror holds the remote's refs only, never a run's.
    const mirrors = join(fx.workRoot, ".mirrors");
    const repos = readdirSync(mirrors).filter((n) => n.endsWith(".git"));
    expect(repos).toHaveLength(1);
    expect(userGit(join(mirrors, repos[0] as string), "for-each-ref", "--format=%(refname)")).toBe(
      "refs/heads/main",
    );
  });
});

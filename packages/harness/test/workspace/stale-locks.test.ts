/**
 * What a Harness SIGKILLed mid-git leaves (ADR-0223): git's own lock files in the run's
 * repository, the rescue's private index lock, and the slot record's temporary copy. Planted
 * here by hand, as a killed git leaves them; a Harness started again on the same work root
 * removes them before its first operation on the slot, says so, and the run's next git works.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type Workspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture, userGit } from "./git-fixture.js";

let fx: GitFixture;
const slot = (runId: string) => ({ runId, workflow: "review", workspace: "main", slot: "app" });

function start(warned: { msg: string; fields?: Record<string, unknown> }[] = []): Workspaces {
  return createWorkspaces(
    readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot, JR2_MIRROR_FETCH_S: "0" }),
    { warn: (msg, fields) => warned.push({ msg, ...(fields ? { fields } : {}) }) },
  );
}

function plant(path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "");
  return path;
}

beforeEach(() => {
  fx = makeGitFixture();
});
afterEach(() => fx.cleanup());

describe("a Harness killed mid-git (ADR-0223)", () => {
  it("the next start removes the stale locks and temporary files of a run's slot, says which, and its next commit succeeds", async () => {
    const before = start();
    const h = await before.attach({ ...slot("run-1"), url: fx.app });
    const { repo } = (await before.record(slot("run-1")))!;
    const beside = dirname(repo);
    // As a SIGKILL during `git add`, an update-ref, a rescue and a record write leaves them.
    const stale = [
      plant(join(repo, "index.lock")),
      plant(join(repo, "HEAD.lock")),
      plant(join(repo, "refs/heads/jr2/review/run-1.lock")),
      plant(join(beside, ".app.retry-1.index.lock")),
      plant(join(beside, ".retry-1.index.lock")),
      plant(join(beside, "app.json.4194999-3.tmp")),
    ];
    // Another slot's rescue index in the same workspace is not this slot's to remove.
    const other = plant(join(beside, ".docs.retry-1.index.lock"));
    writeFileSync(join(h.path, "after-restart.txt"), "work\n");
    // Without the clean-up this commit fails: "Unable to create '…/index.lock': File exists".
    const warned: { msg: string; fields?: Record<string, unknown> }[] = [];
    const after = start(warned);
    const c = await after.commit({ ...slot("run-1"), agent: "coder", state: "implement", pick: "finish" });
    expect(c.created).toBe(true);
    expect(userGit(repo, "show", "--name-only", "--format=", c.commit)).toBe("after-restart.txt");
    expect(userGit(repo, "rev-parse", "refs/heads/jr2/review/run-1")).toBe(c.commit);
    for (const path of stale) expect(existsSync(path), path).toBe(false);
    expect(existsSync(other)).toBe(true);
    expect(warned).toEqual([
      {
        msg: "removed what a killed Harness left beside a Repo Slot's repository (ADR-0223)",
        fields: { slot: "run-1/main/app", removed: expect.arrayContaining(stale) },
      },
    ]);
    // A retry (a rescue, then a reset) works too, and nothing more is said.
    await after.checkoutAt({ ...slot("run-1"), commit: c.commit });
    expect(warned).toHaveLength(1);
  });

  it("a mirror's git lock files and its jr2 lock left by a killed fetch — even one naming this process's pid, as a restarted container's Harness has — do not stop the next attach", async () => {
    const before = start();
    await before.attach({ ...slot("run-1"), url: fx.app });
    const [name] = readdirSync(join(fx.workRoot, ".mirrors")).filter((n) => n.endsWith(".git"));
    const mirror = join(fx.workRoot, ".mirrors", name!);
    // As a SIGKILL mid-fetch leaves them: git's ref and packed-refs locks, and jr2's own lock
    // holding the killed Harness's pid, which the restarted one has again (pid 1 in its container).
    const stale = [plant(join(mirror, "refs/heads/main.lock")), plant(join(mirror, "packed-refs.lock"))];
    writeFileSync(`${mirror}.lock`, String(process.pid));
    const newer = fx.commitToApp({ "later.txt": "later\n" });
    const warned: { msg: string; fields?: Record<string, unknown> }[] = [];
    const after = start(warned);
    const started = Date.now();
    // Without the clean-up: a 10-minute wait for the lock, then git's "cannot lock ref 'refs/heads/main'".
    expect((await after.attach({ ...slot("run-2"), url: fx.app })).base).toBe(newer);
    expect(Date.now() - started).toBeLessThan(10_000);
    for (const path of stale) expect(existsSync(path), path).toBe(false);
    expect(warned).toContainEqual({
      msg: "removed the git lock files a killed fetch left in a mirror (ADR-0223)",
      fields: { mirror, removed: expect.arrayContaining(stale) },
    });
  });
});

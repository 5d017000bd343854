/**
 * The Harness's own git and a Worktree path a Working tool swapped for a symlink (ADR-0227), host
 * side: what the adversary's `slot-symlinks.mjs` did with the built Harness. Every operation that
 * runs git with `--work-tree`, makes folders or removes them refuses (`JR2_ERR_WORKSPACE_SYMLINK`)
 * and leaves the link's target as it was; the `.git` file is written without following a link.
 */
import {
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTurnWorkspace } from "../../src/workspace/turn-workspace.js";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type SlotHandle, type Workspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture } from "./git-fixture.js";

let fx: GitFixture;
let ws: Workspaces;
let h: SlotHandle;
let victim: string;
const slot = { runId: "run-1", workflow: "review", workspace: "main", slot: "app" };
const symlinkRefused = { code: "JR2_ERR_WORKSPACE_SYMLINK" };

beforeEach(async () => {
  fx = makeGitFixture();
  ws = createWorkspaces(
    readWorkspaceConfig({ JR2_WORK_ROOT: fx.workRoot, JR2_REPO_ROOTS: fx.repoRoot, JR2_MIRROR_FETCH_S: "0" }),
  );
  h = await ws.attach({ ...slot, url: fx.app });
  victim = join(fx.dir, "victim");
  mkdirSync(victim);
  writeFileSync(join(victim, "precious.txt"), "PRECIOUS host data\n");
});
afterEach(() => fx.cleanup());

describe("a Worktree swapped for a symlink to a host directory", () => {
  beforeEach(() => {
    renameSync(h.path, `${h.path}.orig`);
    symlinkSync(victim, h.path);
  });

  it("commit, retry and removal refuse naming the link; the directory keeps its files, none committed", async () => {
    const commit = ws.commit({ ...slot, agent: "a", state: "s" });
    await expect(commit).rejects.toMatchObject(symlinkRefused);
    await expect(commit).rejects.toThrow(`the symlink \`${h.path}\` (to \`${victim}\`)`);
    const base = (await ws.record(slot))!.base;
    await expect(ws.checkoutAt({ ...slot, commit: base })).rejects.toMatchObject(symlinkRefused);
    await expect(ws.remove({ runId: "run-1" })).rejects.toMatchObject(symlinkRefused);
    expect(readdirSync(victim)).toEqual(["precious.txt"]);
    expect(readFileSync(join(victim, "precious.txt"), "utf8")).toBe("PRECIOUS host data\n");
    expect((await ws.diff(slot)).files).toEqual([]);
    expect(lstatSync(h.path).isSymbolicLink()).toBe(true);
  });

  it("a Turn's commit at the slot is refused too, and the Turn's cwd check names the link", async () => {
    const tw = createTurnWorkspace(ws);
    await expect(tw.commitAt(h.path, { agent: "a", state: "s", pick: "done" })).rejects.toMatchObject(
      symlinkRefused,
    );
    const why = await tw.linkedAt(join(h.path, "sub"));
    expect(why).toMatch(/^JR2_ERR_WORKSPACE_SYMLINK: /);
    expect(why).toContain(`symlink \`${h.path}\``);
    expect(readdirSync(victim)).toEqual(["precious.txt"]);
  });

  it("removing the link lets a retry check the Worktree out again", async () => {
    rmSync(h.path);
    const base = (await ws.record(slot))!.base;
    const back = await ws.checkoutAt({ ...slot, commit: base });
    expect(lstatSync(back.path).isDirectory()).toBe(true);
    expect(readFileSync(join(back.path, "src/index.ts"), "utf8")).toBe("export const x = 1;\n");
  });
});

describe("the Worktree's .git file", () => {
  it("a symlink there is replaced on retry; the file it named is unchanged", async () => {
    const precious = join(victim, "precious.txt");
    rmSync(join(h.path, ".git"));
    symlinkSync(precious, join(h.path, ".git"));
    const c = await ws.commit({ ...slot, agent: "a", state: "s" });
    await ws.checkoutAt({ ...slot, commit: c.commit });
    expect(readFileSync(precious, "utf8")).toBe("PRECIOUS host data\n");
    expect(lstatSync(join(h.path, ".git")).isFile()).toBe(true);
    expect(readFileSync(join(h.path, ".git"), "utf8")).toMatch(/^gitdir: .*\/app\.git\n$/);
  });

  it("a hard link there (a second name of another file) is unlinked, not truncated", async () => {
    const precious = join(victim, "precious.txt");
    rmSync(join(h.path, ".git"));
    linkSync(precious, join(h.path, ".git"));
    await ws.checkoutAt({ ...slot, commit: (await ws.record(slot))!.base });
    expect(readFileSync(precious, "utf8")).toBe("PRECIOUS host data\n");
    expect(lstatSync(join(h.path, ".git")).nlink).toBe(1);
  });
});

describe("links the operator made", () => {
  it("a work root that is itself a symlink is the operator's: Turns and git there work", async () => {
    const linkedRoot = join(fx.dir, "work-link");
    symlinkSync(fx.workRoot, linkedRoot);
    const viaLink = createWorkspaces(
      readWorkspaceConfig({
        JR2_WORK_ROOT: linkedRoot,
        JR2_REPO_ROOTS: fx.repoRoot,
        JR2_MIRROR_FETCH_S: "0",
      }),
    );
    const two = await viaLink.attach({ ...slot, runId: "run-2", url: fx.app });
    writeFileSync(join(two.path, "new.txt"), "x\n");
    expect((await viaLink.commit({ ...slot, runId: "run-2", agent: "a", state: "s" })).created).toBe(true);
    expect(await createTurnWorkspace(viaLink).linkedAt(two.path)).toBeUndefined();
  });
});

/**
 * Symlinks a Working tool plants in its run's directory (ADR-0227). A real Harness Turn with the
 * sandbox ON runs the Agent's bash; a later Turn, and the Harness's own git, must not follow the
 * link it left: bwrap would bind the link's target read-write (another run's Worktree, any host
 * directory), and `--work-tree` through a link would commit, reset and clean another run's files.
 * The adversary's reproductions (issue "slot symlinks"), turned into what a user would notice:
 * the Turn is refused naming the link, the other run's files are neither read nor changed, the
 * file a `.git` link pointed at keeps its content.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type SlotHandle, type Workspaces } from "../../src/workspace/workspaces.js";
import { type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { harnessFor } from "../fixtures/harness.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../fixtures/scripted-upstream.js";
import { messagesOf } from "../fixtures/upstream-harness.js";
import { type GitFixture, makeGitFixture } from "../workspace/git-fixture.js";
import { noSandbox, probe, realSandbox } from "./escape-harness.js";

const ids = (runId: string, slot = "app") => ({ runId, workflow: "review", workspace: "main", slot });
const PRIVATE = "RUN-2 PRIVATE WORK\n";

describe.skipIf(noSandbox)("symlinks a Working tool plants (real bwrap, ADR-0227)", () => {
  let fx: GitFixture;
  let ws: Workspaces;
  let orch: FakeOrchestrator;
  let upstream: ScriptedUpstream;
  let h: ReturnType<typeof harnessFor>;
  let app: SlotHandle;
  let lib: SlotHandle;
  let other: SlotHandle;
  let secrets: string;
  let turns = 0;

  /** One Turn of run-1 at `cwd` whose model calls bash once: what the model read, or the failure. */
  async function bash(cwd: string, command: string): Promise<{ out?: string; failed?: string }> {
    const before = upstream.bodies.length;
    upstream.script([
      { sse: answer({ toolCalls: [{ name: "bash", arguments: JSON.stringify({ command }) }] }) },
      { sse: answer({ content: "noted" }) },
    ]);
    const { settlement } = await h.run(`run-1/coder/${++turns}`, {
      definition: { model: "sim", instructions: "i", workspace: "write" },
      cwd,
    });
    if (settlement.outcome !== "completed") {
      // Refused before the model was asked anything: no tool ran.
      expect(upstream.bodies.length).toBe(before);
      return { failed: String(settlement.error?.message) };
    }
    const next = upstream.bodies[before + 1];
    if (!next) throw new Error("the model was never told the tool's result");
    return {
      out: String(
        messagesOf(next)
          .filter((m) => m.role === "tool")
          .at(-1)?.content,
      ),
    };
  }

  /** Every byte the model server was ever sent. */
  const modelSaw = () => JSON.stringify(upstream.bodies);

  beforeAll(async () => {
    if (!probe.ok) throw new Error("no sandbox");
    fx = makeGitFixture();
    // The sandbox's uid resolves the binds' host paths itself: the temp tree must be traversable.
    chmodSync(fx.dir, 0o755);
    ws = createWorkspaces(
      readWorkspaceConfig({
        JR2_WORK_ROOT: fx.workRoot,
        JR2_REPO_ROOTS: fx.repoRoot,
        JR2_MIRROR_FETCH_S: "0",
      }),
    );
    app = await ws.attach({ ...ids("run-1", "app"), url: fx.app });
    lib = await ws.attach({ ...ids("run-1", "lib"), url: fx.app });
    other = await ws.attach({ ...ids("run-2", "app"), url: fx.app });
    writeFileSync(join(other.path, "run2-private.txt"), PRIVATE);
    secrets = join(fx.dir, "secrets");
    mkdirSync(secrets);
    writeFileSync(join(secrets, "git-token"), "TOKEN-THE-SANDBOX-MUST-NOT-READ\n", { mode: 0o644 });
    orch = await startFakeOrchestrator();
    upstream = await startScriptedUpstream();
    h = harnessFor(upstream, orch, { sandbox: realSandbox(), workspaces: ws });
  });
  afterAll(async () => {
    await h?.app.close();
    await upstream?.close();
    await orch?.close();
    fx?.cleanup();
  });

  it("a slot swapped for a link to another run's Worktree: the next Turn there is refused, and jr2's git does not commit, reset or clean through it", async () => {
    const wsDir = join(fx.workRoot, "run-1", "main");
    const swap = await bash(wsDir, `mv lib lib.orig && ln -s ${other.path} lib; echo swap=$?`);
    expect(swap.out).toContain("swap=0"); // the tool may make the link: what follows must not use it
    const next = await bash(lib.path, "cat run2-private.txt; echo PLANTED > from-run-1.txt; echo write=$?");
    expect(next.failed).toContain("JR2_ERR_WORKSPACE_SYMLINK");
    expect(next.failed).toContain(`symlink \`${lib.path}\``);
    expect(next.failed).toContain(other.path);
    // The Harness's git at the end of a Turn, a retry, the clean-up: each refused, naming the link.
    await expect(ws.commit({ ...ids("run-1", "lib"), agent: "coder", state: "s" })).rejects.toMatchObject({
      code: "JR2_ERR_WORKSPACE_SYMLINK",
    });
    const r = await ws.record(ids("run-1", "lib"));
    await expect(ws.checkoutAt({ ...ids("run-1", "lib"), commit: r!.base })).rejects.toMatchObject({
      code: "JR2_ERR_WORKSPACE_SYMLINK",
    });
    await expect(ws.remove({ runId: "run-1", workspace: "main", slot: "lib" })).rejects.toMatchObject({
      code: "JR2_ERR_WORKSPACE_SYMLINK",
    });
    // run-2's Worktree: nothing added, nothing changed, nothing deleted, nothing taken into run-1's branch.
    expect(existsSync(join(other.path, "from-run-1.txt"))).toBe(false);
    expect(readFileSync(join(other.path, "run2-private.txt"), "utf8")).toBe(PRIVATE);
    expect(readFileSync(join(other.path, "README.md"), "utf8")).toBe("# app\n");
    expect((await ws.diff(ids("run-1", "lib"))).files).toEqual([]);
    expect(modelSaw()).not.toContain("RUN-2 PRIVATE");
  });

  it("a link planted inside the Worktree (to another run's Worktree, to the token's folder): a Turn with its cwd there is refused", async () => {
    const plant = await bash(app.path, `ln -s ${other.path} web; ln -s ${secrets} sec; echo link=$?`);
    expect(plant.out).toContain("link=0");
    const web = await bash(join(app.path, "web"), "cat run2-private.txt; echo C-WRITE >> README.md");
    expect(web.failed).toContain("JR2_ERR_WORKSPACE_SYMLINK");
    expect(web.failed).toContain(`symlink \`${join(app.path, "web")}\``);
    const sec = await bash(join(app.path, "sec"), "cat git-token");
    expect(sec.failed).toContain("JR2_ERR_WORKSPACE_SYMLINK");
    expect(readFileSync(join(other.path, "README.md"), "utf8")).toBe("# app\n");
    expect(modelSaw()).not.toContain("TOKEN-THE-SANDBOX-MUST-NOT-READ");
    expect(modelSaw()).not.toContain("RUN-2 PRIVATE");
    // The links themselves are the run's own work: committed as links, their targets not read.
    await ws.commit({ ...ids("run-1", "app"), agent: "coder", state: "s" });
    const d = await ws.diff(ids("run-1", "app"));
    expect(d.text).not.toContain("RUN-2 PRIVATE");
    expect(d.text).not.toContain("TOKEN-THE-SANDBOX");
  });

  it("the Worktree's .git swapped for a symlink to another run's file: a retry rewrites the link, never the file", async () => {
    const target = join(other.path, "README.md");
    const plant = await bash(app.path, `rm .git && ln -s ${target} .git; echo link=$?`);
    expect(plant.out).toContain("link=0");
    const base = (await ws.record(ids("run-1", "app")))!.base;
    await ws.checkoutAt({ ...ids("run-1", "app"), commit: base });
    expect(readFileSync(target, "utf8")).toBe("# app\n");
    expect(lstatSync(join(app.path, ".git")).isFile()).toBe(true);
    expect(readFileSync(join(app.path, ".git"), "utf8")).toMatch(/^gitdir: .*run-1\/main\/app\.git\n$/);
  });
});

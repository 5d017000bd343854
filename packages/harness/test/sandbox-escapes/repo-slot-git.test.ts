/**
 * A Repo Slot's git inside the sandbox (issue 28 §2 "the mirror bound read-only into the
 * sandbox", ADR-0214): a real Harness Turn with the sandbox ON runs the Agent's bash in its
 * Worktree under bubblewrap. Read-only git works there (`git status`, `git log`, `git diff`,
 * `git show` of the base); every write to git's state is refused (the run's repository and the
 * mirror's objects are read-only binds); the credential-holding repository, the token file,
 * the mirror's config and refs, and another run's repository are not there at all.
 */
import { chmodSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type SlotHandle, type Workspaces } from "../../src/workspace/workspaces.js";
import { type FakeOrchestrator, startFakeOrchestrator } from "../fixtures/fake-orchestrator.js";
import { harnessFor } from "../fixtures/harness.js";
import { answer, type ScriptedUpstream, startScriptedUpstream } from "../fixtures/scripted-upstream.js";
import { messagesOf } from "../fixtures/upstream-harness.js";
import { type GitFixture, makeGitFixture, userGit } from "../workspace/git-fixture.js";
import { noSandbox, probe, realSandbox } from "./escape-harness.js";

const slot = (runId: string) => ({ runId, workflow: "review", workspace: "main", slot: "app" });

describe.skipIf(noSandbox)("a Repo Slot's git inside the sandbox (real bwrap)", () => {
  let fx: GitFixture;
  let ws: Workspaces;
  let orch: FakeOrchestrator;
  let upstream: ScriptedUpstream;
  let h: ReturnType<typeof harnessFor>;
  let one: SlotHandle;
  let mirror: string;
  let publish: string;
  let tokenFile: string;
  let turns = 0;

  /** One bash call in run-1's Worktree, through a real Turn; answers what the model read. */
  async function bash(command: string): Promise<string> {
    const before = upstream.bodies.length;
    upstream.script([
      { sse: answer({ toolCalls: [{ name: "bash", arguments: JSON.stringify({ command }) }] }) },
      { sse: answer({ content: "noted" }) },
    ]);
    const { settlement } = await h.run(`run-1/coder/${++turns}`, {
      definition: { model: "sim", instructions: "i", workspace: "write" },
      cwd: one.path,
    });
    if (settlement.outcome !== "completed")
      throw new Error(`Turn ${settlement.outcome}: ${settlement.error?.message}`);
    const next = upstream.bodies[before + 1];
    if (!next) throw new Error("the model was never told the tool's result");
    return String(
      messagesOf(next)
        .filter((m) => m.role === "tool")
        .at(-1)?.content,
    );
  }

  beforeAll(async () => {
    if (!probe.ok) throw new Error("no sandbox");
    fx = makeGitFixture();
    // The sandbox's uid resolves the binds' host paths itself: the temp tree must be traversable.
    chmodSync(fx.dir, 0o755);
    tokenFile = join(fx.dir, "token");
    writeFileSync(tokenFile, "TOKEN-NEVER-IN-THE-SANDBOX\n", { mode: 0o600 });
    ws = createWorkspaces(
      readWorkspaceConfig({
        JR2_WORK_ROOT: fx.workRoot,
        JR2_REPO_ROOTS: fx.repoRoot,
        JR2_MIRROR_FETCH_S: "0",
        JR2_GIT_TOKEN_FILE: tokenFile,
        JR2_GIT_TOKEN_HOSTS: "forge.example.com",
      }),
    );
    one = await ws.attach({ ...slot("run-1"), url: fx.app, pushUrl: fx.remote });
    writeFileSync(join(one.path, "feature.ts"), "export const feature = true;\n");
    await ws.commit({ ...slot("run-1"), agent: "coder", state: "coding", pick: "submit" });
    await ws.push(slot("run-1")); // makes the credential-holding repository under .publish/
    const two = await ws.attach({ ...slot("run-2"), url: fx.app });
    writeFileSync(join(two.path, "other-run.txt"), "run-2 only\n");
    await ws.commit({ ...slot("run-2"), agent: "coder", state: "coding" });
    const mirrors = join(fx.workRoot, ".mirrors");
    mirror = join(mirrors, readdirSync(mirrors).find((n) => n.endsWith(".git")) as string);
    const publishes = join(fx.workRoot, ".publish");
    publish = join(publishes, readdirSync(publishes)[0] as string);
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

  it("git status, log, diff and show work in the Worktree", async () => {
    const base = userGit(fx.app, "rev-parse", "HEAD");
    const out = await bash(
      [
        "echo '# changed in the sandbox' >> README.md",
        "git status --short; echo status=$?",
        "git log --format='%s|%an' -2; echo log=$?",
        "git diff --stat; echo diff=$?",
        `git show --stat --format=%s ${base} | head -3; echo show=$?`,
        "git rev-parse --abbrev-ref HEAD",
      ].join("\n"),
    );
    expect(out).toMatch(/^ M README\.md$/m);
    expect(out).toContain("status=0");
    // The coder's commit (made by jr2 in the run's repository) and the base (a mirror object).
    expect(out).toMatch(/^jr2: coder in coding picked submit\|jr2 coder$/m);
    expect(out).toMatch(/^initial\|user$/m);
    expect(out).toContain("log=0");
    expect(out).toMatch(/README\.md \| 1 \+/);
    expect(out).toContain("diff=0");
    expect(out).toContain("show=0");
    expect(out).toContain("jr2/review/run-1");
    expect(out).not.toMatch(/dubious ownership|not a git repository|unable to read/i);
  });

  it("writes to git's state are refused: commit, a new ref, a planted object or hook, the mirror's objects", async () => {
    const head = userGit(join(fx.workRoot, ".repos", "run-1", "main", "app.git"), "rev-parse", "HEAD");
    const repo = join(fx.workRoot, ".repos", "run-1", "main", "app.git");
    const out = await bash(
      [
        "git add -A 2>&1; echo add=$?",
        "git -c user.name=t -c user.email=t@t commit -qm sneaky 2>&1; echo commit=$?",
        "git branch sneaky 2>&1; echo branch=$?",
        `touch ${mirror}/objects/planted 2>&1; echo mirror=$?`,
        `touch ${repo}/hooks/pre-commit 2>&1; echo hook=$?`,
        `echo '[core]' >> ${repo}/config 2>&1; echo config=$?`,
      ].join("\n"),
    );
    for (const op of ["add", "commit", "branch", "mirror", "hook", "config"])
      expect(out).not.toMatch(new RegExp(`^${op}=0$`, "m"));
    expect(out).toMatch(/Read-only file system/);
    expect(existsSync(join(mirror, "objects", "planted"))).toBe(false);
    expect(existsSync(join(repo, "hooks", "pre-commit"))).toBe(false);
    expect(userGit(repo, "rev-parse", "HEAD")).toBe(head);
    expect(userGit(repo, "for-each-ref", "--format=%(refname)", "refs/heads/")).toBe(
      "refs/heads/jr2/review/run-1",
    );
  });

  it("the credential repository, the token, the mirror's config and refs, and run-2's repository are not visible", async () => {
    const out = await bash(
      [
        `ls ${publish} 2>&1; echo publish=$?`,
        `cat ${tokenFile} 2>&1; echo token=$?`,
        `ls ${mirror}; echo mirror=$?`,
        `ls ${join(fx.workRoot, ".repos")}; echo repos=$?`,
        `git --git-dir=${join(fx.workRoot, ".repos", "run-2", "main", "app.git")} log 2>&1; echo run2=$?`,
        "git log --all --format=%s; echo all=$?",
      ].join("\n"),
    );
    expect(out).toMatch(/^publish=2$/m);
    expect(out).not.toContain("TOKEN-NEVER-IN-THE-SANDBOX");
    expect(out).not.toMatch(/^token=0$/m);
    // The mirror shows its objects and nothing else (no config, refs, jr2-url).
    expect(out).toMatch(/^objects\nmirror=0$/m);
    expect(out).toMatch(/^run-1\nrepos=0$/m);
    expect(out).not.toMatch(/^run2=0$/m);
    // Every ref the tool's git sees is run-1's own: run-2's commit (no pick) is not among them.
    expect(out).toMatch(/^jr2: coder in coding picked submit\ninitial\nall=0$/m);
    expect(out).not.toMatch(/^jr2: coder in coding$/m);
  });
});

/**
 * The publish hook (issue 28 §5, ADR-0226) and the branch view's data (ADR-0225), on real git:
 * after a real push to a bare remote, the Harness runs the operator's script, which writes what
 * it received (environment and stdin) to a file; a failing or hanging hook fails nothing and its
 * status and last lines come back; the diff answer carries commit times, the count and the base's branch.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces, type Workspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture, userGit } from "./git-fixture.js";

let fx: GitFixture;
const slot = (runId: string) => ({ runId, workflow: "review", workspace: "main", slot: "app" });

function make(env: Record<string, string>): Workspaces {
  return createWorkspaces(
    readWorkspaceConfig({
      JR2_WORK_ROOT: fx.workRoot,
      JR2_REPO_ROOTS: fx.repoRoot,
      JR2_MIRROR_FETCH_S: "0",
      ...env,
    }),
    { env: { PATH: process.env.PATH, JR2_HARNESS_TOKEN: "never-to-the-hook", GH_TOKEN: "for-the-hook" } },
  );
}

/** A hook script: writes its environment's JR2_* and GH_TOKEN, its stdin, then prints and exits as told. */
function hookScript(tail: string): string {
  const path = join(fx.dir, "hook.sh");
  writeFileSync(
    path,
    `#!/bin/sh
out="${fx.dir}/received"
env | grep -E '^(JR2_|GH_TOKEN=)' | sort > "$out.env"
cat > "$out.json"
${tail}
`,
  );
  chmodSync(path, 0o755);
  return path;
}

async function attachAndCommit(ws: Workspaces, runId: string): Promise<string> {
  const h = await ws.attach({ ...slot(runId), url: fx.app, pushUrl: fx.remote });
  writeFileSync(join(h.path, "feature.txt"), "one\ntwo\n");
  return (await ws.commit({ ...slot(runId), agent: "coder", state: "implement", pick: "finish" })).commit;
}

beforeEach(() => {
  fx = makeGitFixture();
});
afterEach(() => fx.cleanup());

describe("the publish hook (ADR-0226)", () => {
  it("runs after the push with the branch, base, url, pushed commit and the run's summary, in env and on stdin", async () => {
    const ws = make({
      JR2_PUBLISH_HOOK: `${hookScript('echo "opening a pull request"\necho https://git.home/alice/app/pulls/7')} --draft`,
    });
    const commit = await attachAndCommit(ws, "run-1");
    const pushed = await ws.push({
      ...slot("run-1"),
      summary: {
        workflow: "review",
        title: "review: add feature.txt",
        text: "Picks:\n- implement#coder picked finish: $(rm -rf /)",
        finalState: "approved",
        pick: { agent: "reviewer", name: "approve", state: "review" },
      },
    });
    expect(userGit(fx.remote, "rev-parse", "jr2/review/run-1")).toBe(commit);
    expect(pushed.hook).toMatchObject({
      exit: 0,
      timedOut: false,
      tail: ["opening a pull request", "https://git.home/alice/app/pulls/7"],
      url: "https://git.home/alice/app/pulls/7",
    });
    const env = readFileSync(join(fx.dir, "received.env"), "utf8");
    expect(env).toContain("JR2_BRANCH=jr2/review/run-1\n");
    expect(env).toContain("JR2_BASE=main\n");
    expect(env).toContain(`JR2_BASE_COMMIT=${userGit(fx.app, "rev-parse", "HEAD")}\n`);
    expect(env).toContain(`JR2_COMMIT=${commit}\n`);
    expect(env).toContain(`JR2_URL=${fx.remote}\n`);
    expect(env).toContain("JR2_TITLE=review: add feature.txt\n");
    expect(env).toContain("GH_TOKEN=for-the-hook\n");
    // The approving pick and the state it ended the body in (newcomer review, session 10).
    expect(env).toContain("JR2_FINAL_STATE=approved\n");
    expect(env).toContain("JR2_PICK_AGENT=reviewer\n");
    expect(env).toContain("JR2_PICK=approve\n");
    // The Harness's own JR2_* (its token) never reaches the hook.
    expect(env).not.toContain("never-to-the-hook");
    const json = JSON.parse(readFileSync(join(fx.dir, "received.json"), "utf8")) as Record<string, unknown>;
    expect(json).toMatchObject({
      runId: "run-1",
      branch: "jr2/review/run-1",
      base: "main",
      commit,
      summary: "Picks:\n- implement#coder picked finish: $(rm -rf /)",
      finalState: "approved",
      pick: { agent: "reviewer", name: "approve", state: "review" },
    });
  });

  it("a failing hook fails nothing: the push stands and its exit and last lines come back", async () => {
    const ws = make({
      JR2_PUBLISH_HOOK: hookScript(
        'for i in $(seq 1 30); do echo "line $i"; done\necho "no token" >&2\nexit 3',
      ),
    });
    const commit = await attachAndCommit(ws, "run-2");
    const pushed = await ws.push(slot("run-2"));
    expect(pushed.commit).toBe(commit);
    expect(userGit(fx.remote, "rev-parse", "jr2/review/run-2")).toBe(commit);
    expect(pushed.hook?.exit).toBe(3);
    // The last 20 lines of stdout and stderr merged (their order across the two pipes is the OS's).
    expect(pushed.hook?.tail).toHaveLength(20);
    expect(pushed.hook?.tail).toContain("no token");
    expect(pushed.hook?.tail).toContain("line 30");
    expect(pushed.hook?.tail).not.toContain("line 10");
    // Without a summary from the Orchestrator (an older one), the hook still gets a title, and
    // the final state and pick set empty (a hook under `set -u` reads them safely).
    const env = readFileSync(join(fx.dir, "received.env"), "utf8");
    expect(env).toContain("JR2_TITLE=jr2 review run run-2\n");
    expect(env).toContain("JR2_FINAL_STATE=\n");
    expect(env).toContain("JR2_PICK=\n");
    expect(JSON.parse(readFileSync(join(fx.dir, "received.json"), "utf8"))).not.toHaveProperty("pick");
  });

  it("a NUL in the run's summary (an Agent's text) still runs the hook: U+FFFD in its environment, \\u0000 on stdin", async () => {
    const ws = make({ JR2_PUBLISH_HOOK: hookScript("exit 0") });
    await attachAndCommit(ws, "run-4");
    const pushed = await ws.push({
      ...slot("run-4"),
      summary: { workflow: "review", title: "t\u0000", text: "done\u0000" },
    });
    expect(pushed.hook?.exit).toBe(0);
    expect(readFileSync(join(fx.dir, "received.env"), "utf8")).toContain("JR2_TITLE=t\uFFFD\n");
    expect(JSON.parse(readFileSync(join(fx.dir, "received.json"), "utf8")).summary).toBe("done\u0000");
  });

  it("a hook past JR2_PUBLISH_HOOK_TIMEOUT_S is killed with its children, and says so", async () => {
    const ws = make({
      JR2_PUBLISH_HOOK: hookScript("echo started\nsleep 60 & wait"),
      JR2_PUBLISH_HOOK_TIMEOUT_S: "3",
    });
    await attachAndCommit(ws, "run-3");
    const pushed = await ws.push(slot("run-3"));
    expect(pushed.hook).toMatchObject({ exit: null, timedOut: true, tail: ["started"] });
    expect(pushed.hook?.ms).toBeGreaterThanOrEqual(3000);
    expect(pushed.hook?.ms).toBeLessThan(30_000);
  });

  it("no JR2_PUBLISH_HOOK: no hook, the answer as before", async () => {
    const ws = make({});
    const commit = await attachAndCommit(ws, "run-4");
    expect(await ws.push(slot("run-4"))).toEqual({ branch: "jr2/review/run-4", commit, url: fx.remote });
  });
});

describe("the branch view's data (ADR-0225)", () => {
  it("the diff answer carries each commit's time, the commit count, the base's branch and the URL", async () => {
    const ws = make({});
    const commit = await attachAndCommit(ws, "run-5");
    const d = await ws.diff(slot("run-5"));
    expect(d.commits).toEqual([
      {
        commit,
        author: "jr2 coder",
        subject: "jr2: coder in implement picked finish",
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    ]);
    expect(d.commitsTotal).toBe(1);
    expect(d.baseRef).toBe("main");
    expect(d.url).toBe(fx.app);
    expect(d.files).toEqual([{ path: "feature.txt", added: 2, removed: 0 }]);
  });
});

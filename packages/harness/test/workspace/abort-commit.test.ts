/**
 * An aborted Submission on a Repo Slot settles with the Worktree's commit (ADR-0219), with real
 * git: the abort waits for the run to stop, commits what the Turn wrote — the message naming the
 * run, the Turn's state and the Agent (ADR-0220) — and only then settles it, in admission order
 * with the queued one after. Without a Repo Slot an abort still settles at once (ADR-0159).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StreamEvent, SubmissionRequest } from "@jr2/wire";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { abortOpen } from "../../src/conversations/abort-commit.js";
import { newKvWaitTally } from "../../src/turn/kv-wait-tally.js";
import type { SeatSlot } from "../../src/turn/turn-deps.js";
import { createTurnWorkspace } from "../../src/workspace/turn-workspace.js";
import { readWorkspaceConfig } from "../../src/workspace/workspace-config.js";
import { createWorkspaces } from "../../src/workspace/workspaces.js";
import { type GitFixture, makeGitFixture, userGit } from "./git-fixture.js";

type Settled = Extract<StreamEvent, { type: "submission-settled" }>;

let fx: GitFixture;
beforeEach(() => {
  fx = makeGitFixture();
});
afterEach(() => fx.cleanup());

const req = (state?: string): SubmissionRequest =>
  ({ agent: "coder", kind: "task", prompt: "Code.", ...(state ? { state } : {}) }) as SubmissionRequest;

function conversation(cwd: string | undefined, running: Promise<void>) {
  const sub = (id: string, state?: string) => ({
    id,
    req: req(state),
    settled: false,
    abort: new AbortController(),
    kvWait: newKvWaitTally(),
  });
  const slot = { iid: "run-1/main/coder/1", hasWorkingTools: true, cwd } as SeatSlot;
  return {
    slot,
    queue: [sub("running", "implement"), sub("queued")],
    runningId: "running",
    running,
    closing: undefined as Promise<void> | undefined,
  };
}

describe("an abort on a Repo Slot", () => {
  it("waits for the run to stop, commits what it wrote, then settles with the commit; the queued one after it", async () => {
    const workspaces = createWorkspaces(
      readWorkspaceConfig({
        JR2_WORK_ROOT: fx.workRoot,
        JR2_REPO_ROOTS: fx.repoRoot,
        JR2_MIRROR_FETCH_S: "0",
      }),
    );
    const h = await workspaces.attach({
      runId: "run-1",
      workflow: "review",
      workspace: "main",
      slot: "app",
      url: fx.app,
    });
    let stop = () => {};
    // The run writes its last file as it stops, after the abort was asked for.
    const running = new Promise<void>((resolve) => {
      stop = () => {
        writeFileSync(join(h.path, "late.txt"), "written as the run stopped\n");
        resolve();
      };
    });
    const conv = conversation(h.path, running);
    const settled: Settled[] = [];
    let after = 0;
    const deps = { workspaces: createTurnWorkspace(workspaces), log: () => {} };
    expect(
      abortOpen(
        conv,
        deps,
        (_c, sub, s) => {
          sub.settled = true;
          settled.push(s);
        },
        () => after++,
      ),
    ).toBe(true);
    expect(conv.queue.every((s) => s.abort.signal.aborted)).toBe(true);
    expect(settled).toEqual([]);
    stop();
    await conv.closing;

    const repo = join(fx.workRoot, ".repos", "run-1", "main", "app.git");
    const head = userGit(repo, "rev-parse", "refs/heads/jr2/review/run-1");
    expect(settled.map((s) => [s.submissionId, s.outcome, s.commit])).toEqual([
      ["running", "aborted", { "main/app": head }],
      ["queued", "aborted", undefined],
    ]);
    expect(after).toBe(1);
    expect(userGit(repo, "show", `${head}:late.txt`)).toBe("written as the run stopped");
    expect(userGit(repo, "log", "-1", "--format=%an|%B", head)).toBe(
      "jr2 coder|jr2: coder in implement\n\nrun run-1, state implement, Agent coder",
    );
  });

  it("without a Repo Slot settles every open Submission at once", () => {
    const conv = conversation(undefined, new Promise<void>(() => {}));
    const settled: Settled[] = [];
    const deps = { workspaces: undefined, log: () => {} };
    expect(
      abortOpen(
        conv,
        deps,
        (_c, sub, s) => {
          sub.settled = true;
          settled.push(s);
        },
        () => {},
      ),
    ).toBe(true);
    expect(settled.map((s) => [s.submissionId, s.outcome])).toEqual([
      ["running", "aborted"],
      ["queued", "aborted"],
    ]);
    expect(conv.closing).toBeUndefined();
  });
});

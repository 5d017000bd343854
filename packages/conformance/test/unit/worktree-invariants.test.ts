/**
 * The Repo Slot invariants the crash harness's `worktree` phase and `bench:workspace-soak` count
 * (issue 28: 0 leaked Worktrees, 0 lost commits), on real git: a run laid out as the Harness
 * lays it out passes, and each kind of leak or loss is named.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkWorktrees, type GitFixture, makeGitFixture, type RunFacts, userGit } from "../../src/index.js";

const fixtures: GitFixture[] = [];
afterEach(() => {
  for (const f of fixtures.splice(0)) f.cleanup();
});

/** A settled run as the Harness leaves it: its repository, a jr2 commit on its branch, pushed, Worktree swept. */
function settledRun(runId = "run-1") {
  const fx = makeGitFixture();
  fixtures.push(fx);
  const repo = join(fx.workRoot, ".repos", runId, "review", "app.git");
  userGit(fx.dir, "clone", "--quiet", "--bare", fx.app, repo);
  const branch = `jr2/review/${runId}`;
  const base = userGit(repo, "rev-parse", "HEAD");
  const commit = userGit(repo, "commit-tree", `${base}^{tree}`, "-p", base, "-m", "jr2: coder picked finish");
  userGit(repo, "update-ref", `refs/heads/${branch}`, commit);
  userGit(repo, "push", "--quiet", fx.remote, `refs/heads/${branch}`);
  writeFileSync(join(repo, "..", "app.json"), JSON.stringify({ runId, removedAt: 1 }));
  const run: RunFacts = {
    runId,
    workflow: "review",
    status: "done",
    outcome: "succeeded",
    versions: [{ "review/app": base }, { "review/app": commit }],
    pushed: { "review/app": commit },
    deliveredPerTurn: { t1: 1, t2: 1 },
  };
  const check = (runs: RunFacts[] = [run]) =>
    checkWorktrees({
      workRoot: fx.workRoot,
      runs,
      swept: new Set(runs.map((r) => r.runId)),
      remote: fx.remote,
      mustPush: (r) => r.outcome === "succeeded",
    });
  return { fx, repo, branch, base, commit, run, check };
}

describe("checkWorktrees", () => {
  it("passes a settled, swept, pushed run", () => {
    const { check } = settledRun();
    const v = check();
    expect([v.leakedWorktrees, v.lostCommits, v.doubledPicks, v.unsettled]).toEqual([[], [], [], []]);
    expect(v.commitsChecked).toBe(2);
  });

  it("names a Worktree left after the clean-up, a live record, and a Worktree or repository of no run", () => {
    const { fx, repo, check } = settledRun();
    mkdirSync(join(fx.workRoot, "run-1", "review", "app"), { recursive: true });
    writeFileSync(join(repo, "..", "app.json"), JSON.stringify({ runId: "run-1" }));
    mkdirSync(join(fx.workRoot, "run-ghost", "review", "app"), { recursive: true });
    mkdirSync(join(fx.workRoot, ".repos", "run-orphan", "review"), { recursive: true });
    expect(check().leakedWorktrees).toEqual([
      "run-1: Worktree review/app left after the clean-up",
      "run-ghost: a run directory of no run (review/app)",
      "run-1: record review/app.json claims a Worktree after the clean-up",
      "run-orphan: a repository (.repos/run-orphan) of no run",
    ]);
  });

  it("names a swept run's emptied folder; a folder still holding a file is not a Worktree", () => {
    const { fx, check } = settledRun();
    mkdirSync(join(fx.workRoot, "run-1", "review"), { recursive: true });
    expect(check().leakedWorktrees).toEqual(["run-1: its emptied run folder left after the clean-up"]);
    writeFileSync(join(fx.workRoot, "run-1", "notes.txt"), "a plain workspace's file\n");
    expect(check().leakedWorktrees).toEqual([]);
  });

  it("names a recorded commit gone, a branch behind its record and a remote branch not the final commit", () => {
    const { fx, repo, branch, base, run, check } = settledRun();
    const gone = "f".repeat(40);
    expect(check([{ ...run, versions: [...run.versions, { "review/app": gone }] }]).lostCommits).toEqual([
      `run-1: recorded commit ${gone} of review/app is not in its repository`,
      `run-1: branch ${branch} of review/app is at ${run.pushed["review/app"]}, not at or after the recorded ${gone}`,
    ]);
    userGit(fx.remote, "update-ref", `refs/heads/${branch}`, base);
    const lost = check().lostCommits;
    expect(lost).toContain(
      `run-1: the remote's ${branch} is ${base}, the run's final commit ${run.pushed["review/app"]}`,
    );
    rmSync(repo, { recursive: true });
    expect(check().lostCommits).toContain(`run-1: slot review/app's repository is gone (${repo})`);
  });

  it("names a succeeded run that never pushed, a doubled pick and a run still running", () => {
    const { run, check } = settledRun();
    const v = check([
      { ...run, pushed: {} },
      { ...run, runId: "run-2", status: "running", versions: [], pushed: {}, deliveredPerTurn: { t: 2 } },
    ]);
    expect(v.lostCommits).toContain("run-1: succeeded, but its log records no push of jr2/review/run-1");
    expect(v.doubledPicks).toEqual(["run-2: Turn t delivered 2 picks"]);
    expect(v.unsettled).toEqual(["run-2"]);
  });
});

/**
 * The crash harness's `worktree` phase (issue 28's scale rule): Repo Slot runs of `review`
 * (examples/workflows) on a real sample repository and bare remote, on the real Orchestrator and
 * Harness (bwrap, real git) with model-sim. Each trial SIGKILLs one service at a step that writes:
 * - `orchestrator-pick`: the Orchestrator at `JR2_CRASH_AT=pick-delivered:1` — the coder's pick
 *   (and its commit) saved and delivered, the process dies;
 * - `harness-mid-turn`: the Harness while the coder's first model request is in flight (before
 *   the pick's commit; model-sim `latency`);
 * - `harness-gate`: the Harness while the merge Gate waits;
 * - `orchestrator-publish`, `harness-publish`: one of them 0–300 ms after the merge event (the
 *   push to the bare remote in flight);
 * - `harness-sweep`: the Harness 0–1.5 s after the run settled (the Worktree clean-up runs every
 *   second with `JR2_WORKTREE_KEEP=0`).
 * Each service is restarted on its port and data. Invariants after each trial (packages/
 * conformance's checkWorktrees over every run so far): the run settles `done` (merged, pushed);
 * 0 leaked Worktrees (the clean-up removed the Worktree of each settled run, no live record
 * left, no Worktree or repository without a run); 0 lost commits (each version's recorded commit
 * in the run's repository, the branch at or after the newest, the remote's branch the run's
 * final commit, the pushed commit the same); one pick per Turn.
 * Entry points: restore-crash.test.ts (CI: JR2_CRASH_WORKTREE_TRIALS, default one per kill) and
 * `pnpm crash` (same file).
 */
import { chmodSync, mkdirSync } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import {
  checkWorktrees,
  makeGitFixture,
  runFactsFromSqlite,
  type Stack,
  startStack,
} from "../../../conformance/src/index.js";
import { STORE_FILE } from "../../src/durability/store/sqlite.js";
import { unpackVersion } from "../../src/durability/store/version-codec.js";

/** Where a `worktree` trial kills. */
// In this order: the CI form's first three trials kill both services, mid-push, after a pick's
// commit and mid-clean-up (a Harness killed mid-Turn is also the conformance tier's repo-slots-harness-kill).
export const WORKTREE_KILLS = [
  "harness-publish",
  "orchestrator-pick",
  "harness-sweep",
  "harness-mid-turn",
  "orchestrator-publish",
  "harness-gate",
] as const;
export type WorktreeKill = (typeof WORKTREE_KILLS)[number];

const CODER = "worker:2+latency:400";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One trial's outcome. */
export interface WorktreeTrial {
  kill: WorktreeKill;
  /** The service was killed at its point (false: the run settled before it came). */
  killed: boolean;
  runId?: string;
  status: string;
  violations: string[];
}

/** The report of the phase. */
export interface WorktreeReport {
  trials: WorktreeTrial[];
  violations: string[];
  notStarted: number;
}

/**
 * Runs `trials` trials (kill points round-robin) on one stack and returns the report; never
 * throws for a violation (they are listed), only for a stack that does not start.
 */
export async function runWorktreeTrials(options: {
  repoRoot: string;
  trials: number;
  only?: readonly WorktreeKill[];
  log?: (line: string) => void;
  seed?: number;
  deadlineAt?: number;
  onStarted?: (stop: () => Promise<void>) => void;
}): Promise<WorktreeReport> {
  const say = options.log ?? (() => {});
  // The user's repository and a bare remote under a listed root (the fixture of the git tests).
  const fx = makeGitFixture("jr2-crash-worktree-");
  const { app: repo, remote, repoRoot: repos, workRoot: work } = fx;
  const dataDir = join(fx.dir, "data");
  mkdirSync(dataDir);
  chmodSync(work, 0o777);
  let rand = options.seed ?? 28;
  const random = () => {
    rand = (rand * 1103515245 + 12345) % 2 ** 31;
    return rand / 2 ** 31;
  };
  let stack: Stack;
  try {
    stack = await startStack("process", {
      repoRoot: options.repoRoot,
      workflowsDir: join(options.repoRoot, "examples/workflows"),
      models: (baseUrl) => ({
        coder: { baseUrl, id: CODER, contextWindow: 32768, maxTokens: 1024 },
        reviewer: { baseUrl, id: "script:request_changes,approve", contextWindow: 32768, maxTokens: 1024 },
      }),
      orchestratorEnv: { JR2_DATA_DIR: dataDir, JR2_WORK_ROOT: work },
      harnessEnv: {
        JR2_HARNESS_DATA_DIR: join(dataDir, "harness"),
        JR2_WORK_ROOT: work,
        JR2_REPO_ROOTS: repos,
        JR2_WORKTREE_KEEP: "0",
        JR2_WORKTREE_SWEEP_S: "1",
      },
    });
  } catch (error) {
    fx.cleanup();
    throw error;
  }
  let stopped: Promise<void> | undefined;
  const stopAll = () => {
    stopped ??= (async () => {
      await stack.close().catch(() => {});
      fx.cleanup();
    })();
    return stopped;
  };
  options.onStarted?.(stopAll);
  const api = apiOf(stack);
  const report: WorktreeReport = { trials: [], violations: [], notStarted: 0 };
  const rotation = options.only?.length ? [...options.only] : [...WORKTREE_KILLS];
  try {
    for (let i = 0; i < options.trials; i++) {
      if (options.deadlineAt !== undefined && Date.now() > options.deadlineAt) {
        report.notStarted = options.trials - i;
        break;
      }
      const kill = rotation[i % rotation.length]!;
      const t = await trial(stack, api, { kill, random, input: { repo, pushUrl: remote } });
      if (t.runId) {
        // The clean-up's turn: the settled run's Worktree goes within a few passes.
        const worktree = join(work, t.runId);
        for (let s = 0; s < 40 && (await exists(worktree)); s++) await sleep(250);
      }
      const db = new Database(join(dataDir, STORE_FILE), { readonly: true, fileMustExist: true });
      try {
        const runs = runFactsFromSqlite(db, unpackVersion);
        const swept = new Set(runs.filter((r) => r.status !== "running").map((r) => r.runId));
        const v = checkWorktrees({ workRoot: work, runs, swept, remote });
        t.violations.push(...v.unsettled.map((id) => `run ${id} never settled`));
        t.violations.push(...v.leakedWorktrees, ...v.lostCommits, ...v.doubledPicks);
      } finally {
        db.close();
      }
      report.trials.push(t);
      report.violations.push(...t.violations.map((v) => `trial ${i + 1} (${kill}): ${v}`));
      say(
        `worktree trial ${i + 1}: kill@${kill} ${t.killed ? "killed" : "not reached"} → ${t.status}${t.violations.length ? ` VIOLATIONS ${t.violations.join("; ")}` : ""}`,
      );
    }
    return report;
  } finally {
    await stopAll();
  }
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

type Api = ReturnType<typeof apiOf>;
/** What the trial reads of `GET /runs/:runId`. */
interface RunView {
  status: string;
  gates?: Array<{ id: string; acceptsNow: string[] }>;
}

/** The Orchestrator's API, waiting out a killed or shedding Orchestrator. */
function apiOf(stack: Stack) {
  return async (path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> => {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${stack.orchestratorUrl}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${stack.instanceToken}`, "content-type": "application/json" },
        });
        const body = await res.json().catch(() => null);
        if (res.status !== 503 || attempt >= 60) return { status: res.status, body };
      } catch {
        if (attempt >= 120) return { status: 0, body: null };
      }
      await sleep(250);
    }
  };
}

/** One trial: start the run, kill at `kill`, restart, drive the run to its end. */
async function trial(
  stack: Stack,
  api: Api,
  plan: { kill: WorktreeKill; random: () => number; input: { repo: string; pushUrl: string } },
): Promise<WorktreeTrial> {
  const { kill } = plan;
  const start = () =>
    api("/workflows/review/runs", {
      method: "POST",
      body: JSON.stringify({ input: { ...plan.input, task: "a hello() function in hello.js" } }),
    });
  const seqStart = (await stack.requests()).length;
  const before = new Set(((await api("/runs")).body as Array<{ runId: string }>).map((r) => r.runId));
  let pickKilled = false;
  if (kill === "orchestrator-pick") {
    // Read before the kill (as crash-trial.ts does): a dead process's output is counted once after.
    const logStart = stack.orchestratorLog().length;
    await stack.killOrchestrator();
    await stack.startOrchestrator({ JR2_CRASH_AT: "pick-delivered:1" });
    void start();
    for (let i = 0; i < 600 && !pickKilled; i++) {
      pickKilled = stack.orchestratorLog().slice(logStart).includes("jr2 crash-point pick-delivered");
      if (!pickKilled) await sleep(100);
    }
    await stack.killOrchestrator();
    await stack.startOrchestrator();
  }
  const runId =
    kill === "orchestrator-pick"
      ? ((await api("/runs")).body as Array<{ runId: string }>)
          .map((r) => r.runId)
          .find((id) => !before.has(id))
      : ((await start()).body as { runId?: string } | null)?.runId;
  if (!runId) return { kill, killed: true, status: "never-started", violations: ["the run was lost"] };
  const view = async () => (await api(`/runs/${runId}`)).body as RunView | null;
  const gateOpen = async () =>
    (await view())?.gates?.some((g) => g.id === "merge_gate" && g.acceptsNow.includes("merge")) ?? false;
  const merge = () =>
    api(`/runs/${runId}/gates/merge_gate/events`, {
      method: "POST",
      body: JSON.stringify({ type: "merge" }),
    });
  const until = async (what: () => Promise<boolean>) => {
    for (let i = 0; i < 1200; i++) {
      if (await what()) return true;
      if ((await view())?.status !== "running") return false;
      await sleep(50);
    }
    return false;
  };
  let killed = kill === "orchestrator-pick" ? pickKilled : kill === "harness-sweep";
  if (kill === "harness-mid-turn") {
    const coderRequest = async () => (await stack.requests()).slice(seqStart).some((r) => r.model === CODER);
    killed = await until(coderRequest);
    if (killed) await stack.restartHarness();
  } else if (kill === "harness-gate") {
    killed = await until(gateOpen);
    if (killed) await stack.restartHarness();
  } else if (kill === "orchestrator-publish" || kill === "harness-publish") {
    killed = await until(gateOpen);
    if (killed) {
      await merge();
      await sleep(plan.random() * 300);
      if (kill === "harness-publish") await stack.restartHarness();
      else {
        await stack.killOrchestrator();
        await stack.startOrchestrator();
      }
    }
  }
  // Drive to the end: answer the merge Gate as a person would.
  let status = "hanging";
  for (let i = 0; i < 2400; i++) {
    const v = await view();
    if (v && v.status !== "running") {
      status = v.status;
      break;
    }
    if (v?.gates?.some((g) => g.id === "merge_gate" && g.acceptsNow.includes("merge"))) await merge();
    await sleep(50);
  }
  if (kill === "harness-sweep") {
    await sleep(plan.random() * 1500);
    await stack.restartHarness();
  }
  const violations = status === "done" ? [] : [`the run ended ${status}, not done (merged and pushed)`];
  return { kill, killed, runId, status, violations };
}

// `pnpm bench:workspace-soak` — issue 28's scale rule: SOAK_RUNS (1,000) Repo Slot runs of
// `review` (examples/workflows, on a Repo Slot) on a real sample repository with a bare remote, SOAK_CONCURRENCY
// at a time, through ONE Orchestrator (`jr2 serve`, SQLite) and ONE Harness (bwrap, its data dir)
// on model-sim, while both are SIGKILLed at random moments (one every ~SOAK_KILL_EVERY_S seconds,
// Orchestrator or Harness at even odds, each restarted on its port and data) and the Worktree
// clean-up runs every SOAK_SWEEP_S with JR2_WORKTREE_KEEP=SOAK_KEEP_S. After the last run settles
// and the clean-up had its time, it counts (packages/conformance's checkWorktrees): leaked
// Worktrees, lost commits, doubled picks, runs never settled. Writes bench/results/workspace-soak.json;
// exits 1 when any count is not 0. Never in .ci/run (the smoke runs it at 5 runs and 1 kill).
// Knobs: SOAK_RUNS (1000), SOAK_CONCURRENCY (8), SOAK_KILL_EVERY_S (20), SOAK_KILLS (no bound),
// SOAK_KEEP_S (5), SOAK_SWEEP_S (5), SOAK_SEED (28), SOAK_MAX_MINUTES (no bound: past it no run
// starts; the report counts the runs done), BENCH_VERBOSE=1.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureSampleRepo } from "../scripts/sample-repo.mjs";
import { printTable, ROOT, writeResults } from "./lib.mjs";
import { startService, stop } from "./soak-services.mjs";

const RUNS = Number(process.env.SOAK_RUNS ?? 1000);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 8);
const KILL_EVERY_S = Number(process.env.SOAK_KILL_EVERY_S ?? 20);
const MAX_KILLS = Number(process.env.SOAK_KILLS ?? Number.POSITIVE_INFINITY);
const KEEP_S = Number(process.env.SOAK_KEEP_S ?? 5);
const SWEEP_S = Number(process.env.SOAK_SWEEP_S ?? 5);
const MAX_MINUTES = Number(process.env.SOAK_MAX_MINUTES ?? Number.POSITIVE_INFINITY);
const RUN_TIMEOUT_MS = 10 * 60_000;

const { mintSandboxToken } = await import(join(ROOT, "packages/orchestrator/dist/index.js"));
const { unpackVersion } = await import(
  join(ROOT, "packages/orchestrator/dist/durability/store/version-codec.js")
);
const { checkWorktrees, runFactsFromSqlite } = await import(join(ROOT, "packages/conformance/dist/index.js"));
const Database = createRequire(join(ROOT, "packages/orchestrator/package.json"))("better-sqlite3");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let seed = Number(process.env.SOAK_SEED ?? 28);
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const freePort = () =>
  new Promise((resolve, reject) => {
    const s = createServer().on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const base = mkdtempSync(join(tmpdir(), "jr2-workspace-soak-"));
const dataDir = join(base, "data");
const work = join(base, "work");
const { repo, remote } = ensureSampleRepo(join(base, "repos"));
mkdirSync(dataDir);
mkdirSync(work, { mode: 0o777 });
const secrets = {
  instance: randomBytes(16).toString("hex"),
  harness: randomBytes(16).toString("hex"),
  sandboxKey: randomBytes(16).toString("hex"),
};
const services = { sim: undefined, orchestrator: undefined, harness: undefined };
const tally = { kills: { orchestrator: 0, harness: 0 }, starts: {}, outcomes: {} };
try {
  services.sim = await startService(
    "model-sim",
    "packages/model-sim/dist/main.js",
    ["--port", "0"],
    {},
    /model-sim listening on (http:\/\/\S+)/,
    false,
  );
  const baseUrl = `${services.sim.url}/v1`;
  const models = {
    coder: { baseUrl, id: "worker:2", contextWindow: 32768, maxTokens: 1024 },
    reviewer: { baseUrl, id: "script:request_changes,approve", contextWindow: 32768, maxTokens: 1024 },
  };
  const [orchPort, harnessPort] = [await freePort(), await freePort()];
  const orchestratorUrl = `http://127.0.0.1:${orchPort}`;
  const start = {
    orchestrator: () =>
      startService(
        "orchestrator",
        "packages/orchestrator/dist/cli/main.js",
        ["serve"],
        {
          JR2_PORT: String(orchPort),
          JR2_HOST: "127.0.0.1",
          JR2_DATA_DIR: dataDir,
          JR2_WORK_ROOT: work,
          JR2_WORKFLOWS_DIR: join(ROOT, "examples/workflows"),
          JR2_INSTANCE_TOKEN: secrets.instance,
          JR2_SANDBOX_KEY: secrets.sandboxKey,
          JR2_HARNESS_URL: `http://127.0.0.1:${harnessPort}`,
          JR2_HARNESS_TOKEN: secrets.harness,
          // The box is shared: shed only past 15 s of lag, as the test stacks do.
          JR2_SHED_LAG_MS: "15000",
        },
        /jr2 orchestrator listening on (http:\/\/\S+)/,
        false,
      ),
    harness: () =>
      startService(
        "harness",
        "packages/harness/dist/main.js",
        [],
        {
          JR2_HARNESS_PORT: String(harnessPort),
          JR2_HARNESS_HOST: "127.0.0.1",
          JR2_ORCHESTRATOR_URL: orchestratorUrl,
          JR2_MODELS: JSON.stringify(models),
          JR2_HARNESS_TOKEN: secrets.harness,
          JR2_SANDBOX_TOKEN: mintSandboxToken(secrets.sandboxKey, "instance"),
          JR2_HARNESS_DATA_DIR: join(dataDir, "harness"),
          JR2_WORK_ROOT: work,
          JR2_REPO_ROOTS: join(base, "repos"),
          JR2_WORKTREE_KEEP: String(KEEP_S),
          JR2_WORKTREE_SWEEP_S: String(SWEEP_S),
        },
        /jr2 harness listening on (http:\/\/\S+)/,
        false,
      ),
  };
  services.orchestrator = await start.orchestrator();
  services.harness = await start.harness();

  /** The API, waiting out a killed Orchestrator (and a shed request) as a person's client would. */
  const api = async (path, init = {}, headers = {}) => {
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await fetch(`${orchestratorUrl}${path}`, {
          ...init,
          headers: {
            authorization: `Bearer ${secrets.instance}`,
            "content-type": "application/json",
            ...headers,
          },
        });
        const body = await res.json().catch(() => null);
        if (res.status !== 503 || attempt > 120) return { status: res.status, body };
      } catch {
        if (attempt > 600) return { status: 0, body: null };
      }
      await sleep(250);
    }
  };

  /** One run to its end: started (idempotent: a start cut by a kill is asked again), the merge Gate answered. */
  const runIds = [];
  async function oneRun() {
    const key = randomBytes(12).toString("hex");
    const input = { repo, pushUrl: remote, task: "a hello() function in hello.js" };
    let started;
    for (let i = 0; i < 20; i++) {
      started = await api(
        "/workflows/review/runs",
        { method: "POST", body: JSON.stringify({ input }) },
        { "idempotency-key": key },
      );
      if (started.status === 200 || started.status === 201) break;
      await sleep(500);
    }
    if (started.status !== 200 && started.status !== 201) return `start ${started.status}`;
    const { runId } = started.body;
    if (!runIds.includes(runId)) runIds.push(runId);
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const { status, body } = await api(`/runs/${runId}`);
      if (status === 200 && body.status !== "running") return body.status;
      for (const gate of body?.gates ?? [])
        if (gate.id === "merge_gate" && gate.acceptsNow.includes("merge"))
          await api(`/runs/${runId}/gates/merge_gate/events`, {
            method: "POST",
            body: JSON.stringify({ type: "merge" }),
          });
      await sleep(100);
    }
    return "hanging";
  }

  const t0 = Date.now();
  let next = 0;
  let done = 0;
  // The chaos: a SIGKILL of one service at a random moment, then the same service again.
  let running = true;
  const chaos = (async () => {
    let kills = 0;
    while (running && kills < MAX_KILLS) {
      await sleep((0.5 + random()) * KILL_EVERY_S * 1000);
      if (!running) break;
      const which = random() < 0.5 ? "orchestrator" : "harness";
      services[which].child.kill("SIGKILL");
      await new Promise((r) =>
        services[which].child.exitCode !== null ? r() : services[which].child.once("exit", r),
      );
      tally.kills[which]++;
      kills++;
      console.log(`[workspace-soak] SIGKILL ${which} (${kills}), ${done} runs settled`);
      for (let attempt = 1; ; attempt++) {
        try {
          services[which] = await start[which]();
          break;
        } catch (error) {
          if (attempt >= 5) throw error;
          await sleep(1000);
        }
      }
    }
  })();

  const worker = async () => {
    while (next < RUNS && (Date.now() - t0) / 60_000 < MAX_MINUTES) {
      next++;
      const outcome = await oneRun();
      tally.outcomes[outcome] = (tally.outcomes[outcome] ?? 0) + 1;
      done++;
      if (done % 50 === 0)
        console.log(
          `[workspace-soak] ${done} runs settled in ${((Date.now() - t0) / 60_000).toFixed(1)} min`,
        );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  running = false;
  await chaos;
  const minutes = (Date.now() - t0) / 60_000;

  // The clean-up's time: keep + two passes, then until no Worktree of a settled run is left (≤ 2 min more).
  await sleep((KEEP_S + 2 * SWEEP_S) * 1000);
  const readVerdict = () => {
    const db = new Database(join(dataDir, "jr2.sqlite"), { readonly: true, fileMustExist: true });
    try {
      const runs = runFactsFromSqlite(db, unpackVersion);
      const swept = new Set(runs.filter((r) => r.status !== "running").map((r) => r.runId));
      const mustPush = (r) => r.outcome === "succeeded";
      return { runs, verdict: checkWorktrees({ workRoot: work, runs, swept, remote, mustPush }) };
    } finally {
      db.close();
    }
  };
  let { runs, verdict } = readVerdict();
  for (let i = 0; i < 24 && verdict.leakedWorktrees.length > 0; i++) {
    await sleep(5000);
    ({ runs, verdict } = readVerdict());
  }
  if (process.env.SOAK_DEBUG)
    for (const r of runs) console.log(r.runId, r.outcome, r.versions.length, JSON.stringify(r.pushed));
  // Every run must end as an uninterrupted one does: succeeded (merged, pushed).
  const outcomes = {};
  for (const r of runs) outcomes[r.outcome ?? r.status] = (outcomes[r.outcome ?? r.status] ?? 0) + 1;
  const notSucceeded = runs
    .filter((r) => r.status !== "running" && r.outcome !== "succeeded")
    .map((r) => r.runId);
  const rows = [
    {
      runs: runs.length,
      minutes: minutes.toFixed(1),
      "runs/min": (done / minutes).toFixed(1),
      "orchestrator kills": tally.kills.orchestrator,
      "harness kills": tally.kills.harness,
      "commits checked": verdict.commitsChecked,
      "leaked Worktrees": verdict.leakedWorktrees.length,
      "lost commits": verdict.lostCommits.length,
      "doubled picks": verdict.doubledPicks.length,
      "never settled": verdict.unsettled.length + (tally.outcomes.hanging ?? 0),
      "not succeeded": notSucceeded.length,
    },
  ];
  printTable(rows);
  console.log(
    `[workspace-soak] outcomes ${JSON.stringify(outcomes)}; drivers saw ${JSON.stringify(tally.outcomes)}`,
  );
  for (const id of notSucceeded.slice(0, 20)) console.log(`[workspace-soak] not succeeded: ${id}`);
  for (const list of ["leakedWorktrees", "lostCommits", "doubledPicks", "unsettled"])
    for (const line of verdict[list].slice(0, 20)) console.log(`[workspace-soak] ${list}: ${line}`);
  writeResults("workspace-soak", {
    settings: {
      runs: RUNS,
      maxMinutes: Number.isFinite(MAX_MINUTES) ? MAX_MINUTES : null,
      concurrency: CONCURRENCY,
      killEverySeconds: KILL_EVERY_S,
      maxKills: Number.isFinite(MAX_KILLS) ? MAX_KILLS : null,
      worktreeKeepSeconds: KEEP_S,
      sweepSeconds: SWEEP_S,
    },
    minutes: Number(minutes.toFixed(2)),
    runsDone: done,
    runsPerMinute: Number((done / minutes).toFixed(2)),
    kills: tally.kills,
    outcomes,
    notSucceeded,
    driverOutcomes: tally.outcomes,
    worktreesOnDiskAtEnd: verdict.worktreesOnDisk,
    commitsChecked: verdict.commitsChecked,
    leakedWorktrees: verdict.leakedWorktrees,
    lostCommits: verdict.lostCommits,
    doubledPicks: verdict.doubledPicks,
    unsettled: verdict.unsettled,
  });
  const bad =
    verdict.leakedWorktrees.length +
    verdict.lostCommits.length +
    verdict.doubledPicks.length +
    verdict.unsettled.length +
    notSucceeded.length;
  process.exitCode = bad > 0 || tally.outcomes.hanging ? 1 : 0;
} finally {
  for (const s of [services.harness, services.orchestrator, services.sim]) if (s) await stop(s);
  if (process.env.SOAK_KEEP_DIR) console.log(`[workspace-soak] kept ${base}`);
  else rmSync(base, { recursive: true, force: true });
}

// `pnpm bench:soak` — memory over a long life (issue 16 item 2, "Memory bar"): 5,000 runs
// (4,000 triage, 1,000 review, interleaved) through ONE Orchestrator (`jr2 serve`, SQLite store)
// and ONE Harness on model-sim, default settings. Every 500 runs: RSS and heap-after-GC of both
// services (a benchmark-only probe preloaded with `--expose-gc --require bench/soak-probe.cjs`)
// and the store's size on disk. Not a test: it asserts nothing, prints the verdicts, writes
// bench/results/soak.json. Never in .ci/run.
// Knobs: SOAK_RUNS (5000), SOAK_EVERY (500), SOAK_CONCURRENCY (8), BENCH_VERBOSE=1.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { printTable, ROOT, writeResults } from "./lib.mjs";
import { memoryOf, startService, stop } from "./soak-services.mjs";
import { perWorkflowStore, storeSize } from "./soak-store.mjs";

const RUNS = Number(process.env.SOAK_RUNS ?? 5000);
const EVERY = Number(process.env.SOAK_EVERY ?? 500);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 8);
const REVIEW_EVERY = 5; // 1 run in 5 is review: 4,000 triage + 1,000 review of 5,000
const WORKFLOWS = {
  review: { input: { task: "a hello() function in hello.js" }, gates: { merge_gate: "merge" } },
  triage: { input: { report: "the login page is blank" }, gates: { confirm_gate: "confirm" } },
};

const { mintSandboxToken } = await import(join(ROOT, "packages/orchestrator/dist/index.js"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dataDir = mkdtempSync(join(tmpdir(), "jr2-soak-data-"));
const workDir = mkdtempSync(join(tmpdir(), "jr2-soak-work-"));
const secrets = {
  instance: randomBytes(16).toString("hex"),
  harness: randomBytes(16).toString("hex"),
  sandboxKey: randomBytes(16).toString("hex"),
};
const services = [];
try {
  const sim = await startService(
    "model-sim",
    "packages/model-sim/dist/main.js",
    ["--port", "0"],
    {},
    /model-sim listening on (http:\/\/\S+)/,
    false,
  );
  services.push(sim);
  const baseUrl = `${sim.url}/v1`;
  const models = {
    coder: { baseUrl, id: "worker:1", contextWindow: 32768, maxTokens: 1024 },
    reviewer: { baseUrl, id: "script:request_changes,approve", contextWindow: 32768, maxTokens: 1024 },
    triager: { baseUrl, id: "obedient", contextWindow: 32768, maxTokens: 1024 },
  };
  // The Orchestrator first on port 0 is not possible with a Harness URL to give: pick ports.
  const { createServer } = await import("node:net");
  const freePort = () =>
    new Promise((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const { port } = s.address();
        s.close(() => resolve(port));
      });
    });
  const [orchPort, harnessPort] = [await freePort(), await freePort()];
  const orchestrator = await startService(
    "orchestrator",
    "packages/orchestrator/dist/cli/main.js",
    ["serve"],
    {
      JR2_PORT: String(orchPort),
      JR2_HOST: "127.0.0.1",
      JR2_DATA_DIR: dataDir,
      JR2_WORK_ROOT: workDir,
      JR2_WORKFLOWS_DIR: join(ROOT, "packages/orchestrator/test/fixtures/plain-review"),
      JR2_INSTANCE_TOKEN: secrets.instance,
      JR2_SANDBOX_KEY: secrets.sandboxKey,
      JR2_HARNESS_URL: `http://127.0.0.1:${harnessPort}`,
      JR2_HARNESS_TOKEN: secrets.harness,
    },
    /jr2 orchestrator listening on (http:\/\/\S+)/,
    true,
  );
  services.push(orchestrator);
  const harness = await startService(
    "harness",
    "packages/harness/dist/main.js",
    [],
    {
      JR2_HARNESS_PORT: String(harnessPort),
      JR2_HARNESS_HOST: "127.0.0.1",
      JR2_ORCHESTRATOR_URL: orchestrator.url,
      JR2_MODELS: JSON.stringify(models),
      JR2_HARNESS_TOKEN: secrets.harness,
      JR2_SANDBOX_TOKEN: mintSandboxToken(secrets.sandboxKey, "instance"),
    },
    /jr2 harness listening on (http:\/\/\S+)/,
    true,
  );
  services.push(harness);
  // The Harness logs each new conversation with the count it holds.
  let conversationsHeld = 0;
  harness.onLine = (line) => {
    if (!line.includes("conversation seated")) return;
    const m = /"held":(\d+)/.exec(line);
    if (m) conversationsHeld = Number(m[1]);
  };

  // The Orchestrator logs each settled run's kept conversation history as it leaves memory (issue 27).
  const historyBytes = [];
  orchestrator.onLine = (line) => {
    if (!line.includes("settled run left memory")) return;
    const m = /"historyBytes":(\d+)/.exec(line);
    if (m) historyBytes.push(Number(m[1]));
  };

  const api = async (path, init = {}) => {
    const res = await fetch(`${orchestrator.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${secrets.instance}`, "content-type": "application/json" },
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  };

  /** One run to its end: started, its Gates answered as a person would; returns its status. */
  async function oneRun(workflow) {
    const started = await api(`/workflows/${workflow}/runs`, {
      method: "POST",
      body: JSON.stringify({ input: WORKFLOWS[workflow].input }),
    });
    if (started.status !== 201) return `start ${started.status}`;
    const { runId } = started.body;
    runIdsByWorkflow[workflow].push(runId);
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const { status, body } = await api(`/runs/${runId}`);
      if (status === 200 && body.status !== "running") return body.status;
      for (const gate of body?.gates ?? []) {
        const event = WORKFLOWS[workflow].gates[gate.id];
        if (event && gate.acceptsNow.includes(event))
          await api(`/runs/${runId}/gates/${gate.id}/events`, {
            method: "POST",
            body: JSON.stringify({ type: event }),
          });
      }
      await sleep(25);
    }
    return "hanging";
  }

  const samples = [];
  const outcomes = {};
  const runIdsByWorkflow = Object.fromEntries(Object.keys(WORKFLOWS).map((w) => [w, []]));
  const t0 = Date.now();
  const sample = async (runs) => {
    const [o, h] = [await memoryOf(orchestrator), await memoryOf(harness)];
    const store = storeSize(dataDir);
    const row = {
      runs,
      minutes: Number(((Date.now() - t0) / 60_000).toFixed(2)),
      orchRssMB: Number((o.rss / 2 ** 20).toFixed(1)),
      orchHeapMB: Number((o.heapUsed / 2 ** 20).toFixed(2)),
      harnessRssMB: Number((h.rss / 2 ** 20).toFixed(1)),
      harnessHeapMB: Number((h.heapUsed / 2 ** 20).toFixed(2)),
      conversations: conversationsHeld,
      storeMB: Number((store.bytes / 2 ** 20).toFixed(2)),
      storeDiskMB: Number((store.disk / 2 ** 20).toFixed(2)),
      storeBytes: store.bytes,
      orchHeapBytes: o.heapUsed,
      harnessHeapBytes: h.heapUsed,
    };
    samples.push(row);
    console.log(
      `[soak] ${runs} runs, ${row.minutes} min: orchestrator rss ${row.orchRssMB} MB heap ${row.orchHeapMB} MB; harness rss ${row.harnessRssMB} MB heap ${row.harnessHeapMB} MB (${row.conversations} conversations); store ${row.storeMB} MB`,
    );
  };

  await sample(0);
  let next = 0;
  let done = 0;
  let nextSample = EVERY;
  let sampling = Promise.resolve();
  const worker = async () => {
    while (next < RUNS) {
      const i = next++;
      const workflow = i % REVIEW_EVERY === REVIEW_EVERY - 1 ? "review" : "triage";
      const outcome = await oneRun(workflow);
      const key = `${workflow}:${outcome}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
      done++;
      if (done >= nextSample) {
        nextSample += EVERY;
        const at = done;
        sampling = sampling.then(() => sample(at));
        await sampling;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await sampling;
  const minutes = (Date.now() - t0) / 60_000;

  // Verdicts (read, not asserted): heap at the end vs at 1,000 runs; store bytes per run.
  const base = samples.find((s) => s.runs >= Math.min(1000, RUNS)) ?? samples.at(-1);
  const last = samples.at(-1);
  const heapRatio = last.orchHeapBytes / base.orchHeapBytes;
  const points = samples.filter((s) => s.runs > 0);
  /** Least squares of y over x: slope, and the largest distance of a point from the line. */
  const leastSquares = (xs, ys) => {
    const mean = (v) => v.reduce((a, b) => a + b, 0) / v.length;
    const [mx, my] = [mean(xs), mean(ys)];
    const slope =
      xs.reduce((a, x, i) => a + (x - mx) * (ys[i] - my), 0) / xs.reduce((a, x) => a + (x - mx) ** 2, 0);
    return { slope, maxResidual: Math.max(...xs.map((x, i) => Math.abs(ys[i] - (my + slope * (x - mx))))) };
  };
  const storeFit = leastSquares(
    points.map((p) => p.runs),
    points.map((p) => p.storeBytes),
  );
  // After the first sample (warm-up: JIT, pools, pi-agent's first seats): heap per conversation held.
  const perConversation = leastSquares(
    points.map((p) => p.conversations),
    points.map((p) => p.harnessHeapBytes),
  );

  printTable(samples, [
    "runs",
    "minutes",
    "orchRssMB",
    "orchHeapMB",
    "harnessRssMB",
    "harnessHeapMB",
    "conversations",
    "storeMB",
    "storeDiskMB",
  ]);
  // Per workflow: what one settled run costs the store (issue 22 §4: review's versions ≤ 8 KB).
  const perWorkflow = perWorkflowStore(dataDir, runIdsByWorkflow);
  console.log("");
  printTable(perWorkflow);
  const review = perWorkflow.find((w) => w.workflow === "review");
  const verdict = {
    runs: RUNS,
    perWorkflow,
    reviewVersionBytesPerRun: review?.["run_versions B/run"] ?? null,
    reviewVersionsWithin8KB: review ? review["run_versions B/run"] <= 8192 : null,
    minutes: Number(minutes.toFixed(1)),
    outcomes,
    orchestratorHeapAt: { runs: base.runs, bytes: base.orchHeapBytes },
    orchestratorHeapAtEnd: { runs: last.runs, bytes: last.orchHeapBytes },
    orchestratorHeapRatio: Number(heapRatio.toFixed(3)),
    orchestratorHeapWithin20Percent: Math.abs(heapRatio - 1) <= 0.2,
    storeBytesPerRun: Math.round(storeFit.slope),
    storeLinearMaxResidualBytes: Math.round(storeFit.maxResidual),
    harnessHeapBytesPerConversation: Math.round(perConversation.slope),
    harnessConversationsHeld: last.conversations,
    // The Orchestrator's copy of each run's conversations (UTF-16 units), held while it is live.
    orchestratorHistoryPerRun: historyBytes.length
      ? {
          runs: historyBytes.length,
          meanBytes: Math.round(historyBytes.reduce((a, b) => a + b, 0) / historyBytes.length),
          maxBytes: Math.max(...historyBytes),
        }
      : null,
  };
  console.log(`[soak] verdict ${JSON.stringify(verdict, null, 2)}`);
  writeResults("soak", {
    settings: { runs: RUNS, every: EVERY, concurrency: CONCURRENCY },
    verdict,
    samples,
  });
} finally {
  for (const service of services.reverse()) await stop(service);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
}

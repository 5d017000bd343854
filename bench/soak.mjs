// `pnpm bench:soak` — memory over a long life (issue 16 item 2, "Memory bar"): 5,000 runs
// (4,000 triage, 1,000 review, interleaved) through ONE Orchestrator (`jr2 serve`, SQLite store)
// and ONE Harness on model-sim, default settings. Every 500 runs: RSS and heap-after-GC of both
// services (a benchmark-only probe preloaded with `--expose-gc --require bench/soak-probe.cjs`)
// and the store's size on disk. Not a test: it asserts nothing, prints the verdicts, writes
// bench/results/soak.json. Never in .ci/run.
// Knobs: SOAK_RUNS (5000), SOAK_EVERY (500), SOAK_CONCURRENCY (8), BENCH_VERBOSE=1.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { printTable, ROOT, writeResults } from "./lib.mjs";

const RUNS = Number(process.env.SOAK_RUNS ?? 5000);
const EVERY = Number(process.env.SOAK_EVERY ?? 500);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 8);
const REVIEW_EVERY = 5; // 1 run in 5 is review: 4,000 triage + 1,000 review of 5,000
const WORKFLOWS = {
  review: { input: { task: "a hello() function in hello.js" }, gates: { merge_gate: "merge" } },
  triage: { input: { report: "the login page is blank" }, gates: { confirm_gate: "confirm" } },
};

const { mintSandboxToken } = await import(join(ROOT, "packages/orchestrator/dist/index.js"));
const Database = createRequire(join(ROOT, "packages/orchestrator/package.json"))("better-sqlite3");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Spawns a built service (with the probe when `probe`) and resolves once it printed `ready`
 * (and the probe's address). Output is scanned line by line, never kept: a soak logs a lot.
 */
function startService(label, script, args, env, ready, probe) {
  const probeToken = randomBytes(16).toString("hex");
  const flags = probe ? ["--expose-gc", "--require", join(ROOT, "bench/soak-probe.cjs")] : [];
  const child = spawn(process.execPath, [...flags, join(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, ...(probe ? { JR2_SOAK_PROBE_TOKEN: probeToken } : {}) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const service = { label, child, url: "", probeUrl: "", probeToken, lastLines: [], onLine: () => {} };
  return new Promise((resolve, reject) => {
    // A child that misses its start is killed: never left running on its port (issue 22).
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${label} did not start in 30 s (killed):\n${service.lastLines.join("\n")}`));
    }, 30_000);
    const check = () => {
      if (service.url && (!probe || service.probeUrl)) {
        clearTimeout(timer);
        resolve(service);
      }
    };
    for (const stream of [child.stdout, child.stderr]) {
      let rest = "";
      stream.on("data", (chunk) => {
        const lines = (rest + chunk).split("\n");
        rest = lines.pop() ?? "";
        for (const line of lines) {
          service.lastLines = [...service.lastLines.slice(-20), line];
          if (process.env.BENCH_VERBOSE) process.stderr.write(`[${label}] ${line}\n`);
          const up = ready.exec(line);
          if (up && !service.url) service.url = up[1];
          const p = /jr2 soak probe at (http:\/\/\S+)/.exec(line);
          if (p) service.probeUrl = p[1];
          service.onLine(line);
          check();
        }
      });
    }
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}:\n${service.lastLines.join("\n")}`));
    });
  });
}

async function stop(service) {
  if (service.child.exitCode !== null) return;
  const exited = new Promise((r) => service.child.once("exit", r));
  service.child.kill("SIGTERM");
  await Promise.race([exited, sleep(5000).then(() => service.child.kill("SIGKILL"))]);
}

async function memoryOf(service) {
  const res = await fetch(`${service.probeUrl}/memory`, {
    headers: { authorization: `Bearer ${service.probeToken}` },
  });
  if (!res.ok) throw new Error(`${service.label} probe answered ${res.status}`);
  return res.json();
}

/**
 * The store's size: its pages (`page_count × page_size`, read on a read-only connection, so the
 * WAL's committed frames count and the WAL file's high-water mark does not), and the files on disk.
 */
function storeSize(dataDir) {
  let disk = 0;
  for (const name of ["jr2.sqlite", "jr2.sqlite-wal"]) {
    try {
      disk += statSync(join(dataDir, name)).size;
    } catch {}
  }
  const db = new Database(join(dataDir, "jr2.sqlite"), { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma("page_count", { simple: true });
    const pageSize = db.pragma("page_size", { simple: true });
    return { bytes: pages * pageSize, disk };
  } finally {
    db.close();
  }
}

/**
 * Per workflow (issue 22 §4): each table's bytes of its runs (the sum of their rows' lengths,
 * `length()` of every column), per run; `store pages/run` is the workflow's share of the file's
 * pages (its rows' bytes over all rows' bytes) per run. Read on a read-only connection.
 */
function perWorkflowStore(dataDir, runIdsByWorkflow) {
  const db = new Database(join(dataDir, "jr2.sqlite"), { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma("page_count", { simple: true });
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all()
      .map((t) => ({ name: t.name, columns: db.pragma(`table_info(${t.name})`).map((c) => c.name) }))
      .filter((t) => t.columns.includes("run_id"));
    /** table → runId → bytes */
    const bytes = new Map();
    for (const t of tables) {
      const sum = t.columns.map((c) => `COALESCE(length("${c}"), 0)`).join(" + ");
      const rows = db
        .prepare(`SELECT run_id AS runId, SUM(${sum}) AS n FROM "${t.name}" GROUP BY run_id`)
        .all();
      bytes.set(t.name, new Map(rows.map((r) => [r.runId, r.n])));
    }
    const total = [...bytes.values()].reduce((a, m) => a + [...m.values()].reduce((x, y) => x + y, 0), 0);
    return Object.entries(runIdsByWorkflow).map(([workflow, runIds]) => {
      const of = (table) => runIds.reduce((a, id) => a + (bytes.get(table)?.get(id) ?? 0), 0);
      const all = tables.reduce((a, t) => a + of(t.name), 0);
      const per = (n) => Math.round(n / Math.max(1, runIds.length));
      return {
        workflow,
        runs: runIds.length,
        "store pages/run": ((pages * all) / Math.max(1, total) / Math.max(1, runIds.length)).toFixed(2),
        "row bytes/run": per(all),
        "run_versions B/run": per(of("run_versions")),
        "transcript B/run": per(of("transcript_entries")),
        "run_events B/run": per(of("run_events")),
        "versions/run": (
          runIds.reduce(
            (a, id) => a + db.prepare("SELECT count(*) AS n FROM run_versions WHERE run_id = ?").get(id).n,
            0,
          ) / Math.max(1, runIds.length)
        ).toFixed(1),
      };
    });
  } finally {
    db.close();
  }
}

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
      JR2_WORKFLOWS_DIR: join(ROOT, "examples/workflows"),
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

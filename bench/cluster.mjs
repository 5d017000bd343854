// bench:cluster — the fault-injection suite of issue 24 (ADR-0283, ADR-0284): two Orchestrators
// on one PostgreSQL (a private cluster), one Harness, model-sim; `review` runs started on A,
// then A SIGKILLed (started again two leases later), A SIGSTOPped past its lease, or PostgreSQL
// stopped for 10 s — at the default lease and at 3 s. Every run is driven to its end (its merge
// Gate answered through B) and checked: 0 failed by `conflict`, 0 picks doubled or lost, 0
// events missing or out of order (each Turn's admission before its picks), usage equal to
// model-sim's recordings, 0 Turn readers left after settlement. Exits 1 on any violation.
// Env: BENCH_LEASES (ms, comma list; "default" = unset, 15 000), BENCH_FAULTS (kill,stop,pg-stop),
// BENCH_RUNS (per round, default 20), BENCH_PG_STOP_MS (default 10 000). Logs of a violating
// round are kept under the results dir.
// BENCH_STORE=sqlite runs the same checks on one Orchestrator on its own SQLite store (SQLite
// serves one process): faults kill (SIGKILL, started again after 2 s) and stop (SIGSTOP 5 s);
// leases do not apply. The event-log contract ("every pick once, in order") is judged alike.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkRun, readersAfter, simUsage, usageOf } from "./cluster-invariants.mjs";
import { privatePg, sleep, startStack } from "./cluster-stack.mjs";
import { printTable, ROOT, writeResults } from "./lib.mjs";

const DEFAULT_LEASE = 15_000;
const leases = (process.env.BENCH_LEASES ?? "default,3000")
  .split(",")
  .map((l) => (l === "default" ? undefined : Number(l)));
const faults = (
  process.env.BENCH_FAULTS ?? (process.env.BENCH_STORE === "sqlite" ? "kill,stop" : "kill,stop,pg-stop")
).split(",");
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const PG_STOP_MS = Number(process.env.BENCH_PG_STOP_MS ?? 10_000);
const STORE = process.env.BENCH_STORE ?? "postgres";
if (STORE !== "postgres" && STORE !== "sqlite")
  throw new Error(`BENCH_STORE: unknown store ${STORE} (postgres, sqlite)`);
const resultsDir = process.env.BENCH_RESULTS_DIR ?? join(ROOT, "bench", "results");

/** Injects `fault` on A (the owner of every run); resolves once the fault is over. */
async function inject(stack, pgc, fault, lease) {
  if (fault === "kill") {
    await stack.a.kill();
    await sleep(pgc ? lease * 2 : 2_000);
    await stack.a.start(); // A comes back: its own leases were adopted, it must not take them back
  } else if (fault === "stop") {
    stack.a.pause();
    await sleep(pgc ? Math.round(lease * 1.5) : 5_000);
    stack.a.resume();
  } else if (fault === "pg-stop" && pgc) {
    pgc.stop();
    await sleep(PG_STOP_MS);
    pgc.start();
  } else throw new Error(`BENCH_FAULTS: unknown fault ${fault} (kill, stop, pg-stop)`);
}

/** Answers each open merge Gate (through B: forwarded to the owner) until every run settled. */
async function driveToEnd(stack, runIds, deadline) {
  const settled = new Map();
  while (settled.size < runIds.length && Date.now() < deadline) {
    for (const runId of runIds) {
      if (settled.has(runId)) continue;
      const run = await stack.http(stack.b, `/runs/${runId}`);
      if (run.status === 200 && run.body?.status && run.body.status !== "running") {
        settled.set(runId, { status: run.body.status, outcome: run.body.outcome, at: Date.now() });
        continue;
      }
      for (const gate of run.body?.gates ?? [])
        await stack.http(stack.b, `/runs/${runId}/gates/${gate.id}/events`, {
          method: "POST",
          body: JSON.stringify({ type: "merge" }),
        });
    }
    await sleep(500);
  }
  return settled;
}

/** Waits until the runs' usage totals stop changing (the drains of last Turns read theirs). */
async function settledUsage(stack, runIds) {
  let last = "";
  for (let i = 0; i < 30; i++) {
    const now = JSON.stringify([await usageOf(stack, stack.b, runIds), await simUsage(stack)]);
    if (now === last) break;
    last = now;
    await sleep(2_000);
  }
  return JSON.parse(last);
}

async function round(pgc, leaseMs, fault) {
  const lease = leaseMs ?? DEFAULT_LEASE;
  const stack = await startStack(pgc, leaseMs);
  const row = {
    lease: lease,
    fault,
    runs: RUNS,
    succeeded: 0,
    conflict: 0,
    doubled: 0,
    lost: 0,
    "missing/out-of-order": 0,
    "usage Δ": 0,
    "readers left": 0,
    "let-gos": 0,
    adoptions: 0,
    "wall s": 0,
    store: STORE,
  };
  const started = Date.now();
  const findings = [];
  try {
    const runIds = [];
    for (let i = 0; i < RUNS; i++) {
      // A 503 (an overloaded or moving instance) is retried with the same key, as `jr2 run` does.
      let res;
      for (let attempt = 0; attempt < 10; attempt++) {
        res = await stack.http(stack.a, "/workflows/review/runs", {
          method: "POST",
          headers: { "idempotency-key": `bench-${process.pid}-${fault}-${lease}-${i}` },
          body: JSON.stringify({ input: { task: `a hello${i}() function in hello${i}.js` } }),
        });
        if (res.status !== 503 && res.status !== 0) break;
        await sleep(1_000);
      }
      if (res.status !== 201 && res.status !== 200)
        throw new Error(`start ${i}: ${res.status} ${JSON.stringify(res.body)}`);
      runIds.push(res.body.runId);
    }
    await sleep(1_500); // Turns admitted on A
    await inject(stack, pgc, fault, lease);
    const settled = await driveToEnd(stack, runIds, Date.now() + 120_000 + RUNS * 15_000);
    const lastSettled = Math.max(...[...settled.values()].map((s) => s.at));
    for (const runId of runIds) {
      const s = settled.get(runId);
      if (!s) findings.push(`${runId}: not settled in time`);
      if (s?.outcome === "succeeded") row.succeeded++;
      else if (s) findings.push(`${runId}: ended ${s.status} (${s.outcome})`);
      const c = await checkRun(stack, stack.b, runId);
      row.conflict += c.conflict;
      row.doubled += c.doubled;
      row.lost += c.lost;
      row["missing/out-of-order"] += c.gaps + c.disorder;
      if (s && s.outcome !== "succeeded")
        for (const e of c.events.filter((x) => x.type === "fault" || x.type === "warning"))
          findings.push(`${runId}: ${e.type} ${e.reason ?? ""} ${e.detail ?? e.message ?? ""}`);
      findings.push(...c.findings.map((f) => `${runId}: ${f}`));
    }
    const [runs, sim] = await settledUsage(stack, runIds);
    row["usage Δ"] =
      Math.abs(runs.promptTokens - sim.promptTokens) +
      Math.abs(runs.completionTokens - sim.completionTokens) +
      Math.abs(runs.requests - sim.requests);
    if (row["usage Δ"])
      findings.push(`usage: runs ${JSON.stringify(runs)} vs model-sim ${JSON.stringify(sim)}`);
    // A reader of a settled run that still polls after a lease and 5 s of grace is left behind.
    const grace = Math.max(Date.now(), lastSettled + lease + 5_000);
    await sleep(grace - Date.now() + 3_000);
    row["readers left"] = readersAfter(stack, runIds, grace);
    if (row["readers left"])
      findings.push(`${row["readers left"]} Harness calls for settled runs after the grace`);
    const logs = stack.a.log() + stack.b.log();
    row["let-gos"] = (logs.match(/let go of the run/g) ?? []).length;
    row.adoptions = (logs.match(/run adopted: restoring it/g) ?? []).length;
  } catch (error) {
    findings.push(`round failed: ${error.stack ?? error}`);
  } finally {
    row["wall s"] = Math.round((Date.now() - started) / 1000);
    if (findings.length > 0) {
      const dir = join(resultsDir, "cluster-logs", `${fault}-${lease}-${Date.now()}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "findings.txt"), `${findings.join("\n")}\n`);
      writeFileSync(join(dir, "a.log"), stack.a.log());
      writeFileSync(join(dir, "b.log"), stack.b.log());
      writeFileSync(join(dir, "harness.log"), stack.harness.log());
      console.error(
        `${fault} at ${lease} ms: ${findings.length} finding(s), logs kept in ${dir}\n  ${findings.slice(0, 10).join("\n  ")}`,
      );
    }
    await stack.close();
  }
  return { row, violations: findings.length };
}

const pgc = STORE === "postgres" ? privatePg() : undefined;
const rows = [];
let violations = 0;
try {
  for (const leaseMs of leases)
    for (const fault of faults) {
      const r = await round(pgc, leaseMs, fault);
      rows.push(r.row);
      violations += r.violations;
    }
} finally {
  pgc?.close();
}
printTable(rows);
writeResults(STORE === "sqlite" ? "cluster-sqlite" : "cluster", {
  store: STORE,
  runsPerRound: RUNS,
  pgStopMs: PG_STOP_MS,
  rows,
  violations,
});
if (violations > 0) {
  console.error(`\n${violations} violation(s) of the fault-injection invariants`);
  process.exit(1);
}

// bench/orchestrator (SPEC §12): latency (p50/p99) and throughput of GET /agents/:iid/surface and
// POST /agents/:iid/picks on the built Orchestrator with N concurrent live runs (hand-played Turns,
// as `jr2 serve --harness none`), against a bare Fastify route served by the same child process,
// measured in the same run with autocannon. 127.0.0.1 only; each measurement ≤ 10 s.
// The run store is a dimension (issue 15): BENCH_STORES (default memory,sqlite,postgres) side by
// side in one run; `vs sqlite` is each row's req/s against the SQLite row of the same measurement.
// PostgreSQL: BENCH_PG_URL (an admin URL), else a throwaway loopback cluster
// (scripts/pg-test-cluster.sh, Debian's postgresql) on the same 2 cores — read the ratios.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { printTable, ROOT, writeResults } from "./lib.mjs";

const RUN_COUNTS = (process.env.BENCH_RUNS ?? "1,100").split(",").map(Number);
const DURATION_S = Math.min(10, Number(process.env.BENCH_DURATION ?? 5));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const TOKEN = "bench-instance-token-0123456789abcdef";
const STORES = (process.env.BENCH_STORES ?? "memory,sqlite,postgres").split(",");

/** The PostgreSQL admin URL: BENCH_PG_URL, or a throwaway cluster started (and stopped) here. */
async function postgresAdmin() {
  if (process.env.BENCH_PG_URL) return { url: process.env.BENCH_PG_URL, stop: () => {} };
  const dir = mkdtempSync(join(tmpdir(), "jr2-bench-pg-"));
  const script = join(ROOT, "scripts/pg-test-cluster.sh");
  const url = execFileSync("bash", [script, "start", dir], { encoding: "utf8" }).trim();
  return { url, stop: () => execFileSync("bash", [script, "stop", dir]) };
}

/** A fresh database on the admin URL's cluster, for one server start. */
async function freshDatabase(adminUrl, n) {
  const orchRequire = (await import("node:module")).createRequire(
    join(ROOT, "packages/orchestrator/package.json"),
  );
  const pg = (await import(orchRequire.resolve("pg"))).default;
  const client = new pg.Client(adminUrl);
  await client.connect();
  const name = `jr2_bench_${process.pid}_${n}`;
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function startServer(runs, store, storeUrl) {
  const child = spawn(process.execPath, [join(ROOT, "bench/orchestrator-server.mjs")], {
    cwd: ROOT,
    env: {
      ...process.env,
      BENCH_RUNS: String(runs),
      BENCH_TOKEN: TOKEN,
      BENCH_STORE: store,
      ...(storeUrl ? { BENCH_STORE_URL: storeUrl } : {}),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
    });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line && out.includes("\n")) resolve({ ...JSON.parse(line), stop });
    });
    child.once("exit", (code) => reject(new Error(`bench server exited with ${code}: ${out}`)));
  });
}

/** One autocannon measurement; `next()` gives each request's path and body. */
function measure(url, method, next) {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        connections: CONNECTIONS,
        duration: DURATION_S,
        requests: [
          {
            method,
            headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
            setupRequest: (req) => ({ ...req, ...next() }),
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
  });
}

const summary = (name, r) => ({
  measurement: name,
  "req/s": Math.round(r.requests.average),
  "mean ms": r.latency.average.toFixed(2),
  "p50 ms": r.latency.p50,
  "p99 ms": r.latency.p99,
  requests: r.requests.total,
  non2xx: r.non2xx,
  errors: r.errors + r.timeouts,
});

async function sanity(srv) {
  const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const iid = encodeURIComponent(srv.iids[0]);
  const surface = await (await fetch(`${srv.orchestrator}/agents/${iid}/surface`, { headers: auth })).json();
  if (JSON.stringify(surface.allowed) !== '["finish","note"]')
    throw new Error(`surface: ${JSON.stringify(surface)}`);
  const body = JSON.stringify({ name: "note", arguments: { text: "x" }, toolCallId: "sanity" });
  const first = await (
    await fetch(`${srv.orchestrator}/agents/${iid}/picks`, { method: "POST", headers: auth, body })
  ).json();
  const again = await (
    await fetch(`${srv.orchestrator}/agents/${iid}/picks`, { method: "POST", headers: auth, body })
  ).json();
  if (!(first.delivered && first.moved && !first.turnComplete))
    throw new Error(`note pick: ${JSON.stringify(first)}`);
  if (JSON.stringify(first) !== JSON.stringify(again))
    throw new Error("a repeated toolCallId did not get the stored answer");
}

async function main() {
  const results = [];
  const admin = STORES.includes("postgres") ? await postgresAdmin() : undefined;
  let databases = 0;
  try {
    for (const store of STORES)
      for (const runs of RUN_COUNTS) {
        const storeUrl = store === "postgres" ? await freshDatabase(admin.url, databases++) : undefined;
        const srv = await startServer(runs, store, storeUrl);
        try {
          await sanity(srv);
          const encoded = srv.iids.map((i) => encodeURIComponent(i));
          let n = 0;
          const nextIid = () => encoded[n++ % encoded.length];
          let callId = 0;
          const pickBody = (id) =>
            JSON.stringify({ name: "note", arguments: { text: "progress" }, toolCallId: id });
          const plan = [
            ["bare GET", srv.bare, "GET", () => ({ path: `/bare/${nextIid()}` })],
            ["GET surface", srv.orchestrator, "GET", () => ({ path: `/agents/${nextIid()}/surface` })],
            ["bare POST", srv.bare, "POST", () => ({ path: `/bare/${nextIid()}`, body: pickBody("b") })],
            [
              "POST picks (delivered: fresh toolCallId)",
              srv.orchestrator,
              "POST",
              () => ({ path: `/agents/${nextIid()}/picks`, body: pickBody(`c${callId++}`) }),
            ],
            [
              "POST picks (stored answer: repeated toolCallId)",
              srv.orchestrator,
              "POST",
              () => ({ path: `/agents/${encodeURIComponent(srv.iids[0])}/picks`, body: pickBody("sanity") }),
            ],
          ];
          const rows = [];
          for (const [name, url, method, next] of plan) {
            const r = await measure(url, method, next);
            rows.push({ store, runs, ...summary(name, r) });
          }
          const bareGet = rows[0]["req/s"];
          const barePost = rows[2]["req/s"];
          for (const row of rows) {
            const base =
              row.measurement.startsWith("POST") || row.measurement === "bare POST" ? barePost : bareGet;
            row["vs bare"] = (row["req/s"] / base).toFixed(2);
          }
          results.push(...rows);
        } finally {
          await srv.stop();
        }
      }
  } finally {
    admin?.stop();
  }
  for (const row of results) {
    const sqlite = results.find(
      (r) => r.store === "sqlite" && r.runs === row.runs && r.measurement === row.measurement,
    );
    row["vs sqlite"] = sqlite ? (row["req/s"] / sqlite["req/s"]).toFixed(2) : "";
  }
  console.log(
    `\nbench/orchestrator — ${CONNECTIONS} connections, ${DURATION_S} s each, hand-played Turns, stores ${STORES.join(", ")}\n`,
  );
  printTable(results);
  writeResults("orchestrator", {
    setup: {
      connections: CONNECTIONS,
      durationSeconds: DURATION_S,
      runCounts: RUN_COUNTS,
      orchestrator:
        "packages/orchestrator/dist buildOrchestrator, hand-played Turns (--harness none), silent logger",
      stores:
        "memory; sqlite (temp data dir, WAL, synchronous=FULL); postgres (a loopback cluster on the same 2 cores, fsync on, one fresh database per start)",
      vsSqlite: "req/s ratio against the SQLite row of the same measurement and N",
      pick: "`note` — a targetless in-state pick with an action: delivered, moved, the Turn stays open",
      bare: "a bare Fastify app in the same child process: GET /bare/:id and POST /bare/:id answering similar JSON",
      vsBare: "req/s ratio against the bare route of the same method, same N",
    },
    results,
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

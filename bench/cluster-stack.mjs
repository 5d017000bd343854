// The stack bench:cluster runs its faults on (issue 24): a private PostgreSQL (its own throwaway
// cluster, so stopping it disturbs no one else's suites), model-sim, one Harness behind a
// recording proxy, and two Orchestrators A and B on one fresh database — the built binaries.
import { execFileSync, spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { createServer as netServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./lib.mjs";

const pg = createRequire(join(ROOT, "packages/orchestrator/package.json"))("pg");
const PG_SCRIPT = join(ROOT, "scripts/pg-test-cluster.sh");
const LATENCY_MS = 700;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve) => {
    const s = netServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A private PostgreSQL cluster: `database()` makes a fresh one; `stop()`/`start()` the server. */
export function privatePg() {
  const dir = mkdtempSync(join(tmpdir(), "jr2-bench-pg-"));
  const admin = execFileSync("bash", [PG_SCRIPT, "start", dir], { encoding: "utf8" }).trim();
  let n = 0;
  return {
    async database() {
      const name = `jr2_cluster_${process.pid}_${++n}`;
      const c = new pg.Client(admin);
      await c.connect();
      await c.query(`CREATE DATABASE ${name}`);
      await c.end();
      const url = new URL(admin);
      url.pathname = `/${name}`;
      return url.toString();
    },
    stop: () => execFileSync("bash", [PG_SCRIPT, "server-stop", dir]),
    start: () => execFileSync("bash", [PG_SCRIPT, "server-start", dir]),
    close: () => execFileSync("bash", [PG_SCRIPT, "stop", dir]),
  };
}

/** One service process that can be killed, paused and started again; its output kept. */
function service(label, args, env, ready) {
  let child;
  let out = "";
  const start = () =>
    new Promise((resolve, reject) => {
      const from = out.length;
      let started = false;
      child = spawn(process.execPath, args, {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const timer = setTimeout(
        () => reject(new Error(`${label} did not start in 60 s:\n${out.slice(-3000)}`)),
        60_000,
      );
      child.stdout.on("data", (chunk) => {
        out += chunk;
        if (!started && ready.test(out.slice(from))) {
          started = true;
          clearTimeout(timer);
          resolve();
        }
      });
      child.stderr.on("data", (c) => (out += c));
      child.once("exit", (code) => {
        clearTimeout(timer);
        if (!started) reject(new Error(`${label} exited with ${code}:\n${out.slice(-3000)}`));
      });
    });
  const signal = (sig) => child && child.exitCode === null && child.signalCode === null && child.kill(sig);
  return {
    start,
    pause: () => signal("SIGSTOP"),
    resume: () => signal("SIGCONT"),
    kill: () =>
      new Promise((resolve) => {
        if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGCONT");
        child.kill("SIGKILL");
      }),
    log: () => out,
  };
}

/** An HTTP proxy to `target` keeping `{ at, method, path }` of each call. */
function recordingProxy(port, target, calls) {
  const server = createServer((req, res) => {
    calls.push({ at: Date.now(), method: req.method, path: req.url });
    const up = httpRequest(
      { host: "127.0.0.1", port: target, method: req.method, path: req.url, headers: req.headers },
      (a) => {
        res.writeHead(a.statusCode ?? 502, a.headers);
        a.pipe(res);
      },
    );
    up.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on("close", () => up.destroy());
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

/** The models of the example workflows on model-sim, each answer held back so Turns are caught live. */
function models(simUrl) {
  const entry = (id) => ({
    baseUrl: `${simUrl}/v1`,
    id: `${id}+latency:${LATENCY_MS}`,
    contextWindow: 32768,
    maxTokens: 1024,
  });
  return {
    coder: entry("worker:1"),
    reviewer: entry("script:request_changes,approve"),
    triager: entry("obedient"),
  };
}

/**
 * Starts the stack on a fresh database of `pgc` with `JR2_LEASE_MS=leaseMs` (undefined: the default).
 * Without `pgc` (`BENCH_STORE=sqlite`): one Orchestrator on its own SQLite store in its data
 * dir — SQLite serves one process — and `b` is `a`, so the same checks read the same log.
 * @returns {{ a, b, sim, simUrl, token, calls, http, close }}
 */
export async function startStack(pgc, leaseMs) {
  const storeUrl = pgc ? await pgc.database() : undefined;
  const token = randomBytes(24).toString("hex");
  const sandboxKey = randomBytes(32).toString("hex");
  // The sandbox named `instance` is the instance scope: the Turns the Orchestrator places itself.
  const sandboxToken = `instance.${createHmac("sha256", sandboxKey).update("instance").digest("hex")}`;
  const harnessToken = randomBytes(24).toString("hex");
  const peerKey = randomBytes(32).toString("hex");
  const work = mkdtempSync(join(tmpdir(), "jr2-bench-cluster-"));
  chmodSync(work, 0o755); // the sandbox user enters the Worktrees under it
  const [simPort, harnessPort, proxyPort, portA, portB] = await Promise.all(
    [1, 2, 3, 4, 5].map(() => freePort()),
  );
  const started = [];
  const cleanup = async () => {
    for (const s of started.reverse()) await s.kill();
    rmSync(work, { recursive: true, force: true });
  };
  try {
    const sim = service(
      "model-sim",
      ["packages/model-sim/dist/main.js", "--port", String(simPort)],
      {},
      /model-sim listening on/,
    );
    started.push(sim);
    await sim.start();
    const simUrl = `http://127.0.0.1:${simPort}`;
    const calls = [];
    const proxy = await recordingProxy(proxyPort, harnessPort, calls);
    const orchestrator = (name, port) =>
      Object.assign(
        service(
          `orchestrator ${name}`,
          ["packages/orchestrator/dist/cli/main.js", "serve"],
          {
            JR2_PORT: String(port),
            JR2_HOST: "127.0.0.1",
            JR2_DATA_DIR: join(work, name),
            ...(storeUrl
              ? {
                  JR2_STORE_URL: storeUrl,
                  JR2_INSTANCE_ID: name,
                  JR2_ADVERTISE_URL: `http://127.0.0.1:${port}`,
                  JR2_PEER_KEY: peerKey,
                }
              : {}),
            ...(leaseMs ? { JR2_LEASE_MS: String(leaseMs) } : {}),
            JR2_WORKFLOWS_DIR: join(ROOT, "packages/orchestrator/test/fixtures/plain-review"),
            JR2_WORK_ROOT: work,
            JR2_INSTANCE_TOKEN: token,
            JR2_SANDBOX_KEY: sandboxKey,
            JR2_HARNESS_URL: `http://127.0.0.1:${proxyPort}`,
            JR2_HARNESS_TOKEN: harnessToken,
            JR2_LOG_LEVEL: "info",
          },
          /jr2 orchestrator listening on http:\/\/\S+/,
        ),
        { name, url: `http://127.0.0.1:${port}` },
      );
    const a = orchestrator("a", portA);
    const b = storeUrl ? orchestrator("b", portB) : a;
    started.push(...new Set([a, b]));
    await a.start();
    if (b !== a) await b.start();
    const harness = service(
      "harness",
      ["packages/harness/dist/main.js"],
      {
        JR2_HARNESS_PORT: String(harnessPort),
        JR2_HARNESS_HOST: "127.0.0.1",
        JR2_ORCHESTRATOR_URL: b === a ? a.url : `${a.url},${b.url}`,
        JR2_MODELS: JSON.stringify(models(simUrl)),
        JR2_HARNESS_TOKEN: harnessToken,
        JR2_SANDBOX_TOKEN: sandboxToken,
        JR2_LOG_LEVEL: process.env.BENCH_HARNESS_LOG ?? "info",
      },
      /jr2 harness listening on http:\/\/\S+/,
    );
    started.push(harness);
    await harness.start();
    /** JSON request with the instance token; `{ status: 0 }` when nothing answered. */
    const http = async (target, path, init = {}) => {
      try {
        const res = await fetch(`${target.url}${path}`, {
          ...init,
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            ...(init.headers ?? {}),
          },
          signal: AbortSignal.timeout(init.timeoutMs ?? 15_000),
        });
        const text = await res.text();
        let body = null;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        return { status: res.status, body };
      } catch {
        return { status: 0, body: null };
      }
    };
    return {
      a,
      b,
      harness,
      harnessUrl: `http://127.0.0.1:${proxyPort}`,
      harnessToken,
      simUrl,
      calls,
      http,
      async close() {
        for (const s of new Set([harness, a, b, sim])) await s.kill();
        await new Promise((r) => proxy.close(() => r()));
        rmSync(work, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

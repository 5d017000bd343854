/**
 * Two Orchestrators on one PostgreSQL store, one Harness, model-sim (issue 15's failover and
 * fencing tests; ADR-0280). Both Orchestrators are the built binary with the same tokens and
 * workflows, their own port and data dir, `JR2_STORE_URL` on a fresh database, a short lease.
 * They reach the Harness through a recording proxy: each call is kept with the
 * `x-jr2-instance` header its sender set, so a test tells which instance sent what and when.
 * The Harness gets both Orchestrator URLs, A first (the issue's failover rule).
 * Needs the built binaries (`pnpm build`) and `JR2_TEST_PG_URL` (test/pg.ts).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunFeedEvent } from "@jr2/wire";
import pg from "pg";
import { BINARIES, freePort, type ModelEntry } from "../../../conformance/src/index.js";
import { type Proc, spawnUntil, stopProc, untilHealthy } from "../../../conformance/src/processes.js";
import {
  HARNESS_READY,
  mintSecrets,
  ORCHESTRATOR_READY,
  type StackSecrets,
} from "../../../conformance/src/service-env.js";
import { freshPgDatabase } from "../pg.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers are asserted field by field
export type Json = Record<string, any>;

/** One call an Orchestrator sent the Harness, as the proxy saw it. */
export interface HarnessCall {
  /** `Date.now()` when the proxy received it. */
  at: number;
  /** The sender's `x-jr2-instance` header (`a`, `b`), or `""` when absent. */
  instance: string;
  method: string;
  path: string;
}

/** One Orchestrator of the cluster. */
export interface Instance {
  readonly name: "a" | "b";
  readonly url: string;
  /** Starts it (again); resolves once `/healthz` answers. */
  start(): Promise<void>;
  kill(): Promise<void>;
  /** SIGTERM (a graceful stop, as a rolling restart sends); resolves once it exited. */
  stop(): Promise<void>;
  /** SIGSTOP / SIGCONT: the paused process keeps its sockets and sessions. */
  pause(): void;
  resume(): void;
  /** Everything it printed, every process of it. */
  log(): string;
}

/** A running cluster. */
export interface Cluster {
  a: Instance;
  b: Instance;
  simUrl: string;
  instanceToken: string;
  secrets: StackSecrets;
  harnessCalls: HarnessCall[];
  /** JSON request to `instance` with the instance token; status 0 when it is down. */
  http(instance: Instance, path: string, init?: RequestInit): Promise<{ status: number; body: Json | null }>;
  /**
   * Whether the shared store holds a committed ledger entry (§5.4) for `iid` of `runId`: read
   * from PostgreSQL itself, since no instance answers "ledgered" (its feed's `admission` line
   * goes out before the ledger's save, ADR-0284).
   */
  ledgered(runId: string, iid: string): Promise<boolean>;
  /** A settled run's whole event log, read from `instance`. */
  events(instance: Instance, runId: string): Promise<RunFeedEvent[]>;
  /** The Harness's output so far. */
  harnessLog(): string;
  close(): Promise<void>;
}

/** What a cluster runs. */
export interface ClusterOptions {
  repoRoot: string;
  workflowsDir: string;
  models: (simBaseUrl: string) => Record<string, ModelEntry>;
  /** `JR2_LEASE_MS` of both instances. */
  leaseMs: number;
}

/** Starts model-sim, the recording proxy, the Harness, then A and B on a fresh database. */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const cleanups: Array<() => Promise<void> | void> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
  try {
    const db = await freshPgDatabase("jr2_cluster");
    cleanups.push(() => db.drop());
    const secrets = mintSecrets("instance");
    // One key for both instances: they forward to each other with it (ADR-0281).
    const peerKey = randomBytes(32).toString("hex");
    const simPort = await freePort();
    const sim = await spawnUntil(
      options.repoRoot,
      BINARIES.modelSim,
      ["--port", String(simPort)],
      {},
      /model-sim listening on/,
    );
    cleanups.push(() => stopProc(sim));
    const simUrl = `http://127.0.0.1:${simPort}`;
    const [harnessPort, proxyPort, portA, portB] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const harnessCalls: HarnessCall[] = [];
    const proxy = await recordingProxy(proxyPort, harnessPort, harnessCalls);
    cleanups.push(() => new Promise<void>((r) => proxy.close(() => r())));
    const work = mkdtempSync(join(tmpdir(), "jr2-cluster-work-"));
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const instance = (name: "a" | "b", port: number): Instance & { stopAll(): Promise<void> } => {
      const data = mkdtempSync(join(tmpdir(), `jr2-cluster-${name}-`));
      const url = `http://127.0.0.1:${port}`;
      const env = {
        JR2_PORT: String(port),
        JR2_HOST: "127.0.0.1",
        JR2_DATA_DIR: data,
        JR2_STORE_URL: db.url,
        JR2_INSTANCE_ID: name,
        JR2_ADVERTISE_URL: url,
        JR2_LEASE_MS: String(options.leaseMs),
        JR2_WORKFLOWS_DIR: options.workflowsDir,
        JR2_WORK_ROOT: work,
        JR2_INSTANCE_TOKEN: secrets.instance,
        JR2_SANDBOX_KEY: secrets.sandboxKey,
        JR2_PEER_KEY: peerKey,
        JR2_HARNESS_URL: `http://127.0.0.1:${proxyPort}`,
        JR2_HARNESS_TOKEN: secrets.harness,
        JR2_LOG_LEVEL: "debug",
      };
      let proc: Proc | undefined;
      let log = "";
      return {
        name,
        url,
        async start() {
          const started = await spawnUntil(
            options.repoRoot,
            BINARIES.orchestrator,
            ["serve"],
            env,
            ORCHESTRATOR_READY,
          );
          proc = started;
          started.child.once("exit", () => {
            log += started.output();
          });
          await untilHealthy(url);
        },
        kill: () => stopProc(proc, "SIGKILL"),
        stop: () => stopProc(proc, "SIGTERM"),
        pause: () => proc?.child.kill("SIGSTOP"),
        resume: () => proc?.child.kill("SIGCONT"),
        log: () => log + (proc && proc.child.exitCode === null ? proc.output() : ""),
        async stopAll() {
          if (proc && proc.child.exitCode === null) proc.child.kill("SIGCONT");
          await stopProc(proc, "SIGKILL");
          rmSync(data, { recursive: true, force: true });
        },
      };
    };
    const a = instance("a", portA);
    const b = instance("b", portB);
    cleanups.push(
      () => a.stopAll(),
      () => b.stopAll(),
    );
    await a.start();
    await b.start();
    const harness = await spawnUntil(
      options.repoRoot,
      BINARIES.harness,
      [],
      {
        JR2_HARNESS_PORT: String(harnessPort),
        JR2_HARNESS_HOST: "127.0.0.1",
        JR2_ORCHESTRATOR_URL: `${a.url},${b.url}`,
        JR2_MODELS: JSON.stringify(options.models(`${simUrl}/v1`)),
        JR2_HARNESS_TOKEN: secrets.harness,
        JR2_SANDBOX_TOKEN: secrets.sandboxToken,
        JR2_LOG_LEVEL: "info",
      },
      HARNESS_READY,
    );
    cleanups.push(() => stopProc(harness, "SIGKILL"));
    const http: Cluster["http"] = async (target, path, init = {}) => {
      try {
        const res = await fetch(`${target.url}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${secrets.instance}`, "content-type": "application/json" },
          signal: AbortSignal.timeout(10_000),
        });
        return { status: res.status, body: (await res.json().catch(() => null)) as Json | null };
      } catch {
        return { status: 0, body: null };
      }
    };
    const store = new pg.Pool({ connectionString: db.url, max: 1 });
    store.on("error", () => {});
    cleanups.push(() => store.end());
    return {
      a,
      b,
      simUrl,
      instanceToken: secrets.instance,
      secrets,
      harnessCalls,
      http,
      async ledgered(runId, iid) {
        const { rows } = await store.query<{ blob: string }>("SELECT blob FROM runs WHERE run_id = $1", [
          runId,
        ]);
        const blob = rows[0] ? (JSON.parse(rows[0].blob) as { ledger?: Record<string, unknown> }) : undefined;
        return blob?.ledger?.[iid] !== undefined;
      },
      async events(target, runId) {
        const res = await fetch(`${target.url}/runs/${runId}/events`, {
          headers: { authorization: `Bearer ${secrets.instance}` },
          signal: AbortSignal.timeout(60_000),
        });
        if (res.status !== 200) throw new Error(`GET /runs/${runId}/events answered ${res.status}`);
        return (await res.text())
          .split("\n")
          .filter((line) => line.startsWith("data: "))
          .map((line) => JSON.parse(line.slice(6)) as RunFeedEvent);
      },
      harnessLog: () => harness.output(),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** An HTTP proxy on `port` to the Harness on `target`, keeping each call it passes (streams unbuffered). */
function recordingProxy(port: number, target: number, calls: HarnessCall[]): Promise<Server> {
  const server = createServer((req, res) => {
    const instance = req.headers["x-jr2-instance"];
    calls.push({
      at: Date.now(),
      instance: typeof instance === "string" ? instance : "",
      method: req.method ?? "GET",
      path: req.url ?? "/",
    });
    const upstream = httpRequest(
      { host: "127.0.0.1", port: target, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

import { type ChildProcess, spawn } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RecordedRequest } from "./recordings.js";

/**
 * Starting the shipped services from the outside (§10, §11): model-sim always as a process;
 * the Orchestrator and the Harness as the built binaries (`process`) or as the two images
 * (`image`, testcontainers with host networking, `TESTCONTAINERS_RYUK_DISABLED=true`, waiting
 * on the ready log line — no port bindings exist under host networking). Every port is chosen
 * by the OS (bind port 0, read it, release it) and every URL is loopback.
 * @see SPEC §10, §11
 */

/** Which build of the two services the tier runs against. */
export type TargetKind = "process" | "image";

/** One Harness model-table entry (§7.7), as the Harness's `JR2_MODELS` takes it. */
export interface ModelEntry {
  baseUrl: string;
  id: string;
  contextWindow: number;
  maxTokens: number;
  apiKey?: string;
  compat?: Record<string, unknown>;
}

/** What a scenario needs to start a stack. */
export interface StackOptions {
  /** The repository root (built binaries are found below it). */
  repoRoot: string;
  /** The folder of workflow modules the Orchestrator serves. */
  workflowsDir: string;
  /** The Harness's model table, given model-sim's OpenAI base URL (`…/v1`). */
  models: (simBaseUrl: string) => Record<string, ModelEntry>;
  /** Extra Orchestrator env (e.g. `JR2_CRASH_AT`), on every start. */
  orchestratorEnv?: Record<string, string>;
  /** The sandbox name the Harness's token is minted for (default `instance`, §4.4). */
  sandbox?: string;
  /** Image tags (image target). */
  images?: { orchestrator: string; harness: string };
}

/** A running stack of model-sim, Orchestrator and Harness. */
export interface Stack {
  target: TargetKind;
  simUrl: string;
  orchestratorUrl: string;
  harnessUrl: string;
  /** Instance token (full trust, §4.4) and the Harness bearer. */
  instanceToken: string;
  harnessToken: string;
  /** model-sim's recordings (`GET /_sim/requests`), oldest first. */
  requests(): Promise<RecordedRequest[]>;
  /** Kills the Orchestrator at once (SIGKILL / container kill), leaving its data. */
  killOrchestrator(): Promise<void>;
  /** Starts the Orchestrator again on the same port and data folder; resolves once it is ready. */
  startOrchestrator(extraEnv?: Record<string, string>): Promise<void>;
  /**
   * Starts one more Harness (same models and tokens) that reaches the Orchestrator at
   * `orchestratorUrl` — e.g. a stand-in for an older Orchestrator (§7.6 skew).
   */
  startHarness(orchestratorUrl: string): Promise<{ url: string; stop(): Promise<void> }>;
  /** Kills the instance Harness at once (SIGKILL / container kill): every conversation it held is gone. */
  killHarness(): Promise<void>;
  /**
   * Starts the instance Harness again on the same port, models and tokens; resolves once it is
   * ready. It holds no conversation: it answers 404 for the earlier ones (§7.1).
   */
  restartHarness(): Promise<void>;
  /** The Orchestrator's output so far (for failure messages). */
  orchestratorLog(): string;
  close(): Promise<void>;
}

/** The default image tags (docker/build-images.sh). */
export const DEFAULT_IMAGES = { orchestrator: "jr2-orchestrator:local", harness: "jr2-harness:local" };

/** The built binaries the process target runs, relative to the repository root. */
export const BINARIES = {
  modelSim: "packages/model-sim/dist/main.js",
  harness: "packages/harness/dist/main.js",
  orchestrator: "packages/orchestrator/dist/cli/main.js",
} as const;

/**
 * Reads `JR2_CONFORMANCE_TARGET` (default `process`).
 * @throws Error `JR2_ERR_CONFORMANCE_TARGET` naming the value and what is accepted
 */
export function targetFromEnv(env: NodeJS.ProcessEnv = process.env): TargetKind {
  const value = env.JR2_CONFORMANCE_TARGET ?? "process";
  if (value === "process" || value === "image") return value;
  throw Object.assign(new Error(`JR2_CONFORMANCE_TARGET=\`${value}\`: expected process or image`), {
    code: "JR2_ERR_CONFORMANCE_TARGET",
  });
}

/** The binaries a target needs that are missing (model-sim always; the services for `process`). */
export function missingBinaries(repoRoot: string, target: TargetKind): string[] {
  const needed = target === "process" ? Object.values(BINARIES) : [BINARIES.modelSim];
  return needed.filter((path) => !existsSync(join(repoRoot, path)));
}

/** A free loopback port: bind port 0, read the port the OS chose, release it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** `<sandbox>.<hex hmac-sha256(key, sandbox)>` — the sandbox token of §4.4, minted as the Orchestrator does. */
export function sandboxToken(key: string, sandbox: string): string {
  return `${sandbox}.${createHmac("sha256", key).update(sandbox).digest("hex")}`;
}

/** A started child process and the output it printed. */
interface Proc {
  child: ChildProcess;
  output: () => string;
}

/** Spawns `node <script> …args` and resolves once a line matches `ready` (rejects if it exits first). */
function spawnUntil(
  repoRoot: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs = 60_000,
): Promise<Proc> {
  const child = spawn(process.execPath, [join(repoRoot, script), ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const output = () => out;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${script} printed no ready line within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, output });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code ?? signal}) before it was ready:\n${out}`));
    });
  });
}

function stopProc(proc: Proc | undefined, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.child.once("exit", () => resolve());
    proc.child.kill(signal);
  });
}

/** Polls `GET <url>/healthz` until it answers 200. */
async function untilHealthy(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url}/healthz did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const ORCHESTRATOR_READY = /jr2 orchestrator listening on http:\/\/\S+/;
const HARNESS_READY = /jr2 harness listening on http:\/\/\S+/;

/** The env both targets give the services (§4.4, §7.1, §11). */
function serviceEnv(
  ports: { orchestrator: number; harness: number },
  secrets: { instance: string; harness: string; sandboxKey: string; sandboxToken: string },
  paths: { data: string; workflows: string; work?: string },
  models: string,
  extra: Record<string, string>,
) {
  return {
    orchestrator: {
      // Per-run working directories under the stack's own temp folder (the image mounts it at /work).
      ...(paths.work ? { JR2_WORK_ROOT: paths.work } : {}),
      JR2_PORT: String(ports.orchestrator),
      JR2_HOST: "127.0.0.1",
      JR2_DATA_DIR: paths.data,
      JR2_WORKFLOWS_DIR: paths.workflows,
      JR2_INSTANCE_TOKEN: secrets.instance,
      JR2_SANDBOX_KEY: secrets.sandboxKey,
      JR2_HARNESS_URL: `http://127.0.0.1:${ports.harness}`,
      JR2_HARNESS_TOKEN: secrets.harness,
      JR2_LOG_LEVEL: "info",
      ...extra,
    },
    harness: {
      JR2_HARNESS_PORT: String(ports.harness),
      JR2_HARNESS_HOST: "127.0.0.1",
      JR2_ORCHESTRATOR_URL: `http://127.0.0.1:${ports.orchestrator}`,
      JR2_MODELS: models,
      JR2_HARNESS_TOKEN: secrets.harness,
      JR2_SANDBOX_TOKEN: secrets.sandboxToken,
      JR2_LOG_LEVEL: "info",
    },
  };
}

/**
 * Starts model-sim (a process), then the Orchestrator and the Harness as `target` says, each
 * waited on until ready. Secrets are random per stack.
 * @throws Error naming the service that did not start, with its output
 * @see SPEC §10, §11
 */
export async function startStack(target: TargetKind, options: StackOptions): Promise<Stack> {
  const { repoRoot } = options;
  const simPort = await freePort();
  const sim = await spawnUntil(
    repoRoot,
    BINARIES.modelSim,
    ["--port", String(simPort)],
    {},
    /model-sim listening on/,
  );
  const simUrl = `http://127.0.0.1:${simPort}`;
  const ports = { orchestrator: await freePort(), harness: await freePort() };
  const sandboxKey = randomBytes(16).toString("hex");
  const secrets = {
    instance: randomBytes(16).toString("hex"),
    harness: randomBytes(16).toString("hex"),
    sandboxKey,
    sandboxToken: sandboxToken(sandboxKey, options.sandbox ?? "instance"),
  };
  const dataDir = mkdtempSync(join(tmpdir(), "jr2-conformance-data-"));
  const workDir = mkdtempSync(join(tmpdir(), "jr2-conformance-work-"));
  // The images run as a numeric non-root user (§11): let it write the mounted folders.
  chmodSync(dataDir, 0o777);
  chmodSync(workDir, 0o777);
  const models = JSON.stringify(options.models(`${simUrl}/v1`));
  const base = {
    target,
    simUrl,
    orchestratorUrl: `http://127.0.0.1:${ports.orchestrator}`,
    harnessUrl: `http://127.0.0.1:${ports.harness}`,
    instanceToken: secrets.instance,
    harnessToken: secrets.harness,
    async requests() {
      const res = await fetch(`${simUrl}/_sim/requests`);
      return (await res.json()) as RecordedRequest[];
    },
  };
  const cleanup = () => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    const services =
      target === "process"
        ? await processServices(
            repoRoot,
            ports,
            secrets,
            { data: dataDir, workflows: options.workflowsDir, work: workDir },
            models,
            options,
          )
        : await imageServices(
            ports,
            secrets,
            { data: dataDir, work: workDir, workflows: options.workflowsDir },
            models,
            options,
          );
    return {
      ...base,
      ...services,
      async close() {
        await services.stopAll();
        await stopProc(sim);
        cleanup();
      },
    };
  } catch (error) {
    await stopProc(sim);
    cleanup();
    throw error;
  }
}

type Services = Pick<
  Stack,
  | "killOrchestrator"
  | "startOrchestrator"
  | "orchestratorLog"
  | "startHarness"
  | "killHarness"
  | "restartHarness"
> & {
  stopAll(): Promise<void>;
};

async function processServices(
  repoRoot: string,
  ports: { orchestrator: number; harness: number },
  secrets: { instance: string; harness: string; sandboxKey: string; sandboxToken: string },
  paths: { data: string; workflows: string; work: string },
  models: string,
  options: StackOptions,
): Promise<Services> {
  const env = serviceEnv(ports, secrets, paths, models, options.orchestratorEnv ?? {});
  let log = "";
  let orchestrator: Proc | undefined;
  const startOrchestrator = async (extra: Record<string, string> = {}) => {
    orchestrator = await spawnUntil(
      repoRoot,
      BINARIES.orchestrator,
      ["serve"],
      { ...env.orchestrator, ...extra },
      ORCHESTRATOR_READY,
    );
    const proc = orchestrator;
    proc.child.once("exit", () => {
      log += proc.output();
    });
    await untilHealthy(`http://127.0.0.1:${ports.orchestrator}`);
  };
  await startOrchestrator();
  let harness: Proc | undefined;
  const startInstanceHarness = async () => {
    harness = await spawnUntil(repoRoot, BINARIES.harness, [], env.harness, HARNESS_READY);
  };
  try {
    await startInstanceHarness();
  } catch (error) {
    await stopProc(orchestrator);
    throw error;
  }
  const extra: Proc[] = [];
  return {
    startOrchestrator,
    killHarness: () => stopProc(harness, "SIGKILL"),
    async restartHarness() {
      await stopProc(harness, "SIGKILL");
      await startInstanceHarness();
    },
    async startHarness(orchestratorUrl) {
      const port = await freePort();
      const proc = await spawnUntil(
        repoRoot,
        BINARIES.harness,
        [],
        { ...env.harness, JR2_HARNESS_PORT: String(port), JR2_ORCHESTRATOR_URL: orchestratorUrl },
        HARNESS_READY,
      );
      extra.push(proc);
      return { url: `http://127.0.0.1:${port}`, stop: () => stopProc(proc) };
    },
    killOrchestrator: () => stopProc(orchestrator, "SIGKILL"),
    orchestratorLog: () => log + (orchestrator?.child.exitCode === null ? orchestrator.output() : ""),
    async stopAll() {
      for (const proc of extra) await stopProc(proc);
      await stopProc(harness);
      await stopProc(orchestrator);
    },
  };
}

async function imageServices(
  ports: { orchestrator: number; harness: number },
  secrets: { instance: string; harness: string; sandboxKey: string; sandboxToken: string },
  paths: { data: string; work: string; workflows: string },
  models: string,
  options: StackOptions,
): Promise<Services> {
  // Ryuk would need a bridge network and a pulled image: neither exists on these machines (§11).
  process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
  // With `dockerd --bridge=none` there is no bridge network, and testcontainers' host
  // detection asks for its gateway; every container here is on the host network anyway.
  process.env.TESTCONTAINERS_HOST_OVERRIDE ??= "127.0.0.1";
  const { GenericContainer, Wait } = await import("testcontainers");
  type Started = Awaited<ReturnType<InstanceType<typeof GenericContainer>["start"]>>;
  const images = options.images ?? DEFAULT_IMAGES;
  const env = serviceEnv(
    ports,
    secrets,
    { data: "/data", workflows: "/workflows" },
    models,
    options.orchestratorEnv ?? {},
  );
  let log = "";
  let orchestrator: Started | undefined;
  const startOrchestrator = async (extra: Record<string, string> = {}) => {
    orchestrator = await new GenericContainer(images.orchestrator)
      .withNetworkMode("host")
      .withEnvironment({ ...env.orchestrator, ...extra })
      .withBindMounts([
        { source: paths.data, target: "/data", mode: "rw" },
        { source: paths.workflows, target: "/workflows", mode: "ro" },
      ])
      .withLogConsumer((stream) => stream.on("data", (chunk: Buffer | string) => (log += chunk.toString())))
      .withWaitStrategy(Wait.forLogMessage(ORCHESTRATOR_READY))
      .withStartupTimeout(90_000)
      .start();
    await untilHealthy(`http://127.0.0.1:${ports.orchestrator}`);
  };
  await startOrchestrator();
  let harness: Started | undefined;
  const startInstanceHarness = async () => {
    harness = await new GenericContainer(images.harness)
      .withNetworkMode("host")
      .withEnvironment(env.harness)
      .withBindMounts([{ source: paths.work, target: "/work", mode: "rw" }])
      .withWaitStrategy(Wait.forLogMessage(HARNESS_READY))
      .withStartupTimeout(90_000)
      .start();
  };
  try {
    await startInstanceHarness();
  } catch (error) {
    await orchestrator?.stop({ timeout: 0 });
    throw error;
  }
  const extra: Started[] = [];
  return {
    startOrchestrator,
    async killHarness() {
      await harness?.stop({ timeout: 0 });
    },
    async restartHarness() {
      await harness?.stop({ timeout: 0 });
      await startInstanceHarness();
    },
    async startHarness(orchestratorUrl) {
      const port = await freePort();
      const container = await new GenericContainer(images.harness)
        .withNetworkMode("host")
        .withEnvironment({
          ...env.harness,
          JR2_HARNESS_PORT: String(port),
          JR2_ORCHESTRATOR_URL: orchestratorUrl,
        })
        .withWaitStrategy(Wait.forLogMessage(HARNESS_READY))
        .withStartupTimeout(90_000)
        .start();
      extra.push(container);
      return {
        url: `http://127.0.0.1:${port}`,
        stop: async () => {
          await container.stop({ timeout: 5_000 });
        },
      };
    },
    async killOrchestrator() {
      await orchestrator?.stop({ timeout: 0 });
    },
    orchestratorLog: () => log,
    async stopAll() {
      for (const container of extra) await container.stop({ timeout: 5_000 }).catch(() => undefined);
      await harness?.stop({ timeout: 5_000 });
      await orchestrator?.stop({ timeout: 5_000 });
    },
  };
}

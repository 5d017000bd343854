import { freePort, type Proc, spawnUntil, stopProc, untilHealthy } from "./processes.js";
import {
  extraHarnessEnv,
  HARNESS_READY,
  ORCHESTRATOR_READY,
  type Ports,
  type ServiceEnv,
  type StackSecrets,
  serviceEnv,
} from "./service-env.js";
import type { Services, StackOptions } from "./stack.js";

/**
 * The `process` target: the Orchestrator and the Harness as the built binaries, each a child
 * process on loopback, waited on until its ready line (and, for the Orchestrator, `/healthz`).
 * @see SPEC §10, §11
 */

/** The built binaries the process target runs, relative to the repository root. */
export const BINARIES = {
  modelSim: "packages/model-sim/dist/main.js",
  harness: "packages/harness/dist/main.js",
  orchestrator: "packages/orchestrator/dist/cli/main.js",
} as const;

/** What the process target holds while its stack runs. */
interface Running {
  repoRoot: string;
  ports: Ports;
  env: ServiceEnv;
  /** The output of every Orchestrator process that has exited, in order. */
  log: string;
  /** The output of every instance Harness process that has exited, in order. */
  harnessLog: string;
  orchestrator?: Proc;
  harness?: Proc;
  /** The Harnesses `startHarness` started, stopped with the stack. */
  extra: Proc[];
}

/**
 * Starts the Orchestrator (`serve`), then the instance Harness, as processes with the env of
 * `serviceEnv`; stops the Orchestrator again if the Harness does not start.
 * @throws Error naming the binary that did not start, with its output
 */
export async function processServices(
  repoRoot: string,
  ports: Ports,
  secrets: StackSecrets,
  paths: { data: string; workflows: string; work: string },
  models: string,
  options: StackOptions,
): Promise<Services> {
  const env = serviceEnv(ports, secrets, paths, models, options.orchestratorEnv ?? {});
  env.harness = { ...env.harness, ...options.harnessEnv };
  const running: Running = { repoRoot, ports, env, log: "", harnessLog: "", extra: [] };
  await startOrchestrator(running);
  try {
    await startInstanceHarness(running);
  } catch (error) {
    await stopProc(running.orchestrator);
    throw error;
  }
  return {
    startOrchestrator: (extra) => startOrchestrator(running, extra),
    killHarness: () => stopProc(running.harness, "SIGKILL"),
    async restartHarness() {
      await stopProc(running.harness, "SIGKILL");
      await startInstanceHarness(running);
    },
    startHarness: (orchestratorUrl) => startExtraHarness(running, orchestratorUrl),
    killOrchestrator: () => stopProc(running.orchestrator, "SIGKILL"),
    orchestratorLog: () => orchestratorLog(running),
    harnessLog: () =>
      running.harnessLog + (running.harness?.child.exitCode === null ? running.harness.output() : ""),
    stopAll: () => stopAll(running),
  };
}

/** Spawns the Orchestrator on the stack's port and data folder; resolves once `/healthz` answers 200. */
async function startOrchestrator(running: Running, extra: Record<string, string> = {}): Promise<void> {
  running.orchestrator = await spawnUntil(
    running.repoRoot,
    BINARIES.orchestrator,
    ["serve"],
    { ...running.env.orchestrator, ...extra },
    ORCHESTRATOR_READY,
  );
  const proc = running.orchestrator;
  proc.child.once("exit", () => {
    running.log += proc.output();
  });
  await untilHealthy(`http://127.0.0.1:${running.ports.orchestrator}`);
}

/** Spawns the instance Harness on the stack's Harness port. */
async function startInstanceHarness(running: Running): Promise<void> {
  running.harness = await spawnUntil(
    running.repoRoot,
    BINARIES.harness,
    [],
    running.env.harness,
    HARNESS_READY,
  );
  const proc = running.harness;
  proc.child.once("exit", () => {
    running.harnessLog += proc.output();
  });
}

/** Spawns one more Harness on a free port that reaches the Orchestrator at `orchestratorUrl`. */
async function startExtraHarness(
  running: Running,
  orchestratorUrl: string,
): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const proc = await spawnUntil(
    running.repoRoot,
    BINARIES.harness,
    [],
    extraHarnessEnv(running.env, port, orchestratorUrl),
    HARNESS_READY,
  );
  running.extra.push(proc);
  return { url: `http://127.0.0.1:${port}`, stop: () => stopProc(proc) };
}

/** The output of the exited Orchestrators, then the running one's so far. */
function orchestratorLog(running: Running): string {
  const { orchestrator } = running;
  return running.log + (orchestrator?.child.exitCode === null ? orchestrator.output() : "");
}

/** SIGTERMs the extra Harnesses, the instance Harness and the Orchestrator, each awaited in turn. */
async function stopAll(running: Running): Promise<void> {
  for (const proc of running.extra) await stopProc(proc);
  await stopProc(running.harness);
  await stopProc(running.orchestrator);
}

import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { imageServices } from "./image-target.js";
import { BINARIES, processServices } from "./process-target.js";
import { freePort, type Proc, spawnUntil, stopProc } from "./processes.js";
import type { RecordedRequest } from "./recordings.js";
import { mintSecrets, type Ports, type StackSecrets } from "./service-env.js";
import type { Services, Stack, StackOptions, TargetKind } from "./stack.js";

/**
 * Starting the shipped services from the outside (§10, §11): model-sim always as a process;
 * the Orchestrator and the Harness as the built binaries (`process`, process-target.ts) or as
 * the two images (`image`, image-target.ts: testcontainers with host networking,
 * `TESTCONTAINERS_RYUK_DISABLED=true`, waiting on the ready log line — no port bindings exist
 * under host networking). Every port is chosen by the OS (bind port 0, read it, release it) and
 * every URL is loopback.
 * @see SPEC §10, §11
 */

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

/**
 * Starts model-sim (a process), then the Orchestrator and the Harness as `target` says, each
 * waited on until ready. Secrets are random per stack.
 * @throws Error naming the service that did not start, with its output
 * @see SPEC §10, §11
 */
export async function startStack(target: TargetKind, options: StackOptions): Promise<Stack> {
  const { repoRoot } = options;
  const sim = await startModelSim(repoRoot, options.simArgs ?? []);
  const ports = { orchestrator: await freePort(), harness: await freePort() };
  const secrets = mintSecrets(options.sandbox ?? "instance");
  const folders = makeFolders();
  const models = JSON.stringify(options.models(`${sim.url}/v1`));
  const base = stackBase(target, sim.url, ports, secrets);
  try {
    const services = await startServices(target, ports, secrets, folders, models, options);
    return {
      ...base,
      ...services,
      async close() {
        await services.stopAll();
        await stopProc(sim.proc);
        folders.remove();
      },
    };
  } catch (error) {
    await stopProc(sim.proc);
    folders.remove();
    throw error;
  }
}

/** Spawns model-sim on a free loopback port; resolves once it listens. */
async function startModelSim(repoRoot: string, args: string[]): Promise<{ proc: Proc; url: string }> {
  const simPort = await freePort();
  const proc = await spawnUntil(
    repoRoot,
    BINARIES.modelSim,
    ["--port", String(simPort), ...args],
    {},
    /model-sim listening on/,
  );
  return { proc, url: `http://127.0.0.1:${simPort}` };
}

/** A stack's own temp folders (Orchestrator data, per-run work) and how to remove them. */
interface StackFolders {
  data: string;
  work: string;
  remove(): void;
}

/** Makes the data and work folders, writable by anyone. */
function makeFolders(): StackFolders {
  const data = mkdtempSync(join(tmpdir(), "jr2-conformance-data-"));
  const work = mkdtempSync(join(tmpdir(), "jr2-conformance-work-"));
  // The images run as a numeric non-root user (§11): let it write the mounted folders.
  chmodSync(data, 0o777);
  chmodSync(work, 0o777);
  return {
    data,
    work,
    remove() {
      rmSync(data, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** The part of a `Stack` that does not depend on the target: URLs, tokens, model-sim's recordings. */
function stackBase(target: TargetKind, simUrl: string, ports: Ports, secrets: StackSecrets) {
  return {
    target,
    simUrl,
    orchestratorUrl: `http://127.0.0.1:${ports.orchestrator}`,
    harnessUrl: `http://127.0.0.1:${ports.harness}`,
    instanceToken: secrets.instance,
    harnessToken: secrets.harness,
    secretValues: [secrets.instance, secrets.harness, secrets.sandboxKey, secrets.sandboxToken],
    async requests() {
      const res = await fetch(`${simUrl}/_sim/requests`);
      return (await res.json()) as RecordedRequest[];
    },
  };
}

/** Starts the Orchestrator and the Harness as `target` says. */
function startServices(
  target: TargetKind,
  ports: Ports,
  secrets: StackSecrets,
  folders: StackFolders,
  models: string,
  options: StackOptions,
): Promise<Services> {
  return target === "process"
    ? processServices(
        options.repoRoot,
        ports,
        secrets,
        { data: folders.data, workflows: options.workflowsDir, work: folders.work },
        models,
        options,
      )
    : imageServices(
        ports,
        secrets,
        { data: folders.data, work: folders.work, workflows: options.workflowsDir },
        models,
        options,
      );
}

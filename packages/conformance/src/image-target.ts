import { freePort, untilHealthy } from "./processes.js";
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
 * The `image` target: the Orchestrator and the Harness as the two docker images, started with
 * testcontainers on the host network (no port bindings exist there), each waited on until its
 * ready log line (and, for the Orchestrator, `/healthz`). testcontainers is loaded only here,
 * on first use, so the process target never needs docker.
 * @see SPEC §10, §11
 */

/** The default image tags (docker/build-images.sh). */
export const DEFAULT_IMAGES = { orchestrator: "jr2-orchestrator:local", harness: "jr2-harness:local" };

type Testcontainers = typeof import("testcontainers");
type Started = Awaited<ReturnType<InstanceType<Testcontainers["GenericContainer"]>["start"]>>;

/** How long a container may take to print its ready line, in ms. */
const STARTUP_TIMEOUT_MS = 90_000;
/** How long `stop` waits for a container to exit on its own before killing it, in ms. */
const STOP_TIMEOUT_MS = 5_000;

/** What the image target holds while its stack runs. */
interface Running {
  tc: Testcontainers;
  images: { orchestrator: string; harness: string };
  ports: Ports;
  env: ServiceEnv;
  /** Host folders bind-mounted into the containers. */
  paths: { data: string; work: string; workflows: string };
  /** Everything every Orchestrator container printed, in order. */
  log: string;
  /** The instance Harness containers' output, every start of it. */
  harnessLog: string;
  orchestrator?: Started;
  harness?: Started;
  /** The Harnesses `startHarness` started, stopped with the stack. */
  extra: Started[];
}

/**
 * Starts the Orchestrator container (data at `/data`, workflows at `/workflows` read-only), then
 * the instance Harness container (`/work` mounted), with the env of `serviceEnv`; stops the
 * Orchestrator at once if the Harness does not start.
 * @throws Error from testcontainers when an image is missing or prints no ready line in 90 s
 */
export async function imageServices(
  ports: Ports,
  secrets: StackSecrets,
  paths: { data: string; work: string; workflows: string },
  models: string,
  options: StackOptions,
): Promise<Services> {
  const tc = await loadTestcontainers();
  const images = options.images ?? DEFAULT_IMAGES;
  const env = serviceEnv(
    ports,
    secrets,
    { data: "/data", workflows: "/workflows" },
    models,
    options.orchestratorEnv ?? {},
  );
  const running: Running = { tc, images, ports, env, paths, log: "", harnessLog: "", extra: [] };
  await startOrchestrator(running);
  try {
    await startInstanceHarness(running);
  } catch (error) {
    await running.orchestrator?.stop({ timeout: 0 });
    throw error;
  }
  return {
    startOrchestrator: (extra) => startOrchestrator(running, extra),
    async killHarness() {
      await running.harness?.stop({ timeout: 0 });
    },
    async restartHarness() {
      await running.harness?.stop({ timeout: 0 });
      await startInstanceHarness(running);
    },
    startHarness: (orchestratorUrl) => startExtraHarness(running, orchestratorUrl),
    async killOrchestrator() {
      await running.orchestrator?.stop({ timeout: 0 });
    },
    orchestratorLog: () => running.log,
    harnessLog: () => running.harnessLog,
    stopAll: () => stopAll(running),
  };
}

/** Sets the env testcontainers reads, then imports it (the env must be set first). */
async function loadTestcontainers(): Promise<Testcontainers> {
  // Ryuk would need a bridge network and a pulled image: neither exists on these machines (§11).
  process.env.TESTCONTAINERS_RYUK_DISABLED = "true";
  // With `dockerd --bridge=none` there is no bridge network, and testcontainers' host
  // detection asks for its gateway; every container here is on the host network anyway.
  process.env.TESTCONTAINERS_HOST_OVERRIDE ??= "127.0.0.1";
  return await import("testcontainers");
}

/** A container of `image` on the host network with `env`, not yet started. */
function hostContainer(running: Running, image: string, env: Record<string, string>) {
  return new running.tc.GenericContainer(image).withNetworkMode("host").withEnvironment(env);
}

/**
 * The security options bwrap needs inside Docker, as docker/compose.yaml gives the Harness
 * (issue 26, ADR-0172): Docker's default seccomp profile refuses the user namespace and
 * AppArmor may too (`seccomp=unconfined`, `apparmor=unconfined`); `systempaths=unconfined` is a
 * CLI/compose spelling the daemon does not take, so its effect — no masked or read-only /proc
 * paths, so the sandbox can mount its own /proc — is set on the HostConfig directly.
 */
export const HARNESS_SECURITY_OPTS = ["seccomp=unconfined", "apparmor=unconfined"] as const;

/** A Harness container: {@link hostContainer} with {@link HARNESS_SECURITY_OPTS} and no masked /proc paths. */
function harnessContainer(running: Running, image: string, env: Record<string, string>) {
  const container = hostContainer(running, image, env).withSecurityOpt(...HARNESS_SECURITY_OPTS);
  // `hostConfig` is testcontainers' protected HostConfig (dockerode's), sent as is on create.
  const hostConfig = (container as unknown as { hostConfig: Record<string, unknown> }).hostConfig;
  hostConfig.MaskedPaths = [];
  hostConfig.ReadonlyPaths = [];
  return container;
}

/** Starts the Orchestrator container; resolves once `/healthz` answers 200. */
async function startOrchestrator(running: Running, extra: Record<string, string> = {}): Promise<void> {
  const { paths, tc } = running;
  running.orchestrator = await hostContainer(running, running.images.orchestrator, {
    ...running.env.orchestrator,
    ...extra,
  })
    .withBindMounts([
      { source: paths.data, target: "/data", mode: "rw" },
      { source: paths.workflows, target: "/workflows", mode: "ro" },
    ])
    .withLogConsumer((stream) =>
      stream.on("data", (chunk: Buffer | string) => (running.log += chunk.toString())),
    )
    .withWaitStrategy(tc.Wait.forLogMessage(ORCHESTRATOR_READY))
    .withStartupTimeout(STARTUP_TIMEOUT_MS)
    .start();
  await untilHealthy(`http://127.0.0.1:${running.ports.orchestrator}`);
}

/** Starts the instance Harness container with the stack's work folder at `/work`. */
async function startInstanceHarness(running: Running): Promise<void> {
  running.harness = await harnessContainer(running, running.images.harness, running.env.harness)
    .withBindMounts([{ source: running.paths.work, target: "/work", mode: "rw" }])
    .withLogConsumer((stream) =>
      stream.on("data", (chunk: Buffer | string) => (running.harnessLog += chunk.toString())),
    )
    .withWaitStrategy(running.tc.Wait.forLogMessage(HARNESS_READY))
    .withStartupTimeout(STARTUP_TIMEOUT_MS)
    .start();
}

/** Starts one more Harness container on a free port that reaches the Orchestrator at `orchestratorUrl`. */
async function startExtraHarness(
  running: Running,
  orchestratorUrl: string,
): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const container = await harnessContainer(
    running,
    running.images.harness,
    extraHarnessEnv(running.env, port, orchestratorUrl),
  )
    .withWaitStrategy(running.tc.Wait.forLogMessage(HARNESS_READY))
    .withStartupTimeout(STARTUP_TIMEOUT_MS)
    .start();
  running.extra.push(container);
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      await container.stop({ timeout: STOP_TIMEOUT_MS });
    },
  };
}

/** Stops the extra Harnesses (errors ignored), the instance Harness and the Orchestrator, in turn. */
async function stopAll(running: Running): Promise<void> {
  for (const container of running.extra)
    await container.stop({ timeout: STOP_TIMEOUT_MS }).catch(() => undefined);
  await running.harness?.stop({ timeout: STOP_TIMEOUT_MS });
  await running.orchestrator?.stop({ timeout: STOP_TIMEOUT_MS });
}

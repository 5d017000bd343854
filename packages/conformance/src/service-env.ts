import { createHmac, randomBytes } from "node:crypto";

/**
 * What the two services are given and what they print once ready, the same under both targets:
 * the random secrets of a stack, the env of each service (§4.4, §7.1, §11) and their ready lines.
 * @see SPEC §4.4, §7.1, §11
 */

/** The loopback ports of a stack's Orchestrator and instance Harness. */
export interface Ports {
  orchestrator: number;
  harness: number;
}

/** A stack's secrets: the instance token, the Harness bearer, the sandbox key and the token minted from it. */
export interface StackSecrets {
  instance: string;
  harness: string;
  sandboxKey: string;
  sandboxToken: string;
}

/** Folders as the services see them (host paths for processes, mount points in the images). */
export interface ServicePaths {
  data: string;
  workflows: string;
  /**
   * Root of per-run working directories (`JR2_WORK_ROOT`); absent under the image target, where
   * the Orchestrator's default `/work` is where the Harness container mounts the work folder.
   */
  work?: string;
}

/** The env of each service, as `name → value`. */
export interface ServiceEnv {
  orchestrator: Record<string, string>;
  harness: Record<string, string>;
}

/** The line the Orchestrator prints once it listens. */
export const ORCHESTRATOR_READY = /jr2 orchestrator listening on http:\/\/\S+/;
/** The line the Harness prints once it listens. */
export const HARNESS_READY = /jr2 harness listening on http:\/\/\S+/;

/** `<sandbox>.<hex hmac-sha256(key, sandbox)>` — the sandbox token of §4.4, minted as the Orchestrator does. */
export function sandboxToken(key: string, sandbox: string): string {
  return `${sandbox}.${createHmac("sha256", key).update(sandbox).digest("hex")}`;
}

/** Fresh random secrets (16 bytes, hex each), the Harness's sandbox token minted for `sandbox` (§4.4). */
export function mintSecrets(sandbox: string): StackSecrets {
  const sandboxKey = randomBytes(16).toString("hex");
  return {
    instance: randomBytes(16).toString("hex"),
    harness: randomBytes(16).toString("hex"),
    sandboxKey,
    sandboxToken: sandboxToken(sandboxKey, sandbox),
  };
}

/**
 * The env both targets give the services: every URL loopback, log level `info`; `models` is the
 * Harness's `JR2_MODELS` JSON; `extra` is laid over the Orchestrator's env last.
 * @see SPEC §4.4, §7.1, §11
 */
export function serviceEnv(
  ports: Ports,
  secrets: StackSecrets,
  paths: ServicePaths,
  models: string,
  extra: Record<string, string>,
): ServiceEnv {
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
      // A CI box running suites side by side lags past `jr2 serve`'s 1 s bound without this stack
      // being overloaded; a shed request there fails a test for the box's sake (the crash run's
      // trial 19 was called lost by a shed `GET /runs`). Shedding itself is tested by
      // overload-shed.test.ts and bench:cluster; a test may lay its own bound over this one.
      JR2_SHED_LAG_MS: "15000",
      ...extra,
    },
    harness: {
      // The Harness's git keeps Repo Slots under the same root (issue 28).
      ...(paths.work ? { JR2_WORK_ROOT: paths.work } : {}),
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

/** The Harness env of one more Harness on `port` that reaches the Orchestrator at `orchestratorUrl`. */
export function extraHarnessEnv(
  env: ServiceEnv,
  port: number,
  orchestratorUrl: string,
): Record<string, string> {
  return { ...env.harness, JR2_HARNESS_PORT: String(port), JR2_ORCHESTRATOR_URL: orchestratorUrl };
}

import { Jr2Error } from "@jr2/wire";

/** Where Turns are admitted: nowhere (`none`, played by hand over HTTP) or an instance Harness. */
export type HarnessChoice = { kind: "none" } | { kind: "url"; url: string; token?: string };

/** The `jr2 serve` configuration, from env and flags. */
export interface ServeConfig {
  host: string;
  /** 0 = a port the OS picks. */
  port: number;
  instanceToken: string;
  sandboxKey?: string;
  workflowsDir: string;
  dataDir?: string;
  harness: HarnessChoice;
  /** `--dev`: a well-known or empty instance token is accepted (never in a deployment). */
  dev: boolean;
  logLevel: string;
}

/** The flags `jr2 serve` takes (already parsed). */
export interface ServeFlags {
  workflows?: string;
  port?: string;
  host?: string;
  harness?: string;
  dev?: boolean;
}

/** Tokens that ship in templates and docs; a deployment refuses them (§11). */
export const WELL_KNOWN_TOKENS = new Set([
  "changeme",
  "change-me",
  "secret",
  "token",
  "dev",
  "jr2",
  "password",
  "admin",
  "test",
]);

/** The token `--dev` uses when none is set. Well known on purpose: dev only. */
export const DEV_INSTANCE_TOKEN = "dev";

/**
 * Reads the serve configuration (pure: env and flags in, config out). Flags win over env.
 * Env: `JR2_PORT` (7400), `JR2_HOST` (127.0.0.1), `JR2_INSTANCE_TOKEN`, `JR2_SANDBOX_KEY`,
 * `JR2_WORKFLOWS_DIR` (./examples/workflows), `JR2_DATA_DIR`, `JR2_HARNESS_URL`,
 * `JR2_HARNESS_TOKEN`, `JR2_LOG_LEVEL` (info).
 * @throws Jr2Error `JR2_ERR_CONFIG_INVALID` naming the setting: a bad port, a bad harness URL, an
 *   empty or well-known instance token or sandbox key without `--dev`
 * @see SPEC §4.4, §11
 */
export function readServeConfig(env: NodeJS.ProcessEnv, flags: ServeFlags): ServeConfig {
  const dev = flags.dev === true;
  const portText = flags.port ?? env.JR2_PORT ?? "7400";
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) {
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", { detail: `port \`${portText}\` is not 0–65535` });
  }
  let instanceToken = env.JR2_INSTANCE_TOKEN ?? "";
  if (!dev && (instanceToken.length === 0 || WELL_KNOWN_TOKENS.has(instanceToken.toLowerCase()))) {
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail:
        "JR2_INSTANCE_TOKEN is empty or a well-known default; set a long random value (e.g. `openssl rand -hex 32`), or pass --dev",
    });
  }
  if (instanceToken.length === 0) instanceToken = DEV_INSTANCE_TOKEN;
  const sandboxKey = env.JR2_SANDBOX_KEY || undefined;
  if (sandboxKey && !dev && WELL_KNOWN_TOKENS.has(sandboxKey.toLowerCase())) {
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail: "JR2_SANDBOX_KEY is a well-known default; set a random value",
    });
  }
  const harnessText = flags.harness ?? env.JR2_HARNESS_URL ?? "none";
  let harness: HarnessChoice = { kind: "none" };
  if (harnessText !== "none") {
    if (!URL.canParse(harnessText) || !/^https?:$/.test(new URL(harnessText).protocol)) {
      throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
        detail: `--harness \`${harnessText}\`: expected none or an http(s) URL`,
      });
    }
    harness = {
      kind: "url",
      url: harnessText,
      ...(env.JR2_HARNESS_TOKEN ? { token: env.JR2_HARNESS_TOKEN } : {}),
    };
  }
  return {
    host: flags.host ?? env.JR2_HOST ?? "127.0.0.1",
    port,
    instanceToken,
    ...(sandboxKey ? { sandboxKey } : {}),
    workflowsDir: flags.workflows ?? env.JR2_WORKFLOWS_DIR ?? "./examples/workflows",
    ...(env.JR2_DATA_DIR ? { dataDir: env.JR2_DATA_DIR } : {}),
    harness,
    dev,
    logLevel: env.JR2_LOG_LEVEL ?? "info",
  };
}

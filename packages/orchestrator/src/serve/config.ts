import { type HttpEdgeLimits, ORCHESTRATOR_HTTP_EDGE_ENV, readHttpEdgeLimits } from "@jr2/http-edge";
import { readMetricsToken, readTracingSettings, type TelemetryEnv } from "@jr2/telemetry";
import { Jr2Error, PLACEHOLDER_SECRETS, sandboxNameProblem, secretProblem } from "@jr2/wire";
import type { PostgresStoreConfig } from "../durability/store/open.js";
import { DEFAULT_LEASE_MS } from "../durability/store/ownership.js";
import { parseStoreUrl } from "../durability/store/postgres-connection.js";
import { DEFAULT_SHED_LAG_MS } from "../http/plugins/load-shed.js";
import { parseForgeTemplate } from "../runs/forge-link.js";
import { type PeerConfig, readPeerConfig } from "./peer-config.js";

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
  /**
   * The shared PostgreSQL store (`JR2_STORE_URL`, ADR-0280), with this instance's id, advertised
   * URL and lease length; wins over `dataDir`. Absent: SQLite (or memory).
   */
  postgres?: PostgresStoreConfig;
  /** `JR2_PEER_KEY` and `JR2_PEERS` (ADR-0281); required with `postgres`. */
  peers?: PeerConfig;
  harness: HarnessChoice;
  /** Root of per-run working directories on the Harness (`JR2_WORK_ROOT`, default `/work`). */
  workRoot: string;
  /** The sandbox name the static WorkspaceProvider answers (`JR2_WORKSPACE_SANDBOX`, default `instance`). */
  workspaceSandbox: string;
  /** Nudges and wakes per Turn (`JR2_NUDGE_BUDGET`, default 2, §5.7). */
  nudgeBudget: number;
  /** Wall-clock budget of a Turn in ms (`JR2_TURN_DEADLINE_MS`, default 60 min, §5.6). */
  turnDeadlineMs: number;
  /** Per-module load limit in ms (`JR2_WORKFLOW_LOAD_TIMEOUT_MS`, default 30 s; 0 = none). */
  workflowLoadTimeoutMs: number;
  /**
   * Days a settled run keeps its event log (`JR2_EVENT_RETENTION_DAYS`, ADR-0256); 0 (the default)
   * keeps it forever.
   */
  eventRetentionDays: number;
  /** `--dev`: a well-known, short or empty token is accepted (never in a deployment). */
  dev: boolean;
  logLevel: string;
  /** Timeouts and the connection bound of the HTTP edge (`JR2_HEADERS_TIMEOUT_MS`, …; ADR-0060); absent: the defaults. */
  httpEdge?: HttpEdgeLimits;
  /** `JR2_SHED_LAG_MS` (default 1000; 0 off): the event-loop lag past which requests but `/healthz` answer 503 (ADR-0286). */
  shedLagMs?: number;
  /**
   * Telemetry (ADR-0420, ADR-0421): the `OTEL_*` and `JR2_OTEL_*` variables tracing starts from
   * (no `OTEL_EXPORTER_OTLP_ENDPOINT`: off) and `JR2_METRICS_TOKEN` (absent: `/metrics` is open
   * like `/healthz`). Absent: tracing off, `/metrics` open.
   */
  telemetry?: { env: TelemetryEnv; metricsToken?: string };
  /**
   * `JR2_FORGE_URL_TEMPLATE` (ADR-0225): the forge page of a pushed Repo Slot branch, with
   * `{host} {owner} {repo} {base} {branch}`; checked at start. Absent: no links.
   */
  forgeTemplate?: string;
}

/** The flags `jr2 serve` takes (already parsed). */
export interface ServeFlags {
  workflows?: string;
  port?: string;
  host?: string;
  harness?: string;
  dev?: boolean;
}

/** Tokens that ship in templates and docs, lower-cased; a deployment refuses them (§11). */
export const WELL_KNOWN_TOKENS: ReadonlySet<string> = PLACEHOLDER_SECRETS;

/** The default per-module workflow load limit: 30 s (`JR2_WORKFLOW_LOAD_TIMEOUT_MS`). */
export const DEFAULT_WORKFLOW_LOAD_TIMEOUT_MS = 30_000;

/** The token `--dev` uses when none is set. Well known on purpose: dev only. */
export const DEV_INSTANCE_TOKEN = "dev";

/**
 * Reads the serve configuration (pure: env and flags in, config out). Flags win over env.
 * Env: `JR2_PORT` (7400), `JR2_HOST` (127.0.0.1), `JR2_INSTANCE_TOKEN`, `JR2_SANDBOX_KEY`,
 * `JR2_WORKFLOWS_DIR` (./examples/workflows), `JR2_DATA_DIR`, `JR2_HARNESS_URL`,
 * `JR2_HARNESS_TOKEN`, `JR2_LOG_LEVEL` (info), `JR2_WORKFLOW_LOAD_TIMEOUT_MS` (30000; 0 = no limit),
 * `JR2_HEADERS_TIMEOUT_MS` (10000), `JR2_REQUEST_TIMEOUT_MS` (30000), `JR2_KEEP_ALIVE_TIMEOUT_MS`
 * (5000), `JR2_MAX_CONNECTIONS` (1024), `JR2_EVENT_RETENTION_DAYS` (0: the event log is kept forever),
 * `JR2_STORE_URL` (postgres://…: the shared PostgreSQL store), `JR2_ADVERTISE_URL`
 * (http://127.0.0.1:<port>), `JR2_INSTANCE_ID` (the advertised URL), `JR2_LEASE_MS` (15000),
 * `JR2_PEER_KEY` (required with `JR2_STORE_URL`) and `JR2_PEERS` (ADR-0281).
 * Secrets (`JR2_INSTANCE_TOKEN`, `JR2_SANDBOX_KEY` when set, `JR2_HARNESS_TOKEN` with a Harness)
 * must be ≥ 16 characters and no placeholder (`secretProblem` in @jr2/wire), unless `--dev`.
 * @throws Jr2Error `JR2_ERR_CONFIG_INVALID` naming the setting: a bad port, a bad harness URL, a
 *   refused secret (naming how to generate one), a sandbox name no token could carry, a bad limit
 * @see SPEC §4.4, §11, issue 10 §5
 */
export function readServeConfig(env: NodeJS.ProcessEnv, flags: ServeFlags): ServeConfig {
  const dev = flags.dev === true;
  const portText = flags.port ?? env.JR2_PORT ?? "7400";
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) {
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", { detail: `port \`${portText}\` is not 0–65535` });
  }
  let instanceToken = env.JR2_INSTANCE_TOKEN ?? "";
  if (!dev) refuseSecret("JR2_INSTANCE_TOKEN", instanceToken, "or pass --dev for a local try-out");
  if (instanceToken.length === 0) instanceToken = DEV_INSTANCE_TOKEN;
  const sandboxKey = env.JR2_SANDBOX_KEY || undefined;
  if (sandboxKey && !dev) refuseSecret("JR2_SANDBOX_KEY", sandboxKey, "it signs sandbox tokens");
  const workspaceSandbox = env.JR2_WORKSPACE_SANDBOX ?? "instance";
  const sandboxProblem = sandboxNameProblem(workspaceSandbox);
  if (sandboxProblem) {
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail: `JR2_WORKSPACE_SANDBOX \`${workspaceSandbox}\` cannot be a sandbox name: ${sandboxProblem}`,
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
    const harnessToken = env.JR2_HARNESS_TOKEN ?? "";
    if (!dev)
      refuseSecret("JR2_HARNESS_TOKEN", harnessToken, "the Harness must be started with the same value");
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
    ...readPostgresConfig(env, port),
    ...withPeers(readPeerConfig(env, Boolean(env.JR2_STORE_URL?.trim()), dev)),
    harness,
    dev,
    logLevel: env.JR2_LOG_LEVEL ?? "info",
    workRoot: env.JR2_WORK_ROOT ?? "/work",
    workspaceSandbox,
    nudgeBudget: nonNegativeInt("JR2_NUDGE_BUDGET", env.JR2_NUDGE_BUDGET, 2),
    turnDeadlineMs: nonNegativeInt("JR2_TURN_DEADLINE_MS", env.JR2_TURN_DEADLINE_MS, 60 * 60_000),
    workflowLoadTimeoutMs: nonNegativeInt(
      "JR2_WORKFLOW_LOAD_TIMEOUT_MS",
      env.JR2_WORKFLOW_LOAD_TIMEOUT_MS,
      DEFAULT_WORKFLOW_LOAD_TIMEOUT_MS,
    ),
    httpEdge: readHttpEdgeLimits(env, ORCHESTRATOR_HTTP_EDGE_ENV),
    shedLagMs: nonNegativeInt("JR2_SHED_LAG_MS", env.JR2_SHED_LAG_MS, DEFAULT_SHED_LAG_MS),
    eventRetentionDays: nonNegativeInt("JR2_EVENT_RETENTION_DAYS", env.JR2_EVENT_RETENTION_DAYS, 0),
    telemetry: readTelemetryConfig(env),
    ...readForgeTemplate(env),
  };
}

/** `JR2_FORGE_URL_TEMPLATE`, checked. @throws Jr2Error `JR2_ERR_CONFIG_INVALID` naming the bad placeholder */
function readForgeTemplate(env: NodeJS.ProcessEnv): { forgeTemplate?: string } {
  const text = env.JR2_FORGE_URL_TEMPLATE?.trim();
  if (!text) return {};
  try {
    return { forgeTemplate: parseForgeTemplate(text) };
  } catch (error) {
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", { detail: (error as Error).message });
  }
}

/**
 * The telemetry part of the config: the OpenTelemetry variables (checked now, so a bad
 * endpoint stops `jr2 serve` before it listens) and the metrics token.
 * @throws Jr2Error `JR2_ERR_CONFIG_INVALID` for an endpoint that is not http(s) or a refused token
 */
function readTelemetryConfig(env: NodeJS.ProcessEnv): NonNullable<ServeConfig["telemetry"]> {
  const telemetryEnv = Object.fromEntries(
    Object.entries(env).filter(([name]) => name.startsWith("OTEL_") || name.startsWith("JR2_OTEL_")),
  );
  try {
    readTracingSettings(telemetryEnv);
    const metricsToken = readMetricsToken(env);
    return { env: telemetryEnv, ...(metricsToken ? { metricsToken } : {}) };
  } catch (error) {
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * The PostgreSQL part of the config (ADR-0280): `JR2_STORE_URL` (checked now, redacted in any
 * error), `JR2_ADVERTISE_URL` (an http(s) URL, default `http://127.0.0.1:<port>`),
 * `JR2_INSTANCE_ID` (default the advertised URL) and `JR2_LEASE_MS` (a positive integer, 15000).
 * The last three are checked also without a store URL, so a typo is never silently ignored.
 * @throws Jr2Error `JR2_ERR_CONFIG_INVALID` naming the variable
 */
/** The shortest `JR2_LEASE_MS` accepted (ms). */
const MIN_LEASE_MS = 500;

function readPostgresConfig(env: NodeJS.ProcessEnv, port: number): { postgres?: PostgresStoreConfig } {
  const advertiseUrl = env.JR2_ADVERTISE_URL?.trim() || `http://127.0.0.1:${port}`;
  if (!URL.canParse(advertiseUrl) || !/^https?:$/.test(new URL(advertiseUrl).protocol))
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail: `JR2_ADVERTISE_URL \`${advertiseUrl}\` is not an http(s) URL: set the URL this instance's peers reach it at (e.g. http://10.0.0.5:7400)`,
    });
  const leaseText = env.JR2_LEASE_MS?.trim() ?? "";
  if (leaseText !== "" && !/^[1-9]\d*$/.test(leaseText))
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail: `JR2_LEASE_MS \`${leaseText}\` is not a positive integer (ms a run's lease lasts; default ${DEFAULT_LEASE_MS})`,
    });
  if (leaseText !== "" && Number(leaseText) < MIN_LEASE_MS)
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail: `JR2_LEASE_MS \`${leaseText}\` is below ${MIN_LEASE_MS}: a lease renewed every third of it would move runs between live instances on every pause of the event loop (default ${DEFAULT_LEASE_MS})`,
    });
  const url = env.JR2_STORE_URL?.trim();
  if (!url) return {};
  // Port 0 is chosen at listen time: the default advertised URL would name no port peers can reach.
  if (port === 0 && !env.JR2_ADVERTISE_URL?.trim())
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail:
        "JR2_PORT=0 with JR2_STORE_URL: peers could not reach this instance — set JR2_ADVERTISE_URL to the URL they use, or a fixed JR2_PORT",
    });
  try {
    parseStoreUrl(url);
  } catch (error) {
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail: error instanceof Error ? error.message : String(error),
    });
  }
  return {
    postgres: {
      url,
      instanceId: env.JR2_INSTANCE_ID?.trim() || advertiseUrl,
      advertiseUrl,
      leaseMs: leaseText === "" ? DEFAULT_LEASE_MS : Number(leaseText),
    },
  };
}

function withPeers(peers: PeerConfig | undefined): { peers?: PeerConfig } {
  return peers ? { peers } : {};
}

/** Throws `JR2_ERR_CONFIG_INVALID` when `value` is no acceptable secret for `variable`. */
function refuseSecret(variable: string, value: string, note: string): void {
  const problem = secretProblem(variable, value);
  if (problem) throw new Jr2Error("JR2_ERR_CONFIG_INVALID", { detail: `${problem} (${note})` });
}

function nonNegativeInt(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined || text === "") return fallback;
  if (!/^\d+$/.test(text)) {
    throw new Jr2Error("JR2_ERR_CONFIG_INVALID", {
      detail: `${name} \`${text}\` is not a non-negative integer`,
    });
  }
  return Number(text);
}

#!/usr/bin/env node
import { readMetricsToken, startTracing, type Tracing } from "@jr2/telemetry";
import { BENCH_NARROW_TOOLS_WARNING, benchNarrowTools } from "./presenters/bench-narrow.js";
import { type ModelTable, modelTableWarnings, parseModelTable } from "./provider/models.js";
import { decideSandbox, sandboxBanner, type WorkingSandbox } from "./tools/sandbox/working-sandbox.js";
import { type HarnessEnvConfig, readHarnessEnv } from "./wire/config.js";
import { buildHarness, HARNESS_VERSION } from "./wire/server.js";

/**
 * `jr2-harness`: reads env, listens, prints `jr2 harness listening on http://…` when ready.
 * Env: JR2_HARNESS_PORT (7401), JR2_HARNESS_HOST (127.0.0.1), JR2_ORCHESTRATOR_URL (one base URL
 * or a comma-separated list, tried in order on a transport error or a 503: ADR-0280),
 * JR2_MODELS (JSON or @file), JR2_HARNESS_TOKEN (required, ≥ 16 characters, no placeholder),
 * JR2_SANDBOX_TOKEN (`<sandbox>.<64 hex>`), JR2_ENDPOINT_CONCURRENCY (4), JR2_CONVERSATION_TTL_MS
 * (86 400 000: a settled conversation idle this long is forgotten; 0 keeps conversations for the
 * process's life), JR2_HARNESS_HEADERS_TIMEOUT_MS (10 000), JR2_HARNESS_REQUEST_TIMEOUT_MS
 * (30 000), JR2_HARNESS_KEEP_ALIVE_TIMEOUT_MS (5 000), JR2_HARNESS_MAX_CONNECTIONS (1024),
 * JR2_CONVERSATIONS_KEPT (200: the most recently touched conversations, never forgotten for
 * idleness); telemetry (ADR-0420): OTEL_EXPORTER_OTLP_ENDPOINT (unset: tracing off),
 * JR2_OTEL_CAPTURE_CONTENT (`true`: spans may carry content), JR2_METRICS_TOKEN (unset:
 * `/metrics` is open like `/healthz`); JR2_SANDBOX (`off`: Working tools unsandboxed, said on
 * every such Turn's feed; else bwrap is probed and a broken sandbox refuses read/write Turns),
 * JR2_BWRAP (the bwrap binary; default `bwrap` on PATH), JR2_KV_IDLE_LEAVE_MS (30 000: a
 * conversation idle this long leaves its endpoint's KV working set, issue 30); JR2_HARNESS_DATA_DIR
 * (the durable state, ADR-0175: conversations survive a restart; unset or `:memory:` keeps them in
 * memory, said at start); JR2_MCP_SECRETS (comma-separated variable names an Agent's MCP
 * `{ secret }` headers may read; unset: none, ADR-0234).
 * Exits 2 when a secret, a limit, the model table or a telemetry setting is refused (config.ts,
 * models.ts, @jr2/telemetry).
 */
async function main(): Promise<void> {
  const env = process.env;
  if (benchNarrowTools(env)) console.warn(BENCH_NARROW_TOOLS_WARNING);
  let config: HarnessEnvConfig;
  try {
    config = readHarnessEnv(env);
  } catch (err) {
    console.error(`jr2-harness: refusing to start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
  let models: ModelTable;
  try {
    models = parseModelTable(env.JR2_MODELS);
  } catch (err) {
    console.error(`jr2-harness: refusing to start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
  let metricsToken: string | undefined;
  let tracing: Tracing;
  try {
    metricsToken = readMetricsToken(env);
    tracing = startTracing({ serviceName: "jr2-harness", serviceVersion: HARNESS_VERSION, env });
  } catch (err) {
    console.error(`jr2-harness: refusing to start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
  for (const warning of [...config.warnings, ...modelTableWarnings(models)])
    console.warn(`jr2-harness: ${warning}`);
  let sandbox: WorkingSandbox;
  try {
    sandbox = await decideSandbox(env);
  } catch (err) {
    console.error(`jr2-harness: refusing to start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
  // The banner names the failing layer and its fix; a broken sandbox refuses read/write Turns.
  (sandbox.mode === "on" ? console.log : console.error)(sandboxBanner(sandbox));
  const dataDir = env.JR2_HARNESS_DATA_DIR?.trim() || ":memory:";
  if (dataDir === ":memory:")
    console.warn(
      "jr2-harness: JR2_HARNESS_DATA_DIR is not set: conversations are kept in memory and lost on restart",
    );
  const app = buildHarness({
    dataDir,
    models,
    orchestratorUrl: config.orchestratorUrl,
    harnessToken: config.harnessToken,
    sandboxToken: config.sandboxToken,
    httpEdge: config.httpEdge,
    endpointConcurrency: config.endpointConcurrency,
    conversationTtlMs: conversationTtl(env.JR2_CONVERSATION_TTL_MS),
    conversationsKept: conversationsKept(env.JR2_CONVERSATIONS_KEPT),
    ...kvIdleLeave(env.JR2_KV_IDLE_LEAVE_MS),
    environment: env,
    logger: { level: env.JR2_LOG_LEVEL ?? "info" } as never,
    tracing,
    metricsToken,
    sandbox,
    worktreeSweep: true,
  });
  const address = await app.listen({
    port: Number(env.JR2_HARNESS_PORT ?? 7401),
    host: env.JR2_HARNESS_HOST ?? "127.0.0.1",
  });
  console.log(`jr2 harness listening on ${address}`);
  const stop = () => {
    // Conversations are in the store (ADR-0175): a running Submission is settled at the next start.
    setTimeout(() => process.exit(0), 3_000).unref();
    // Ended spans are exported before exit (bounded by the timer above).
    void app
      .close()
      .then(() => tracing.shutdown())
      .then(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

/** `JR2_CONVERSATION_TTL_MS`: unset → the default; otherwise a whole number of ms ≥ 0. */
function conversationTtl(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0)
    throw new Error(`JR2_CONVERSATION_TTL_MS must be a whole number of milliseconds ≥ 0, got \`${raw}\``);
  return ms;
}

/** `JR2_KV_IDLE_LEAVE_MS`: unset → the default (30 000); otherwise a whole number of ms ≥ 1. */
function kvIdleLeave(raw: string | undefined): { kvIdleLeaveMs?: number } {
  if (raw === undefined || raw.trim() === "") return {};
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 1)
    throw new Error(`JR2_KV_IDLE_LEAVE_MS must be a whole number of milliseconds ≥ 1, got \`${raw}\``);
  return { kvIdleLeaveMs: ms };
}

/** `JR2_CONVERSATIONS_KEPT`: unset → the default (200); otherwise a whole number ≥ 0. */
function conversationsKept(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`JR2_CONVERSATIONS_KEPT must be a whole number ≥ 0, got \`${raw}\``);
  return n;
}

main().catch((err) => {
  console.error(`jr2-harness: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});

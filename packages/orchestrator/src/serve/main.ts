import { createMetrics, startTracing } from "@jr2/telemetry";
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import { onCrash } from "../durability/crash-points.js";
import { startEventRetention } from "../durability/event-retention.js";
import { lockDataDir } from "../durability/store/data-dir-lock.js";
import { openServeStore } from "../durability/store/open.js";
import { buildOrchestrator, ORCHESTRATOR_VERSION } from "../http/server.js";
import { createHarnessTurnDriver } from "../turns/harness-turn-driver.js";
import { type PlacementOptions, staticWorkspaceProvider } from "../turns/placement.js";
import { createRepoSlotClient } from "../turns/repo-slot-client.js";
import { handPlayedTurnDriver, type TurnDriver } from "../turns/turn-driver.js";
import { checkAdvertisedUrl } from "./advertise-check.js";
import type { ServeConfig } from "./config.js";
import { createLogger } from "./logger.js";
import { checkModels } from "./model-check.js";
import { loadWorkflows } from "./workflow-loader.js";

/** A listening Orchestrator. */
export interface RunningOrchestrator {
  app: FastifyInstance;
  /** `http://<host>:<port>` actually bound. */
  url: string;
  /** How many runs of the store are `drifted` at start-up (the banner says so, issue 22). */
  drifted: number;
  close(): Promise<void>;
}

/**
 * Loads the workflows, builds the app and listens — the one place that does. Turns are
 * driven by `turnDriver` (default hand-played: `--harness none`). Telemetry (ADR-0421): tracing
 * starts from `config.telemetry` (off unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set) and is shut
 * down (its spans flushed) by `close()`; `GET /metrics` serves the Orchestrator's families.
 * With a SQLite data dir it first takes the dir's lock (ADR-0280: single-writer), held until
 * `close()` or the process's death.
 * @throws Error naming the holder's pid, host and the path when another `jr2 serve` holds the
 *   data dir; Jr2Error `JR2_ERR_WORKFLOW_LOAD_FAILED` naming the file; listen errors as Node raises them
 * @see SPEC §4, §11
 */
export async function startOrchestrator(
  config: ServeConfig,
  options: { turnDriver?: TurnDriver } = {},
): Promise<RunningOrchestrator> {
  // JR2_STORE_URL (config.postgres) selects PostgreSQL, whose instances share one store by leases.
  const lock = config.dataDir && !config.postgres ? lockDataDir(config.dataDir) : undefined;
  if (!lock) return startUnlocked(config, options);
  try {
    const running = await startUnlocked(config, options);
    return { ...running, close: () => running.close().finally(() => lock.release()) };
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function startUnlocked(
  config: ServeConfig,
  options: { turnDriver?: TurnDriver },
): Promise<RunningOrchestrator> {
  const logger = createLogger({ level: config.logLevel });
  const workflows = await loadWorkflows(config.workflowsDir, {
    loadTimeoutMs: config.workflowLoadTimeoutMs,
    logger,
  });
  const harness = config.harness;
  const turnDriver =
    options.turnDriver ??
    (harness.kind === "url"
      ? createHarnessTurnDriver({
          harnessToken: harness.token ?? "",
          config: { nudgeBudget: config.nudgeBudget, deadlineMs: config.turnDeadlineMs },
        })
      : handPlayedTurnDriver);
  const placement: PlacementOptions | undefined =
    harness.kind === "url"
      ? {
          instanceHarnessUrl: harness.url,
          provider: staticWorkspaceProvider(harness.url, config.workspaceSandbox),
          workRoot: config.workRoot,
          allowExplicitEndpoints: config.dev,
          repoSlots: createRepoSlotClient({ token: harness.token ?? "" }),
          ...(config.forgeTemplate ? { forgeTemplate: config.forgeTemplate } : {}),
        }
      : undefined;
  // Test-only JR2_CRASH_AT: the log lines before a crash point must reach the harness.
  onCrash(() =>
    (logger as unknown as Record<symbol, { flushSync?(): void }>)[pino.symbols.streamSym]?.flushSync?.(),
  );
  const store = await openServeStore(config, logger);
  const stopRetention = startEventRetention(store, config.eventRetentionDays, logger);
  const telemetry = startTelemetry(config);
  const app = await buildOrchestrator({
    workflows,
    logger,
    store,
    auth: {
      instanceToken: config.instanceToken,
      ...(config.sandboxKey ? { sandboxKey: config.sandboxKey } : {}),
      ...(config.peers ? { peerKey: config.peers.key } : {}),
    },
    ...(config.peers ? { peers: config.peers.urls } : {}),
    turnDriver,
    ...(placement ? { placement } : {}),
    ...(config.httpEdge ? { httpEdge: config.httpEdge } : {}),
    ...(config.shedLagMs === undefined ? {} : { shedLagMs: config.shedLagMs }),
    telemetry,
  });
  // The model check waits for the Harness in the background; start-up waits for it at most
  // 2 s, so with a Harness already up its warnings come before "ready" and any Turn.
  const stopCheck = new AbortController();
  const modelCheck =
    harness.kind === "url"
      ? checkModels({
          workflows,
          harness: { url: harness.url, token: harness.token ?? "" },
          logger,
          signal: stopCheck.signal,
        }).catch((error: unknown) => logger.error({ err: error }, "model check failed"))
      : Promise.resolve();
  // The 2 s timer stays referenced: while the Harness is not up yet, the check's own timers are
  // unref'd, and an unref'd wait here would let the event loop run empty before `listen`.
  let waited: NodeJS.Timeout | undefined;
  await Promise.race([modelCheck, new Promise((resolve) => (waited = setTimeout(resolve, 2_000)))]);
  clearTimeout(waited);
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    stopCheck.abort();
    stopRetention();
    await telemetry.tracing.shutdown();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const host = config.host.includes(":") ? `[${config.host}]` : config.host;
  logger.info({ workflows: [...workflows.keys()], harness: config.harness.kind, dev: config.dev }, "ready");
  // After restore: the runs it marked drifted, and those drifted earlier and still not closed.
  const drifted = await store
    .list({ status: "drifted" })
    .then((runs) => runs.length)
    .catch(() => 0);
  // In the background: a wrong URL is the user's to fix; it does not stop this instance.
  if (config.postgres) void checkAdvertisedUrl(config.postgres.advertiseUrl, logger);
  return {
    app,
    url: `http://${host}:${port}`,
    drifted,
    close: async () => {
      stopCheck.abort();
      stopRetention();
      try {
        await app.close();
      } finally {
        // After the app: the Turns' spans end as the host stops them, then are exported.
        await telemetry.tracing.shutdown();
      }
    },
  };
}

/**
 * The Orchestrator's telemetry from its config (ADR-0421): tracing (off and free unless
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set) and the Orchestrator's metric families.
 */
function startTelemetry(config: ServeConfig) {
  const tracing = startTracing({
    serviceName: "jr2-orchestrator",
    serviceVersion: ORCHESTRATOR_VERSION,
    env: config.telemetry?.env ?? {},
  });
  const registry = createMetrics({ service: "orchestrator" });
  return { tracing, metrics: registry.orchestrator, registry, token: config.telemetry?.metricsToken };
}

import { readFileSync } from "node:fs";
import fastifySwagger from "@fastify/swagger";
import {
  boundConnections,
  DEFAULT_HTTP_EDGE_LIMITS,
  type HttpEdgeLimits,
  httpEdgeServerOptions,
  ORCHESTRATOR_HTTP_EDGE_ENV,
} from "@jr2/http-edge";
import { type Jr2Metrics, metricsRoute } from "@jr2/telemetry";
import Fastify, { type FastifyInstance } from "fastify";
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { type Logger, pino } from "pino";
import type { RunStore } from "../durability/store/run-store.js";
import { createRunHost, type RunHost, type WorkflowTable } from "../runs/run-host.js";
import type { AuthKeys } from "../turns/access.js";
import type { PlacementOptions } from "../turns/placement.js";
import type { TurnDriver } from "../turns/turn-driver.js";
import type { OrchestratorTelemetry } from "../turns/turn-spans.js";
import { consoleRoutes, redactTokenInUrl, refuseTokenInUrl } from "./console.js";
import { machineChartRoute } from "./machine-chart.js";
import { authPlugin } from "./plugins/auth.js";
import { answerFrameworkError, errorsPlugin, MAX_PARAM_LENGTH } from "./plugins/errors.js";
import { forwardPlugin } from "./plugins/forward.js";
import { jsonBodyPlugin } from "./plugins/json-body.js";
import { loadShedPlugin } from "./plugins/load-shed.js";
import { agentRoutes } from "./routes/agents.js";
import { gateRoutes } from "./routes/gates.js";
import { healthRoutes } from "./routes/health.js";
import { historyRoutes } from "./routes/history.js";
import { repoRoutes } from "./routes/repos.js";
import { resumeRetryRoutes } from "./routes/resume-retry.js";
import { runRoutes } from "./routes/runs.js";
import { turnRoutes } from "./routes/turns.js";
import { workflowRoutes } from "./routes/workflows.js";

/** Options of {@link buildOrchestrator}. Everything with an effect is injected. */
export interface OrchestratorOptions {
  /** The workflows served (ignored when `host` is given). */
  workflows?: WorkflowTable;
  /** A run host built by the caller; default one built from the other options. */
  host?: RunHost;
  /** The instance token, the sandbox key (§4.4) and the peer key (`JR2_PEER_KEY`, ADR-0281). */
  auth: AuthKeys;
  /** `JR2_PEERS`: peer URLs forwarded to without a challenge (ADR-0281). */
  peers?: readonly string[];
  /** pino logger, shared by Fastify and the run host; default silent. */
  logger?: Logger;
  /** The clock (feed and run times); default `() => new Date()`. */
  clock?: () => Date;
  /**
   * The run store (§8; RunBlobs and pick answers); default in memory. Its runs are restored
   * before this function returns, so the app never answers before restore. With `host`, pass
   * the host's store only for its `ownership` and `notices` (ADR-0280: forwarding and the feed
   * across instances); it is not restored then.
   */
  store?: RunStore;
  /** Runs each registered Turn; default hand-played (`--harness none`). */
  turnDriver?: TurnDriver;
  /** Where Turns run (§5.2); absent: hand-played in the instance scope. */
  placement?: PlacementOptions;
  /** Largest accepted request body in bytes; default 1 MiB (larger → 413). */
  bodyLimit?: number;
  /** The event-loop lag, ms, past which requests but `/healthz` answer 503 (ADR-0286); 0 (the default): never; `jr2 serve` passes `JR2_SHED_LAG_MS` (1000). */
  shedLagMs?: number;
  /** Version reported by `/healthz`; default the package's. */
  version?: string;
  /** Timeouts and the connection bound of the HTTP edge (ADR-0060); default {@link DEFAULT_HTTP_EDGE_LIMITS}. */
  httpEdge?: HttpEdgeLimits;
  /**
   * Telemetry (issue 11 item 5, ADR-0421): the tracing a Turn's and a pick's spans go to, and
   * the registry `GET /metrics` serves (open like `/healthz`, or behind `token`:
   * `JR2_METRICS_TOKEN`). Absent: no spans, no `/metrics`.
   */
  telemetry?: OrchestratorTelemetry & { registry: Pick<Jr2Metrics, "text">; token?: string | undefined };
}

declare module "fastify" {
  interface FastifyInstance {
    /** The run host behind the routes. */
    runHost: RunHost;
  }
}

/** The package version, read once (works from src/ and dist/). */
export const ORCHESTRATOR_VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/**
 * Builds the Orchestrator's HTTP app, unstarted: zod-typed routes over a run host, OpenAPI at
 * `GET /openapi.json`, coded error bodies, bearer auth. Only `main.ts` reads env and listens;
 * tests use `app.inject`. Closing the app closes the run host.
 * @example
 * const app = await buildOrchestrator({ workflows, auth: { instanceToken, sandboxKey } });
 * await app.inject({ method: "GET", url: "/healthz" });
 * @see SPEC §4, STYLE.md "HTTP"
 */
export async function buildOrchestrator(options: OrchestratorOptions): Promise<FastifyInstance> {
  const logger = options.logger ?? pino({ level: "silent" });
  const bodyLimit = options.bodyLimit ?? 1024 * 1024;
  const host =
    options.host ??
    createRunHost({
      workflows: options.workflows ?? new Map(),
      logger,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.store ? { store: options.store } : {}),
      ...(options.turnDriver ? { turnDriver: options.turnDriver } : {}),
      ...(options.placement ? { placement: options.placement } : {}),
      ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    });
  const edge = options.httpEdge ?? DEFAULT_HTTP_EDGE_LIMITS;
  const app = Fastify({
    loggerInstance: logger,
    bodyLimit,
    // Slow clients are cut, a garbage request line or oversized headers answer coded (ADR-0060).
    ...httpEdgeServerOptions(edge),
    // iids are long percent-encoded segments.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Bad percent-encoding or an over-long segment: a coded 400, not Fastify's own body.
    frameworkErrors: answerFrameworkError,
    // A token in a URL is refused (400), and never logged: its value is redacted first (ADR-0451).
    rewriteUrl: redactTokenInUrl,
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  boundConnections(app.server, edge, app.log, ORCHESTRATOR_HTTP_EDGE_ENV);
  app.decorate("runHost", host);
  // preClose: agent routes answer 503 from the first moment of shutdown (§8), not after the
  // in-flight requests drained.
  app.addHook("preClose", async () => host.close());

  await app.register(errorsPlugin, { bodyLimit });
  // First of the hooks: a request refused for overload costs no auth and no store read.
  await app.register(loadShedPlugin, {
    ...(options.shedLagMs === undefined ? {} : { lagMs: options.shedLagMs }),
  });
  await app.register(jsonBodyPlugin);
  await app.register(refuseTokenInUrl);
  await app.register(authPlugin, options.auth);
  // After auth (401 before any lookup), before the routes: a run hosted elsewhere is forwarded.
  await app.register(forwardPlugin, {
    host,
    ownership: options.store?.ownership,
    peerKey: options.auth.peerKey,
    peers: options.peers ?? [],
  });
  await app.register(fastifySwagger, {
    openapi: {
      info: { title: "jr2 Orchestrator", version: options.version ?? ORCHESTRATOR_VERSION },
      components: {
        securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      },
    },
    transform: jsonSchemaTransform,
  });
  app.get("/openapi.json", { schema: { hide: true }, config: { auth: "open" } }, async () => app.swagger());

  await app.register(healthRoutes, {
    version: options.version ?? ORCHESTRATOR_VERSION,
    peerKey: options.auth.peerKey,
  });
  await app.register(workflowRoutes, { host });
  await app.register(runRoutes, { host, store: options.store });
  await app.register(turnRoutes, { host });
  await app.register(historyRoutes, { host });
  await app.register(repoRoutes, { host });
  await app.register(gateRoutes, { host });
  await app.register(resumeRetryRoutes, { host });
  await app.register(agentRoutes, { host });
  await app.register(machineChartRoute, { workflows: options.workflows ?? new Map() });
  await app.register(consoleRoutes, {});
  if (options.telemetry)
    await app.register(metricsRoute, {
      metrics: options.telemetry.registry,
      token: options.telemetry.token,
      routeConfig: { auth: "open" },
    });
  if (!options.host) await host.restore();
  return app as unknown as FastifyInstance;
}
